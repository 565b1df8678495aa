//===- AttentionProblem.h - one attention's shape and options ---*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// MLIR-free, so the runtime and tools built on the GPU host can use it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_ATTENTIONPROBLEM_H
#define ATTN_SUPPORT_ATTENTIONPROBLEM_H

#include <cstdint>
#include <optional>
#include <string>

namespace attn {

enum class DType { f16, bf16, f32 };

/// Parses "f16", "bf16" or "f32"; std::nullopt otherwise.
std::optional<DType> parseDType(const std::string &name);
const char *dtypeName(DType t);
int64_t dtypeBytes(DType t);

/// Everything that defines one attention problem: the shapes of
/// Q [B, Hq, Nq, D], K [B, Hkv, Nk, D], V [B, Hkv, Nk, Dv] and the options.
struct AttentionProblem {
  int64_t batch = 1;
  int64_t headsQ = 1;
  int64_t headsKv = 1;
  int64_t seqQ = 128;
  int64_t seqKv = 128;
  int64_t headDim = 64;
  int64_t valueHeadDim = 0; // 0 = same as headDim
  DType dtype = DType::f32;
  bool causal = false;
  bool withLse = true;
  std::optional<double> scale; // default 1/sqrt(headDim)

  int64_t vDim() const { return valueHeadDim ? valueHeadDim : headDim; }
  double effectiveScale() const;
  /// Why this problem is not valid ("" when it is), naming the flag at fault.
  std::string validate() const;
  /// Forward FLOPs by the project's convention: 4·B·H·Nq·Nk·D, halved when
  /// causal (D is the mean of the two head dims when they differ).
  double forwardFlops() const;
  /// Compact JSON object with the shape fields.
  std::string shapeJson() const;
};

} // namespace attn

#endif // ATTN_SUPPORT_ATTENTIONPROBLEM_H
