//===- Chip.cpp - the GPUs attn compiles for ------------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/Chip.h"

using namespace attn;

const std::vector<ChipInfo> &attn::supportedChips() {
  // Shared memory: the opt-in maximum per block (CUDA C Programming Guide,
  // "Technical Specifications per Compute Capability"). PTX ISA: the
  // backward kernels' red.global.add.v2.f32 needs 8.1 on sm_90 (LLVM 22
  // defaults to 8.0 there); Blackwell needs 8.6 (sm_100) and 8.7 (sm_120),
  // LLVM's minimum for those targets. Blackwell has no wgmma: it runs the
  // sm80 family (mma.sync, cp.async), as every chip without `wgmma` does.
  static const std::vector<ChipInfo> chips = {
      {"sm_80", 80, 163 * 1024, 0, false},
      {"sm_86", 86, 99 * 1024, 0, false},
      {"sm_87", 87, 163 * 1024, 0, false},
      {"sm_89", 89, 99 * 1024, 0, false},
      {"sm_90", 90, 227 * 1024, 81, false},
      {"sm_90a", 90, 227 * 1024, 81, true},
      {"sm_100", 100, 227 * 1024, 86, false},
      {"sm_100a", 100, 227 * 1024, 86, false},
      {"sm_120", 120, 99 * 1024, 87, false},
      {"sm_120a", 120, 99 * 1024, 87, false},
  };
  return chips;
}

const ChipInfo *attn::lookupChip(const std::string &name) {
  for (const ChipInfo &c : supportedChips())
    if (name == c.name)
      return &c;
  return nullptr;
}

std::string attn::supportedChipNames() {
  std::string names;
  for (const ChipInfo &c : supportedChips())
    names += (names.empty() ? "" : ", ") + std::string(c.name);
  return names;
}

std::string attn::checkChip(const std::string &what, const std::string &name) {
  if (lookupChip(name))
    return "";
  return what + ": '" + name + "' is not a supported chip (supported: " +
         supportedChipNames() + ")";
}

std::string attn::chipPtxFeatures(const ChipInfo &chip,
                                  const std::string &features) {
  if (!features.empty() || !chip.ptxVersion)
    return features;
  return "+ptx" + std::to_string(chip.ptxVersion);
}
