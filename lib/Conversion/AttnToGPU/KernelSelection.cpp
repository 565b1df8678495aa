//===- KernelSelection.cpp - which kernel for each attention --------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The policy half of the GPU path (KernelSelection.h): options given, then
// the tuning database, then the family's heuristic, recorded as a
// #attn.kernel_config with the reason.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/KernelSelection.h"
#include "attn/Conversion/AttnToGPU/KernelCapabilities.h"
#include "attn/Conversion/AttnToGPU/TuningSpace.h"

using namespace mlir;
using namespace mlir::attn;

/// Largest section-mb: Q and dO of 64 GiB per section walk every head.
static constexpr int64_t kMaxSectionMb = int64_t(1) << 16;

/// What the selection says when neither an option nor a database entry
/// decided (the sm90a forward heuristic says so itself).
static constexpr const char *kNoDatabase =
    "no tuning database (tuning-db, $ATTN_TUNING_DB)";

void KernelSelectionOptions::assignSchedule(StringRef schedule,
                                            bool hasForward,
                                            bool hasBackward) {
  forwardSchedule.clear();
  backwardSchedule.clear();
  if (schedule.empty())
    return;
  HopperKernelConfig scratch;
  bool forwardName = applyHopperSchedule(scratch, schedule).empty();
  if (forwardName || !hasBackward)
    forwardSchedule = schedule.str();
  if (!forwardName || !hasForward)
    backwardSchedule = schedule.str();
}

std::string KernelSelectionOptions::check() const {
  // The value, not the cl::opt (which would stream as a char).
  if (stages < 2)
    return "stages must be >= 2, got " + std::to_string(stages);
  if (!llvm::is_contained({"auto", "sm80", "sm90a"}, StringRef(family)))
    return "family must be sm80, sm90a or auto, got '" + family + "'";
  if (exp2Emulated < -1 || exp2Emulated > 8)
    return "exp2-emulated must be from 0 to 8 (-1 = the family's choice), "
           "got " +
           std::to_string(exp2Emulated);
  if (sectionMb < -1 || sectionMb > kMaxSectionMb)
    return "section-mb must be from 0 to " + std::to_string(kMaxSectionMb) +
           " (-1 = the family's choice), got " + std::to_string(sectionMb);
  return "";
}

