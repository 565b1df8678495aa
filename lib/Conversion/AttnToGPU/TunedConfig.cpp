//===- TunedConfig.cpp - tile configs from the tuning database ------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// convert-attn-to-gpu looks each attention's shape up in the tuning
// database (docs/tuning.md) before falling back to the heuristic.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/FlashKernel.h"
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
