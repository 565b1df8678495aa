//===- Chip.h - the GPUs attn compiles for ----------------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The one table of supported chips: every tool, pass and binding that takes
// a chip name looks it up here, so a name it does not hold is refused before
// LLVM's NVPTX back end sees it (which aborts on an unknown processor or an
// intrinsic the chip lacks). MLIR-free, like the rest of lib/Support.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_CHIP_H
#define ATTN_SUPPORT_CHIP_H

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct ChipInfo {
  /// The name as LLVM's NVPTX back end and ptxas spell it ("sm_90a").
  const char *name;
  /// Compute capability major * 10 + minor.
  unsigned sm;
  /// Dynamic shared memory a thread block may opt in to, in bytes.
  int64_t sharedMemoryPerBlock;
  /// The PTX ISA the kernels are built with (81 = "+ptx81"); 0 = the back
  /// end's default for the chip.
  unsigned ptxVersion;
  /// Whether the sm90a-wgmma family (wgmma, setmaxnreg, TMA) runs there.
  bool wgmma;
};

/// Every supported chip, oldest first.
const std::vector<ChipInfo> &supportedChips();

/// The chip named exactly `name`, or nullptr.
const ChipInfo *lookupChip(const std::string &name);

/// Whether `name` is a supported chip the sm90a-wgmma family runs on.
inline bool chipHasWgmma(const std::string &name) {
  const ChipInfo *chip = lookupChip(name);
  return chip && chip->wgmma;
}

/// "sm_80, sm_86, ..." for messages.
std::string supportedChipNames();

/// "" when `name` is a supported chip; else why, naming `what` (the flag or
/// option the name came from) and listing the supported chips.
std::string checkChip(const std::string &what, const std::string &name);

/// The PTX features to build for `chip` with the user's `features` ("" =
/// none given): the user's when given, else the table's "+ptxNN" (or "").
std::string chipPtxFeatures(const ChipInfo &chip, const std::string &features);

} // namespace attn

#endif // ATTN_SUPPORT_CHIP_H
