//===- ConvertAttnGradToGPU.cpp - attn.attention_grad -> GPU kernels ------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The backward half of convert-attn-to-gpu: three kernels per
// attn.attention_grad (FlashBackwardKernel.h), described on the op for
// attn-compile's manifest.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/FlashBackwardKernel.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

LogicalResult mlir::attn::convertAttentionGradOps(ModuleOp module,
                                                  gpu::GPUModuleOp kernels,
                                                  StringRef chip,
                                                  bool deterministic,
                                                  int64_t blockM,
                                                  int64_t blockN) {
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
    emitFlashBackwardKernels(b, kernels, names, spec, config);

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
        launch("dkdv", names.dkdv, config.threads(),
               ceilDiv("seq_kv", config.blockN), "batch * heads_kv",
               flashBackwardSharedMemoryBytes(spec, config)),
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
    op->setAttr(
        "attn.launch",
        b.getDictionaryAttr({
            b.getNamedAttr("block_m", b.getI64IntegerAttr(config.blockM)),
            b.getNamedAttr("block_n", b.getI64IntegerAttr(config.blockN)),
            b.getNamedAttr("threads", b.getI64IntegerAttr(config.threads())),
            b.getNamedAttr("source", b.getStringAttr(config.source)),
            b.getNamedAttr("deterministic", b.getBoolAttr(deterministic)),
            b.getNamedAttr("launches", b.getArrayAttr(launches)),
        }));
  }
  return success();
}
