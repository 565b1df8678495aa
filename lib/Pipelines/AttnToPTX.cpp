//===- AttnToPTX.cpp - attn.attention to PTX ------------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/CommandLine.h"

#include <mutex>

using namespace mlir;
using namespace mlir::attn;

/// The kernels keep a dozen shared-memory row pointers live across the
/// key/value loop; as 64-bit values they cost the registers that keep the
/// head-dim 128 kernel from spilling. LLVM's NVPTX back end uses 32-bit
/// shared pointers only under its `nvptx-short-ptr` option, which is
/// process-wide: turn it on (once) whenever a GPU pipeline is built.
static void useShortSharedPointers() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto &options = llvm::cl::getRegisteredOptions();
    auto it = options.find("nvptx-short-ptr");
    if (it != options.end())
      (void)it->second->addOccurrence(0, "nvptx-short-ptr", "true");
  });
}

/// Both GPU pipelines; `format` = "none" stops before serialisation.
static void buildGPUPipeline(OpPassManager &pm, const AttnToPTXOptions &options,
                             StringRef format) {
  useShortSharedPointers();
  // 1. The kernel of every attention (options, tuning database, heuristic),
  //    recorded on the op as a #attn.kernel_config.
  AttnSelectKernelConfigOptions select;
  select.chip = options.chip;
  select.blockM = options.blockM;
  select.blockN = options.blockN;
  select.warpRows = options.warpRows;
  select.stages = options.stages;
  select.family = options.family;
  select.sm90Schedule = options.sm90Schedule;
  select.deterministic = options.deterministicGrad;
  select.exp2Emulated = options.exp2Emulated;
  select.wideProducer = options.wideProducer;
  select.sectionMb = options.sectionMb;
  select.tuningDb = options.tuningDb;
  select.tuningGpu = options.tuningGpu;
  pm.addPass(createAttnSelectKernelConfig(select));

  // 2. That kernel, in gpu.module @attn_kernels; the ops are annotated with
  //    it and its launch.
  ConvertAttnToGPUOptions gpu;
  gpu.chip = options.chip;
  pm.addPass(createConvertAttnToGPU(gpu));

  // 3. Inside @attn_kernels only: the attn_gpu kernel IR to NVVM, then
  //    GPU/arith ops to NVVM + LLVM, the NVPTX
  //    target, and LLVM's NVPTX back end turning the module into a
  //    gpu.binary (PTX for "isa"; attn-compile assembles cubins with ptxas
  //    itself to read its resource report).
  AttnCompileKernelsOptions kernels;
  kernels.chip = options.chip;
  kernels.features = options.features;
  kernels.optLevel = options.optLevel;
  kernels.format = format.str();
  pm.addPass(createAttnCompileKernels(kernels));
}

void mlir::attn::buildAttnToGPUKernelsPipeline(
    OpPassManager &pm, const AttnToPTXOptions &options) {
  buildGPUPipeline(pm, options, "none");
}

void mlir::attn::buildAttnToPTXPipeline(OpPassManager &pm,
                                        const AttnToPTXOptions &options) {
  buildGPUPipeline(pm, options, options.format);
}

FailureOr<StringRef> mlir::attn::getAttnKernelsObject(ModuleOp module) {
  auto binary = module.lookupSymbol<gpu::BinaryOp>(kAttnKernelModule);
  if (!binary || binary.getObjects().empty())
    return failure();
  auto object = dyn_cast<gpu::ObjectAttr>(binary.getObjects()[0]);
  if (!object)
    return failure();
  return object.getObject().getValue();
}
