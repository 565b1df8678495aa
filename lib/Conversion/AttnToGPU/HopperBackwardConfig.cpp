//===- HopperBackwardConfig.cpp - the sm90a dkdv kernel's configs ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// What the Hopper dkdv kernel (HopperBackwardKernel.cpp) can take and how
// it is configured: the family's support, the heuristic's configuration,
// the dQ schedules' names, validation, shared-memory bytes, kernel names
// and tensor maps (the forward's counterpart: HopperKernelConfig.cpp).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/HopperBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/HopperKernel.h"
#include "attn/Conversion/AttnToGPU/KernelCapabilities.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

int64_t mlir::attn::hopperBackwardBarrierBytes(
    const HopperBackwardConfig &config) {
  // transposedDkv: then dO's own full and empty barriers and the K tile's
  // address (HopperBackwardKernel.cpp's kTileSlot).
  return 8 * (1 + 2 * config.stages + (config.transposedDkv() ? 3 : 0));
}

bool mlir::attn::usesHopperBackward(const FlashBackwardSpec &spec,
                                    StringRef chip, StringRef family) {
  return family == "sm90a" ||
         (family == "auto" && hopperBackwardSupports(spec, chip).empty());
}

std::string mlir::attn::hopperBackwardSupports(const FlashBackwardSpec &spec,
                                               StringRef chip) {
  return unsupportedKernelFeature(
      kernelCapability("sm90a", KernelDirection::Backward),
      KernelRequest::of(spec), chip);
}

bool mlir::attn::hopperBackwardTakesBlockM128(const FlashBackwardSpec &spec) {
  return hopperBackwardTileWidth(spec) <= 64;
}

bool mlir::attn::hopperBackwardTakesBlockM80(const FlashBackwardSpec &spec) {
  return hopperBackwardTileWidth(spec) == 128;
}

std::string
mlir::attn::validateHopperBackward(const FlashBackwardSpec &spec,
                                   const HopperBackwardConfig &config) {
  const KernelCapability &cap =
      kernelCapability("sm90a", KernelDirection::Backward);
  // Sᵀ is m64n<blockM>: dSᵀ is stored as 64-query panels of 128-byte
  // swizzled rows, one or two; at block-m 80, dS as 80 query rows.
  if (config.blockM != 64 && config.blockM != 80 && config.blockM != 128)
    return "block-m of the sm90a backward kernel must be 64, 80 or 128 (got " +
           std::to_string(config.blockM) + ")";
  if (config.blockM == 128 &&
      (config.splitHeadDim || !hopperBackwardTakesBlockM128(spec)))
    return "block-m 128 of the sm90a backward kernel needs head dim 64 or "
           "less (got " +
           std::to_string(std::max(spec.headDim, spec.valueHeadDim)) + ")";
  if (config.blockM == 80 && !hopperBackwardTakesBlockM80(spec))
    return "block-m 80 of the sm90a backward kernel needs a head dim in "
           "[72, 128] (got " +
           std::to_string(std::max(spec.headDim, spec.valueHeadDim)) + ")";
  // Ordered dQ keeps two tiles in flight (one held the deterministic
  // kernel to 0.78-0.92x the atomic one); block-m 80 has room for one.
  // Adding its dQᵀ from registers in turns instead (no tile) ran
  // 0.77-0.80x the 64-row deterministic kernel: 40 scalar reductions per
  // thread per step (bench/results/2026-12-05-bwd-tdkv-m80.md).
  if (config.blockM == 80 && config.deterministic)
    return "block-m 80 of the sm90a backward kernel is not deterministic "
           "(it holds one dQ tile; --deterministic takes block-m 64)";
  // Above D = 128 the two consumers share a block of 64 keys (head-split)
  // or 80 (transposed-dkv), else each owns 64.
  if (config.splitHeadDim && config.blockN != 64 && config.blockN != 80)
    return "block-n of the sm90a backward kernel at head dim " +
           std::to_string(spec.headDim) +
           " must be 64 (head-split) or 80 (transposed-dkv) (got " +
           std::to_string(config.blockN) + ")";
  if (!config.splitHeadDim && config.blockN != 128)
    return "block-n of the sm90a backward kernel at head dim " +
           std::to_string(spec.headDim) +
           " must be 128, two consumer warpgroups of 64 keys (got " +
           std::to_string(config.blockN) + ")";
  if (config.transposedDkv() && config.blockM != 64)
    return "block-m of the sm90a backward kernel's transposed-dkv schedule "
           "must be 64 (got " +
           std::to_string(config.blockM) + ")";
  // Its dVᵀ and dQᵀ panels, epilogue and dP depth take one head dim.
  if (config.transposedDkv() && spec.headDim != spec.valueHeadDim)
    return "sm90-schedule transposed-dkv of the sm90a backward kernel takes "
           "equal head dims (got " +
           std::to_string(spec.headDim) + " and " +
           std::to_string(spec.valueHeadDim) + ")";
  if (!cap.stages.contains(config.stages))
    return "stages of the sm90a backward kernel must be " + cap.stages.str() +
           " (got " + std::to_string(config.stages) + ")";
  // setmaxnreg only redistributes the 168 registers per thread that
  // 384 threads are launched with.
  if (config.producerRegisters + config.consumers() * config.consumerRegisters >
      168 * (1 + config.consumers()))
    return "the setmaxnreg split exceeds the launch's registers";
  int64_t smem = hopperBackwardSharedMemoryBytes(spec, config);
  if (smem > 227 * 1024)
    return "the sm90a backward kernel needs " + std::to_string(smem) +
           " bytes of shared memory, sm_90a offers " +
           std::to_string(227 * 1024);
  return "";
}

