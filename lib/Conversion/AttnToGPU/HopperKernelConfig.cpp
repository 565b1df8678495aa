//===- HopperKernelConfig.cpp - choosing and checking sm_90a configs ------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/HopperKernel.h"
#include "attn/Conversion/AttnToGPU/KernelCapabilities.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <tuple>
#include <sstream>

using namespace mlir;
using namespace mlir::attn;

std::string mlir::attn::hopperFamilySupports(const FlashKernelSpec &spec,
                                             StringRef chip) {
  return unsupportedKernelFeature(
      kernelCapability("sm90a", KernelDirection::Forward),
      KernelRequest::of(spec), chip);
}

std::pair<int64_t, int64_t> mlir::attn::hopperRegisterSplit(int64_t consumers,
                                                            bool persistent) {
  // setmaxnreg only moves registers within the block's launch allocation
  // (hopperLaunchRegisters per thread): 384 threads get 168 each, so two
  // consumers take 240 with a 24-register producer (24 + 2 · 240 = 3 · 168)
  // or 232 with 40: the persistent grid's query-block loop spills 4 bytes
  // in the producer at 24. 32/240 exceeds the allocation (setmaxnreg.inc
  // never returns: the H200 run of 2026-11-29 hung). 512 threads get 128
  // each: 32 + 3 · 160.
  if (consumers >= 3)
    return {32, 160};
  return persistent ? std::pair<int64_t, int64_t>{40, 232}
                    : std::pair<int64_t, int64_t>{24, 240};
}

int64_t mlir::attn::hopperConsumerRegisterNeed(
    const FlashKernelSpec &spec, const HopperKernelConfig &config) {
  int64_t fragments =
      config.blockN / 2 + config.blockN / 4 + hopperTileWidth(spec.valueHeadDim) / 2;
  // Softmax state, addresses, descriptors, loop counters.
  return fragments + kHopperConsumerRegisterOverhead;
}

HopperKernelConfig
mlir::attn::chooseHopperKernelConfig(const FlashKernelSpec &spec) {
  HopperKernelConfig config;
  config.source = "heuristic";
  bool persistentFits = true;
  int64_t d = std::max(hopperTileWidth(spec.headDim),
                       hopperTileWidth(spec.valueHeadDim));
  // Per consumer thread: S takes blockN / 2 registers, O Dv / 2, P
  // blockN / 4 (hopperConsumerRegisterNeed).
  if (d <= 64) {
    // FlashAttention-3's D = 64 tile: three consumers (192 query rows) so
    // that the short Q·Kᵀ (4 k-steps) of one hides the softmax of the
    // others; block_n 128 is what 160 registers hold with P in registers.
    config.blockM = 192;
    config.blockN = 128;
    config.stages = 2;
  } else if (d <= 128) {
    config.blockM = 128;
    config.blockN = 128;
    config.stages = 2;
  } else {
    // Block-n 80 (two stages fill the 227 KiB) on the plain grid, where
    // the 240 registers hold it; against block-n 64 (H200, tuning v9,
    // bench/results/2026-12-01-tuning-h200-v9.md) 0.97x at N = 512,
    // 1.03-1.06x at 1024-2048 and 1.08-1.17x from 4096 without a mask
    // (against the persistent grid), 0.98x at 512 and 1.02-1.09x above
    // with a causal one. A score_mod's registers make block-n 80 spill
    // (softcap, f16, causal: 16 bytes), so it keeps block-n 64.
    config.blockM = 128;
    config.blockN = spec.scoreMod ? 64 : 80;
    config.stages = 2;
    // The persistent grid's 232 registers spill block-n 80.
    persistentFits = config.blockN == 64;
  }
  // Without a mask every tile costs the same: the persistent grid's static
  // walk balances, and it loads the next tile under this one's epilogue
  // (H200, bench/results/2026-11-29-sm90a-v4.md: +8 to +14% at N <= 1024 for
  // D 64/128, +4 to +6% at D 256 with block-n 64, which block-n 80 on the
  // plain grid outruns from N = 1024; hopperKernelGrid gives long sequences
  // one block per tile). With a mask the tiles' lengths differ: the hardware's
  // dynamic dispatch of one block per tile, longest first across heads
  // (hopperLengthMajorTiles), wins at D 128/256 (the persistent walk,
  // even length-major, is 0.94-0.95x cuDNN in geomean there against
  // 0.98-1.04x; bench/results/2026-12-01-causal-walk.md). At D = 64 (three
  // consumers) the length-major persistent walk wins at N <= 2048 (188 vs
  // 166, 260 vs 241, 355 vs 337 TFLOP/s at N = 512/1024/2048) and is the
  // same grid from 4096 on.
  config.persistent = spec.band.isNone() && persistentFits;
  if (d <= 64 && hopperLengthMajorTiles(spec))
    config.persistent = true;
  setHopperRegisterSplit(config);
  return config;
}

int64_t mlir::attn::hopperLaunchRegisters(const HopperKernelConfig &config) {
  // ptxas gives each thread what maxntid allows (one block per SM), in
  // multiples of 8, at most 255.
  return std::min<int64_t>(65536 / config.threads(), 255) / 8 * 8;
}

void mlir::attn::setHopperRegisterSplit(HopperKernelConfig &config) {
  std::tie(config.producerRegisters, config.consumerRegisters) =
      hopperRegisterSplit(config.consumers(),
                          config.persistent || config.wideProducer);
}

