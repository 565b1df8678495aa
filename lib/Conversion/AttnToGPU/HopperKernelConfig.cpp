//===- HopperKernelConfig.cpp - choosing and checking sm_90a configs ------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/HopperKernel.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

using namespace mlir;
using namespace mlir::attn;

std::string mlir::attn::hopperFamilySupports(const FlashKernelSpec &spec,
                                             StringRef chip) {
  if (chip != "sm_90a")
    return "the sm90a-wgmma family needs chip sm_90a (wgmma and setmaxnreg "
           "are sm_90a-only), got '" +
           chip.str() + "'";
  if (!spec.elementType ||
      !(spec.elementType.isF16() || spec.elementType.isBF16()))
    return "the sm90a-wgmma family takes f16 or bf16 only";
  if (std::string v = spec.variant(); !v.empty())
    return "the sm90a-wgmma family does not implement the " + v +
           " (plain attention and bottom-right causal only)";
  for (int64_t d : {spec.headDim, spec.valueHeadDim})
    if (d != 64 && d != 128 && d != 256)
      return "the sm90a-wgmma family takes head dims 64, 128 or 256 (whole "
             "128-byte swizzle panels), got " +
             std::to_string(d);
  return "";
}

HopperKernelConfig
mlir::attn::chooseHopperKernelConfig(const FlashKernelSpec &spec) {
  HopperKernelConfig config;
  config.source = "heuristic";
  config.blockM = 128; // two consumer warpgroups
  // Experiment knob: the serial consumer loop, for comparison.
  if (const char *e = std::getenv("ATTN_SM90_SERIAL"); e && *e == '1')
    config.overlap = false;
  if (const char *e = std::getenv("ATTN_SM90_NO_PINGPONG"); e && *e == '1')
    config.pingPong = false;
  int64_t d = std::max(spec.headDim, spec.valueHeadDim);
  // Per consumer thread: S takes blockN / 2 registers, O Dv / 2, P
  // blockN / 4; the rest of the 240 go to addresses and softmax state.
  if (d <= 64) {
    config.blockN = 128;
    config.stages = 3;
  } else if (d <= 128) {
    config.blockN = 128;
    config.stages = 2;
  } else {
    config.blockN = 64;
    config.stages = 2;
  }
  return config;
}

int64_t mlir::attn::hopperKernelSharedMemoryBytes(
    const FlashKernelSpec &spec, const HopperKernelConfig &config) {
  int64_t q = config.blockM * spec.headDim * 2;
  int64_t k = config.stages * config.blockN * spec.headDim * 2;
  int64_t v = config.stages * config.blockN * spec.valueHeadDim * 2;
  // mbarriers (q, and full/empty per stage for K and V) after the tiles,
  // plus slack to align the base to 1024 bytes (the 128-byte swizzle atom).
  int64_t barriers = 8 * (1 + 4 * config.stages);
  return q + k + v + barriers + 1024;
}

std::string
mlir::attn::validateHopperKernel(const FlashKernelSpec &spec,
                                 const HopperKernelConfig &config) {
  std::ostringstream os;
  if (config.blockM != 64 && config.blockM != 128 && config.blockM != 192) {
    os << "block-m must be 64, 128 or 192 for the sm90a-wgmma family (64 "
          "query rows per consumer warpgroup), got "
       << config.blockM;
    return os.str();
  }
  // wgmma N of S = Q·Kᵀ: a multiple of 16 up to 256; TMA boxes take at
  // most 256 rows.
  if (config.blockN < 16 || config.blockN > 256 || config.blockN % 16 != 0) {
    os << "block-n must be a multiple of 16 in [16, 256] for the "
          "sm90a-wgmma family, got "
       << config.blockN;
    return os.str();
  }
  if (config.stages < 2 || config.stages > 8) {
    os << "stages must be in [2, 8] for the sm90a-wgmma family, got "
       << config.stages;
    return os.str();
  }
  int64_t smem = hopperKernelSharedMemoryBytes(spec, config);
  if (smem > 227 * 1024) {
    os << "the tile configuration needs " << smem
       << " bytes of shared memory, more than the " << 227 * 1024
       << " bytes a block gets on sm_90a; lower block-m, block-n or stages";
    return os.str();
  }
  // Accumulators of S and O plus P per consumer thread must leave room
  // for the softmax and addresses in the consumers' register budget.
  int64_t accumulators =
      config.blockN / 2 + spec.valueHeadDim / 2 + config.blockN / 4;
  if (accumulators > config.consumerRegisters - 40) {
    os << "block-n " << config.blockN << " with value head dim "
       << spec.valueHeadDim << " needs " << accumulators
       << " accumulator registers per thread, more than the "
       << config.consumerRegisters - 40
       << " a consumer can spare; lower block-n";
    return os.str();
  }
  return "";
}

std::string mlir::attn::hopperKernelName(const FlashKernelSpec &spec,
                                         const HopperKernelConfig &config) {
  std::ostringstream os;
  os << "attn_fwd_sm90_d" << spec.headDim;
  if (spec.valueHeadDim != spec.headDim)
    os << "v" << spec.valueHeadDim;
  os << (spec.elementType.isBF16() ? "_bf16" : "_f16");
  if (spec.causal)
    os << "_causal";
  if (!spec.withLse)
    os << "_nolse";
  float defaultScale = 1.0f / std::sqrt(static_cast<float>(spec.headDim));
  float scale = static_cast<float>(spec.scale);
  if (scale != defaultScale)
    os << "_sc" << std::hex << llvm::bit_cast<uint32_t>(scale) << std::dec;
  os << "_m" << config.blockM << "n" << config.blockN << "s" << config.stages;
  if (!config.overlap)
    os << "_serial";
  else if (!config.pingPong && config.consumers() == 2)
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
