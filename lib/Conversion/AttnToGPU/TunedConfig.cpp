//===- TunedConfig.cpp - tile configs from the tuning database ------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// convert-attn-to-gpu looks each attention's shape up in the tuning
// database (docs/tuning.md) before falling back to the heuristic.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Conversion/AttnToGPU/TuningSpace.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Tuning/TuningDatabase.h"

#include <cstdlib>

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

FlashKernelConfigLookup mlir::attn::lookupTunedFlashKernelConfig(
    AttentionOp op, const FlashKernelSpec &spec, StringRef chip,
    const ::attn::tuning::TuningDatabase &db, StringRef gpu) {
  FlashKernelConfigLookup result;
  if (spec.varlen) {
    result.reason = "miss: variable-length (cu_seqlens) kernels are not "
                    "keyed in the database";
    return result;
  }
  RankedTensorType q = op.getQueryType(), k = op.getKeyType();
  if (q.isDynamicDim(2) || k.isDynamicDim(2) || q.isDynamicDim(1) ||
      k.isDynamicDim(1)) {
    result.reason = "miss: dynamic sequence length or head count (the "
                    "database is keyed by static shapes)";
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
  ::attn::tuning::TuningKey key = ::attn::tuning::TuningKey::forProblem(
      p, chip.str(), kFlashKernelFamily,
      ::attn::tuning::compilerVersion());
  key.gpu = gpu.str();
  ::attn::tuning::LookupResult hit = db.lookup(key);
  result.reason = hit.reason;
  if (!hit.entry)
    return result;
  FlashKernelConfig config = chooseFlashKernelConfig(spec, chip);
  config.blockM = hit.entry->winner.blockM;
  config.blockN = hit.entry->winner.blockN;
  config.warpRows = hit.entry->winner.warpRows;
  config.stages = hit.entry->winner.stages;
  config.source = "tuning-db";
  if (std::string why = validateFlashKernel(spec, config, chip);
      !why.empty()) {
    result.reason = "miss: the database's " + hit.entry->winner.name() +
                    " for " + hit.entry->key.str() + " is invalid here (" +
                    why + ")";
    return result;
  }
  result.config = config;
  return result;
}

TunedForwardLookup mlir::attn::lookupTunedForwardKernel(
    AttentionOp op, const FlashKernelSpec &spec, StringRef chip,
    StringRef familyOption, const ::attn::tuning::TuningDatabase &db,
    StringRef gpu) {
  using namespace ::attn::tuning;
  TunedForwardLookup result;
  RankedTensorType q = op.getQueryType(), k = op.getKeyType();
  if (q.isDynamicDim(2) || k.isDynamicDim(2) || q.isDynamicDim(1) ||
      k.isDynamicDim(1)) {
    result.reason = "miss: dynamic sequence length or head count (the "
                    "database is keyed by static shapes)";
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
  if (tile->isSm90a() && tile->persistent) {
    why = "persistent query blocks are not generated by this compiler";
  } else if (tile->isSm90a()) {
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