FailureOr<KernelConfigAttr>
mlir::attn::selectKernelConfig(AttentionOp op,
                               const KernelSelectionOptions &o,
                               const TuningSource *tuning) {
  op.expandScoreModSugar();
  FlashKernelSpec spec = FlashKernelSpec::fromOp(op);
  // What the op and the options ask, checked against the capability table
  // (KernelCapabilities.h); stages 2, the default, leaves the ring depth to
  // the family.
  KernelRequest request = KernelRequest::of(spec);
  request.stages = o.stages != 2 ? o.stages : 0;
  request.warpRows = o.warpRows != 0;
  request.sm90Schedule = o.forwardSchedule;
  std::string familyWhy;
  const KernelCapability *cap =
      chooseKernelFamily(o.family, request, o.chip, familyWhy);
  if (!cap)
    return op.emitOpError() << "cannot be compiled for the GPU: "
                            << familyWhy;
  // Explicit tile options win; otherwise the tuning database, which may
  // pick the family as well as the tile (docs/tuning.md), then the
  // heuristic.
  bool tileGiven = o.blockM || o.blockN || o.warpRows;
  bool fromOptions = tileGiven || o.stages != 2;
  TunedForwardLookup tuned;
  std::string reason = kNoDatabase;
  if (fromOptions) {
    reason = tileGiven ? "block-m/block-n/warp-rows given" : "stages given";
  } else if (tuning) {
    tuned = lookupTunedForwardKernel(op, spec, o.chip, o.family, tuning->db,
                                     tuning->gpu);
    reason = "tuning database '" + tuning->path + "': " + tuned.reason;
    // An entry of a family that does not implement the options given (a
    // schedule for sm80-mma) is not taken.
    if (tuned.hopper || tuned.flash)
      if (std::string why = unsupportedKernelFeature(
              kernelCapability(tuned.hopper ? "sm90a" : "sm80",
                               KernelDirection::Forward),
              request, o.chip);
          !why.empty()) {
        tuned = {};
        reason += " (not taken: " + why + ")";
      }
  }
  bool hopper = tuned.hopper  ? true
                : tuned.flash ? false
                              : StringRef(cap->option) == "sm90a";
  // Why this family when the option left the choice to the selection and
  // no database entry made it.
  if (o.family == "auto" && !tuned.hopper && !tuned.flash)
    reason = (hopper ? std::string("family auto chose sm90a-wgmma (chip "
                                   "sm_90a, the attention fits it); ")
                     : "family auto chose sm80-mma (" + familyWhy + "); ") +
             reason;
  MLIRContext *ctx = op.getContext();

  if (hopper) {
    HopperKernelConfig config =
        tuned.hopper ? *tuned.hopper : chooseHopperKernelConfig(spec);
    if (size_t at = reason.find(kNoDatabase);
        !tuned.hopper && at != std::string::npos)
      reason = reason.substr(0, at) + "sm90a-wgmma heuristic";
    // Explicit schedule switches win over the database and the heuristic.
    if (std::string why = applyHopperSchedule(config, o.forwardSchedule);
        !why.empty())
      return op.emitOpError() << why;
    if (o.blockM || o.blockN || o.stages != 2) {
      config.source = "option";
      reason = o.blockM || o.blockN ? "block-m/block-n given" : "stages given";
      if (o.blockM)
        config.blockM = o.blockM;
      if (o.blockN)
        config.blockN = o.blockN;
      config.stages = o.stages;
    }
    if (o.exp2Emulated >= 0)
      config.exp2Emulated = o.exp2Emulated;
    config.wideProducer = o.wideProducer;
    // setmaxnreg follows the consumer count, whoever chose block-m.
    setHopperRegisterSplit(config);
    if (std::string why = validateHopperKernel(spec, config); !why.empty())
      return op.emitOpError() << "cannot be compiled for the GPU: " << why;
    return KernelConfigAttr::get(
        ctx, "sm90a", config.blockM, config.blockN, /*warp_rows=*/16,
        config.stages, hopperScheduleName(config), config.persistent,
        /*deterministic=*/false, config.exp2Emulated, config.wideProducer,
        /*section_mb=*/32, config.source, reason);
  }

  for (auto [given, name] : {std::pair<bool, StringRef>{o.exp2Emulated >= 0,
                                                        "exp2-emulated"},
                             {o.wideProducer, "wide-producer"}})
    if (given)
      return op.emitOpError()
             << "cannot be compiled for the GPU: " << name
             << " is an option of the sm90a-wgmma forward kernel, and this "
                "attention gets sm80-mma";
  FlashKernelConfig config =
      tuned.flash ? *tuned.flash : chooseFlashKernelConfig(spec, o.chip);
  if (fromOptions)
    config.source = "option";
  if (o.warpRows)
    config.warpRows = o.warpRows;
  if (o.blockM)
    config.blockM = o.blockM;
  if (o.blockN)
    config.blockN = o.blockN;
  if (config.source != "tuning-db")
    config.stages = o.stages;
  if (std::string why = validateFlashKernel(spec, config, o.chip);
      !why.empty())
    return op.emitOpError() << "cannot be compiled for the GPU: " << why;
  return KernelConfigAttr::get(ctx, "sm80", config.blockM, config.blockN,
                               config.warpRows, config.stages,
                               /*schedule=*/"", /*persistent=*/false,
                               /*deterministic=*/false, /*exp2_emulated=*/0,
                               /*wide_producer=*/false, /*section_mb=*/32,
                               config.source, reason);
}

