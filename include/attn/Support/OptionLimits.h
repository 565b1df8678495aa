//===- OptionLimits.h - bounds of the tile flags and options ----*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The tools' flags and the passes' options take 64-bit sizes; beyond these
// bounds no kernel or CPU tiling exists, and the size arithmetic after them
// (tile bytes, allocations) would overflow. (Stages need no bound here:
// each kernel family checks its ring depth before any arithmetic.)
// MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_OPTIONLIMITS_H
#define ATTN_SUPPORT_OPTIONLIMITS_H

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

/// block-m / block-n: the GPU kernels stop at 256 (shared memory); at 1024
/// the CPU tiling's f32 score tile is already 4 MiB.
inline constexpr int64_t kMaxBlockSize = 1024;
/// Query rows per warp: 16 or 32 (0 = the heuristic).
inline constexpr int64_t kMaxWarpRows = 32;
/// Shared memory per block that attn-tile's heuristic may plan for (1 GiB,
/// far above any chip's).
inline constexpr int64_t kMaxSharedMemoryBytes = int64_t(1) << 30;
/// LLVM's optimisation levels.
inline constexpr int64_t kMaxOptLevel = 3;

/// "" when lo <= v <= hi; else "<name> must be from lo to hi<note> (got v)",
/// `note` saying what a special value means (e.g. " (0 = the heuristic)").
std::string checkRange(const std::string &name, int64_t v, int64_t lo,
                       int64_t hi, const std::string &note = "");

/// The kernel flags attn-compile and attn-run share (--chip, --block-m,
/// --block-n, --warp-rows): one message per flag, "" where it is fine.
std::vector<std::string> checkKernelFlags(const std::string &chip,
                                          int64_t blockM, int64_t blockN,
                                          int64_t warpRows);

} // namespace attn

#endif // ATTN_SUPPORT_OPTIONLIMITS_H
