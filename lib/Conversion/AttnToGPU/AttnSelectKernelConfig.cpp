//===- AttnSelectKernelConfig.cpp - choose each attention's kernel --------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// attn-select-kernel-config: the one pass that reads a tuning database. It
// writes its choice (KernelSelection.h) on every attention as a
// #attn.kernel_config, which convert-attn-to-gpu then generates.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/KernelSelection.h"
#include "attn/Conversion/Passes.h"
#include "attn/Tuning/TuningDatabase.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSELECTKERNELCONFIG
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttnSelectKernelConfigPass
    : mlir::attn::impl::AttnSelectKernelConfigBase<
          AttnSelectKernelConfigPass> {
  using AttnSelectKernelConfigBase::AttnSelectKernelConfigBase;
  friend struct mlir::attn::KernelSelectionOptions; // reads the options

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> forward;
    SmallVector<AttentionGradOp> backward;
    module.walk([&](AttentionOp op) { forward.push_back(op); });
    module.walk([&](AttentionGradOp op) { backward.push_back(op); });
    if (forward.empty() && backward.empty())
      return;
    auto options = KernelSelectionOptions::of(*this, !forward.empty(),
                                              !backward.empty());
    if (std::string why = options.check(); !why.empty()) {
      module.emitError() << getArgument() << ": " << why;
      return signalPassFailure();
    }
    // A bad database is a warning, never a failure; options that fix the
    // tile make it unused, so it is not read.
    bool tileGiven = blockM || blockN || warpRows || stages != 2;
    std::optional<::attn::tuning::TuningDatabase> db;
    if (!tileGiven && !tuningDb.empty() && tuningDb != "none") {
      std::vector<std::string> warnings;
      db = ::attn::tuning::TuningDatabase::load(tuningDb, warnings);
      for (const std::string &w : warnings)
        module.emitWarning() << getArgument() << ": " << w;
    }
    std::optional<TuningSource> tuning;
    if (db)
      tuning.emplace(TuningSource{*db, tuningDb, tuningGpu});
    const TuningSource *source = tuning ? &*tuning : nullptr;

    auto annotate = [&](auto op) {
      FailureOr<KernelConfigAttr> config =
          selectKernelConfig(op, options, source);
      if (failed(config))
        return failure();
      op->setAttr(kKernelConfigAttrName, *config);
      return success();
    };
    for (AttentionOp op : forward)
      if (failed(annotate(op)))
        return signalPassFailure();
    for (AttentionGradOp op : backward)
      if (failed(annotate(op)))
        return signalPassFailure();
  }
};
} // namespace
