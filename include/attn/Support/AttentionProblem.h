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
#include <utility>
#include <vector>

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
  /// The mask: query row i is aligned with key d(i) = i + (Nk - Nq)
  /// (bottom-right, FlashAttention) or i (`topLeft`, torch's is_causal) and
  /// sees keys d(i) - windowLeft ... d(i) + windowRight; -1 = unbounded;
  /// `causal` bounds the right side at 0.
  bool causal = false;
  bool topLeft = false;
  int64_t windowLeft = -1;
  int64_t windowRight = -1;
  /// Score modification, on the scaled score before the mask: softcap
  /// (c·tanh(s/c), 0 = none), then ALiBi (s − slope_bh·|d(i) − j|, the
  /// slopes a run-time [B, Hq] operand: alibiSlopes()), or a user region the
  /// host cannot reproduce.
  double softcap = 0.0;
  bool alibi = false;
  bool customScoreMod = false;
  bool withLse = true;
  std::optional<double> scale; // default 1/sqrt(headDim)
  /// Variable length (FlashAttention's varlen, cu_seqlens): the query and
  /// key length of each sequence; empty = a dense batch. When set, `batch`
  /// is their count and seqQ/seqKv are max_seqlen_q/kv (at least 1).
  std::vector<int64_t> seqLensQ, seqLensKv;
  /// Additive bias [B|1, Hq|1, Nq, Nk] (after the score modification,
  /// before the mask); a broadcast dim has size 1.
  bool bias = false;
  /// Key padding (attn.attention's key_range): batch entry b sees only keys
  /// [keyStarts[b], keyEnds[b]) (clamped to [0, seqKv]); empty = none, else
  /// both have `batch` entries.
  std::vector<int64_t> keyStarts, keyEnds;
  bool biasBroadcastBatch = false;
  bool biasBroadcastHeads = false;

  int64_t vDim() const { return valueHeadDim ? valueHeadDim : headDim; }
  bool isVarlen() const { return !seqLensQ.empty(); }
  /// Packed tokens (varlen), else batch · seq.
  int64_t totalQ() const;
  int64_t totalKv() const;
  /// cu_seqlens_q (query) or cu_seqlens_kv: [batch + 1] prefix sums.
  std::vector<int32_t> cuSeqlens(bool query) const;
  /// Sequence s of a varlen problem as a dense problem of batch 1.
  AttentionProblem sequence(int64_t s) const;
  int64_t biasBatch() const { return biasBroadcastBatch ? 1 : batch; }
  int64_t biasHeads() const { return biasBroadcastHeads ? 1 : headsQ; }
  /// "bh", "1h", "b1" or "11" (the --bias flag), "" without a bias.
  std::string biasKind() const;
  /// Sets the bias from biasKind's spelling; false if `kind` is none of
  /// them (and not "none").
  bool setBiasKind(const std::string &kind);
  double effectiveScale() const;
  /// Whether some key is masked out (beyond the sequence end).
  bool hasMask() const { return causal || windowLeft >= 0 || windowRight >= 0; }
  int64_t rightBound() const { return causal ? 0 : windowRight; }
  bool hasKeyRanges() const { return !keyStarts.empty(); }
  /// keyStarts (`starts`) or keyEnds as the kernels' i32 [batch] operand.
  std::vector<int32_t> keyBounds(bool starts) const {
    const std::vector<int64_t> &xs = starts ? keyStarts : keyEnds;
    return std::vector<int32_t>(xs.begin(), xs.end());
  }
  /// The keys [first, last) query row i sees (first == last: none); with
  /// `batchEntry` given, within that entry's key range too.
  std::pair<int64_t, int64_t> keyRange(int64_t i,
                                       int64_t batchEntry = -1) const;
  bool hasScoreMod() const { return softcap > 0 || alibi || customScoreMod; }
  /// The ALiBi slope the tools run with for batch entry b, query head h:
  /// ALiBi's 2^(−8(h+1)/Hq), times 1 + b/8 so that a kernel reading another
  /// entry's slope is caught (the kernels take any slopes at launch).
  float alibiSlope(int64_t b, int64_t h) const;
  /// All of them, f32 [batch, headsQ] (the slopes operand).
  std::vector<float> alibiSlopes() const;
  /// The modified score of batch entry b, query head h, row i, key j
  /// (softcap, then ALiBi with alibiSlopes()).
  double modifyScore(double s, int64_t b, int64_t h, int64_t i,
                     int64_t j) const;
  /// Why this problem is not valid ("" when it is), naming the flag at fault.
  std::string validate() const;
  /// Forward FLOPs by the project's convention: 4·B·H·Nq·Nk·D, halved when
  /// causal with Nq = Nk; windows and causal Nq != Nk count the kept
  /// (query, key) pairs (D is the mean of the two head dims when they differ).
  double forwardFlops() const;
  /// Compact JSON object with the shape fields.
  std::string shapeJson() const;
};

} // namespace attn

#endif // ATTN_SUPPORT_ATTENTIONPROBLEM_H
