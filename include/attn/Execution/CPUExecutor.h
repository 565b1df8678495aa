//===- CPUExecutor.h - run an attention module on the host ------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_CPUEXECUTOR_H
#define ATTN_EXECUTION_CPUEXECUTOR_H

#include "attn/Support/AttentionProblem.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::attn {

/// Host buffers in the problem's storage format (raw bits for 16-bit types,
/// float32 otherwise), dense [B, H, N, D] (packed [T, H, D] and LSE [H, T]
/// for variable length, whose cu_seqlens come from the problem); `bias`
/// [B|1, Hq|1, Nq, Nk] when the problem has one.
struct HostTensors {
  std::vector<uint8_t> q, k, v, out, bias;
  std::vector<float> lse;
};

/// JIT-compiles `module` (already lowered to the LLVM dialect, entry
/// kAttentionEntry) and runs it once on `t`. Returns the time of the call in
/// seconds.
llvm::Expected<double> runOnHost(ModuleOp module,
                                 const ::attn::AttentionProblem &p,
                                 HostTensors &t);

/// Buffers of the backward module (buildAttentionBackwardModule): inputs q,
/// k, v and the output gradient dout; outputs out, lse, dq, dk, dv.
struct BackwardHostTensors {
  std::vector<uint8_t> q, k, v, dout, out, dq, dk, dv;
  std::vector<float> lse;
};

/// As runOnHost, for a backward module (entry kAttentionBackwardEntry).
llvm::Expected<double> runBackwardOnHost(ModuleOp module,
                                         const ::attn::AttentionProblem &p,
                                         BackwardHostTensors &t);

} // namespace mlir::attn

#endif // ATTN_EXECUTION_CPUEXECUTOR_H
