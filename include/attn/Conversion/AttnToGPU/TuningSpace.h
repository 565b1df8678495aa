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

#include "attn/Conversion/AttnToGPU/FlashBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Conversion/AttnToGPU/HopperBackwardKernel.h"
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
/// (docs/tuning.md): the heuristic's tile; block-m 128 (two consumers) x
/// block-n (64..224 for head dims <= 128, 32..96 for 256) x stages 2 (3
/// for the smaller block-n) with ping-pong; block-m 192 (three consumers)
/// x block-n 64..128 for head dims <= 128; block-m 64 at one block-n; the
/// persistent grid for the heuristic's tile and the larger two- and
/// three-consumer tiles; the non-ping-pong and serial schedules at the
/// heuristic's tile. Pruned by validateHopperKernel (shared memory, the
/// setmaxnreg budget of the consumer count).
/// `defaultFamilyOption` is attn-compile's default --family, which decides
/// the `heuristic` mark. ptxas (spills) is the compiler's later check.
std::vector<ForwardCandidate>
enumerateForwardCandidates(const FlashKernelSpec &spec, StringRef chip,
                           StringRef familyOption,
                           StringRef defaultFamilyOption);

/// One point of the backward tuning space (attn.attention_grad's kernels).
/// The tile's family names the dkdv kernel's family; block_m / block_n are
/// the dkdv kernel's (query rows per step, keys per block), warp_rows 16
/// (keys per warp); sm90a-wgmma tiles add the Q/dO ring depth (stages) and
/// the dQ schedule. `deterministic` is not a knob: it is part of the key.
struct BackwardCandidate {
  ::attn::tuning::TileChoice tile;
  bool heuristic = false; // what attn-compile --backward picks without one
  bool familyHeuristic = false; // its family's heuristic
  std::string pruned;     // why the static checks reject it; "" = kept
};

/// The dkdv kernel families that `familyOption` (sm80, sm90a or auto)
/// allows for `spec` on `chip`: sm80-mma, and sm90a-wgmma where it
/// implements the attention (hopperBackwardSupports). sm90a alone where
/// the Hopper kernel cannot is empty (the compiler diagnoses it).
std::vector<std::string>
allowedBackwardFamilies(const FlashBackwardSpec &spec, StringRef chip,
                        StringRef familyOption);

/// Every backward candidate for `spec` on `chip` with dQ `deterministic`
/// or not, over the families `familyOption` allows: sm80-mma block-m
/// {32, 64} x block-n {32, 64, 128} (validateFlashBackward prunes);
/// sm90a-wgmma stages {2, 3, 4} x dQ schedule {dq-pipelined, dq-first,
/// dk-first} (one schedule when deterministic; validateHopperBackward
/// prunes by shared memory). Each family's heuristic first.
std::vector<BackwardCandidate>
enumerateBackwardCandidates(const FlashBackwardSpec &spec, StringRef chip,
                            bool deterministic, StringRef familyOption);

/// The tile description of a configuration.
::attn::tuning::TileChoice tileChoiceOf(const FlashKernelConfig &config);
::attn::tuning::TileChoice tileChoiceOf(const HopperKernelConfig &config);
::attn::tuning::TileChoice tileChoiceOf(const HopperBackwardConfig &config);

/// Sets `config`'s schedule switches and grid from a schedule option:
/// "pingpong", "overlap" or "serial", optionally followed by "+persistent"
/// (persistent query blocks; without it one block per query block); ""
/// keeps them. Returns why the option is wrong, or "".
std::string applyHopperSchedule(HopperKernelConfig &config,
                                StringRef schedule);
/// The schedule name of `config`'s switches (without the grid).
std::string hopperScheduleName(const HopperKernelConfig &config);
/// The schedule option (sm90-schedule=) that compiles tile `t`'s schedule
/// and grid, e.g. "pingpong+persistent".
std::string hopperScheduleOption(const ::attn::tuning::TileChoice &t);

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

/// A database lookup for the backward kernels of `op` (direction "bwd",
/// keyed by `deterministic` too): the tile and why, or none and why.
struct TunedBackwardLookup {
  std::optional<FlashBackwardConfig> config;    // sm80-mma, "tuning-db"
  std::optional<HopperBackwardConfig> hopper;   // sm90a-wgmma, "tuning-db"
  std::string reason;
};
/// `family` is the requested one (sm80, sm90a or auto), which decides the
/// key's family (allowedBackwardFamilies); a family fixed by the caller
/// also takes its fastest candidate of an entry that tuned both.
TunedBackwardLookup
lookupTunedBackwardKernel(AttentionGradOp op, StringRef chip,
                          StringRef family, bool deterministic,
                          const ::attn::tuning::TuningDatabase &db,
                          StringRef gpu);

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
