//===- InitAll.h - register everything attn provides ------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// One place that registers the attn dialect, the upstream dialects its
// pipelines produce, its passes and pipelines. Shared by attn-opt, the other
// tools, the C API and Python.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_INITALL_H
#define ATTN_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::attn {

/// The attn dialect, the dialects its pipelines produce, and their
/// interface implementations (bufferization, translation to LLVM IR).
void registerAllDialects(DialectRegistry &registry);

/// attn passes, attn pipelines, and the upstream passes those pipelines use.
void registerAllPasses();

} // namespace mlir::attn

#endif // ATTN_INITALL_H
