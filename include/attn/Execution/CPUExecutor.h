//===- CPUExecutor.h - run an attention module on the host ------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_CPUEXECUTOR_H
#define ATTN_EXECUTION_CPUEXECUTOR_H

#include "attn/Support/AttentionProblem.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mlir::attn {

/// One memref argument: a dense row-major host buffer and its shape.
struct HostBuffer {
  void *data;
  llvm::SmallVector<int64_t, 4> shape;
};

/// A module lowered to the LLVM dialect, JIT-compiled once and then called
/// any number of times (from any thread: the compiled functions keep no
/// state).
class HostModule {
public:
  static llvm::Expected<std::unique_ptr<HostModule>> compile(ModuleOp module);
  ~HostModule();

  /// Calls `entry` (a function with `llvm.emit_c_interface`) with one memref
  /// descriptor per buffer, in order. Returns the time of the call in
  /// seconds.
  llvm::Expected<double> call(llvm::StringRef entry,
                              llvm::ArrayRef<HostBuffer> args) const;

private:
  explicit HostModule(std::unique_ptr<ExecutionEngine> engine);
  std::unique_ptr<ExecutionEngine> engine;
};

/// Host buffers in the problem's storage format (raw bits for 16-bit types,
/// float32 otherwise), dense [B, H, N, D] (packed [T, H, D] and LSE [H, T]
/// for variable length, whose cu_seqlens come from the problem); `bias`
/// [B|1, Hq|1, Nq, Nk] when the problem has one.
struct HostTensors {
  std::vector<uint8_t> q, k, v, out, bias;
  std::vector<float> lse;
};

/// The arguments of buildAttentionModule's entry for `p`, over these
/// buffers (`bias`, `cuQ`/`cuKv`, the key ranges, `alibiSlopes` (f32
/// [B, Hq]) and `lse` are used only when `p` has them; `scale`, the
/// memref<f32> of a module built with ScaleSource::Argument, only when not
/// null).
llvm::SmallVector<HostBuffer>
forwardArguments(const ::attn::AttentionProblem &p, void *q, void *k, void *v,
                 void *bias, int32_t *cuQ, int32_t *cuKv, void *out, float *lse,
                 float *scale = nullptr, int32_t *keyStart = nullptr,
                 int32_t *keyEnd = nullptr, float *alibiSlopes = nullptr);

/// The arguments of buildHostAttentionGradModule's entry for the dense
/// problem `p`: q, k, v, out, dout, lse, [key_start, key_end] (when not
/// null: a key_range problem), [alibi_slopes] (f32 [B, Hq], when
/// p.alibi), [scale] (when not null, for a module built with
/// ScaleSource::Argument), then dq, dk, dv.
llvm::SmallVector<HostBuffer>
gradArguments(const ::attn::AttentionProblem &p, void *q, void *k, void *v,
              void *out, void *dout, float *lse, void *dq, void *dk, void *dv,
              float *scale = nullptr, int32_t *keyStart = nullptr,
              int32_t *keyEnd = nullptr, float *alibiSlopes = nullptr);

/// JIT-compiles `module` (already lowered to the LLVM dialect, entry
/// kAttentionEntry) and runs it once on `t`. Returns the time of the call in
/// seconds.
llvm::Expected<double>
runOnHost(ModuleOp module, const ::attn::AttentionProblem &p, HostTensors &t);

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
