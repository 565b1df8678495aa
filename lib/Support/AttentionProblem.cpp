//===- AttentionProblem.cpp - one attention's shape and options -----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/AttentionProblem.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
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

int64_t AttentionProblem::totalQ() const {
  if (!isVarlen())
    return batch * seqQ;
  int64_t n = 0;
  for (int64_t l : seqLensQ)
    n += l;
  return n;
}

int64_t AttentionProblem::totalKv() const {
  if (!isVarlen())
    return batch * seqKv;
  int64_t n = 0;
  for (int64_t l : seqLensKv)
    n += l;
  return n;
}

std::vector<int32_t> AttentionProblem::cuSeqlens(bool query) const {
  const std::vector<int64_t> &lens = query ? seqLensQ : seqLensKv;
  std::vector<int32_t> cu = {0};
  for (int64_t l : lens)
    cu.push_back(static_cast<int32_t>(cu.back() + l));
  return cu;
}

AttentionProblem AttentionProblem::sequence(int64_t s) const {
  AttentionProblem p = *this;
  p.seqLensQ.clear();
  p.seqLensKv.clear();
  p.batch = 1;
  p.seqQ = seqLensQ[s];
  p.seqKv = seqLensKv[s];
  return p;
}

std::string AttentionProblem::biasKind() const {
  if (!bias)
    return "";
  return std::string(biasBroadcastBatch ? "1" : "b") +
         (biasBroadcastHeads ? "1" : "h");
}

bool AttentionProblem::setBiasKind(const std::string &kind) {
  bias = false;
  biasBroadcastBatch = biasBroadcastHeads = false;
  if (kind.empty() || kind == "none")
    return true;
  if (kind.size() != 2 || (kind[0] != 'b' && kind[0] != '1') ||
      (kind[1] != 'h' && kind[1] != '1'))
    return false;
  bias = true;
  biasBroadcastBatch = kind[0] == '1';
  biasBroadcastHeads = kind[1] == '1';
  return true;
}

std::pair<int64_t, int64_t> AttentionProblem::keyRange(int64_t i,
                                                       int64_t batchEntry) const {
  int64_t d = topLeft ? i : i + seqKv - seqQ;
  int64_t first = windowLeft >= 0 ? d - windowLeft : 0;
  int64_t last = rightBound() >= 0 ? d + rightBound() + 1 : seqKv;
  if (batchEntry >= 0 && hasKeyRanges()) {
    first = std::max(first, keyStarts[batchEntry]);
    last = std::min(last, keyEnds[batchEntry]);
  }
  first = std::clamp<int64_t>(first, 0, seqKv);
  last = std::clamp<int64_t>(last, first, seqKv);
  return {first, last};
}

float AttentionProblem::alibiSlope(int64_t b, int64_t h) const {
  return static_cast<float>(
      std::exp2(-8.0 * static_cast<double>(h + 1) / headsQ) *
      (1.0 + static_cast<double>(b) / 8.0));
}

std::vector<float> AttentionProblem::alibiSlopes() const {
  std::vector<float> slopes;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < headsQ; ++h)
      slopes.push_back(alibiSlope(b, h));
  return slopes;
}

