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
    FlashBackwardKernelNames names = flashBackwardKernelNames(spec, config);
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
      std::string name = hopperBackwardKernelName(spec, hopperConfig);
      if (failed(checkKernelName(op, name, inputSymbols)))
        return failure();
      if (!kernels.lookupSymbol(name))
        emitHopperBackwardKernel(b, kernels, name, spec, hopperConfig);
      emitFlashBackwardKernels(b, kernels, names, spec, config);
      names.dkdv = name;
      config.blockM = hopperConfig.blockM;
      config.blockN = hopperConfig.blockN;
      config.source = hopperConfig.source;
      dkdvThreads = hopperConfig.threads();
      dkdvSmem = hopperBackwardSharedMemoryBytes(spec, hopperConfig);
    } else {
      emitFlashBackwardKernels(b, kernels, names, spec, config);
    }

    auto launch = [&](StringRef role, StringRef entry, int64_t threads,
                      std::string gridX, StringRef gridY, int64_t smem) {
      return b.getDictionaryAttr({
          b.getNamedAttr("role", b.getStringAttr(role)),
          b.getNamedAttr("entry", b.getStringAttr(entry)),
          b.getNamedAttr("threads", b.getI64IntegerAttr(threads)),
          b.getNamedAttr("grid_x", b.getStringAttr(gridX)),
          b.getNamedAttr("grid_y", b.getStringAttr(gridY)),
          b.getNamedAttr("dynamic_shared_memory", b.getI64IntegerAttr(smem)),
      });
    };
    auto ceilDiv = [](StringRef n, int64_t d) {
      return "ceil(" + n.str() + " / " + std::to_string(d) + ")";
    };
    SmallVector<Attribute> launches = {
        launch("preprocess", names.preprocess, kBackwardAuxThreads,
               ceilDiv("seq_q", backwardAuxRowsPerBlock(spec.valueHeadDim)),
               "batch * heads_q", 0),
        launch("dkdv", names.dkdv, dkdvThreads,
               ceilDiv("seq_kv", config.blockN), "batch * heads_kv",
               dkdvSmem),
    };
    if (deterministic)
      launches.push_back(launch(
          "dq", names.dqDeterministic, config.dqThreads(),
          ceilDiv("seq_q", config.dqBlockM()), "batch * heads_q",
          flashBackwardDqSharedMemoryBytes(spec, config)));
    else
      launches.push_back(launch(
          "convert", names.convert, kBackwardAuxThreads,
          ceilDiv("seq_q", backwardAuxRowsPerBlock(spec.headDim)),
          "batch * heads_q", 0));
    op->setAttr("attn.kernel",
                SymbolRefAttr::get(kernels.getSymNameAttr(),
                                   {FlatSymbolRefAttr::get(
                                       b.getStringAttr(names.dkdv))}));
    // The TMA tensor maps the runtime builds for the sm90a dkdv kernel.
    SmallVector<Attribute> maps;
    if (hopper)
      for (const HopperBackwardTensorMap &m :
           hopperBackwardTensorMaps(hopperConfig))
        maps.push_back(b.getDictionaryAttr({
            b.getNamedAttr("name", b.getStringAttr(m.name)),
            b.getNamedAttr("tensor", b.getStringAttr(m.tensor)),
            b.getNamedAttr("box_cols", b.getI64IntegerAttr(m.boxCols)),
            b.getNamedAttr("box_rows", b.getI64IntegerAttr(m.boxRows)),
        }));
    op->setAttr(
        "attn.launch",
        b.getDictionaryAttr({
            b.getNamedAttr("block_m", b.getI64IntegerAttr(config.blockM)),
            b.getNamedAttr("block_n", b.getI64IntegerAttr(config.blockN)),
            b.getNamedAttr("threads", b.getI64IntegerAttr(dkdvThreads)),
            b.getNamedAttr("source", b.getStringAttr(config.source)),
            b.getNamedAttr("deterministic", b.getBoolAttr(deterministic)),
            b.getNamedAttr("family",
                           b.getStringAttr(hopper ? kHopperBackwardFamily
                                                  : "sm80-mma")),
            b.getNamedAttr("stages", b.getI64IntegerAttr(
                                         hopper ? hopperConfig.stages : 2)),
            b.getNamedAttr("schedule",
                           b.getStringAttr(hopper ? hopperBackwardSchedule(
                                                        hopperConfig)
                                                  : "")),
            b.getNamedAttr("tensor_maps", b.getArrayAttr(maps)),
            b.getNamedAttr("launches", b.getArrayAttr(launches)),
        }));
  }
  return success();
}
