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
#include "attn/Conversion/AttnToGPU/TuningSpace.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

LogicalResult mlir::attn::convertAttentionGradOps(ModuleOp module,
                                                  gpu::GPUModuleOp kernels,
                                                  StringRef chip,
                                                  bool deterministic,
                                                  int64_t blockM,
                                                  int64_t blockN,
                                                  StringRef family,
                                                  int64_t stages,
                                                  StringRef sm90Schedule) {
  // The forward kernels' schedules (the same option, as
  // applyHopperSchedule reads them) leave the backward's.
  HopperKernelConfig forwardScratch;
  bool backwardSchedule =
      !sm90Schedule.empty() &&
      !applyHopperSchedule(forwardScratch, sm90Schedule).empty();
  SmallVector<AttentionGradOp> ops;
  module.walk([&](AttentionGradOp op) { ops.push_back(op); });
  OpBuilder b(module.getContext());
  for (AttentionGradOp op : ops) {
    if (op.getWindow())
      return op.emitOpError()
             << "cannot be compiled for the GPU: the backward kernels take "
                "no mask or a bottom-right causal mask, not a window";
    if (op.getMask() != MaskKind::none && op.getMask() != MaskKind::causal)
      return op.emitOpError()
             << "cannot be compiled for the GPU: the backward kernels take "
                "no mask or a bottom-right causal mask";
    FlashBackwardSpec spec = FlashBackwardSpec::fromOp(op);
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

    // The sm90a family replaces the dkdv kernel (the preprocess, convert
    // and deterministic dq kernels stay the sm80 family's).
    std::string hopperMissing = hopperBackwardSupports(spec, chip);
    if (family == "sm90a" && !hopperMissing.empty())
      return op.emitOpError()
             << "cannot be compiled with family=sm90a: " << hopperMissing;
    bool hopper = usesHopperBackward(spec, chip, family);
    // The ring depth and dQ schedule are the sm90a dkdv kernel's knobs.
    if (!hopper && (backwardSchedule || (stages && stages != 2)))
      return op.emitOpError()
             << "cannot be compiled for the GPU: "
             << (backwardSchedule ? "sm90-schedule " + sm90Schedule.str()
                                  : "stages " + std::to_string(stages))
             << " configures the sm90a-wgmma backward kernel, and family "
             << family << " compiles the sm80-mma one here"
             << (hopperMissing.empty() ? "" : " (" + hopperMissing + ")");
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
