//===- TuningSpace.cpp - forward kernel candidates, both families ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/TuningSpace.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::attn;
using ::attn::tuning::TileChoice;

std::vector<std::string>
mlir::attn::allowedKernelFamilies(const FlashKernelSpec &spec, StringRef chip,
                                  StringRef familyOption) {
  bool hopper = hopperFamilySupports(spec, chip).empty();
  if (familyOption == "sm80")
    return {kFlashKernelFamily};
  if (familyOption == "sm90a")
    return {kHopperKernelFamily};
  if (hopper)
    return {kFlashKernelFamily, kHopperKernelFamily};
  return {kFlashKernelFamily};
}

std::string
mlir::attn::tuningKeyFamily(const std::vector<std::string> &families) {
  return families.size() == 1 ? families.front()
                              : std::string(::attn::tuning::kAutoFamily);
}

TileChoice mlir::attn::tileChoiceOf(const FlashKernelConfig &c) {
  TileChoice t{c.blockM, c.blockN, c.warpRows, c.stages};
  t.family = kFlashKernelFamily;
  return t;
}

TileChoice mlir::attn::tileChoiceOf(const HopperKernelConfig &c) {
  // warp_rows: each consumer warp owns 16 rows of its warpgroup's 64.
  TileChoice t{c.blockM, c.blockN, 16, c.stages};
  t.family = kHopperKernelFamily;
  t.schedule = hopperScheduleName(c);
  return t;
}

/// setmaxnreg split for `config`'s consumer count when block-m differs from
/// the heuristic's: 24/240 for one or two consumers, 32/160 for three (the
/// block's registers must fit the SM's 64K).
static void splitRegisters(HopperKernelConfig &c,
                           const HopperKernelConfig &heuristic) {
  if (c.blockM == heuristic.blockM)
    return;
  c.producerRegisters = c.consumers() >= 3 ? 32 : 24;
  c.consumerRegisters = c.consumers() >= 3 ? 160 : 240;
}

std::string mlir::attn::hopperScheduleName(const HopperKernelConfig &c) {
  if (!c.overlap)
    return "serial";
  return c.pingPong && c.consumers() >= 2 ? "pingpong" : "overlap";
}

std::string mlir::attn::applyHopperSchedule(HopperKernelConfig &c,
                                            StringRef schedule) {
  if (schedule.empty())
    return "";
  if (schedule == "pingpong") {
    c.overlap = true;
    c.pingPong = true;
  } else if (schedule == "overlap") {
    c.overlap = true;
    c.pingPong = false;
  } else if (schedule == "serial") {
    c.overlap = false;
    c.pingPong = false;
  } else {
    return "sm90-schedule must be pingpong, overlap or serial, got '" +
           schedule.str() + "'";
  }
  return "";
}

FlashKernelConfig mlir::attn::flashConfigFromTile(const FlashKernelSpec &spec,
                                                  StringRef chip,
                                                  const TileChoice &t) {
  FlashKernelConfig c = chooseFlashKernelConfig(spec, chip);
  c.blockM = t.blockM;
  c.blockN = t.blockN;
  c.warpRows = t.warpRows;
  c.stages = t.stages;
  return c;
}

HopperKernelConfig mlir::attn::hopperConfigFromTile(const FlashKernelSpec &spec,
                                                    const TileChoice &t) {
  HopperKernelConfig heuristic = chooseHopperKernelConfig(spec);
  HopperKernelConfig c = heuristic;
  c.blockM = t.blockM;
  c.blockN = t.blockN;
  c.stages = t.stages;
  (void)applyHopperSchedule(c, t.schedule);
  splitRegisters(c, heuristic);
  return c;
}

/// The family attn-compile uses without a database for `familyOption`.
static std::string heuristicFamily(const FlashKernelSpec &spec, StringRef chip,
                                   StringRef familyOption) {
  if (familyOption == "sm90a" ||
      (familyOption == "auto" && hopperFamilySupports(spec, chip).empty()))
    return kHopperKernelFamily;
  return kFlashKernelFamily;
}

