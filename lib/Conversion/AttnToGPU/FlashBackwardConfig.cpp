//===- FlashBackwardConfig.cpp - the sm80 backward kernels' configs -------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// What the sm80-family backward kernels (FlashBackwardKernel.cpp) can take
// and how they are configured: the spec of an attn.attention_grad, the
// heuristic's configuration, validation, shared-memory bytes and kernel
// names (the forward's counterpart: FlashKernelConfig.cpp).
//
//===----------------------------------------------------------------------===//

#include "BackwardWorkspace.h"
#include "attn/Conversion/AttnToGPU/FlashBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Conversion/AttnToGPU/KernelCapabilities.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Support/Chip.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

int64_t FlashBackwardSpec::tileHeadDim() const {
  return std::max<int64_t>(32,
                           llvm::PowerOf2Ceil(std::max(headDim, valueHeadDim)));
}

int64_t FlashBackwardSpec::mmaHeadDim() const {
  return llvm::alignTo(headDim, 16);
}

SmallVector<FlashBackwardSpec::ColumnSlice>
FlashBackwardSpec::columnSlices() const {
  SmallVector<ColumnSlice> slices;
  for (int64_t start = 0; start < mmaHeadDim(); start += kMaxSliceWidth)
    slices.push_back(
        {start, std::min<int64_t>(kMaxSliceWidth, mmaHeadDim() - start)});
  return slices;
}

FlashBackwardSpec FlashBackwardSpec::fromOp(AttentionGradOp op) {
  FlashBackwardSpec spec;
  spec.headDim = op.getHeadDim();
  spec.valueHeadDim = op.getValueHeadDim();
  spec.elementType = op.getQueryType().getElementType();
  spec.mask = op.getMask();
  spec.band = op.getMaskBand();
  spec.causal =
      !spec.band.topLeft && !spec.band.hasLeft() && spec.band.right == 0;
  if (std::optional<APFloat> cap = op.getSoftcap())
    spec.softcap = cap->convertToDouble();
  spec.keyRange = static_cast<bool>(op.getKeyStart());
  spec.alibi = static_cast<bool>(op.getAlibiSlopes());
  return spec;
}

FlashBackwardConfig
mlir::attn::chooseFlashBackwardConfig(const FlashBackwardSpec &spec,
                                      StringRef chip) {
  FlashBackwardConfig config;
  config.source = "heuristic";
  // 8 warps of 16 keys, 64 query rows per step: the fastest of the
  // block-n {64, 128} x block-m {32, 64} candidates on the H200 for D = 64
  // and 128 (docs/performance.md, "Backward"). At D = 128 causal ptxas
  // spills a few bytes (dK and dV alone take 128 registers), which still
  // beats the spill-free narrower tiles.
  config.blockN = 128;
  config.blockM = 64;
  // Chips with 99 KiB of shared memory per block (sm_86, sm_89) take
  // narrower tiles at head dim 128: the first of these that fits.
  // Above D = 128, where K, V and the Q/dO rings are twice as wide, the
  // H200 takes 128 x 32 (8 warps, 200 KiB).
  for (auto [n, m] : {std::pair<int64_t, int64_t>{128, 64}, {128, 32},
                      {64, 64}, {64, 32}, {32, 32}}) {
    FlashBackwardConfig c = config;
    c.blockN = n;
    c.blockM = m;
    if (flashBackwardSharedMemoryBytes(spec, c) <= sharedMemoryPerBlock(chip) &&
        validateFlashBackward(spec, c, chip).empty()) {
      config = c;
      break;
    }
  }
  // red.global.add.v2.f32 needs sm_90: ptxas refuses it below.
  const ::attn::ChipInfo *info = ::attn::lookupChip(chip.str());
  config.pairedReductions = info && info->sm >= 90;
  return config;
}

int64_t
mlir::attn::flashBackwardSharedMemoryBytes(const FlashBackwardSpec &spec,
                                           const FlashBackwardConfig &config) {
  int64_t e = 2, d = spec.tileHeadDim();
  int64_t k = config.blockN * d * e;
  int64_t v = config.blockN * d * e;
  int64_t q = 2 * config.blockM * d * e;
  int64_t dO = 2 * config.blockM * d * e;
  int64_t ds = config.deterministic ? 0 : config.blockN * config.blockM * e;
  int64_t scalars = 2 * 2 * 4 * config.blockM;
  return k + v + q + dO + ds + scalars;
}

