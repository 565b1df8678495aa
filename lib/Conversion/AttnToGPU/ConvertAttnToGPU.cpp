//===- ConvertAttnToGPU.cpp - attn.attention -> GPU kernels ---------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/FlashBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/HopperKernel.h"
#include "attn/Conversion/AttnToGPU/KernelCapabilities.h"
#include "attn/Conversion/AttnToGPU/TuningSpace.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Tuning/TuningDatabase.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"

#include <cstdlib>

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

struct ConvertAttnToGPUPass
    : mlir::attn::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  using ConvertAttnToGPUBase::ConvertAttnToGPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) { ops.push_back(op); });
    bool hasGrads = false;
    module.walk([&](AttentionGradOp) { hasGrads = true; });
    if (ops.empty() && !hasGrads)
      return;
    if (stages < 2) {
      // The value, not the cl::opt (which would stream as a char).
      module.emitError() << "convert-attn-to-gpu: stages must be >= 2, got "
                         << static_cast<int64_t>(stages);
      return signalPassFailure();
    }
    // Explicit tile options win; otherwise the tuning database, then the
    // heuristic. A bad database is a warning, never a failure.
    bool fromOptions = blockM || blockN || warpRows || stages != 2;
    std::string dbPath = resolveTuningDatabasePath(tuningDb);
    std::string gpuName = tuningGpu;
    if (gpuName.empty())
      if (const char *env = std::getenv("ATTN_TUNING_GPU"))
        gpuName = env;
    ::attn::tuning::TuningDatabase db;
    if (!fromOptions && !dbPath.empty()) {
      std::vector<std::string> warnings;
      db = ::attn::tuning::TuningDatabase::load(dbPath, warnings);
      for (const std::string &w : warnings)
        module.emitWarning() << "convert-attn-to-gpu: " << w;
    }
    if (!llvm::is_contained({"auto", "sm80", "sm90a"}, StringRef(family))) {
      module.emitError() << "convert-attn-to-gpu: family must be sm80, sm90a "
                            "or auto, got '"
                         << family << "'";
      return signalPassFailure();
    }
    gpu::GPUModuleOp kernels = getOrCreateKernelModule(module);
    // Functions the input already holds in @attn_kernels: a generated
    // kernel of the same name would silently be one of them.
    llvm::StringSet<> inputSymbols;
    for (Operation &f : kernels.getBody()->getOperations())
      if (auto name =
              f.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
        inputSymbols.insert(name.getValue());
    // A schedule name of the other direction's is for its ops only.
    HopperKernelConfig scratch;
    bool forwardSchedule =
        !sm90Schedule.empty() && applyHopperSchedule(scratch, sm90Schedule)
                                     .empty();
    OpBuilder b(module.getContext());
    for (AttentionOp op : ops) {
      op.expandScoreModSugar(); // the kernels clone the score_mod region
      FlashKernelSpec spec = FlashKernelSpec::fromOp(op);
      // What the op and the options ask, checked against the capability
      // table (KernelCapabilities.h); stages 2, the default, leaves the
      // ring depth to the family.
      KernelRequest request = KernelRequest::of(spec);
      request.stages = stages != 2 ? stages : 0;
      request.warpRows = warpRows != 0;
      if (forwardSchedule || !hasGrads)
        request.sm90Schedule = sm90Schedule;
      std::string familyWhy;
      const KernelCapability *cap =
          chooseKernelFamily(family, request, chip, familyWhy);
      if (!cap) {
        op.emitOpError() << "cannot be compiled for the GPU: " << familyWhy;
        return signalPassFailure();
      }
      // The database may pick the family as well as the tile
      // (docs/tuning.md); without an entry the family option decides.
      TunedForwardLookup tuned;
      std::string reason = "no tuning database (tuning-db, $ATTN_TUNING_DB)";
      if (fromOptions)
        reason = blockM || blockN || warpRows
                     ? "block-m/block-n/warp-rows given"
                     : "stages given";
      else if (!dbPath.empty()) {
        tuned = lookupTunedForwardKernel(op, spec, chip, family, db, gpuName);
        reason = "tuning database '" + dbPath + "': " + tuned.reason;
        // An entry of a family that does not implement the options given
        // (a schedule for sm80-mma) is not taken.
        if (tuned.hopper || tuned.flash)
          if (std::string why = unsupportedKernelFeature(
                  kernelCapability(tuned.hopper ? "sm90a" : "sm80",
                                   KernelDirection::Forward),
                  request, chip);
              !why.empty()) {
            tuned = {};
            reason += " (not taken: " + why + ")";
          }
      }
      bool hopper = tuned.hopper  ? true
                    : tuned.flash ? false
                                  : StringRef(cap->option) == "sm90a";
      // Why this family (--explain, the manifest's tile_reason) when the
      // option left the choice to the pass and no database entry made it.
      if (family == "auto" && !tuned.hopper && !tuned.flash)
        reason = (hopper ? std::string("family auto chose sm90a-wgmma (chip "
                                       "sm_90a, the attention fits it); ")
                         : "family auto chose sm80-mma (" + familyWhy +
                               "); ") +
                 reason;
      if (hopper) {
        if (failed(convertWithHopperKernel(op, spec, kernels, b, tuned.hopper,
                                           reason, request.sm90Schedule,
                                           inputSymbols)))
          return signalPassFailure();
        continue;
      }
      FlashKernelConfig config = tuned.flash
                                     ? *tuned.flash
                                     : chooseFlashKernelConfig(spec, chip);
      if (fromOptions)
        config.source = "option";
      if (warpRows)
        config.warpRows = warpRows;
      if (blockM)
        config.blockM = blockM;
      if (blockN)
        config.blockN = blockN;
      if (config.source != "tuning-db")
        config.stages = stages;
      if (std::string why = validateFlashKernel(spec, config, chip);
          !why.empty()) {
        op.emitOpError() << "cannot be compiled for the GPU: " << why;
        return signalPassFailure();
      }
      std::string name = flashKernelName(spec, config);
      if (failed(checkKernelName(op, name, inputSymbols)))
        return signalPassFailure();
      if (!kernels.lookupSymbol(name))
        emitFlashForwardKernel(b, kernels, name, spec, config);

      op->setAttr("attn.kernel",
                  SymbolRefAttr::get(b.getStringAttr(kKernelModuleName),
                                     {FlatSymbolRefAttr::get(
                                         b.getStringAttr(name))}));
      op->setAttr(
          "attn.launch",
          b.getDictionaryAttr({
              b.getNamedAttr("block_m", b.getI64IntegerAttr(config.blockM)),
              b.getNamedAttr("block_n", b.getI64IntegerAttr(config.blockN)),
              b.getNamedAttr("stages", b.getI64IntegerAttr(config.stages)),
              b.getNamedAttr("warp_rows", b.getI64IntegerAttr(config.warpRows)),
              b.getNamedAttr("threads", b.getI64IntegerAttr(config.threads())),
              b.getNamedAttr("dynamic_shared_memory",
                             b.getI64IntegerAttr(
                                 flashKernelSharedMemoryBytes(spec, config))),
              b.getNamedAttr("source", b.getStringAttr(config.source)),
          }));
      // Why this tile configuration (attn-compile --explain prints it).
      op->setAttr("attn.tile_reason", b.getStringAttr(reason));
    }
    if (hasGrads &&
        failed(convertAttentionGradOps(
            module, kernels, chip, deterministic, blockM, blockN, family,
            stages, sm90Schedule, warpRows, !ops.empty(), inputSymbols)))
      return signalPassFailure();
  }

  /// The sm90a-wgmma kernel for `op`: block-m/block-n/stages when given,
  /// else the tuning database's configuration, else the family's heuristic.
  LogicalResult
  convertWithHopperKernel(AttentionOp op, const FlashKernelSpec &spec,
                          gpu::GPUModuleOp kernels, OpBuilder &b,
                          const std::optional<HopperKernelConfig> &tuned,
                          std::string reason, StringRef schedule,
                          const llvm::StringSet<> &inputSymbols) {
    HopperKernelConfig config =
        tuned ? *tuned : chooseHopperKernelConfig(spec);
    // The heuristic's tile: say so instead of "no tuning database".
    if (size_t at = reason.find("no tuning database"); !tuned &&
                                                       at != std::string::npos)
      reason = reason.substr(0, at) + "sm90a-wgmma heuristic";
    // Explicit schedule switches win over the database and the heuristic.
    if (std::string why = applyHopperSchedule(config, schedule);
        !why.empty())
      return op.emitOpError() << why;
    if (blockM || blockN || stages != 2) {
      config.source = "option";
      reason = blockM || blockN ? "block-m/block-n given" : "stages given";
      if (blockM)
        config.blockM = blockM;
      if (blockN)
        config.blockN = blockN;
      config.stages = stages;
    }
    // setmaxnreg follows the consumer count, whoever chose block-m.
    setHopperRegisterSplit(config);
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
    SmallVector<Attribute> maps;
    for (const HopperTensorMap &m : hopperTensorMaps(spec, config))
      maps.push_back(b.getDictionaryAttr({
          b.getNamedAttr("name", b.getStringAttr(m.name)),
          b.getNamedAttr("tensor", b.getStringAttr(m.tensor)),
          b.getNamedAttr("box_cols", b.getI64IntegerAttr(m.boxCols)),
          b.getNamedAttr("box_rows", b.getI64IntegerAttr(m.boxRows)),
      }));
    std::pair<std::string, std::string> grid = hopperKernelGrid(spec, config);
    op->setAttr(
        "attn.launch",
        b.getDictionaryAttr({
            b.getNamedAttr("block_m", b.getI64IntegerAttr(config.blockM)),
            b.getNamedAttr("block_n", b.getI64IntegerAttr(config.blockN)),
            b.getNamedAttr("stages", b.getI64IntegerAttr(config.stages)),
            b.getNamedAttr("warp_rows", b.getI64IntegerAttr(16)),
            b.getNamedAttr("threads", b.getI64IntegerAttr(config.threads())),
            b.getNamedAttr("dynamic_shared_memory",
                           b.getI64IntegerAttr(
                               hopperKernelSharedMemoryBytes(spec, config))),
            b.getNamedAttr("source", b.getStringAttr(config.source)),
            b.getNamedAttr("family", b.getStringAttr(kHopperKernelFamily)),
            b.getNamedAttr("tensor_maps", b.getArrayAttr(maps)),
            b.getNamedAttr("grid_x", b.getStringAttr(grid.first)),
            b.getNamedAttr("grid_y", b.getStringAttr(grid.second)),
            b.getNamedAttr("persistent", b.getBoolAttr(config.persistent)),
        }));
    op->setAttr("attn.tile_reason", b.getStringAttr(reason));
    return success();
  }
};
} // namespace