double AttentionProblem::modifyScore(double s, int64_t b, int64_t h,
                                     int64_t i, int64_t j) const {
  if (softcap > 0)
    s = softcap * std::tanh(s / softcap);
  if (alibi) {
    double slope = alibiSlope(b, h);
    int64_t d = topLeft ? i : i + seqKv - seqQ;
    s -= slope * static_cast<double>(std::llabs(d - j));
  }
  return s;
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
  // The kernels take the sizes as i32, and every tensor's element count
  // must fit int64 with room to spare (byte sizes, offsets): beyond that,
  // the size arithmetic of the tools and the runtime would overflow.
  auto fitsI32 = [&](const char *flag, int64_t v) {
    if (v > INT32_MAX && os.tellp() == 0)
      os << "--" << flag << " must be at most 2147483647 (the kernels take "
         << "it as i32; got " << v << ")";
  };
  fitsI32("batch", batch);
  fitsI32("heads-q", headsQ);
  fitsI32("heads-kv", headsKv);
  fitsI32("seq-q", seqQ);
  fitsI32("seq-kv", seqKv);
  fitsI32("head-dim", headDim);
  fitsI32("value-head-dim", valueHeadDim);
  auto elements = [](int64_t b, int64_t h, int64_t n, int64_t d) {
    return static_cast<long double>(b) * h * n * d;
  };
  if (os.tellp() == 0 &&
      std::max({elements(batch, headsQ, seqQ, headDim),
                elements(batch, headsKv, seqKv, headDim),
                elements(batch, headsKv, seqKv, vDim()),
                elements(batch, headsQ, seqQ, vDim())}) >
          static_cast<long double>(int64_t(1) << 60))
    os << "the tensors are too large: batch x heads x sequence length x "
          "head dim must be at most 2^60 elements for each of Q, K, V, O";
  if (os.tellp() == 0 && headsQ % headsKv != 0)
    os << "--heads-q (" << headsQ << ") must be a multiple of --heads-kv ("
       << headsKv << ")";
  if (os.tellp() == 0 && scale && (!std::isfinite(*scale) || *scale <= 0))
    os << "--scale must be positive and finite (got " << *scale << ")";
  if (os.tellp() == 0 && (windowLeft < -1 || windowRight < -1))
    os << "--window-left and --window-right must be >= 0, or -1 for "
          "unbounded (got "
       << windowLeft << ", " << windowRight << ")";
  // keyRange adds the window to a row index: keep it within i32 as well.
  fitsI32("window-left", windowLeft);
  fitsI32("window-right", windowRight);
  if (os.tellp() == 0 && causal && windowRight > 0)
    os << "--causal bounds the window's right side at 0: --window-right "
       << windowRight << " contradicts it";
  if (os.tellp() == 0 && topLeft && !hasMask())
    os << "--top-left aligns a mask: it needs --causal or a window";
  if (os.tellp() == 0 && (!std::isfinite(softcap) || softcap < 0))
    os << "--softcap must be positive and finite (got " << softcap << ")";
  if (os.tellp() == 0 && seqLensQ.size() != seqLensKv.size())
    os << "--seq-lens-q and --seq-lens-kv must list the same number of "
          "sequences (got "
       << seqLensQ.size() << " and " << seqLensKv.size() << ")";
  if (os.tellp() == 0 && isVarlen()) {
    int64_t maxQ = 1, maxKv = 1, total = 0;
    bool overflow = false;
    for (size_t s = 0; s < seqLensQ.size() && os.tellp() == 0; ++s) {
      if (seqLensQ[s] < 0 || seqLensKv[s] < 0)
        os << "--seq-lens-q/--seq-lens-kv: sequence " << s
           << " has a negative length";
      maxQ = std::max(maxQ, seqLensQ[s]);
      maxKv = std::max(maxKv, seqLensKv[s]);
      // Checked: the lengths come from a file or a caller, and seqQ/seqKv
      // (checked above) need not be their maximum yet. LLVM-free, so the
      // compiler builtin rather than llvm::checkedAdd.
      overflow =
          overflow || __builtin_add_overflow(
                          total, std::max(seqLensQ[s], seqLensKv[s]), &total);
    }
    if (os.tellp() == 0 && (overflow || total > INT32_MAX))
      os << "--seq-lens-q/--seq-lens-kv: the packed tokens overflow the "
            "int32 cu_seqlens";
    if (os.tellp() == 0 &&
        (batch != static_cast<int64_t>(seqLensQ.size()) || seqQ != maxQ ||
         seqKv != maxKv))
      os << "variable length: batch must be the number of sequences and "
            "seq-q/seq-kv their maximum lengths (got batch "
         << batch << ", seq " << seqQ << "/" << seqKv << ")";
    if (os.tellp() == 0 && bias)
      os << "--bias cannot be combined with --seq-lens-q (a packed batch "
            "has no [B, H, Nq, Nk] bias)";
    if (os.tellp() == 0 && hasKeyRanges())
      os << "--key-starts/--key-ends cannot be combined with --seq-lens-q "
            "(each packed sequence has its own keys already)";
  }
  if (os.tellp() == 0 && keyStarts.size() != keyEnds.size())
    os << "--key-starts and --key-ends must be given together";
  if (os.tellp() == 0 && hasKeyRanges() &&
      static_cast<int64_t>(keyStarts.size()) != batch)
    os << "--key-starts/--key-ends must list one key range per batch entry "
          "(got "
       << keyStarts.size() << " for batch " << batch << ")";
  for (size_t b = 0; b < keyStarts.size() && os.tellp() == 0; ++b)
    if (keyStarts[b] < 0 || keyEnds[b] < keyStarts[b] ||
        keyEnds[b] > seqKv)
      os << "--key-starts/--key-ends: batch entry " << b << "'s range ["
         << keyStarts[b] << ", " << keyEnds[b] << ") is not within [0, "
         << seqKv << "]";
  return os.str();
}

