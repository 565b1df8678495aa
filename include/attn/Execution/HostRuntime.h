//===- HostRuntime.h - runtime functions of JIT-compiled host code -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_HOSTRUNTIME_H
#define ATTN_EXECUTION_HOSTRUNTIME_H

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mlir::attn {

/// Resolves the runtime functions the lowered host code calls beyond libc
/// (memrefCopy, for strided memref.copy) from attn itself. Upstream they
/// live in libmlir_c_runner_utils.so, which links libMLIR.so and
/// libLLVM.so: a process with attn's self-contained library (the Python
/// wheel) would load a second MLIR, or fail where there is none.
void registerHostRuntimeSymbols(ExecutionEngine &engine);

} // namespace mlir::attn

#endif // ATTN_EXECUTION_HOSTRUNTIME_H
