//===- KernelCapabilities.h - what each GPU kernel family implements -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// One table of what each kernel family implements in each direction
// (forward attn.attention, backward attn.attention_grad), and the one check
// against it that convert-attn-to-gpu (both directions, and family auto's
// choice) runs: every attribute, operand and option of an attention is
// either implemented by the kernel the family generates or refused with a
// diagnostic naming the feature, the family and the direction. The
// configuration checks (validateFlashKernel, validateHopperKernel, ...)
// take their block-size and stage ranges from the same table.
// docs/variants.md shows the table; test/Compile/kernel-capabilities.test
// checks attn-compile against it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_KERNELCAPABILITIES_H
#define ATTN_CONVERSION_ATTNTOGPU_KERNELCAPABILITIES_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::attn {

struct FlashKernelSpec;
struct FlashBackwardSpec;

enum class KernelDirection { Forward, Backward };
/// "forward" or "backward".
llvm::StringRef stringifyKernelDirection(KernelDirection d);

/// A set of integers: [min, max] in steps of `step`, or the powers of two
/// in [min, max] when step is 0.
struct IntSet {
  int64_t min = 0, max = 0, step = 1;
  bool contains(int64_t v) const;
  /// "64, 128 or 256", "a multiple of 16 in [16, 256]", "a power of two in
  /// [16, 256]".
  std::string str() const;
};

/// What one kernel family implements in one direction.
struct KernelCapability {
  const char *family;  // manifest name: sm80-mma, sm90a-wgmma
  const char *option;  // its family= / --family value: sm80, sm90a
  KernelDirection direction;
  /// sm_80 and newer, or exactly sm_90a (wgmma, setmaxnreg).
  bool sm90aOnly;
  IntSet headDims;     // each of D and Dv (f16 and bf16; never f32)
  const char *headDimWhy;
  bool unequalHeadDims; // D != Dv
  bool causal;          // mask <causal> (bottom-right)
  bool topLeft;         // <causal_top_left>, <sliding_top_left>
  bool windows;         // <sliding>, <sliding_top_left>
  bool scoreMod;        // score_mod regions (softcap, user regions); a
                        // backward's only one is the softcap
  bool bias;            // the additive bias operand
  bool varlen;          // cu_seqlens
  bool keyRange;        // key_range (per-batch key padding)
  bool alibi;           // alibi_slopes (run-time ALiBi slopes)
  bool withoutLse;      // forward: no LSE result
  bool deterministic;   // no atomics (backward: the dq kernel)
  IntSet stages;        // K/V ring (forward), Q/dO ring (backward)
  IntSet blockM, blockN;
  bool warpRows;        // the warp-rows option
  bool sm90Schedule;    // the sm90-schedule option
};

/// The table: sm80 forward, sm90a forward, sm80 backward, sm90a backward.
llvm::ArrayRef<KernelCapability> kernelCapabilities();
/// The row of `familyOption` (sm80 or sm90a) in `direction`.
const KernelCapability &kernelCapability(llvm::StringRef familyOption,
                                         KernelDirection direction);

/// What an attention and the pass options ask of its kernels.
struct KernelRequest {
  KernelDirection direction = KernelDirection::Forward;
  Type elementType;
  int64_t headDim = 0, valueHeadDim = 0;
  MaskKind mask = MaskKind::none;
  MaskBand band;
  bool scoreMod = false, bias = false, varlen = false, keyRange = false,
       alibi = false, withLse = true;
  /// Options; 0 / false / "" = not given.
  bool deterministic = false;
  int64_t stages = 0;
  bool warpRows = false;
  std::string sm90Schedule;

  /// What the op asks (no options).
  static KernelRequest of(const FlashKernelSpec &spec);
  static KernelRequest of(const FlashBackwardSpec &spec);
};

/// Why the kernels of `cap` cannot implement `request` on `chip` ("" when
/// they can): names the feature, the family and the direction.
std::string unsupportedKernelFeature(const KernelCapability &cap,
                                     const KernelRequest &request,
                                     llvm::StringRef chip);

/// The family `familyOption` (sm80, sm90a or auto) compiles `request` with
/// on `chip`: family auto takes sm90a where it implements the request and
/// sm80 otherwise. Null, with `why` set, when the chosen family (with auto:
/// neither; sm80's reason first) does not implement it; with auto taking
/// sm80, `why` says why not sm90a.
const KernelCapability *chooseKernelFamily(llvm::StringRef familyOption,
                                           const KernelRequest &request,
                                           llvm::StringRef chip,
                                           std::string &why);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOGPU_KERNELCAPABILITIES_H
