//===- TunedConfig.cpp - tile configs from the tuning database ------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// convert-attn-to-gpu looks each attention's shape up in the tuning
// database (docs/tuning.md) before falling back to the heuristic.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Conversion/AttnToGPU/HopperBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/TuningSpace.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Tuning/TuningDatabase.h"

#include <cstdlib>
#include <optional>

using namespace mlir;
using namespace mlir::attn;

std::string mlir::attn::resolveTuningDatabasePath(StringRef option) {
  if (option == "none")
    return "";
  if (!option.empty())
    return option.str();
  const char *env = std::getenv("ATTN_TUNING_DB");
  return env && std::string(env) != "none" ? env : "";
}

/// The database key's problem for `op`, or none (with `missReason` set)
/// when the op's shape cannot be keyed: the database holds static
/// [B, H, N, D] shapes only.
static std::optional<::attn::AttentionProblem>
tuningProblemOf(AttentionOp op, const FlashKernelSpec &spec,
                std::string &missReason) {
  if (spec.varlen) {
    missReason = "miss: variable-length (cu_seqlens) kernels are not "
                 "keyed in the database";
    return std::nullopt;
  }
  RankedTensorType q = op.getQueryType(), k = op.getKeyType();
  if (q.isDynamicDim(2) || k.isDynamicDim(2) || q.isDynamicDim(1) ||
      k.isDynamicDim(1)) {
    missReason = "miss: dynamic sequence length or head count (the "
                 "database is keyed by static shapes)";
    return std::nullopt;
  }
  ::attn::AttentionProblem p;
  p.headsQ = q.getDimSize(1);
  p.headsKv = k.getDimSize(1);
  p.seqQ = q.getDimSize(2);
  p.seqKv = k.getDimSize(2);
  p.headDim = spec.headDim;
  p.valueHeadDim = spec.valueHeadDim;
  p.dtype = spec.elementType.isBF16() ? ::attn::DType::bf16
                                      : ::attn::DType::f16;
  p.causal = spec.causal;
  return p;
}

TunedForwardLookup mlir::attn::lookupTunedForwardKernel(
    AttentionOp op, const FlashKernelSpec &spec, StringRef chip,
    StringRef familyOption, const ::attn::tuning::TuningDatabase &db,
    StringRef gpu) {
  using namespace ::attn::tuning;
  TunedForwardLookup result;
  std::optional<::attn::AttentionProblem> problem =
      tuningProblemOf(op, spec, result.reason);
  if (!problem)
    return result;
  const ::attn::AttentionProblem &p = *problem;
  std::vector<std::string> families =
      allowedKernelFamilies(spec, chip, familyOption);
  auto keyFor = [&](const std::string &family) {
    TuningKey key =
        TuningKey::forProblem(p, chip.str(), family, compilerVersion());
    key.gpu = gpu.str();
    return key;
  };

  // The tile to use and how it was found.
  const TileChoice *tile = nullptr;
  std::string how;
  LookupResult primary = db.lookup(keyFor(tuningKeyFamily(families)));
  result.reason = primary.reason;
  if (primary.entry) {
    tile = &primary.entry->winner;
    how = primary.reason;
  } else if (families.size() == 1) {
    // A family fixed by the caller: its fastest correct candidate in an
    // entry that tuned both families.
    LookupResult both = db.lookup(keyFor(kAutoFamily));
    if (both.entry) {
      if (const CandidateResult *c = fastestOfFamily(*both.entry,
                                                     families.front())) {
        tile = &c->tile;
        how = "hit: the fastest " + families.front() + " candidate of " +
              both.entry->key.str();
      } else {
        result.reason += "; the entry tuning both families has no correct " +
                         families.front() + " candidate";
      }
    }
  }
  if (!tile)
    return result;

  std::string why;
  if (tile->isSm90a()) {
    HopperKernelConfig c = hopperConfigFromTile(spec, *tile);
    c.source = "tuning-db";
    why = hopperFamilySupports(spec, chip);
    if (why.empty())
      why = validateHopperKernel(spec, c);
    if (why.empty())
      result.hopper = c;
  } else {
    FlashKernelConfig c = flashConfigFromTile(spec, chip, *tile);
    c.source = "tuning-db";
    why = validateFlashKernel(spec, c, chip);
    if (why.empty())
      result.flash = c;
  }
  result.reason = why.empty() ? how + " -> " + tile->name()
                              : "miss: the database's " + tile->name() +
                                    " for " + how.substr(5) +
                                    " is invalid here (" + why + ")";
  return result;
}