int64_t mlir::attn::hopperBackwardTileWidth(const FlashBackwardSpec &spec) {
  return hopperTileWidth(std::max(spec.headDim, spec.valueHeadDim));
}

int64_t
mlir::attn::hopperBackwardSharedMemoryBytes(const FlashBackwardSpec &spec,
                                            const HopperBackwardConfig &config) {
  int64_t e = 2, d = hopperBackwardTileWidth(spec);
  int64_t kv = config.blockN * 2 * d * e;
  int64_t ring = (config.stages + config.doStages()) * config.blockM * d * e;
  // Two dSᵀ tiles (and two Pᵀ ones with the head-dim split).
  int64_t ds = (config.splitHeadDim ? 4 : 2) * config.blockN * config.blockM *
               e;
  // The f32 dQ tile of D columns (none with the head-dim split), and
  // LSE·log2e and Δ
  // per ring stage.
  int64_t dq = config.splitHeadDim
                   ? 0
                   : config.dqBuffers() * config.blockM * spec.headDim * 4;
  int64_t lse = config.stages * 2 * config.blockM * 4;
  // The kernel aligns the tiles to the swizzle atom (1024 bytes) from a
  // base that is 16-byte aligned: up to 1008 bytes of padding. The
  // mbarriers take the padding where it holds them, else follow the LSE
  // ring (a padding below hopperBackwardBarrierBytes). At block-m 128, D = 64 this is
  // what lets two dQ tiles fit (232,432 bytes; with the padding and the
  // barriers counted apart, 232,488: 40 over).
  int64_t barriers = hopperBackwardBarrierBytes(config);
  int64_t padding =
      std::max<int64_t>(1024 - 16, (barriers - 1) / 16 * 16 + barriers);
  return padding + kv + ring + ds + dq + lse;
}

std::string
mlir::attn::hopperBackwardKernelName(const FlashBackwardSpec &spec,
                                     const HopperBackwardConfig &config) {
  std::string dtype = spec.elementType.isBF16() ? "bf16" : "f16";
  return "attn_bwd_sm90_d" + std::to_string(spec.headDim) +
         (spec.valueHeadDim != spec.headDim
              ? "v" + std::to_string(spec.valueHeadDim)
              : "") +
         "_" + dtype +
         maskKernelNameSuffix(spec.causal, spec.band) +
         softcapKernelNameSuffix(spec.softcap) +
         (spec.alibi ? "_alibi" : "") + (spec.keyRange ? "_kr" : "") +
         "_dkdv_n" +
         std::to_string(config.blockN) + "m" + std::to_string(config.blockM) +
         "s" + std::to_string(config.stages) +
         (config.transposedDkv()  ? "_tdkv"
          : config.splitHeadDim ? "_hsplit"
          : config.pipelineDq ? ""
          : config.dqBeforeDk ? "_sdq"
                              : "_dkf") +
         (config.deterministic ? "_det" : "");
}

