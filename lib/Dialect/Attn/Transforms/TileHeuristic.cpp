//===- TileHeuristic.cpp - FlashAttention's SRAM-fit block sizes ----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

namespace {
constexpr int64_t kGranule = 16; // rows of one m16n8k16 tensor-core tile
constexpr int64_t kMaxBlock = 128;

int64_t roundToGranule(int64_t n) {
  return std::clamp<int64_t>(n / kGranule * kGranule, kGranule, kMaxBlock);
}
} // namespace

TileConfig mlir::attn::chooseTileConfigHeuristic(int64_t headDim,
                                                 int64_t elementBytes,
                                                 int64_t sharedMemoryBytes) {
  // M in the paper counts elements of on-chip memory.
  int64_t m = sharedMemoryBytes / std::max<int64_t>(elementBytes, 1);
  int64_t d = std::max<int64_t>(headDim, 1);
  int64_t bc = (m + 4 * d - 1) / (4 * d);
  int64_t br = std::min(bc, d);
  TileConfig config;
  config.blockN = roundToGranule(bc);
  config.blockM = roundToGranule(br);
  config.source = "heuristic";
  return config;
}