FailureOr<KernelConfigAttr>
mlir::attn::selectKernelConfig(AttentionGradOp op,
                               const KernelSelectionOptions &o,
                               const TuningSource *tuning) {
  FlashBackwardSpec spec = FlashBackwardSpec::fromOp(op);
  KernelRequest request = KernelRequest::of(spec);
  request.deterministic = o.deterministic;
  request.stages = o.stages != 2 ? o.stages : 0;
  request.warpRows = o.warpRows != 0;
  request.sm90Schedule = o.backwardSchedule;
  std::string why;
  const KernelCapability *cap =
      chooseKernelFamily(o.family, request, o.chip, why);
  if (!cap)
    return op.emitOpError() << "cannot be compiled for the GPU: " << why;
  bool hopper = StringRef(cap->option) == "sm90a";
  bool fromOptions = o.blockM || o.blockN || o.stages != 2 ||
                     !o.backwardSchedule.empty();
  TunedBackwardLookup tuned;
  std::string reason = kNoDatabase;
  if (fromOptions) {
    reason = "block-m/block-n/stages/sm90-schedule given";
  } else if (tuning) {
    // The key's family follows the family option (allowedBackwardFamilies).
    tuned = lookupTunedBackwardKernel(op, o.chip, o.family, o.deterministic,
                                      tuning->db, tuning->gpu);
    reason = "tuning database '" + tuning->path + "': " + tuned.reason;
    if (tuned.hopper || tuned.config)
      hopper = static_cast<bool>(tuned.hopper);
  }
  MLIRContext *ctx = op.getContext();

  if (hopper) {
    HopperBackwardConfig config =
        tuned.hopper ? *tuned.hopper
                     : chooseHopperBackwardConfig(spec, o.deterministic);
    // Its kernel_config names the mode, not a dQ schedule.
    if (o.deterministic && !o.backwardSchedule.empty() &&
        o.backwardSchedule != "deterministic")
      return op.emitOpError()
             << "cannot be compiled for the GPU: sm90-schedule '"
             << o.backwardSchedule
             << "' with deterministic: the deterministic sm90a-wgmma "
                "backward kernel takes the head dim's default dQ schedule";
    HopperBackwardConfig chosen = config;
    // The schedule first: it sets its block-n, which an explicit one
    // overrides (validated below).
    if (std::string why =
            applyHopperBackwardSchedule(config, o.backwardSchedule);
        !why.empty())
      return op.emitOpError() << "cannot be compiled for the GPU: " << why;
    if (o.blockM)
      config.blockM = o.blockM;
    if (o.blockN)
      config.blockN = o.blockN;
    if (o.stages != 2)
      config.stages = o.stages;
    // Above D = 128 the block-n names the schedule: a block-n given with a
    // schedule must be that schedule's.
    if (!o.deterministic && !o.backwardSchedule.empty() &&
        hopperBackwardSchedule(config) != o.backwardSchedule)
      return op.emitOpError()
             << "cannot be compiled for the GPU: sm90-schedule "
             << o.backwardSchedule << " of the sm90a backward kernel takes "
             << (o.backwardSchedule == "transposed-dkv" ? "block-n 80"
                                                        : "block-n 64")
             << " (got block-n " << config.blockN << ")";
    if (o.sectionMb >= 0) {
      // Only the causal kernel orders its tiles in sections.
      if (!spec.causal)
        return op.emitOpError()
               << "cannot be compiled for the GPU: section-mb orders the "
                  "tiles of the causal sm90a-wgmma backward kernel, and this "
                  "attention_grad has no causal mask";
      config.sectionBytes = o.sectionMb << 20;
    }
    if (o.blockM || o.blockN || config.stages != chosen.stages ||
        hopperBackwardSchedule(config) != hopperBackwardSchedule(chosen))
      config.source = "option";
    // Stages or block-n given that the heuristic's 128-row query blocks
    // have no shared memory for (three stages at D = 64) take 64 rows.
    if (!o.blockM && config.blockM != 64 &&
        !validateHopperBackward(spec, config).empty()) {
      HopperBackwardConfig narrow = config;
      narrow.blockM = 64;
      if (validateHopperBackward(spec, narrow).empty())
        config = narrow;
    }
    if (std::string why = validateHopperBackward(spec, config); !why.empty())
      return op.emitOpError() << "cannot be compiled for the GPU: " << why;
    return KernelConfigAttr::get(
        ctx, "sm90a", config.blockM, config.blockN, /*warp_rows=*/16,
        config.stages, hopperBackwardSchedule(config), /*persistent=*/false,
        config.deterministic, /*exp2_emulated=*/0, /*wide_producer=*/false,
        config.sectionBytes >> 20, config.source, reason);
  }

  if (o.sectionMb >= 0)
    return op.emitOpError()
           << "cannot be compiled for the GPU: section-mb is an option of "
              "the sm90a-wgmma backward kernel, and this attention_grad gets "
              "sm80-mma";
  FlashBackwardConfig config =
      tuned.config ? *tuned.config : chooseFlashBackwardConfig(spec, o.chip);
  config.deterministic = o.deterministic;
  if (o.blockM || o.blockN)
    config.source = "option";
  if (o.blockM)
    config.blockM = o.blockM;
  if (o.blockN)
    config.blockN = o.blockN;
  if (std::string why = validateFlashBackward(spec, config, o.chip);
      !why.empty())
    return op.emitOpError() << "cannot be compiled for the GPU: " << why;
  return KernelConfigAttr::get(
      ctx, "sm80", config.blockM, config.blockN, /*warp_rows=*/16,
      /*stages=*/2, /*schedule=*/"", /*persistent=*/false,
      config.deterministic, /*exp2_emulated=*/0, /*wide_producer=*/false,
      /*section_mb=*/32, config.source, reason);
}

