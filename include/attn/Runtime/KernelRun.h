//===- KernelRun.h - run, check and time one kernel -------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The measurement every GPU tool shares (attn-launch, attn-run --target
// cuda, the tuner): fresh random inputs rounded to the dtype, outputs
// poisoned with NaN, one launch checked against the float64 host reference,
// then CUDA-event timing rotating among enough input sets that one pass is
// several times the L2 (so small shapes are timed from device memory), and
// a bit-for-bit comparison of two sets' outputs as a cheap race detector.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_KERNELRUN_H
#define ATTN_RUNTIME_KERNELRUN_H

#include "attn/Runtime/Check.h"
#include "attn/Runtime/Runtime.h"
#include "attn/Support/SpecialValues.h"

#include <optional>
#include <string>
#include <vector>

namespace attn::runtime {

struct RunOptions {
  uint64_t seed = 0;
  double inputRange = 1.0; // Q and K ~ U(-r, r); V ~ U(-1, 1)
  bool check = true;
  int64_t checkRows = 0;   // 0 = CheckOptions' budget decides
  bool time = false;
  int64_t warmup = 5;
  int64_t reps = 20;
  /// Chosen input values over the random ones (attn-launch --special);
  /// when there are any, every row is checked against the reference, which
  /// says where NaN and infinities belong.
  std::vector<SpecialValue> specials;
};

/// Everything a run reports.
struct RunResult {
  std::string entry, from, note, device;
  AttentionProblem problem; // the launch shape: set before runKernel
  LaunchGeometry geometry;
  int registers = -1;
  /// False for an empty problem (batch 0 or seq_q 0): nothing to launch.
  bool launched = true;
  std::optional<CheckReport> check;
  std::optional<double> timeMs, timeMinMs;
  int64_t reps = 0, sets = 0;
  std::optional<bool> sameAcrossSets;

  bool ok() const { return !check || check->ok; }
};

/// Runs `kernel` on `res.problem` as RunOptions says, filling `res`.
Status runKernel(const Kernel &kernel, const RunOptions &options,
                 RunResult &res);

/// The one-line JSON report (attn-run's field names, plus time_ms, tflops,
/// buffer_sets, same_across_sets).
std::string runResultJson(const RunOptions &options, const RunResult &res,
                          const std::string &dir);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_KERNELRUN_H
