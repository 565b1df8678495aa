//===- AttentionProblem.cpp - one attention's shape and options -----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/AttentionProblem.h"

#include <cmath>
#include <sstream>

using namespace attn;

std::optional<DType> attn::parseDType(const std::string &name) {
  if (name == "f16")
    return DType::f16;
  if (name == "bf16")
    return DType::bf16;
  if (name == "f32")
    return DType::f32;
  return std::nullopt;
}

const char *attn::dtypeName(DType t) {
  switch (t) {
  case DType::f16:
    return "f16";
  case DType::bf16:
    return "bf16";
  case DType::f32:
    return "f32";
  }
  return "?";
}

int64_t attn::dtypeBytes(DType t) { return t == DType::f32 ? 4 : 2; }

double AttentionProblem::effectiveScale() const {
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(headDim));
}

std::string AttentionProblem::validate() const {
  std::ostringstream os;
  auto positive = [&](const char *flag, int64_t v) {
    if (v <= 0 && os.tellp() == 0)
      os << "--" << flag << " must be positive (got " << v << ")";
  };
  positive("batch", batch);
  positive("heads-q", headsQ);
  positive("heads-kv", headsKv);
  positive("seq-q", seqQ);
  positive("seq-kv", seqKv);
  positive("head-dim", headDim);
  if (valueHeadDim < 0 && os.tellp() == 0)
    os << "--value-head-dim must be positive (got " << valueHeadDim << ")";
  if (os.tellp() == 0 && headsQ % headsKv != 0)
    os << "--heads-q (" << headsQ << ") must be a multiple of --heads-kv ("
       << headsKv << ")";
  if (os.tellp() == 0 && scale && (!std::isfinite(*scale) || *scale <= 0))
    os << "--scale must be positive and finite (got " << *scale << ")";
  return os.str();
}

double AttentionProblem::forwardFlops() const {
  double d = 0.5 * static_cast<double>(headDim + vDim());
  double f = 4.0 * batch * headsQ * static_cast<double>(seqQ) * seqKv * d;
  return causal ? f / 2 : f;
}

std::string AttentionProblem::shapeJson() const {
  std::ostringstream os;
  os << "{\"batch\":" << batch << ",\"heads_q\":" << headsQ
     << ",\"heads_kv\":" << headsKv << ",\"seq_q\":" << seqQ
     << ",\"seq_kv\":" << seqKv << ",\"head_dim\":" << headDim
     << ",\"value_head_dim\":" << vDim() << ",\"dtype\":\"" << dtypeName(dtype)
     << "\",\"causal\":" << (causal ? "true" : "false") << "}";
  return os.str();
}