FlashKernelConfig mlir::attn::flashKernelConfigOf(KernelConfigAttr attr,
                                                  const FlashKernelSpec &spec,
                                                  StringRef chip) {
  FlashKernelConfig c = chooseFlashKernelConfig(spec, chip);
  c.blockM = attr.getBlockM();
  c.blockN = attr.getBlockN();
  c.warpRows = attr.getWarpRows();
  c.stages = attr.getStages();
  c.source = attr.getSource().str();
  return c;
}

FailureOr<HopperKernelConfig>
mlir::attn::hopperKernelConfigOf(KernelConfigAttr attr, std::string &why) {
  HopperKernelConfig c;
  c.blockM = attr.getBlockM();
  c.blockN = attr.getBlockN();
  c.stages = attr.getStages();
  // The grid is part of the schedule option's syntax.
  std::string schedule =
      (attr.getSchedule().empty() ? StringRef("pingpong")
                                  : attr.getSchedule())
          .str() +
      (attr.getPersistent() ? "+persistent" : "");
  if (!applyHopperSchedule(c, schedule).empty()) {
    why = "its kernel_config's schedule '" + attr.getSchedule().str() +
          "' is not one of the sm90a-wgmma forward kernel's (pingpong, "
          "overlap, serial)";
    return failure();
  }
  c.exp2Emulated = attr.getExp2Emulated();
  c.wideProducer = attr.getWideProducer();
  c.source = attr.getSource().str();
  setHopperRegisterSplit(c);
  return c;
}

FlashBackwardConfig
mlir::attn::flashBackwardConfigOf(KernelConfigAttr attr,
                                  const FlashBackwardSpec &spec,
                                  StringRef chip) {
  // With the sm90a family only the preprocess and convert / dq kernels
  // are sm80's, which do not depend on the dkdv tile.
  FlashBackwardConfig c = chooseFlashBackwardConfig(spec, chip);
  c.deterministic = attr.getDeterministic();
  if (attr.getFamily() == "sm80") {
    c.blockM = attr.getBlockM();
    c.blockN = attr.getBlockN();
    c.source = attr.getSource().str();
  }
  return c;
}

FailureOr<HopperBackwardConfig>
mlir::attn::hopperBackwardConfigOf(KernelConfigAttr attr,
                                   const FlashBackwardSpec &spec,
                                   std::string &why) {
  HopperBackwardConfig c =
      chooseHopperBackwardConfig(spec, attr.getDeterministic());
  if (!applyHopperBackwardSchedule(c, attr.getSchedule()).empty()) {
    why = "its kernel_config's schedule '" + attr.getSchedule().str() +
          "' is not one of the sm90a-wgmma backward kernel's (dq-pipelined, "
          "dq-first, dk-first; above head dim 128 head-split, "
          "transposed-dkv)";
    return failure();
  }
  c.blockM = attr.getBlockM();
  c.blockN = attr.getBlockN();
  c.stages = attr.getStages();
  c.sectionBytes = attr.getSectionMb() << 20;
  c.source = attr.getSource().str();
  return c;
}
