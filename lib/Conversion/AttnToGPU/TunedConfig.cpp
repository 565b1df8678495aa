//===- TunedConfig.cpp - tile configs from the tuning database ------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// attn-select-kernel-config looks each attention's shape up in the tuning
// database (docs/tuning.md) before falling back to the heuristic.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Conversion/AttnToGPU/HopperBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/TuningSpace.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Tuning/TuningDatabase.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

using namespace mlir;
using namespace mlir::attn;

/// The database key's problem of an attention with query and key types
/// `q`, `k`, or none (with `missReason` set) when its shape cannot be
/// keyed: the database holds static [B, H, N, D] shapes only.
static std::optional<::attn::AttentionProblem>
staticProblemOf(RankedTensorType q, RankedTensorType k, int64_t headDim,
                int64_t valueHeadDim, Type elementType, bool causal,
                std::string &missReason) {
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
  p.headDim = headDim;
  p.valueHeadDim = valueHeadDim;
  p.dtype = elementType.isBF16() ? ::attn::DType::bf16 : ::attn::DType::f16;
  p.causal = causal;
  return p;
}

/// The database key's problem for `op` (staticProblemOf); variable-length
/// kernels are not keyed.
static std::optional<::attn::AttentionProblem>
tuningProblemOf(AttentionOp op, const FlashKernelSpec &spec,
                std::string &missReason) {
  if (spec.varlen) {
    missReason = "miss: variable-length (cu_seqlens) kernels are not "
                 "keyed in the database";
    return std::nullopt;
  }
  return staticProblemOf(op.getQueryType(), op.getKeyType(), spec.headDim,
                         spec.valueHeadDim, spec.elementType, spec.causal,
                         missReason);
}

/// The database's tile for `families` (key family tuningKeyFamily), or
/// for the one family a caller fixed the fastest correct candidate of an
/// entry that tuned both; sets `how` it was found. Null when none, with
/// `reason` saying why.
static const ::attn::tuning::TileChoice *findTunedTile(
    const ::attn::tuning::TuningDatabase &db,
    const std::vector<std::string> &families,
    llvm::function_ref<::attn::tuning::TuningKey(const std::string &)> keyFor,
    std::string &reason, std::string &how) {
  using namespace ::attn::tuning;
  LookupResult primary = db.lookup(keyFor(tuningKeyFamily(families)));
  reason = primary.reason;
  if (primary.entry) {
    how = primary.reason;
    return &primary.entry->winner;
  }
  if (families.size() != 1)
    return nullptr;
  LookupResult both = db.lookup(keyFor(kAutoFamily));
  if (!both.entry)
    return nullptr;
  if (const CandidateResult *c = fastestOfFamily(*both.entry,
                                                 families.front())) {
    how = "hit: the fastest " + families.front() + " candidate of " +
          both.entry->key.str();
    return &c->tile;
  }
  reason += "; the entry tuning both families has no correct " +
            families.front() + " candidate";
  return nullptr;
}

/// What a lookup that found `tile` (`how`) says: the tile, or why it is
/// invalid here.
static std::string tunedTileReason(const std::string &how,
                                   const ::attn::tuning::TileChoice &tile,
                                   const std::string &why) {
  return why.empty() ? how + " -> " + tile.name()
                     : "miss: the database's " + tile.name() + " for " +
                           how.substr(5) + " is invalid here (" + why + ")";
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

  std::string how;
  const TileChoice *tile = findTunedTile(db, families, keyFor,
                                         result.reason, how);
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
  result.reason = tunedTileReason(how, *tile, why);
  return result;
}

TunedBackwardLookup mlir::attn::lookupTunedBackwardKernel(
    AttentionGradOp op, StringRef chip, StringRef family, bool deterministic,
    const ::attn::tuning::TuningDatabase &db, StringRef gpu) {
  using namespace ::attn::tuning;
  TunedBackwardLookup result;
  FlashBackwardSpec spec = FlashBackwardSpec::fromOp(op);
  if (!spec.elementType ||
      !(spec.elementType.isF16() || spec.elementType.isBF16())) {
    result.reason = "miss: the GPU backward kernels take f16 or bf16";
    return result;
  }
  std::optional<::attn::AttentionProblem> problem = staticProblemOf(
      op.getQueryType(), op.getKeyType(), spec.headDim, spec.valueHeadDim,
      spec.elementType, spec.causal, result.reason);
  if (!problem)
    return result;
  std::vector<std::string> families =
      allowedBackwardFamilies(spec, chip, family);
  if (families.empty()) {
    result.reason = "miss: family " + family.str() +
                    " has no backward kernel for this attention";
    return result;
  }
  const ::attn::AttentionProblem &p = *problem;
  auto keyFor = [&](const std::string &keyFamily) {
    TuningKey key =
        TuningKey::forProblem(p, chip.str(), keyFamily, compilerVersion());
    key.direction = "bwd";
    key.deterministic = deterministic;
    key.gpu = gpu.str();
    return key;
  };
  std::string how;
  const TileChoice *tile = findTunedTile(db, families, keyFor,
                                         result.reason, how);
  if (!tile)
    return result;

  const TileChoice &t = *tile;
  std::string why;
  if (t.family == kHopperBackwardFamily) {
    HopperBackwardConfig c = chooseHopperBackwardConfig(spec, deterministic);
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
  result.reason = tunedTileReason(how, t, why);
  return result;
}
