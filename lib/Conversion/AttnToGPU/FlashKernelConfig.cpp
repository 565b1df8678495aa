//===- FlashKernelConfig.cpp - choosing and checking kernel configs -------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Conversion/AttnToGPU/KernelCapabilities.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Support/Chip.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstdio>
#include <sstream>

using namespace mlir;
using namespace mlir::attn;

FlashKernelSpec FlashKernelSpec::fromOp(AttentionOp op) {
  FlashKernelSpec spec;
  spec.headDim = op.getHeadDim();
  spec.valueHeadDim = op.getValueHeadDim();
  spec.elementType = op.getQueryType().getElementType();
  spec.causal = op.isCausal();
  spec.mask = op.getMask();
  spec.band = op.getMaskBand();
  spec.scoreMod = op.getScoreModBlock();
  spec.withLse = static_cast<bool>(op.getLse());
  spec.varlen = op.isVarlen();
  spec.bias = static_cast<bool>(op.getBias());
  spec.keyRange = static_cast<bool>(op.getKeyStart());
  spec.alibi = static_cast<bool>(op.getAlibiSlopes());
  return spec;
}

int64_t mlir::attn::flashKernelSharedMemoryBytes(
    const FlashKernelSpec &spec, const FlashKernelConfig &config) {
  int64_t elt = 2;
  int64_t d = spec.tileHeadDim(), dv = spec.tileValueHeadDim();
  int64_t q = config.blockM * d * elt;
  int64_t k = config.stages * config.blockN * d * elt;
  int64_t v = config.stages * config.blockN * dv * elt;
  // The epilogue stages O over the front of the buffer.
  return std::max(q + k + v, config.blockM * dv * elt);
}

int64_t mlir::attn::sharedMemoryPerBlock(StringRef chip) {
  const ::attn::ChipInfo *info = ::attn::lookupChip(chip.str());
  return info ? info->sharedMemoryPerBlock : 0;
}

FlashKernelConfig mlir::attn::chooseFlashKernelConfig(
    const FlashKernelSpec &spec, StringRef chip) {
  FlashKernelConfig config;
  config.source = "heuristic";
  config.stages = 2;
  int64_t d = std::max(spec.tileHeadDim(), spec.tileValueHeadDim());
  // Each warp owns 32 query rows (two m16 tiles) where the registers allow:
  // every K/V fragment read from shared memory then feeds two MMAs, which
  // halves shared-memory traffic per FLOP. Per thread the accumulators take
  // warpRows/16 · d/8 · 4 registers and the scores warpRows/16 · blockN/8 · 4.
  if (d <= 64) {
    config.blockM = 128;
    config.warpRows = 32;
    config.blockN = 64;
    config.qInRegisters = true;
  } else if (d <= 128) {
    config.blockM = 128;
    config.warpRows = 32;
    config.blockN = 64;
    config.qInRegisters = false;
  } else {
    // 128 accumulator registers per 16 rows already: one m-tile per warp
    // and a narrow key tile keep the scores from spilling.
    config.blockM = 64;
    config.warpRows = 16;
    config.blockN = 32;
    config.qInRegisters = false;
  }
  // Shrink the key tile if shared memory is short on this chip.
  while (config.blockN > 16 &&
         flashKernelSharedMemoryBytes(spec, config) > sharedMemoryPerBlock(chip))
    config.blockN /= 2;
  return config;
}

std::string mlir::attn::validateFlashKernel(const FlashKernelSpec &spec,
                                            const FlashKernelConfig &config,
                                            StringRef chip) {
  std::ostringstream os;
  const KernelCapability &cap =
      kernelCapability("sm80", KernelDirection::Forward);
  if (std::string why =
          unsupportedKernelFeature(cap, KernelRequest::of(spec), chip);
      !why.empty())
    return why;
  int64_t smemLimit = sharedMemoryPerBlock(chip);
  if (config.warpRows != 16 && config.warpRows != 32) {
    os << "warp-rows must be 16 or 32, got " << config.warpRows;
    return os.str();
  }
  if (!cap.blockM.contains(config.blockM) ||
      config.blockM % config.warpRows != 0 ||
      config.blockM / config.warpRows > 16) {
    os << "block-m must be a multiple of warp-rows (" << config.warpRows
       << ") with at most 16 warps, got " << config.blockM;
    return os.str();
  }
  if (!cap.blockN.contains(config.blockN)) {
    os << "block-n must be " << cap.blockN.str() << ", got " << config.blockN;
    return os.str();
  }
  if (!cap.stages.contains(config.stages)) {
    os << "stages must be " << cap.stages.str()
       << " for the sm80-mma family, got " << config.stages;
    return os.str();
  }
  // Every thread copies whole 16-byte chunks of each tile.
  int64_t threads = config.threads();
  auto divisible = [&](int64_t rows, int64_t d) {
    return (rows * d / 8) % threads == 0;
  };
  int64_t dPad = spec.tileHeadDim();
  if (!divisible(config.blockN, dPad) ||
      !divisible(config.blockN, spec.tileValueHeadDim()) ||
      !divisible(config.blockM, dPad)) {
    os << "block-n " << config.blockN << " is too small for " << threads
       << " threads: each tile must split into whole 16-byte copies per "
          "thread";
    return os.str();
  }
  int64_t smem = flashKernelSharedMemoryBytes(spec, config);
  if (smem > smemLimit) {
    os << "the tile configuration needs " << smem
       << " bytes of shared memory, more than the " << smemLimit
       << " bytes a block gets on " << chip.str()
       << "; lower block-m or block-n";
    return os.str();
  }
  return "";
}

