//===- HostLoweringRun.h - attn-run --host-lowering ------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTN_RUN_HOSTLOWERINGRUN_H
#define ATTN_TOOLS_ATTN_RUN_HOSTLOWERINGRUN_H

#include "attn/Support/AttentionProblem.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace attn::tools {

struct HostLoweringRunOptions {
  std::string chip = "sm_90a";
  int64_t blockM = 0, blockN = 0, warpRows = 0;
  uint64_t seed = 0;
  double inputRange = 1.0; // Q and K ~ U(-r, r); V ~ U(-1, 1)
  int64_t checkRows = 0;   // 0 = the checker's budget decides
};

struct HostLoweringRunResult {
  std::string json; // one line, attn-run's field names
  bool ok = false;  // within tolerance
};

/// The forward attention of `p` through MLIR's host code instead of the
/// runtime's manifest launch: convert-attn-to-gpu, convert-attn-to-gpu-launch
/// and attn-compile-kernels (PTX), bufferization and upstream gpu-to-llvm,
/// JIT-compiled with attn's mgpu* functions and called on device buffers of
/// fresh random inputs (outputs poisoned); O and LSE are checked against the
/// float64 reference. Errors (no driver, a diagnostic, a failed CUDA call)
/// are an llvm::Error with the message.
llvm::Expected<HostLoweringRunResult>
runThroughHostLowering(const AttentionProblem &p,
                       const HostLoweringRunOptions &options);

} // namespace attn::tools

#endif // ATTN_TOOLS_ATTN_RUN_HOSTLOWERINGRUN_H
