//===- KernelCapabilities.cpp - what each GPU kernel family implements ----===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPU/KernelCapabilities.h"
#include "attn/Conversion/AttnToGPU/FlashBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Support/Chip.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

StringRef mlir::attn::stringifyKernelDirection(KernelDirection d) {
  return d == KernelDirection::Forward ? "forward" : "backward";
}

bool IntSet::contains(int64_t v) const {
  if (v < min || v > max)
    return false;
  return step ? (v - min) % step == 0 : llvm::isPowerOf2_64(v);
}

std::string IntSet::str() const {
  SmallVector<int64_t> values;
  for (int64_t v = min; v <= max && values.size() <= 4;
       v = step ? v + step : v * 2)
    if (contains(v))
      values.push_back(v);
  std::string out;
  llvm::raw_string_ostream os(out);
  if (step == 1 && max > min + 1) {
    os << min << " to " << max;
    return out;
  }
  if (values.size() <= 3) {
    for (size_t i = 0; i < values.size(); ++i)
      os << (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ")
         << values[i];
    return out;
  }
  if (step)
    os << "a multiple of " << step << " in [" << min << ", " << max << "]";
  else
    os << "a power of two in [" << min << ", " << max << "]";
  return out;
}

// clang-format off
static const KernelCapability kTable[] = {
  // family, option, direction, sm90aOnly,
  // head dims, why,
  // D!=Dv, causal, topLeft, windows, scoreMod, bias, varlen, keyRange,
  // alibi, noLse, det,
  // stages, block-m, block-n, warp-rows, sm90-schedule
  {"sm80-mma", "sm80", KernelDirection::Forward, false,
   {8, 256, 8}, "(other than 16, 32, 64, 128 and 256 zero-padded to the "
                "next of those)",
   true, true, true, true, true, true, true, true, true, true, true,
   {2, 2, 1}, {16, 512, 16}, {16, 256, 0}, true, false},
  {"sm90a-wgmma", "sm90a", KernelDirection::Forward, true,
   {8, 256, 8}, "(zero-padded to 64, 128 or 256 by TMA)",
   true, true, true, true, true, false, false, true, true, true, true,
   {2, 8, 1}, {64, 192, 64}, {16, 256, 16}, false, true},
  {"sm80-mma", "sm80", KernelDirection::Backward, false,
   {8, 256, 8}, "(zero-padded to 32, 64, 128 or 256; above 128, dK and dV "
                "are accumulated 128 columns at a time)",
   false, true, true, true, true, false, false, true, true, false, true,
   {2, 2, 1}, {32, 64, 32}, {32, 128, 0}, false, false},
  {"sm90a-wgmma", "sm90a", KernelDirection::Backward, true,
   {8, 256, 8}, "(zero-padded to 64, 128 or 256 by TMA; dK and dV in "
                "registers, split over the head dim above 128)",
   true, true, true, true, true, false, false, true, true, false, true,
   {2, 4, 1}, {64, 128, 16}, {64, 128, 64}, false, true},
};
// clang-format on

ArrayRef<KernelCapability> mlir::attn::kernelCapabilities() { return kTable; }

const KernelCapability &mlir::attn::kernelCapability(StringRef familyOption,
                                                     KernelDirection d) {
  for (const KernelCapability &c : kTable)
    if (c.direction == d && familyOption == c.option)
      return c;
  // Family names are checked by the pass before any lookup.
  return kTable[d == KernelDirection::Forward ? 0 : 2];
}

KernelRequest KernelRequest::of(const FlashKernelSpec &spec) {
  KernelRequest r;
  r.elementType = spec.elementType;
  r.headDim = spec.headDim;
  r.valueHeadDim = spec.valueHeadDim;
  r.mask = spec.mask;
  r.band = spec.band;
  r.scoreMod = spec.scoreMod != nullptr;
  r.bias = spec.bias;
  r.varlen = spec.varlen;
  r.keyRange = spec.keyRange;
  r.alibi = spec.alibi;
  r.withLse = spec.withLse;
  return r;
}

KernelRequest KernelRequest::of(const FlashBackwardSpec &spec) {
  KernelRequest r;
  r.direction = KernelDirection::Backward;
  r.elementType = spec.elementType;
  r.headDim = spec.headDim;
  r.valueHeadDim = spec.valueHeadDim;
  r.mask = spec.mask;
  r.band = spec.band;
  r.scoreMod = spec.softcap > 0;
  r.keyRange = spec.keyRange;
  r.alibi = spec.alibi;
  return r;
}

namespace {
std::string bandText(MaskKind kind, const MaskBand &band) {
  std::string out = "mask <" + stringifyMaskKind(kind).str() + ">";
  if (kind == MaskKind::sliding || kind == MaskKind::sliding_top_left)
    out += " window [" + std::to_string(band.left) + ", " +
           std::to_string(band.right) + "]";
  return out;
}
} // namespace

std::string mlir::attn::unsupportedKernelFeature(const KernelCapability &cap,
                                                 const KernelRequest &r,
                                                 StringRef chip) {
  std::string kernels = std::string("the ") + cap.family + " " +
                        stringifyKernelDirection(cap.direction).str() +
                        " kernels";
  auto refuse = [&](const std::string &what, StringRef detail = "") {
    return what + " is not supported by " + kernels +
           (detail.empty() ? std::string() : ": " + detail.str());
  };
  if (cap.sm90aOnly ? !::attn::chipHasWgmma(chip.str())
                    : sharedMemoryPerBlock(chip) == 0)
    return refuse("chip '" + chip.str() + "'",
                  cap.sm90aOnly ? "they need sm_90a (wgmma and setmaxnreg "
                                  "are sm_90a-only)"
                                : "they need sm_80 or newer (mma.sync "
                                  "m16n8k16, cp.async); the supported "
                                  "chips: " +
                                      ::attn::supportedChipNames());
  if (!r.elementType ||
      !(r.elementType.isF16() || r.elementType.isBF16())) {
    std::string got;
    llvm::raw_string_ostream os(got);
    if (r.elementType)
      os << r.elementType;
    return "element type must be f16 or bf16 for " + kernels + ", got " +
           got + " (f32 runs on the CPU path only)";
  }
  for (auto [name, d] : {std::pair<const char *, int64_t>{"head dim",
                                                          r.headDim},
                         {"value head dim", r.valueHeadDim}})
    if (!cap.headDims.contains(d))
      return refuse(std::string(name) + " " + std::to_string(d),
                    "they take " + cap.headDims.str() + " " + cap.headDimWhy);
  if (!cap.unequalHeadDims && r.headDim != r.valueHeadDim)
    return refuse("head dim " + std::to_string(r.headDim) +
                      " with value head dim " +
                      std::to_string(r.valueHeadDim),
                  "they take equal head dims");
  // The band decides (a window as wide as the sequences is none).
  const MaskBand &b = r.band;
  bool causal = !b.hasLeft() && b.right == 0;
  if (!b.isNone()) {
    if (b.topLeft && !cap.topLeft)
      return refuse(bandText(r.mask, b), "they align masks bottom-right");
    if (!causal && !cap.windows)
      return refuse(bandText(r.mask, b),
                    std::string("they take no mask") +
                        (cap.causal ? " or a causal one" : ""));
    if (causal && !cap.causal)
      return refuse(bandText(r.mask, b));
  }
  if (r.scoreMod && !cap.scoreMod)
    return refuse("score_mod (softcap, a score_mod region)");
  if (r.bias && !cap.bias)
    return refuse("the bias operand");
  if (r.varlen && !cap.varlen)
    return refuse("variable length (cu_seqlens)",
                  "their TMA tensor maps address dense [B, N, H, D] tensors");
  if (r.keyRange && !cap.keyRange)
    return refuse("key_range (per-batch key padding)");
  if (r.alibi && !cap.alibi)
    return refuse("alibi_slopes (ALiBi)");
  if (!r.withLse && !cap.withoutLse)
    return refuse("an attention without the LSE");
  if (r.deterministic && !cap.deterministic)
    return refuse("deterministic");
  if (r.stages && !cap.stages.contains(r.stages))
    return refuse("stages " + std::to_string(r.stages),
                  "they take " + cap.stages.str());
  if (r.warpRows && !cap.warpRows)
    return refuse("warp-rows", "an sm80-mma forward option");
  if (!r.sm90Schedule.empty() && !cap.sm90Schedule)
    return refuse("sm90-schedule " + r.sm90Schedule,
                  "an sm90a-wgmma option");
  return "";
}

const KernelCapability *mlir::attn::chooseKernelFamily(
    StringRef familyOption, const KernelRequest &request, StringRef chip,
    std::string &why) {
  KernelDirection d = request.direction;
  if (familyOption != "auto") {
    const KernelCapability &cap = kernelCapability(familyOption, d);
    why = unsupportedKernelFeature(cap, request, chip);
    return why.empty() ? &cap : nullptr;
  }
  const KernelCapability &hopper = kernelCapability("sm90a", d);
  why = unsupportedKernelFeature(hopper, request, chip);
  if (why.empty())
    return &hopper;
  const KernelCapability &sm80 = kernelCapability("sm80", d);
  std::string sm80Why = unsupportedKernelFeature(sm80, request, chip);
  if (sm80Why.empty())
    return &sm80;
  why = sm80Why + " (family auto; and " + why + ")";
  return nullptr;
}