std::string
mlir::attn::hopperBackwardSchedule(const HopperBackwardConfig &config) {
  // The tuning database's deterministic key holds these kernels alone (tile
  // suffix -det); their dQ schedule is the head dim's default.
  if (config.deterministic)
    return "deterministic";
  if (config.transposedDkv())
    return "transposed-dkv";
  if (config.splitHeadDim)
    return "head-split";
  if (config.pipelineDq)
    return "dq-pipelined";
  return config.dqBeforeDk ? "dq-first" : "dk-first";
}

std::string
mlir::attn::applyHopperBackwardSchedule(HopperBackwardConfig &config,
                                        StringRef schedule) {
  if (schedule.empty() || schedule == "deterministic")
    return "";
  // The head-dim split's schedules are the only ones above D = 128, and
  // only there; the block-n tells them apart (64: head-split, 80:
  // transposed-dkv), so each sets it.
  if (config.splitHeadDim) {
    if (schedule != "head-split" && schedule != "transposed-dkv")
      return "sm90-schedule of the sm90a backward kernel above head dim 128 "
             "must be head-split or transposed-dkv (got '" +
             schedule.str() + "')";
    config.blockN = schedule == "transposed-dkv" ? 80 : 64;
    return "";
  }
  if (schedule != "dq-pipelined" && schedule != "dq-first" &&
      schedule != "dk-first")
    return "sm90-schedule of the sm90a backward kernel must be "
           "dq-pipelined, dq-first or dk-first (got '" +
           schedule.str() + "')";
  config.pipelineDq = schedule == "dq-pipelined";
  config.dqBeforeDk = schedule == "dq-first";
  return "";
}

HopperBackwardConfig
mlir::attn::chooseHopperBackwardConfig(const FlashBackwardSpec &spec,
                                        bool deterministic) {
  HopperBackwardConfig config;
  config.deterministic = deterministic;
  // Deterministic causal kernels take their key blocks in descending order
  // (descendingTurns), head-major: 1.05-1.20x faster than in sections, where
  // each section's longest blocks come last (bench/results/
  // 2026-12-04-bwd-det-order.md).
  if (deterministic)
    config.sectionBytes = 0;
  // The pipelined dQ, issued with dV and dK behind per-consumer barriers
  // (no spill at D = 128: its accumulators are not live next to Sᵀ and
  // dPᵀ): 1.00-1.09x the in-step dQ-first at D = 128, 1.01-1.08x the
  // previous pipelined dQ at D = 64 (with K and V in registers;
  // bench/results/2026-12-04-bwd-dq-pipeline.md).
  config.pipelineDq = hopperBackwardTileWidth(spec) <= 128;
  // Query blocks of 128 rows at D <= 64 (FlashAttention-3's): 1.07-1.17x
  // the 64-row kernel with K and V in registers; with a softcap (its t
  // kept for the derivative) they spill 4-8 bytes
  // (bench/results/2026-12-04-bwd-m128.md).
  if (hopperBackwardTakesBlockM128(spec) && spec.softcap == 0)
    config.blockM = 128;
  // Block-m 80 (FlashAttention-3's at D = 128) is not taken: it ran level
  // with block-m 64 or below (0.95-1.03x, full and causal, N 2k-16k;
  // bench/results/2026-12-05-bwd-tdkv-m80.md).
  // Above D = 128, 80 keys per block with dKᵀ, dVᵀ and dQᵀ transposed
  // (FlashAttention-3's D = 256 kernel: fewer dQ reduction bytes per FLOP
  // than the head-split's 64 keys; 1.09-1.17x atomic, 1.16-1.25x
  // deterministic at D = 256, same file); Dqk != Dv takes the head-split.
  if (hopperBackwardTileWidth(spec) > 128) {
    config.splitHeadDim = true;
    config.blockN = spec.headDim == spec.valueHeadDim ? 80 : 64;
  }
  return config;
}

SmallVector<HopperBackwardTensorMap>
mlir::attn::hopperBackwardTensorMaps(const HopperBackwardConfig &config) {
  return {{"q_tmap", "q", 64, config.blockM},
          {"k_tmap", "k", 64, config.blockN},
          {"v_tmap", "v", 64, config.blockN},
          {"do_tmap", "do", 64, config.blockM}};
}
