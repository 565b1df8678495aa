//===- OptionLimits.cpp - bounds of the tile flags and options ------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/OptionLimits.h"

using namespace attn;

std::string attn::checkRange(const std::string &name, int64_t v, int64_t lo,
                             int64_t hi, const std::string &note) {
  if (v >= lo && v <= hi)
    return "";
  return name + " must be from " + std::to_string(lo) + " to " +
         std::to_string(hi) + note + " (got " + std::to_string(v) + ")";
}

std::string attn::checkTileOptions(const std::string &prefix, int64_t blockM,
                                   int64_t blockN, int64_t warpRows,
                                   int64_t stages) {
  const std::string heuristic = " (0 = the heuristic)";
  for (std::string why :
       {checkRange(prefix + "block-m", blockM, 0, kMaxBlockSize, heuristic),
        checkRange(prefix + "block-n", blockN, 0, kMaxBlockSize, heuristic),
        checkRange(prefix + "warp-rows", warpRows, 0, kMaxWarpRows, heuristic),
        checkRange(prefix + "stages", stages, kMinStages, kMaxStages)})
    if (!why.empty())
      return why;
  return "";
}
