//===- OptionLimits.cpp - bounds of the tile flags and options ------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/OptionLimits.h"

#include "attn/Support/Chip.h"

using namespace attn;

std::string attn::checkRange(const std::string &name, int64_t v, int64_t lo,
                             int64_t hi, const std::string &note) {
  if (v >= lo && v <= hi)
    return "";
  return name + " must be from " + std::to_string(lo) + " to " +
         std::to_string(hi) + note + " (got " + std::to_string(v) + ")";
}

std::vector<std::string> attn::checkKernelFlags(const std::string &chip,
                                                int64_t blockM, int64_t blockN,
                                                int64_t warpRows) {
  const std::string heuristic = " (0 = the heuristic)";
  return {checkChip("--chip", chip),
          checkRange("--block-m", blockM, 0, kMaxBlockSize, heuristic),
          checkRange("--block-n", blockN, 0, kMaxBlockSize, heuristic),
          checkRange("--warp-rows", warpRows, 0, kMaxWarpRows, heuristic)};
}