static std::vector<ForwardCandidate>
hopperCandidates(const FlashKernelSpec &spec) {
  HopperKernelConfig heuristic = chooseHopperKernelConfig(spec);
  int64_t d = std::max(spec.headDim, spec.valueHeadDim);
  std::vector<int64_t> blockNs =
      d <= 128 ? std::vector<int64_t>{64, 128, 160, 176, 192, 224}
               : std::vector<int64_t>{32, 48, 64, 80, 96};
  std::vector<HopperKernelConfig> space;
  auto add = [&](int64_t m, int64_t n, int64_t stages, StringRef schedule) {
    HopperKernelConfig c = heuristic;
    c.blockM = m;
    c.blockN = n;
    c.stages = stages;
    (void)applyHopperSchedule(c, schedule);
    splitRegisters(c, heuristic);
    space.push_back(c);
  };
  // Two consumer warpgroups; the heuristic's own tile is added below
  // whatever its block-m (three consumers where the family uses them).
  for (int64_t n : blockNs)
    // A third stage only pays where the tiles are small (measured on the
    // H200: docs/perf/2026-11-29-sm90a-v1-tiles.md).
    for (int64_t stages : {2, 3})
      if (stages == 2 || n <= 128)
        add(128, n, stages, "pingpong");
  // One consumer: more blocks per SM for short sequences, no ping-pong.
  int64_t oneConsumerN = d <= 128 ? 128 : 64;
  for (int64_t stages : {2, 3})
    add(64, oneConsumerN, stages, "overlap");
  // What the schedule switches bring, at the family heuristic's tile.
  for (StringRef schedule : {"overlap", "serial"})
    add(heuristic.blockM, heuristic.blockN, heuristic.stages, schedule);

  std::vector<ForwardCandidate> out;
  TileChoice heuristicTile = tileChoiceOf(heuristic);
  auto push = [&](const HopperKernelConfig &c) {
    ForwardCandidate fc;
    fc.tile = tileChoiceOf(c);
    if (llvm::any_of(out, [&](const ForwardCandidate &o) {
          return o.tile == fc.tile;
        }))
      return;
    fc.familyHeuristic = fc.tile == heuristicTile;
    fc.pruned = validateHopperKernel(spec, c);
    out.push_back(fc);
  };
  push(heuristic); // first, whatever the space holds
  for (const HopperKernelConfig &c : space)
    push(c);
  return out;
}

std::vector<ForwardCandidate> mlir::attn::enumerateForwardCandidates(
    const FlashKernelSpec &spec, StringRef chip, StringRef familyOption,
    StringRef defaultFamilyOption) {
  std::vector<std::string> families =
      allowedKernelFamilies(spec, chip, familyOption);
  std::string defaultFamily =
      heuristicFamily(spec, chip, defaultFamilyOption);
  std::vector<ForwardCandidate> out;
  for (const std::string &family : families) {
    std::vector<ForwardCandidate> part;
    if (family == kFlashKernelFamily) {
      std::vector<PrunedFlashKernelConfig> pruned;
      for (const FlashKernelConfig &c :
           enumerateFlashKernelConfigs(spec, chip, &pruned)) {
        ForwardCandidate fc;
        fc.tile = tileChoiceOf(c);
        fc.familyHeuristic = c.source == "heuristic";
        part.push_back(fc);
      }
      for (const PrunedFlashKernelConfig &p : pruned) {
        ForwardCandidate fc;
        fc.tile = tileChoiceOf(p.config);
        fc.familyHeuristic = p.config.source == "heuristic";
        fc.pruned = p.reason;
        part.push_back(fc);
      }
    } else {
      part = hopperCandidates(spec);
    }
    for (ForwardCandidate &fc : part) {
      fc.heuristic = fc.familyHeuristic && family == defaultFamily;
      out.push_back(std::move(fc));
    }
  }
  return out;
}