int64_t mlir::attn::hopperKernelSharedMemoryBytes(
    const FlashKernelSpec &spec, const HopperKernelConfig &config) {
  int64_t d = hopperTileWidth(spec.headDim);
  int64_t dv = hopperTileWidth(spec.valueHeadDim);
  int64_t q = config.blockM * d * 2;
  int64_t k = config.stages * config.blockN * d * 2;
  int64_t v = config.stages * config.blockN * dv * 2;
  // mbarriers (Q full/empty, and full/empty per stage for K and V) after
  // the tiles, plus slack to align the base to 1024 bytes (the 128-byte
  // swizzle atom).
  int64_t barriers = 8 * (2 + 4 * config.stages);
  return q + k + v + barriers + 1024;
}

std::string
mlir::attn::validateHopperKernel(const FlashKernelSpec &spec,
                                 const HopperKernelConfig &config) {
  std::ostringstream os;
  const KernelCapability &cap =
      kernelCapability("sm90a", KernelDirection::Forward);
  if (!cap.blockM.contains(config.blockM)) {
    os << "block-m must be " << cap.blockM.str()
       << " for the sm90a-wgmma family (64 query rows per consumer "
          "warpgroup), got "
       << config.blockM;
    return os.str();
  }
  // wgmma N of S = Q·Kᵀ: a multiple of 16 up to 256; TMA boxes take at
  // most 256 rows.
  if (!cap.blockN.contains(config.blockN)) {
    os << "block-n must be " << cap.blockN.str()
       << " for the sm90a-wgmma family, got " << config.blockN;
    return os.str();
  }
  if (!cap.stages.contains(config.stages)) {
    os << "stages must be " << cap.stages.str()
       << " for the sm90a-wgmma family, got " << config.stages;
    return os.str();
  }
  if (config.exp2Emulated < 0 || config.exp2Emulated > 8) {
    os << "exp2-emulated must be in [0, 8] (columns of 8 keys out of every "
          "8 whose exp2 runs on the FMA pipe), got "
       << config.exp2Emulated;
    return os.str();
  }
  int64_t smem = hopperKernelSharedMemoryBytes(spec, config);
  if (smem > 227 * 1024) {
    os << "the tile configuration needs " << smem
       << " bytes of shared memory, more than the " << 227 * 1024
       << " bytes a block gets on sm_90a; lower block-m, block-n or stages";
    return os.str();
  }
  // setmaxnreg: multiples of 8 in [24, 256], and the block's registers
  // must fit the SM's 64K.
  for (int64_t r : {config.producerRegisters, config.consumerRegisters})
    if (r < 24 || r > 256 || r % 8 != 0) {
      os << "setmaxnreg counts must be multiples of 8 in [24, 256], got "
         << config.producerRegisters << " (producer) and "
         << config.consumerRegisters << " (consumers)";
      return os.str();
    }
  int64_t blockRegisters = 128 * (config.producerRegisters +
                                  config.consumers() * config.consumerRegisters);
  int64_t launchRegisters = config.threads() * hopperLaunchRegisters(config);
  if (blockRegisters > launchRegisters) {
    os << "setmaxnreg " << config.producerRegisters << " (producer) + "
       << config.consumers() << " x " << config.consumerRegisters
       << " (consumers) needs " << blockRegisters
       << " registers, more than the " << launchRegisters << " that "
       << config.threads()
       << " threads are launched with; setmaxnreg.inc would never return";
    return os.str();
  }
  // S, P and O per consumer thread must leave room for the softmax and
  // addresses in the consumers' register budget (else ptxas spills).
  int64_t need = hopperConsumerRegisterNeed(spec, config);
  if (need > config.consumerRegisters) {
    os << "block-n " << config.blockN << " with value head dim "
       << spec.valueHeadDim << " and block-m " << config.blockM << " needs "
       << need << " registers per consumer thread, more than its "
       << config.consumerRegisters << "; lower block-n";
    return os.str();
  }
  return "";
}

std::string mlir::attn::hopperKernelName(const FlashKernelSpec &spec,
                                         const HopperKernelConfig &config) {
  std::ostringstream os;
  os << forwardKernelNameStem(spec, "attn_fwd_sm90");
  os << "_m" << config.blockM << "n" << config.blockN << "s" << config.stages;
  if (config.persistent)
    os << "_p";
  if (config.exp2Emulated)
    os << "_e" << config.exp2Emulated;
  if (!config.overlap)
    os << "_serial";
  else if (!config.pingPong && config.consumers() >= 2)
    os << "_nopp";
  return os.str();
}

SmallVector<HopperTensorMap>
mlir::attn::hopperTensorMaps(const FlashKernelSpec &spec,
                             const HopperKernelConfig &config) {
  return {{"q_tmap", "q", 64, config.blockM},
          {"k_tmap", "k", 64, config.blockN},
          {"v_tmap", "v", 64, config.blockN}};
}

bool mlir::attn::hopperLengthMajorTiles(const FlashKernelSpec &spec) {
  return spec.band.hasRight() && !spec.band.hasLeft();
}

GridPolicy mlir::attn::hopperKernelGrid(const FlashKernelSpec &spec,
                                        const HopperKernelConfig &config) {
  // Persistent: per batch, no more blocks than its heads' query blocks and
  // than the SMs hold once across the batch, at least one. From 4096 query
  // rows on, one block per tile: the tiles are long enough that loading
  // the next one under the epilogue no longer pays, and the hardware's
  // dynamic dispatch evens out the last wave (H200: the walk was 1-4%
  // slower there at D 128, bench/results/2026-11-29-sm90a-v4.md).
  if (config.persistent)
    return GridPolicy::persistent;
  return hopperLengthMajorTiles(spec) ? GridPolicy::length_major
                                      : GridPolicy::query_tiles;
}
