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
  t.persistent = c.persistent;
  return t;
}

std::string mlir::attn::hopperScheduleName(const HopperKernelConfig &c) {
  if (!c.overlap)
    return "serial";
  return c.pingPong && c.consumers() >= 2 ? "pingpong" : "overlap";
}

std::string mlir::attn::hopperScheduleOption(const TileChoice &t) {
  return t.schedule + (t.persistent ? "+persistent" : "");
}

std::string mlir::attn::applyHopperSchedule(HopperKernelConfig &c,
                                            StringRef schedule) {
  if (schedule.empty())
    return "";
  // The grid is part of the schedule: "+persistent" walks several query
  // blocks per thread block, without it one block per query block.
  auto [consumers, grid] = schedule.split('+');
  if (!grid.empty() && grid != "persistent")
    return "sm90-schedule must be pingpong, overlap or serial, optionally "
           "followed by +persistent, got '" +
           schedule.str() + "'";
  if (consumers == "pingpong") {
    c.overlap = true;
    c.pingPong = true;
  } else if (consumers == "overlap") {
    c.overlap = true;
    c.pingPong = false;
  } else if (consumers == "serial") {
    c.overlap = false;
    c.pingPong = false;
  } else {
    return "sm90-schedule must be pingpong, overlap or serial, optionally "
           "followed by +persistent, got '" +
           schedule.str() + "'";
  }
  c.persistent = grid == "persistent";
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
  HopperKernelConfig c = chooseHopperKernelConfig(spec);
  c.blockM = t.blockM;
  c.blockN = t.blockN;
  c.stages = t.stages;
  (void)applyHopperSchedule(c, hopperScheduleOption(t));
  c.persistent = t.persistent;
  // setmaxnreg follows the consumer count (as convert-attn-to-gpu does).
  setHopperRegisterSplit(c);
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
  bool wide = d > 128;
  std::vector<HopperKernelConfig> space;
  auto add = [&](int64_t m, int64_t n, int64_t stages, StringRef schedule) {
    HopperKernelConfig c = heuristic;
    c.blockM = m;
    c.blockN = n;
    c.stages = stages;
    (void)applyHopperSchedule(c, schedule);
    setHopperRegisterSplit(c);
    space.push_back(c);
  };
  // Two consumer warpgroups (232 registers each): block-n up to what S, P
  // and O leave room for (validateHopperKernel prunes the rest).
  std::vector<int64_t> twoConsumerNs =
      wide ? std::vector<int64_t>{32, 48, 64, 80, 96}
           : std::vector<int64_t>{64, 96, 128, 160, 176, 192, 224};
  // A third stage only paid where the tiles are small at D = 128 (H200:
  // bench/results/2026-11-29-sm90a-v1-tiles.md); at D = 64 every stage is
  // small and the short key blocks of long sequences may want it.
  bool narrow = d <= 64;
  for (int64_t n : twoConsumerNs)
    for (int64_t stages : {2, 3})
      if (stages == 2 || narrow || n <= (wide ? 96 : 128))
        add(128, n, stages, "pingpong");
  // Three consumers (160 registers each): the short Q·Kᵀ of D = 64 hides
  // the softmax of the other two; at D = 128 only block-n <= 80 fits.
  if (!wide)
    for (int64_t n : {64, 80, 96, 128})
      for (int64_t stages : {2, 3})
        if (stages == 2 || narrow)
          add(192, n, stages, "pingpong");
  // Without ping-pong the two consumers' GEMMs contend, which at D = 256
  // wins on some long sequences (H200, tuning v9: block-n 80 without
  // ping-pong 0-1.5% ahead of it with, from N = 4096).
  if (wide)
    for (int64_t n : {64, 80})
      add(128, n, 2, "overlap");
  // One consumer: more blocks per SM for short sequences, no ping-pong.
  int64_t oneConsumerN = wide ? 64 : 128;
  for (int64_t stages : {2, 3})
    add(64, oneConsumerN, stages, "overlap");
  // The persistent grid (the next query block's loads under this one's
  // epilogue), for every two- or three-consumer ping-pong tile: the short
  // key blocks matter for short causal sequences.
  std::vector<HopperKernelConfig> persistent = {heuristic};
  for (const HopperKernelConfig &c : space)
    if (c.consumers() >= 2 && c.stages == 2 && c.pingPong && c.blockN >= 64)
      persistent.push_back(c);
  for (HopperKernelConfig c : persistent) {
    c.persistent = true;
    space.push_back(c);
  }
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

std::vector<std::string>
mlir::attn::allowedBackwardFamilies(const FlashBackwardSpec &spec,
                                    StringRef chip, StringRef familyOption) {
  // The sm80-mma backward kernels run on every sm_80+ chip; the
  // sm90a-wgmma dkdv kernel where it implements the attention.
  bool hopper = hopperBackwardSupports(spec, chip).empty();
  if (familyOption == "sm80")
    return {kFlashKernelFamily};
  if (familyOption == "sm90a")
    return hopper ? std::vector<std::string>{kHopperBackwardFamily}
                  : std::vector<std::string>{};
  if (hopper)
    return {kFlashKernelFamily, kHopperBackwardFamily};
  return {kFlashKernelFamily};
}

TileChoice mlir::attn::tileChoiceOf(const HopperBackwardConfig &c) {
  // warp_rows: each consumer warp owns 16 of its warpgroup's 64 keys.
  TileChoice t;
  t.blockM = c.blockM;
  t.blockN = c.blockN;
  t.warpRows = 16;
  t.stages = c.stages;
  t.family = kHopperBackwardFamily;
  t.schedule = hopperBackwardSchedule(c);
  return t;
}

/// The sm80-mma backward space: the heuristic, then block-m {32, 64} x
/// block-n {32, 64, 128}.
static void addFlashBackwardCandidates(const FlashBackwardSpec &spec,
                                       StringRef chip, bool deterministic,
                                       std::vector<BackwardCandidate> &out) {
  FlashBackwardConfig heuristic = chooseFlashBackwardConfig(spec, chip);
  heuristic.deterministic = deterministic;
  std::vector<FlashBackwardConfig> space = {heuristic};
  for (int64_t n : {32, 64, 128})
    for (int64_t m : {32, 64}) {
      FlashBackwardConfig c = heuristic;
      c.blockN = n;
      c.blockM = m;
      space.push_back(c);
    }
  for (const FlashBackwardConfig &c : space) {
    BackwardCandidate bc;
    // warp_rows: 16 keys per warp of the dkdv kernel.
    bc.tile.blockM = c.blockM;
    bc.tile.blockN = c.blockN;
    bc.tile.warpRows = 16;
    bc.tile.stages = 2;
    bc.tile.family = kFlashKernelFamily;
    if (llvm::any_of(out, [&](const BackwardCandidate &o) {
          return o.tile == bc.tile;
        }))
      continue;
    bc.familyHeuristic =
        c.blockM == heuristic.blockM && c.blockN == heuristic.blockN;
    bc.pruned = validateFlashBackward(spec, c, chip);
    out.push_back(bc);
  }
}

/// The sm90a-wgmma backward space: the heuristic, then block-m {64, 128}
/// at D <= 64, {64, 80} at D <= 128 (atomic), else the heuristic's x
/// stages {2, 3, 4} x the dQ schedules (above D = 128 head-split and
/// transposed-dkv; the deterministic kernel has no dQ to schedule).
static void addHopperBackwardCandidates(const FlashBackwardSpec &spec,
                                        bool deterministic,
                                        std::vector<BackwardCandidate> &out) {
  HopperBackwardConfig heuristic =
      chooseHopperBackwardConfig(spec, deterministic);
  std::vector<HopperBackwardConfig> space = {heuristic};
  std::vector<StringRef> schedules = {"dq-pipelined", "dq-first", "dk-first"};
  if (heuristic.splitHeadDim)
    schedules = {"head-split", "transposed-dkv"};
  // Deterministic kernels have no dQ schedule, but above D = 128 the
  // head-split's two (block-n 64 and 80) order their dQ alike.
  if (deterministic && !heuristic.splitHeadDim)
    schedules = {""};
  std::vector<int64_t> blockMs = {heuristic.blockM};
  if (!heuristic.splitHeadDim && hopperBackwardTakesBlockM128(spec))
    blockMs = {64, 128};
  else if (!deterministic && hopperBackwardTakesBlockM80(spec))
    blockMs = {64, 80};
  for (int64_t blockM : blockMs)
    for (int64_t stages : {2, 3, 4})
      for (StringRef schedule : schedules) {
        HopperBackwardConfig c = heuristic;
        c.blockM = blockM;
        c.stages = stages;
        (void)applyHopperBackwardSchedule(c, schedule);
        space.push_back(c);
      }
  TileChoice heuristicTile = tileChoiceOf(heuristic);
  for (const HopperBackwardConfig &c : space) {
    BackwardCandidate bc;
    bc.tile = tileChoiceOf(c);
    if (llvm::any_of(out, [&](const BackwardCandidate &o) {
          return o.tile == bc.tile;
        }))
      continue;
    bc.familyHeuristic = bc.tile == heuristicTile;
    bc.pruned = validateHopperBackward(spec, c);
    out.push_back(bc);
  }
}

std::vector<BackwardCandidate>
mlir::attn::enumerateBackwardCandidates(const FlashBackwardSpec &spec,
                                        StringRef chip, bool deterministic,
                                        StringRef familyOption) {
  // What attn-compile --backward compiles without a tile: the sm90a kernel
  // where usesHopperBackward says so.
  std::string defaultFamily = usesHopperBackward(spec, chip, familyOption)
                                  ? kHopperBackwardFamily
                                  : kFlashKernelFamily;
  std::vector<BackwardCandidate> out;
  for (const std::string &family :
       allowedBackwardFamilies(spec, chip, familyOption)) {
    size_t first = out.size();
    if (family == kFlashKernelFamily)
      addFlashBackwardCandidates(spec, chip, deterministic, out);
    else
      addHopperBackwardCandidates(spec, deterministic, out);
    for (size_t i = first; i < out.size(); ++i)
      out[i].heuristic = out[i].familyHeuristic && family == defaultFamily;
  }
  return out;
}