TunedBackwardLookup mlir::attn::lookupTunedBackwardKernel(
    AttentionGradOp op, StringRef chip, StringRef family, bool deterministic,
    const ::attn::tuning::TuningDatabase &db, StringRef gpu) {
  using namespace ::attn::tuning;
  TunedBackwardLookup result;
  RankedTensorType q = op.getQueryType(), k = op.getKeyType();
  if (q.isDynamicDim(2) || k.isDynamicDim(2) || q.isDynamicDim(1) ||
      k.isDynamicDim(1)) {
    result.reason = "miss: dynamic sequence length or head count (the "
                    "database is keyed by static shapes)";
    return result;
  }
  FlashBackwardSpec spec = FlashBackwardSpec::fromOp(op);
  if (!spec.elementType ||
      !(spec.elementType.isF16() || spec.elementType.isBF16())) {
    result.reason = "miss: the GPU backward kernels take f16 or bf16";
    return result;
  }
  std::vector<std::string> families =
      allowedBackwardFamilies(spec, chip, family);
  if (families.empty()) {
    result.reason = "miss: family " + family.str() +
                    " has no backward kernel for this attention";
    return result;
  }
  ::attn::AttentionProblem p;
  p.headsQ = q.getDimSize(1);
  p.headsKv = k.getDimSize(1);
  p.seqQ = q.getDimSize(2);
  p.seqKv = k.getDimSize(2);
  p.headDim = spec.headDim;
  p.valueHeadDim = spec.valueHeadDim;
  p.dtype = spec.elementType.isBF16() ? ::attn::DType::bf16
                                      : ::attn::DType::f16;
  p.causal = spec.causal;
  auto keyFor = [&](const std::string &keyFamily) {
    TuningKey key =
        TuningKey::forProblem(p, chip.str(), keyFamily, compilerVersion());
    key.direction = "bwd";
    key.deterministic = deterministic;
    key.gpu = gpu.str();
    return key;
  };
  const TileChoice *tile = nullptr;
  std::string how;
  LookupResult hit = db.lookup(keyFor(tuningKeyFamily(families)));
  result.reason = hit.reason;
  if (hit.entry) {
    tile = &hit.entry->winner;
    how = hit.reason;
  } else if (families.size() == 1) {
    // A family fixed by the caller (or the only one here): its fastest
    // correct candidate in an entry that tuned both families.
    LookupResult both = db.lookup(keyFor(kAutoFamily));
    if (both.entry) {
      if (const CandidateResult *c =
              fastestOfFamily(*both.entry, families.front())) {
        tile = &c->tile;
        how = "hit: the fastest " + families.front() + " candidate of " +
              both.entry->key.str();
      } else {
        result.reason += "; the entry tuning both families has no correct " +
                         families.front() + " candidate";
      }
    }
  }
  if (!tile)
    return result;

  const TileChoice &t = *tile;
  std::string why;
  if (t.family == kHopperBackwardFamily) {
    HopperBackwardConfig c = chooseHopperBackwardConfig(spec);
    c.deterministic = deterministic;
    c.blockM = t.blockM;
    c.blockN = t.blockN;
    c.stages = t.stages;
    c.source = "tuning-db";
    why = hopperBackwardSupports(spec, chip);
    if (why.empty())
      why = applyHopperBackwardSchedule(c, t.schedule);
    if (why.empty())
      why = validateHopperBackward(spec, c);
    if (why.empty())
      result.hopper = c;
  } else if (t.family == kFlashKernelFamily || t.family.empty()) {
    FlashBackwardConfig c = chooseFlashBackwardConfig(spec, chip);
    c.deterministic = deterministic;
    c.blockM = t.blockM;
    c.blockN = t.blockN;
    c.source = "tuning-db";
    why = validateFlashBackward(spec, c, chip);
    if (why.empty())
      result.config = c;
  } else {
    why = "no " + t.family + " backward kernels";
  }
  result.reason = why.empty() ? how + " -> " + t.name()
                              : "miss: the database's " + t.name() +
                                    " for " + how.substr(5) +
                                    " is invalid here (" + why + ")";
  return result;
}
