//===- BackwardRun.h - run, check and time backward kernels -----*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// attn-launch's backward mode: random Q, K, V, dO; O and LSE from the
// float64 host reference (rounded as a forward kernel would store them);
// the backward kernels into NaN-poisoned dQ, dK, dV; the gradients against
// the float64 reference; optional timing and a repeatability check.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_BACKWARDRUN_H
#define ATTN_RUNTIME_BACKWARDRUN_H

#include "attn/Runtime/Backward.h"
#include "attn/Runtime/KernelRun.h"

namespace attn::runtime {

struct BackwardRunResult {
  std::string entry, from, device;
  AttentionProblem problem; // the launch shape: set before the run
  std::optional<ErrorStats> dq, dk, dv;
  double tolerance = 0;
  std::optional<double> timeMs, timeMinMs;
  int64_t reps = 0;
  /// Whether `repeats` further runs gave bit-identical gradients.
  std::optional<bool> repeatable;
  int64_t repeats = 0;

  bool ok() const;
};

/// `repeats` > 0 reruns the kernels that many times on the same inputs and
/// compares the gradients bit for bit.
Status runBackwardKernel(const BackwardKernel &kernel,
                         const RunOptions &options, int64_t repeats,
                         BackwardRunResult &res);

std::string backwardRunResultJson(const RunOptions &options,
                                  const BackwardRunResult &res,
                                  const std::string &dir);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_BACKWARDRUN_H
