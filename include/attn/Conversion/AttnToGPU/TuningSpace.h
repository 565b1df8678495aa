//===- TuningSpace.h - forward kernel candidates, both families -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The autotuner's view of the forward kernels (docs/tuning.md): which
// configurations of which kernel families a shape may use on a chip (the
// family itself is a candidate on sm_90a), which the static checks reject,
// and how a tuning-database entry turns back into a kernel configuration.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_TUNINGSPACE_H
#define ATTN_CONVERSION_ATTNTOGPU_TUNINGSPACE_H

#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Conversion/AttnToGPU/HopperKernel.h"
#include "attn/Tuning/TuningDatabase.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::attn {

/// One point of the forward tuning space.
struct ForwardCandidate {
  ::attn::tuning::TileChoice tile; // family, sizes, sm90a knobs
  /// What attn-compile picks for this shape without a database (with its
  /// default --family).
  bool heuristic = false;
  /// What attn-compile --family <tile.family> picks without a database.
  bool familyHeuristic = false;
  std::string pruned; // why the static checks reject it; "" = kept
};

/// The families `familyOption` (sm80, sm90a, auto) allows for `spec` on
/// `chip`: auto means both where the sm90a family supports the spec.
std::vector<std::string> allowedKernelFamilies(const FlashKernelSpec &spec,
                                               StringRef chip,
                                               StringRef familyOption);

/// The tuning key's family for those families: the one family, or "auto".
std::string tuningKeyFamily(const std::vector<std::string> &families);

/// Every candidate of the allowed families, the statically rejected ones
/// with `pruned` set. sm80-mma: enumerateFlashKernelConfigs. sm90a-wgmma
/// (docs/tuning.md): the heuristic's tile, block-m 128 x block-n (64..224
/// for head dims <= 128, 32..96 for 256) x stages 2 (3 where block-n <=
/// 128) with ping-pong, block-m 64 at one block-n, and the non-ping-pong and
/// serial schedules at the heuristic's tile; pruned by validateHopperKernel
/// (shared memory, registers).
/// `defaultFamilyOption` is attn-compile's default --family, which decides
/// the `heuristic` mark. ptxas (spills) is the compiler's later check.
std::vector<ForwardCandidate>
enumerateForwardCandidates(const FlashKernelSpec &spec, StringRef chip,
                           StringRef familyOption,
                           StringRef defaultFamilyOption);

/// The tile description of a configuration.
::attn::tuning::TileChoice tileChoiceOf(const FlashKernelConfig &config);
::attn::tuning::TileChoice tileChoiceOf(const HopperKernelConfig &config);

/// Sets `config`'s schedule switches from a schedule name ("pingpong",
/// "overlap", "serial"); "" keeps them. Returns why the name is wrong, or "".
std::string applyHopperSchedule(HopperKernelConfig &config,
                                StringRef schedule);
/// The schedule name of `config`'s switches.
std::string hopperScheduleName(const HopperKernelConfig &config);

/// The configuration a tuned tile describes, with its family's defaults
/// for everything the tile does not fix.
FlashKernelConfig flashConfigFromTile(const FlashKernelSpec &spec,
                                      StringRef chip,
                                      const ::attn::tuning::TileChoice &t);
HopperKernelConfig hopperConfigFromTile(const FlashKernelSpec &spec,
                                        const ::attn::tuning::TileChoice &t);

/// A database lookup for the forward kernel of `op`: a configuration of
/// one family (source "tuning-db"), or neither and why.
struct TunedForwardLookup {
  std::optional<FlashKernelConfig> flash;
  std::optional<HopperKernelConfig> hopper;
  std::string reason;
};

/// Looks `op` up for the families `familyOption` allows: with both, the
/// "auto" entry's winner (either family); with one, that family's entry,
/// else the fastest correct candidate of that family in the "auto" entry.
/// A tuned configuration its family's validation rejects is a miss.
TunedForwardLookup lookupTunedForwardKernel(
    AttentionOp op, const FlashKernelSpec &spec, StringRef chip,
    StringRef familyOption, const ::attn::tuning::TuningDatabase &db,
    StringRef gpu);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOGPU_TUNINGSPACE_H
