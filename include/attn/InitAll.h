//===- InitAll.h - register everything attn provides ------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// One place that registers the attn dialect, the upstream dialects its
// pipelines produce, its passes and pipelines. Shared by attn-opt, the other
// tools, the C API and Python.
//
// A compiler that embeds attn needs only registerAttnDialect (into its own
// registry) and, to name attn's passes and pipelines in textual pipelines,
// registerAttnPasses; attn's passes load every dialect and interface they
// produce or need. registerAllDialects / registerAllPasses are for tools
// that also run the upstream passes one by one (attn-opt).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_INITALL_H
#define ATTN_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::attn {

/// The attn dialect alone.
void registerAttnDialect(DialectRegistry &registry);

/// Every attn pass (attn-raise-attention, attn-tile, ..., convert-attn-to-gpu,
/// attn-compile-kernels) and the named pipelines attn-to-cpu and
/// attn-to-ptx. No upstream passes.
void registerAttnPasses();

/// The attn dialect, the dialects its pipelines produce, and their
/// interface implementations (bufferization, translation to LLVM IR).
void registerAllDialects(DialectRegistry &registry);

/// attn passes, attn pipelines, and the upstream passes those pipelines use.
void registerAllPasses();

/// `-debug` and `-debug-only=<type>[,...]` for tools linked against an LLVM
/// built without assertions (Debian's), which lacks both; attn's passes
/// print under them (e.g. -debug-only=attn-raise-attention). Does nothing
/// where LLVM has them. Call before parsing the command line.
void registerDebugOptions();

} // namespace mlir::attn

#endif // ATTN_INITALL_H
