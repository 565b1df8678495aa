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
#include "attn/Conversion/AttnToGPU/TuningSpace.h"
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

LogicalResult mlir::attn::convertAttentionGradOps(
    ModuleOp module, gpu::GPUModuleOp kernels, StringRef chip,
    bool deterministic, int64_t blockM, int64_t blockN, StringRef family,
    int64_t stages, StringRef sm90Schedule, int64_t warpRows, bool forwardOps,
    const llvm::StringSet<> &inputSymbols) {
  // The forward kernels' schedules (the same option, as
  // applyHopperSchedule reads them) are theirs where the module holds
  // forward attentions too; else every name is the backward's to parse.
  HopperKernelConfig forwardScratch;
  bool backwardSchedule =
      !sm90Schedule.empty() &&
      (!forwardOps ||
       !applyHopperSchedule(forwardScratch, sm90Schedule).empty());
  SmallVector<AttentionGradOp> ops;
  module.walk([&](AttentionGradOp op) { ops.push_back(op); });
  OpBuilder b(module.getContext());
  for (AttentionGradOp op : ops) {
    FlashBackwardSpec spec = FlashBackwardSpec::fromOp(op);
    // What the op and the options ask, checked against the capability
    // table (KernelCapabilities.h); stages 2, the default, leaves the ring
    // depth to the family.
    KernelRequest request = KernelRequest::of(spec);
    request.deterministic = deterministic;
    request.stages = stages && stages != 2 ? stages : 0;
    request.warpRows = warpRows != 0;
    if (backwardSchedule)
      request.sm90Schedule = sm90Schedule.str();
    std::string why;
    const KernelCapability *cap =
        chooseKernelFamily(family, request, chip, why);
    if (!cap)
      return op.emitOpError() << "cannot be compiled for the GPU: " << why;
    bool hopper = StringRef(cap->option) == "sm90a";
    FlashBackwardConfig config = chooseFlashBackwardConfig(spec, chip);
    config.deterministic = deterministic;
    if (blockM || blockN)
      config.source = "option";
    if (blockM)
      config.blockM = blockM;
    if (blockN)
      config.blockN = blockN;
    if (std::string why = validateFlashBackward(spec, config, chip);
        !why.empty())
      return op.emitOpError() << "cannot be compiled for the GPU: " << why;
    FlashBackwardKernelNames names = flashBackwardKernelNames(spec, config);
    for (const std::string &name : {names.preprocess, names.dkdv,
                                    names.convert, names.dqDeterministic})
      if (!name.empty() && failed(checkKernelName(op, name, inputSymbols)))
        return failure();

    HopperBackwardConfig hopperConfig = chooseHopperBackwardConfig(spec);
    hopperConfig.deterministic = deterministic;
    int64_t dkdvThreads = config.threads();
    int64_t dkdvSmem = flashBackwardSharedMemoryBytes(spec, config);
    if (hopper) {
      HopperBackwardConfig heuristic = hopperConfig;
      if (blockM)
        hopperConfig.blockM = blockM;
      if (blockN)
        hopperConfig.blockN = blockN;
      if (stages)
        hopperConfig.stages = stages;
      if (backwardSchedule)
        if (std::string why =
                applyHopperBackwardSchedule(hopperConfig, sm90Schedule);
            !why.empty())
          return op.emitOpError() << "cannot be compiled for the GPU: " << why;
      if (blockM || blockN || hopperConfig.stages != heuristic.stages ||
          hopperBackwardSchedule(hopperConfig) !=
              hopperBackwardSchedule(heuristic))
        hopperConfig.source = "option";
      if (std::string why = validateHopperBackward(spec, hopperConfig);
          !why.empty())
        return op.emitOpError() << "cannot be compiled for the GPU: " << why;
      std::string name = hopperBackwardKernelName(spec, hopperConfig);
      if (failed(checkKernelName(op, name, inputSymbols)))
        return failure();
      if (!kernels.lookupSymbol(name))
        emitHopperBackwardKernel(b, kernels, name, spec, hopperConfig);
      names.dkdv = "";
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
