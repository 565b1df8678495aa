//===- ConvertAttnGradToGPU.cpp - attn.attention_grad -> GPU kernels ------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The backward half of convert-attn-to-gpu: three kernels per
// attn.attention_grad (FlashBackwardKernel.h; with the sm90a family the
// dkdv kernel is HopperBackwardKernel.h's), described on the op for
// attn-compile's manifest.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/FlashBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/HopperBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/KernelCapabilities.h"
#include "attn/Conversion/AttnToGPU/KernelSelection.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

LogicalResult mlir::attn::checkKernelName(Operation *op, StringRef name,
                                          const llvm::StringSet<> &inputSymbols) {
  if (!inputSymbols.contains(name))
    return success();
  return op->emitOpError()
         << "cannot be compiled for the GPU: the input's gpu.module "
            "@attn_kernels already holds a symbol named '"
         << name << "', the name of the kernel generated for it";
}

LogicalResult
mlir::attn::convertAttentionGradOps(ModuleOp module, gpu::GPUModuleOp kernels,
                                    StringRef chip,
                                    const llvm::StringSet<> &inputSymbols) {
  SmallVector<AttentionGradOp> ops;
  module.walk([&](AttentionGradOp op) { ops.push_back(op); });
  OpBuilder b(module.getContext());
  for (AttentionGradOp op : ops) {
    auto attr = op->getAttrOfType<KernelConfigAttr>(kKernelConfigAttrName);
    if (!attr)
      return op.emitOpError() << "expected attribute '"
                              << kKernelConfigAttrName
                              << "' to be a #attn.kernel_config";
    FlashBackwardSpec spec = FlashBackwardSpec::fromOp(op);
    bool deterministic = attr.getDeterministic();
    // A hand-written or stale attribute: its family must implement the op.
    KernelRequest request = KernelRequest::of(spec);
    request.deterministic = deterministic;
    if (std::string why = unsupportedKernelFeature(
            kernelCapability(attr.getFamily(), KernelDirection::Backward),
            request, chip);
        !why.empty())
      return op.emitOpError() << "cannot be compiled for the GPU: " << why;
    bool hopper = attr.getFamily() == "sm90a";
    // The sm80 kernels: all three, or around the sm90a dkdv kernel.
    FlashBackwardConfig config = flashBackwardConfigOf(attr, spec, chip);
    if (!hopper)
      if (std::string why = validateFlashBackward(spec, config, chip);
          !why.empty())
        return op.emitOpError() << "cannot be compiled for the GPU: " << why;
    // The sm90a dkdv kernel orders its own dQ additions when deterministic:
    // the sm80 kernels around it are the atomic mode's (convert, no dq).
    bool separateDq = deterministic && !hopper;
    FlashBackwardConfig auxConfig = config;
    auxConfig.deterministic = separateDq;
    FlashBackwardKernelNames names =
        flashBackwardKernelNames(spec, auxConfig);
    if (hopper)
      names.dkdv = "";
    for (const std::string &name : {names.preprocess, names.dkdv,
                                    names.convert, names.dqDeterministic})
      if (!name.empty() && failed(checkKernelName(op, name, inputSymbols)))
        return failure();

    HopperBackwardConfig hopperConfig;
    int64_t dkdvThreads = config.threads();
    int64_t dkdvSmem = flashBackwardSharedMemoryBytes(spec, config);
    if (hopper) {
      std::string why;
      FailureOr<HopperBackwardConfig> parsed =
          hopperBackwardConfigOf(attr, spec, why);
      if (failed(parsed))
        return op.emitOpError() << "cannot be compiled for the GPU: " << why;
      hopperConfig = *parsed;
      if (std::string why = validateHopperBackward(spec, hopperConfig);
          !why.empty())
        return op.emitOpError() << "cannot be compiled for the GPU: " << why;
      // The convert kernel reads the accumulator in the dkdv kernel's layout.
      auxConfig.groupedDq = hopperConfig.groupedDq();
      names.convert = flashBackwardKernelNames(spec, auxConfig).convert;
      if (failed(checkKernelName(op, names.convert, inputSymbols)))
        return failure();
      std::string name = hopperBackwardKernelName(spec, hopperConfig);
      if (failed(checkKernelName(op, name, inputSymbols)))
        return failure();
      if (!kernels.lookupSymbol(name))
        emitHopperBackwardKernel(b, kernels, name, spec, hopperConfig);
      emitFlashBackwardKernels(b, kernels, names, spec, auxConfig);
      names.dkdv = name;
      config.blockM = hopperConfig.blockM;
      config.blockN = hopperConfig.blockN;
      config.source = hopperConfig.source;
      dkdvThreads = hopperConfig.threads();
      dkdvSmem = hopperBackwardSharedMemoryBytes(spec, hopperConfig);
    } else {
      emitFlashBackwardKernels(b, kernels, names, spec, config);
    }

    // The kernels in launch order (docs/kernel-abi.md, "Backward").
    MLIRContext *ctx = b.getContext();
    auto kernel = [&](StringRef role, StringRef entry, int64_t threads,
                      GridPolicy policy, int64_t rows, int64_t smem) {
      return KernelLaunchAttr::get(ctx, role, entry, threads, smem,
                                   GridAttr::get(ctx, policy, rows));
    };
    SmallVector<KernelLaunchAttr> launches = {
        kernel("preprocess", names.preprocess, kBackwardAuxThreads,
               GridPolicy::query_tiles,
               backwardAuxRowsPerBlock(spec), 0),
        kernel("dkdv", names.dkdv, dkdvThreads, GridPolicy::key_tiles,
               config.blockN, dkdvSmem),
    };
    if (separateDq)
      launches.push_back(
          kernel("dq", names.dqDeterministic, config.dqThreads(),
                 GridPolicy::query_tiles, config.dqBlockM(),
                 flashBackwardDqSharedMemoryBytes(spec, config)));
    else
      launches.push_back(kernel("convert", names.convert, kBackwardAuxThreads,
                                GridPolicy::query_tiles,
                                backwardAuxRowsPerBlock(spec), 0));
    op->setAttr("attn.kernel",
                SymbolRefAttr::get(kernels.getSymNameAttr(),
                                   {FlatSymbolRefAttr::get(
                                       b.getStringAttr(names.dkdv))}));
    // The TMA tensor maps the runtime builds for the sm90a dkdv kernel.
    SmallVector<TensorMapAttr> maps;
    if (hopper)
      for (const HopperBackwardTensorMap &m :
           hopperBackwardTensorMaps(hopperConfig))
        maps.push_back(
            TensorMapAttr::get(ctx, m.name, m.tensor, m.boxCols, m.boxRows));
    KernelLaunchAttr dkdv = launches[1];
    auto launch = getVerified<LaunchAttr>(
        op, hopper ? kHopperBackwardFamily : "sm80-mma", config.blockM,
        config.blockN, /*warpRows=*/16, hopper ? hopperConfig.stages : 2,
        dkdvThreads, dkdvSmem, dkdv.getGrid(), maps, launches, deterministic,
        hopper ? hopperBackwardSchedule(hopperConfig) : "", config.source);
    if (!launch)
      return failure();
    op->setAttr(kLaunchAttrName, launch);
  }
  return success();
}