double AttentionProblem::forwardFlops() const {
  if (isVarlen()) {
    double f = 0;
    for (size_t s = 0; s < seqLensQ.size(); ++s)
      if (seqLensQ[s] > 0 && seqLensKv[s] > 0)
        f += sequence(s).forwardFlops();
    return f;
  }
  double d = 0.5 * static_cast<double>(headDim + vDim());
  double f = 4.0 * batch * headsQ * static_cast<double>(seqQ) * seqKv * d;
  // DESIGN.md's convention (halved when causal) is for Nq = Nk; with
  // Nq != Nk a causal mask keeps a different share per alignment, so count.
  if (windowLeft < 0 && windowRight < 0 && (!causal || seqQ == seqKv))
    return causal ? f / 2 : f;
  // Windows and causal Nq != Nk: count the (query, key) pairs the mask keeps.
  double pairs = 0;
  for (int64_t i = 0; i < seqQ; ++i) {
    auto [first, last] = keyRange(i);
    pairs += static_cast<double>(last - first);
  }
  return 4.0 * batch * headsQ * pairs * d;
}

std::string AttentionProblem::shapeJson() const {
  std::ostringstream os;
  os << "{\"batch\":" << batch << ",\"heads_q\":" << headsQ
     << ",\"heads_kv\":" << headsKv << ",\"seq_q\":" << seqQ
     << ",\"seq_kv\":" << seqKv << ",\"head_dim\":" << headDim
     << ",\"value_head_dim\":" << vDim() << ",\"dtype\":\"" << dtypeName(dtype)
     << "\",\"causal\":" << (causal ? "true" : "false");
  // The variant fields only when set, so plain problems read as before.
  if (topLeft)
    os << ",\"mask_align\":\"top_left\"";
  if (windowLeft >= 0 || windowRight >= 0)
    os << ",\"window\":[" << windowLeft << "," << windowRight << "]";
  if (softcap > 0)
    os << ",\"softcap\":" << softcap;
  if (alibi)
    os << ",\"alibi\":true";
  if (customScoreMod)
    os << ",\"score_mod\":\"custom\"";
  auto list = [&](const char *name, const std::vector<int64_t> &xs) {
    os << ",\"" << name << "\":[";
    for (size_t s = 0; s < xs.size(); ++s)
      os << (s ? "," : "") << xs[s];
    os << "]";
  };
  if (isVarlen()) {
    list("seq_lens_q", seqLensQ);
    list("seq_lens_kv", seqLensKv);
  }
  if (bias)
    os << ",\"bias\":\"" << biasKind() << "\"";
  if (hasKeyRanges()) {
    list("key_starts", keyStarts);
    list("key_ends", keyEnds);
  }
  os << "}";
  return os.str();
}