std::vector<FlashKernelConfig> mlir::attn::enumerateFlashKernelConfigs(
    const FlashKernelSpec &spec, StringRef chip,
    std::vector<PrunedFlashKernelConfig> *pruned) {
  FlashKernelConfig heuristic = chooseFlashKernelConfig(spec, chip);
  std::vector<FlashKernelConfig> space;
  for (int64_t m : {64, 128, 256})
    for (int64_t n : {32, 64, 128})
      for (int64_t rows : {16, 32}) {
        FlashKernelConfig c = heuristic;
        c.blockM = m;
        c.blockN = n;
        c.warpRows = rows;
        c.stages = 2;
        bool isHeuristic = m == heuristic.blockM && n == heuristic.blockN &&
                           rows == heuristic.warpRows;
        c.source = isHeuristic ? "heuristic" : "candidate";
        space.push_back(c);
      }
  if (llvm::none_of(space, [](const FlashKernelConfig &c) {
        return c.source == "heuristic";
      }))
    space.insert(space.begin(), heuristic);

  std::vector<FlashKernelConfig> kept;
  for (const FlashKernelConfig &c : space) {
    std::string why = validateFlashKernel(spec, c, chip);
    if (why.empty())
      kept.push_back(c);
    else if (pruned)
      pruned->push_back({c, why});
  }
  return kept;
}

std::string mlir::attn::maskKernelNameSuffix(bool causal,
                                              const MaskBand &band) {
  if (causal)
    return "_causal";
  if (band.isNone())
    return "";
  auto bound = [](int64_t v) {
    return v < 0 ? std::string("inf") : std::to_string(v);
  };
  return (band.topLeft ? "_tl" : "_br") + bound(band.left) + "x" +
         bound(band.right);
}

std::string mlir::attn::softcapKernelNameSuffix(double softcap) {
  if (softcap <= 0)
    return "";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", softcap);
  std::string text = buffer;
  for (char &ch : text)
    ch = ch == '.' ? 'p' : ch == '-' ? 'm' : ch == '+' ? 'x' : ch;
  return "_cap" + text;
}

std::string mlir::attn::flashKernelVariantSuffix(const FlashKernelSpec &spec) {
  std::ostringstream os;
  os << maskKernelNameSuffix(spec.causal, spec.band);
  if (spec.scoreMod) {
    // Different regions are different kernels: name them by the text of
    // the op that holds the region (block arguments print by position).
    std::string text;
    llvm::raw_string_ostream ts(text);
    spec.scoreMod->getParentOp()->print(
        ts, OpPrintingFlags().printGenericOpForm().useLocalScope());
    os << "_mod" << std::hex << (llvm::xxh3_64bits(text) & 0xffffffffu)
       << std::dec;
  }
  if (spec.alibi)
    os << "_alibi";
  if (spec.bias)
    os << "_bias";
  if (spec.varlen)
    os << "_varlen";
  if (spec.keyRange)
    os << "_kr";
  return os.str();
}

std::string mlir::attn::forwardKernelNameStem(const FlashKernelSpec &spec,
                                              StringRef prefix) {
  std::ostringstream os;
  os << prefix.str() << "_d" << spec.headDim;
  if (spec.valueHeadDim != spec.headDim)
    os << "v" << spec.valueHeadDim;
  os << (spec.elementType.isBF16() ? "_bf16" : "_f16");
  os << flashKernelVariantSuffix(spec);
  if (!spec.withLse)
    os << "_nolse";
  return os.str();
}

std::string mlir::attn::flashKernelName(const FlashKernelSpec &spec,
                                        const FlashKernelConfig &config) {
  std::ostringstream os;
  os << forwardKernelNameStem(spec, "attn_fwd");
  os << "_m" << config.blockM << "n" << config.blockN << "w" << config.warps()
     << "s" << config.stages;
  return os.str();
}
