//===- BackwardBench.h - one backward shape's inputs and reference -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The backward counterpart of ShapeBench: random Q, K, V and dO; O and the
// LSE from the bundle's forward kernel on the GPU (checked against float64
// first); the float64 gradients of sampled rows of dQ, dK and dV for those
// operands (attn.attention_grad's definition: P = exp(scale·Q·Kᵀ − LSE),
// Δ = rowsum(dO ∘ O), dS = P ∘ (dO·Vᵀ − Δ)); then per candidate its
// launches, one download of the gradients and a scan of them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTN_TUNE_BACKWARDBENCH_H
#define ATTN_TOOLS_ATTN_TUNE_BACKWARDBENCH_H

#include "ShapeBench.h"

#include "attn/Runtime/Backward.h"

namespace attn::tune {

class BackwardBench {
public:
  /// Inputs, buffer sets (a pass over them three times the L2), O and the
  /// LSE from `forward` and the reference rows, in the current context.
  /// `workspaceBytes`: the largest workspace a candidate needs. An error
  /// when the forward kernel's O or LSE fail the float64 check.
  static runtime::Expected<std::unique_ptr<BackwardBench>>
  create(const runtime::CudaDriver &d, const AttentionProblem &p,
         const runtime::Kernel &forward, uint64_t workspaceBytes,
         const BenchOptions &o);
  ~BackwardBench();

  /// Poisons set 0's dQ, dK, dV and workspace with NaN, launches `k` once
  /// and compares the sampled rows of each gradient with the reference;
  /// every gradient element must be finite.
  runtime::Status check(const runtime::BackwardKernel &k, BenchCheck &out);
  /// As ShapeBench::time, one sample per backward pass (all its kernels).
  runtime::Status time(const runtime::BackwardKernel &k, int64_t warmup,
                       int64_t reps, std::vector<float> &samples);
  /// Two runs on the same inputs: dK and dV bit-identical, and dQ too when
  /// `deterministic` (atomic dQ sums in any order).
  runtime::Status repeatable(const runtime::BackwardKernel &k,
                             bool deterministic, bool &same);
  bool healthy();

  int64_t sets() const { return static_cast<int64_t>(bufs.size()); }
  double inputSeconds = 0, referenceSeconds = 0;
  /// The forward kernel's errors against float64 (O, LSE).
  double forwardRelErr = -1, forwardLseRelErr = -1;

private:
  explicit BackwardBench(const runtime::CudaDriver &d);
  struct Set;
  runtime::Status launchOn(const runtime::BackwardKernel &k, size_t set);
  runtime::Status download(size_t set);

  const runtime::CudaDriver &d;
  AttentionProblem p;
  BenchOptions opts;
  runtime::OwnedStream stream{d};
  std::vector<std::unique_ptr<Set>> bufs;
  size_t qBytes = 0, kBytes = 0, vBytes = 0, oBytes = 0, lseBytes = 0,
         wsBytes = 0;
  runtime::HostTensor q, k, v, o, dO, dq, dk, dv;
  std::vector<float> lse;
  // Sampled rows: (batch * heads_q + head, query row) for dQ and (batch *
  // heads_kv + head, key row) for dK and dV, with their float64 values.
  std::vector<std::pair<int64_t, int64_t>> qRows, kRows;
  std::vector<double> wantDq, wantDk, wantDv;
};

} // namespace attn::tune

#endif // ATTN_TOOLS_ATTN_TUNE_BACKWARDBENCH_H
