//===- ConvertAttnToGPU.cpp - attn.attention -> GPU kernels ---------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/FlashBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/HopperKernel.h"
#include "attn/Conversion/AttnToGPU/KernelCapabilities.h"
#include "attn/Conversion/AttnToGPU/KernelSelection.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
constexpr const char *kKernelModuleName = "attn_kernels";

gpu::GPUModuleOp getOrCreateKernelModule(ModuleOp module) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName))
    return existing;
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  return gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
}

/// Why `config`'s family cannot generate the attention `request` describes
/// on `chip` ("" when it can): a hand-written or stale attribute.
std::string unsupportedConfig(KernelConfigAttr config,
                              const KernelRequest &request, StringRef chip) {
  return unsupportedKernelFeature(
      kernelCapability(config.getFamily(), request.direction), request, chip);
}

struct ConvertAttnToGPUPass
    : mlir::attn::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  using ConvertAttnToGPUBase::ConvertAttnToGPUBase;
  friend struct mlir::attn::KernelSelectionOptions; // reads the options

  /// The first selection option that differs from its default ("" when
  /// none): an op that carries a #attn.kernel_config does not take it.
  StringRef givenSelectionOption() const {
    std::pair<bool, StringRef> options[] = {
        {blockM != 0, "block-m"},
        {blockN != 0, "block-n"},
        {warpRows != 0, "warp-rows"},
        {stages != 2, "stages"},
        {family != "auto", "family"},
        {!sm90Schedule.empty(), "sm90-schedule"},
        {deterministic, "deterministic"},
        {exp2Emulated != -1, "exp2-emulated"},
        {wideProducer, "wide-producer"},
        {sectionMb != -1, "section-mb"}};
    for (auto [given, name] : options)
      if (given)
        return name;
    return "";
  }

  /// Gives every op without a #attn.kernel_config the heuristic's under the
  /// pass options (no tuning database); refuses options for ops that
  /// carry one.
  LogicalResult selectMissingConfigs(ArrayRef<Operation *> ops,
                                     const KernelSelectionOptions &options) {
    StringRef given = givenSelectionOption();
    for (Operation *op : ops) {
      if (Attribute config = op->getAttr(kKernelConfigAttrName)) {
        if (isa<KernelConfigAttr>(config) && !given.empty())
          return op->emitOpError()
                 << "carries a #attn.kernel_config, which fixes what the "
                    "convert-attn-to-gpu option "
                 << given << " would choose; give " << given
                 << " to attn-select-kernel-config instead";
        continue;
      }
      FailureOr<KernelConfigAttr> config =
          isa<AttentionOp>(op)
              ? selectKernelConfig(cast<AttentionOp>(op), options, nullptr)
              : selectKernelConfig(cast<AttentionGradOp>(op), options,
                                   nullptr);
      if (failed(config))
        return failure();
      op->setAttr(kKernelConfigAttrName, *config);
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) { ops.push_back(op); });
    SmallVector<Operation *> all(ops.begin(), ops.end());
    module.walk([&](AttentionGradOp op) { all.push_back(op); });
    bool hasGrads = all.size() > ops.size();
    if (all.empty())
      return;
    auto options = KernelSelectionOptions::of(*this, !ops.empty(), hasGrads);
    if (std::string why = options.check(); !why.empty()) {
      module.emitError() << getArgument() << ": " << why;
      return signalPassFailure();
    }
    if (failed(selectMissingConfigs(all, options)))
      return signalPassFailure();
    gpu::GPUModuleOp kernels = getOrCreateKernelModule(module);
    // Functions the input already holds in @attn_kernels: a generated
    // kernel of the same name would silently be one of them.
    llvm::StringSet<> inputSymbols;
    for (Operation &f : kernels.getBody()->getOperations())
      if (auto name =
              f.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
        inputSymbols.insert(name.getValue());
    OpBuilder b(module.getContext());
    for (AttentionOp op : ops) {
      auto config = op->getAttrOfType<KernelConfigAttr>(kKernelConfigAttrName);
      if (!config) {
        op.emitOpError() << "expected attribute '" << kKernelConfigAttrName
                         << "' to be a #attn.kernel_config";
        return signalPassFailure();
      }
      op.expandScoreModSugar(); // the kernels clone the score_mod region
      FlashKernelSpec spec = FlashKernelSpec::fromOp(op);
      if (std::string why =
              unsupportedConfig(config, KernelRequest::of(spec), chip);
          !why.empty()) {
        op.emitOpError() << "cannot be compiled for the GPU: " << why;
        return signalPassFailure();
      }
      if (config.getFamily() == "sm90a") {
        if (failed(convertWithHopperKernel(op, spec, kernels, b, config,
                                           inputSymbols)))
          return signalPassFailure();
        continue;
      }
      FlashKernelConfig flash = flashKernelConfigOf(config, spec, chip);
      if (std::string why = validateFlashKernel(spec, flash, chip);
          !why.empty()) {
        op.emitOpError() << "cannot be compiled for the GPU: " << why;
        return signalPassFailure();
      }
      std::string name = flashKernelName(spec, flash);
      if (failed(checkKernelName(op, name, inputSymbols)))
        return signalPassFailure();
      if (!kernels.lookupSymbol(name))
        emitFlashForwardKernel(b, kernels, name, spec, flash);

      op->setAttr("attn.kernel",
                  SymbolRefAttr::get(b.getStringAttr(kKernelModuleName),
                                     {FlatSymbolRefAttr::get(
                                         b.getStringAttr(name))}));
      MLIRContext *ctx = b.getContext();
      auto launch = getVerified<LaunchAttr>(
          op, "sm80-mma", flash.blockM, flash.blockN, flash.warpRows,
          flash.stages, flash.threads(),
          flashKernelSharedMemoryBytes(spec, flash),
          GridAttr::get(ctx, GridPolicy::query_tiles, flash.blockM),
          ArrayRef<TensorMapAttr>(), ArrayRef<KernelLaunchAttr>(),
          /*deterministic=*/false,
          /*schedule=*/"", flash.source);
      if (!launch)
        return signalPassFailure();
      op->setAttr(kLaunchAttrName, launch);
    }
    if (hasGrads &&
        failed(convertAttentionGradOps(module, kernels, chip, inputSymbols)))
      return signalPassFailure();
  }

  /// The sm90a-wgmma kernel `config` describes for `op`.
  LogicalResult convertWithHopperKernel(AttentionOp op,
                                        const FlashKernelSpec &spec,
                                        gpu::GPUModuleOp kernels, OpBuilder &b,
                                        KernelConfigAttr attr,
                                        const llvm::StringSet<> &inputSymbols) {
    std::string why;
    FailureOr<HopperKernelConfig> parsed = hopperKernelConfigOf(attr, why);
    if (failed(parsed))
      return op.emitOpError() << "cannot be compiled for the GPU: " << why;
    HopperKernelConfig config = *parsed;
    if (std::string why = validateHopperKernel(spec, config); !why.empty())
      return op.emitOpError() << "cannot be compiled for the GPU: " << why;
    std::string name = hopperKernelName(spec, config);
    if (failed(checkKernelName(op, name, inputSymbols)))
      return failure();
    if (!kernels.lookupSymbol(name))
      emitHopperForwardKernel(b, kernels, name, spec, config);
    op->setAttr("attn.kernel",
                SymbolRefAttr::get(b.getStringAttr(kKernelModuleName),
                                   {FlatSymbolRefAttr::get(
                                       b.getStringAttr(name))}));
    // The tensor maps the runtime builds (docs/kernel-abi.md).
    MLIRContext *ctx = b.getContext();
    SmallVector<TensorMapAttr> maps;
    for (const HopperTensorMap &m : hopperTensorMaps(spec, config))
      maps.push_back(
          TensorMapAttr::get(ctx, m.name, m.tensor, m.boxCols, m.boxRows));
    auto launch = getVerified<LaunchAttr>(
        op, kHopperKernelFamily, config.blockM, config.blockN, /*warpRows=*/16,
        config.stages, config.threads(),
        hopperKernelSharedMemoryBytes(spec, config),
        GridAttr::get(ctx, hopperKernelGrid(spec, config), config.blockM), maps,
        ArrayRef<KernelLaunchAttr>(), /*deterministic=*/false,
        /*schedule=*/"", config.source);
    if (!launch)
      return failure();
    op->setAttr(kLaunchAttrName, launch);
    return success();
  }
};
} // namespace
