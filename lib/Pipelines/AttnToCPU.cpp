//===- AttnToCPU.cpp - attn.attention to LLVM for the host ----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::buildAttnAlgorithmPipeline(OpPassManager &pm,
                                            const AttnToCPUOptions &options) {
  if (options.tiled) {
    AttnTileOptions tile;
    tile.blockM = options.blockM;
    tile.blockN = options.blockN;
    pm.addPass(createAttnTile(tile));
    pm.addPass(createAttnFuseOnlineSoftmax());
    // The backward's block sizes: the options, else 32 x 32.
    AttnTileAttentionGradOptions grad;
    grad.blockM = options.blockM ? options.blockM : 32;
    grad.blockN = options.blockN ? options.blockN : 32;
    grad.deterministic = options.deterministic;
    pm.addPass(createAttnTileAttentionGrad(grad));
  } else {
    pm.addPass(createAttnLowerToReference());
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::attn::buildAttnToCPUPipeline(OpPassManager &pm,
                                        const AttnToCPUOptions &options) {
  buildAttnAlgorithmPipeline(pm, options);
  buildHostLoweringPipeline(pm);
}

void mlir::attn::buildHostLoweringPipeline(OpPassManager &pm) {
  // Tensors -> buffers. Functions already take memrefs.
  bufferization::OneShotBufferizePassOptions bufferize;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createForallToForLoopPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Tiles allocated inside the loops are freed again.
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createCanonicalizerPass());

  // Loops and buffers -> LLVM. bf16 conversions are expanded to integer
  // arithmetic because the JIT has no bf16 runtime helpers.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::attn::registerAttnPipelines() {
  registerAttnPipelinePasses();
  PassPipelineRegistration<AttnToCPUOptions>(
      "attn-to-cpu",
      "Lower attn.attention (in functions taking memrefs) to the LLVM dialect "
      "for execution on the host",
      buildAttnToCPUPipeline);
  PassPipelineRegistration<AttnToPTXOptions>(
      "attn-to-ptx",
      "Compile every attn.attention into a tensor-core FlashAttention kernel "
      "and serialise the kernels to PTX (or cubin)",
      buildAttnToPTXPipeline);
}
