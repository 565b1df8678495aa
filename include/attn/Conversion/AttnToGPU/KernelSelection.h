//===- KernelSelection.h - which kernel for each attention ------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The one implementation of the kernel choice: family, tile, ring depth and
// schedule of every attn.attention / attn.attention_grad, written on the op
// as a #attn.kernel_config. attn-select-kernel-config calls it with a
// tuning database; convert-attn-to-gpu calls it (heuristics only) for ops
// that arrive without the attribute, and turns the attribute back into the
// families' configurations.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_KERNELSELECTION_H
#define ATTN_CONVERSION_ATTNTOGPU_KERNELSELECTION_H

#include "attn/Conversion/AttnToGPU/FlashBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/HopperBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/HopperKernel.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include <string>

namespace attn::tuning {
class TuningDatabase;
} // namespace attn::tuning

namespace mlir::attn {

/// The discardable attribute that holds an op's #attn.kernel_config.
inline constexpr const char *kKernelConfigAttrName = "attn.kernel_config";
/// The discardable attribute convert-attn-to-gpu leaves next to attn.kernel:
/// the op's #attn.launch.
inline constexpr const char *kLaunchAttrName = "attn.launch";

/// AttrT::get(args...) once AttrT::verify accepts them; else null and the
/// verifier's diagnostic on `op`. (getChecked would pick the storage
/// uniquer's generic overload for arguments not of the exact types.)
template <typename AttrT, typename... Args>
AttrT getVerified(Operation *op, Args &&...args) {
  if (failed(AttrT::verify([&] { return op->emitOpError(); }, args...)))
    return {};
  return AttrT::get(op->getContext(), std::forward<Args>(args)...);
}

/// The selection options (Passes.td, KernelSelectionOptions); 0, -1, ""
/// and false leave the choice to the database or the heuristic.
struct KernelSelectionOptions {
  std::string chip = "sm_90a";
  std::string family = "auto";
  int64_t blockM = 0, blockN = 0, warpRows = 0, stages = 2;
  /// The sm90-schedule option split by direction (assignSchedule).
  std::string forwardSchedule, backwardSchedule;
  bool deterministic = false;
  int64_t exp2Emulated = -1;
  bool wideProducer = false;
  int64_t sectionMb = -1;

  /// Copies the options of a pass generated from KernelSelectionOptions.
  template <typename PassT>
  static KernelSelectionOptions of(const PassT &p, bool hasForward,
                                   bool hasBackward) {
    KernelSelectionOptions o;
    o.chip = p.chip;
    o.family = p.family;
    o.blockM = p.blockM;
    o.blockN = p.blockN;
    o.warpRows = p.warpRows;
    o.stages = p.stages;
    o.deterministic = p.deterministic;
    o.exp2Emulated = p.exp2Emulated;
    o.wideProducer = p.wideProducer;
    o.sectionMb = p.sectionMb;
    o.assignSchedule(p.sm90Schedule, hasForward, hasBackward);
    return o;
  }

  /// One sm90-schedule option names a forward or a backward schedule: a
  /// forward name (pingpong, ...) is the forward ops', any other the
  /// backward ops'; where the module holds one direction only, every name
  /// is that direction's to parse (and to refuse).
  void assignSchedule(llvm::StringRef schedule, bool hasForward,
                      bool hasBackward);

  /// Why the options cannot select any kernel, naming the option ("" when
  /// they can): family, stages, exp2-emulated, section-mb.
  std::string check() const;
};

/// A loaded tuning database and what to look up in it.
struct TuningSource {
  const ::attn::tuning::TuningDatabase &db;
  std::string path; // for the reason
  std::string gpu;  // "" = any GPU tuned for the chip
};

/// The kernel for `op` under `options`: options given win, then the
/// database (when `tuning`), then the heuristic. Diagnoses on `op` what no
/// kernel can do. Forward ops have their softcap sugar expanded (the
/// kernels and the heuristic see the score_mod region it stands for).
FailureOr<KernelConfigAttr>
selectKernelConfig(AttentionOp op, const KernelSelectionOptions &options,
                   const TuningSource *tuning);
FailureOr<KernelConfigAttr>
selectKernelConfig(AttentionGradOp op, const KernelSelectionOptions &options,
                   const TuningSource *tuning);

/// The configurations a #attn.kernel_config describes, with their family's
/// defaults for what it does not fix.
FlashKernelConfig flashKernelConfigOf(KernelConfigAttr config,
                                      const FlashKernelSpec &spec,
                                      StringRef chip);
/// Fails with `why` set when the schedule is not a forward one.
FailureOr<HopperKernelConfig> hopperKernelConfigOf(KernelConfigAttr config,
                                                   std::string &why);
FlashBackwardConfig flashBackwardConfigOf(KernelConfigAttr config,
                                          const FlashBackwardSpec &spec,
                                          StringRef chip);
FailureOr<HopperBackwardConfig>
hopperBackwardConfigOf(KernelConfigAttr config, const FlashBackwardSpec &spec,
                       std::string &why);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOGPU_KERNELSELECTION_H