int64_t mlir::attn::flashBackwardDqSharedMemoryBytes(
    const FlashBackwardSpec &spec, const FlashBackwardConfig &config) {
  int64_t e = 2, d = spec.tileHeadDim();
  return config.dqBlockM() * 2 * d * e + 2 * config.dqBlockN() * 2 * d * e;
}

int64_t mlir::attn::backwardAuxRowsPerBlock(const FlashBackwardSpec &spec) {
  return kBackwardAuxThreads / (spec.tileHeadDim() / 8);
}

std::string
mlir::attn::validateFlashBackward(const FlashBackwardSpec &spec,
                                  const FlashBackwardConfig &config,
                                  StringRef chip) {
  const KernelCapability &cap =
      kernelCapability("sm80", KernelDirection::Backward);
  if (std::string why =
          unsupportedKernelFeature(cap, KernelRequest::of(spec), chip);
      !why.empty())
    return why;
  if (!cap.blockN.contains(config.blockN))
    return "block-n of the backward kernel must be " + cap.blockN.str() +
           " (got " + std::to_string(config.blockN) + ")";
  if (!cap.blockM.contains(config.blockM))
    return "block-m of the backward kernel must be " + cap.blockM.str() +
           " (got " + std::to_string(config.blockM) + ")";
  int64_t mTiles = config.blockM / 16;
  int64_t sliceWidth = std::min(spec.tileHeadDim(),
                                FlashBackwardSpec::kMaxSliceWidth);
  if (config.warps() < mTiles || config.warps() % mTiles ||
      (sliceWidth / 8 / (config.warps() / mTiles)) % 2)
    return "block-n " + std::to_string(config.blockN) + " (" +
           std::to_string(config.warps()) +
           " warps) cannot split dQ's block-m " +
           std::to_string(config.blockM) + " x " +
           std::to_string(sliceWidth) + " tile";
  // The tiles' cooperative loads: each thread copies one 16-byte chunk of
  // a row per wave.
  int64_t chunks = spec.tileHeadDim() / 8;
  if (config.threads() % chunks)
    return std::to_string(config.threads()) +
           " threads cannot load rows of " + std::to_string(chunks) +
           " 16-byte chunks";
  for (int64_t rows : {config.blockN, config.blockM})
    if (int64_t perWave = config.threads() / chunks;
        perWave < rows && rows % perWave)
      return "a tile of " + std::to_string(rows) +
             " rows is not a whole number of " + std::to_string(perWave) +
             "-row loads";
  int64_t smem = flashBackwardSharedMemoryBytes(spec, config);
  int64_t limit = sharedMemoryPerBlock(chip);
  if (limit && smem > limit)
    return "the backward kernel needs " + std::to_string(smem) +
           " bytes of shared memory, " + chip.str() + " offers " +
           std::to_string(limit);
  return "";
}

FlashBackwardKernelNames
mlir::attn::flashBackwardKernelNames(const FlashBackwardSpec &spec,
                                     const FlashBackwardConfig &config) {
  std::string dtype = spec.elementType.isBF16() ? "bf16" : "f16";
  std::string dims = std::to_string(spec.headDim);
  if (spec.valueHeadDim != spec.headDim)
    dims += "v" + std::to_string(spec.valueHeadDim);
  std::string stem = "attn_bwd_d" + dims + "_" +
                     dtype + maskKernelNameSuffix(spec.causal, spec.band) +
                     softcapKernelNameSuffix(spec.softcap) +
                     (spec.alibi ? "_alibi" : "") +
                     (spec.keyRange ? "_kr" : "");
  std::string tile = "_n" + std::to_string(config.blockN) + "m" +
                     std::to_string(config.blockM);
  if (config.deterministic)
    return {stem + "_pre", stem + "_dkdv" + tile + "_det", "",
            stem + "_dq_det_m" + std::to_string(config.dqBlockM()) + "n" +
                std::to_string(config.dqBlockN())};
  return {stem + "_pre", stem + "_dkdv" + tile,
          stem + (config.groupedDq ? "_dq_grouped" : "_dq"), ""};
}
