//===- Pipelines.h - named attn pass pipelines ------------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::attn {

/// Options of `attn-to-cpu`: which algorithm to run on the host.
struct AttnToCPUOptions : public PassPipelineOptions<AttnToCPUOptions> {
  PassOptions::Option<bool> tiled{
      *this, "tiled",
      llvm::cl::desc("Run the tiled, fused FlashAttention algorithm (default) "
                     "instead of the reference lowering"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> blockM{
      *this, "block-m", llvm::cl::desc("Query rows per block; 0 = heuristic"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockN{
      *this, "block-n",
      llvm::cl::desc("Key/value rows per block; 0 = heuristic"),
      llvm::cl::init(0)};
};

/// attn.attention on tensors -> the algorithm (tiled or reference) on tensors.
void buildAttnAlgorithmPipeline(OpPassManager &pm,
                                const AttnToCPUOptions &options);

/// The whole CPU path: the algorithm, bufferization, loops, LLVM dialect.
/// Functions must take memrefs (destination-passing style).
void buildAttnToCPUPipeline(OpPassManager &pm, const AttnToCPUOptions &options);

/// Tensors -> buffers -> loops -> LLVM dialect, for the host. Used after the
/// algorithm pipeline by buildAttnToCPUPipeline.
void buildHostLoweringPipeline(OpPassManager &pm);

/// Registers `attn-to-cpu` (and later pipelines) for attn-opt.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
