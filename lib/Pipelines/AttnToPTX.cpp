//===- AttnToPTX.cpp - attn.attention to PTX ------------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::buildAttnToGPUKernelsPipeline(
    OpPassManager &pm, const AttnToPTXOptions &options) {
  // 1. One FlashAttention kernel per attn.attention, in gpu.module
  //    @attn_kernels; the ops are annotated with their kernel.
  ConvertAttnToGPUOptions gpu;
  gpu.chip = options.chip;
  gpu.blockM = options.blockM;
  gpu.blockN = options.blockN;
  gpu.stages = options.stages;
  pm.addPass(createConvertAttnToGPU(gpu));

  // 2. Inside the kernels: structured control flow and the GPU/arith ops
  //    to NVVM + LLVM. 32-bit indices match the kernels' i32 arithmetic.
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.indexBitwidth = 32;
  kernels.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());

  // 3. The NVPTX target the kernels are compiled for.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
}

void mlir::attn::buildAttnToPTXPipeline(OpPassManager &pm,
                                        const AttnToPTXOptions &options) {
  buildAttnToGPUKernelsPipeline(pm, options);
  // 4. LLVM's NVPTX back end turns each gpu.module into a gpu.binary that
  //    holds PTX ("isa"); attn-compile assembles cubins with ptxas itself to
  //    read its resource report.
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}
