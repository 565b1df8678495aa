//===- FlashKernel.h - FlashAttention GPU kernel generation -----*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_FLASHKERNEL_H
#define ATTN_CONVERSION_ATTNTOGPU_FLASHKERNEL_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::attn {

class AttentionOp;

/// The kernel family convert-attn-to-gpu generates (manifest "family").
inline constexpr const char *kFlashKernelFamily = "sm80-mma";

/// What the kernel computes: everything that specialises it.
struct FlashKernelSpec {
  int64_t headDim = 0;
  int64_t valueHeadDim = 0;
  Type elementType;     // f16 or bf16
  bool causal = false;  // exactly mask <causal> (bottom-right)
  MaskKind mask = MaskKind::none; // as written (for diagnostics)
  MaskBand band;        // the keys each row sees (every mask kind)
  Block *scoreMod = nullptr; // the op's score_mod block (not owned), or none
  bool withLse = true;
  bool varlen = false;  // packed sequences with cu_seqlens (sm80 only)
  bool bias = false;    // additive [B|1, Hq|1, Nq, Nk] bias (sm80 only)
  bool keyRange = false; // per-batch key_range [start, end) (key padding)
  bool alibi = false;    // alibi_slopes: slope[b, h] · |d(i) − j| subtracted

  static FlashKernelSpec fromOp(AttentionOp op);

  /// The widths the forward kernels lay tiles out and compute at: each
  /// head dim rounded up to a power of two, at least 16 (the mma k-step;
  /// the sm90a family takes D >= 64, so its widths are 64, 128 or 256 —
  /// whole 128-byte swizzle panels). The columns past the real width are
  /// zero-filled on load and never stored.
  int64_t tileHeadDim() const { return paddedHeadDim(headDim); }
  int64_t tileValueHeadDim() const { return paddedHeadDim(valueHeadDim); }
  static int64_t paddedHeadDim(int64_t d) {
    return std::max<int64_t>(16, llvm::PowerOf2Ceil(d));
  }
};

/// How the kernel computes it.
struct FlashKernelConfig {
  int64_t blockM = 0;  // query rows per thread block
  int64_t warpRows = 16; // query rows per warp: 16 or 32 (two m16 tiles)
  int64_t blockN = 0;  // keys per K/V tile
  int64_t stages = 2;  // depth of the K/V shared-memory ring
  bool qInRegisters = true; // keep Q's mma fragments in registers
  std::string source;  // "heuristic", "option" or "tuning-db"

  int64_t warps() const { return blockM / warpRows; }
  int64_t threads() const { return 32 * warps(); }
};

/// Dynamic shared memory, in bytes, that the kernel of `spec`/`config` uses.
int64_t flashKernelSharedMemoryBytes(const FlashKernelSpec &spec,
                                     const FlashKernelConfig &config);

/// Shared memory per block the chip offers (opt-in maximum), in bytes.
int64_t sharedMemoryPerBlock(StringRef chip);

/// The default configuration for a spec on a chip.
FlashKernelConfig chooseFlashKernelConfig(const FlashKernelSpec &spec,
                                          StringRef chip);

/// Why `config` cannot implement `spec` on `chip` ("" when it can). Names the
/// option at fault.
std::string validateFlashKernel(const FlashKernelSpec &spec,
                                const FlashKernelConfig &config,
                                StringRef chip);

/// A configuration the static checks rejected, and why.
struct PrunedFlashKernelConfig {
  FlashKernelConfig config;
  std::string reason;
};

/// The sm80 family's tuning space for `spec` on `chip`: block-m in {64, 128,
/// 256} x block-n in {32, 64, 128} x warp-rows in {16, 32}, stages 2, plus
/// the heuristic's choice (first, marked source "heuristic") when it lies
/// outside. Only configurations validateFlashKernel accepts are returned;
/// the others go to `pruned` with the reason. What ptxas says (spills) is
/// checked later, by whoever compiles the candidates.
std::vector<FlashKernelConfig>
enumerateFlashKernelConfigs(const FlashKernelSpec &spec, StringRef chip,
                            std::vector<PrunedFlashKernelConfig> *pruned =
                                nullptr);

/// A stable kernel name:
/// attn_fwd_d<D>[v<Dv>]_<dtype>[_<mask>][_mod<hash>]..._m<M>n<N>s<S>.
std::string flashKernelName(const FlashKernelSpec &spec,
                            const FlashKernelConfig &config);

/// The part of a kernel name that names the variant (both families):
/// [_causal | _tl<L>x<R> | _br<L>x<R>][_mod<hash>][_alibi][_bias][_varlen]
/// [_kr].
std::string flashKernelVariantSuffix(const FlashKernelSpec &spec);
/// The mask's part of a kernel name (forward and backward): "" without a
/// mask, "_causal" for bottom-right causal, else the band, e.g.
/// "_br4095x0" or "_tlinfx0" (inf: an unbounded side).
std::string maskKernelNameSuffix(bool causal, const MaskBand &band);
/// A backward kernel's softcap in its name: "" for none, else "_cap<C>"
/// with C as %g and '.' spelled 'p' (PTX names take no '.'): "_cap2p5".
std::string softcapKernelNameSuffix(double softcap);

/// The part of a forward kernel's name both families share: `prefix`
/// ("attn_fwd" or "attn_fwd_sm90"), head dims, element type, the variant
/// suffix and "_nolse" without the LSE (the scale is a launch argument, so
/// it names nothing); the family appends its tile.
std::string forwardKernelNameStem(const FlashKernelSpec &spec,
                                  llvm::StringRef prefix);

/// Emits the forward kernel into `module` (parameters as in
/// docs/kernel-abi.md). The caller validated the configuration.
gpu::GPUFuncOp emitFlashForwardKernel(OpBuilder &builder,
                                      gpu::GPUModuleOp module, StringRef name,
                                      const FlashKernelSpec &spec,
                                      const FlashKernelConfig &config);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOGPU_FLASHKERNEL_H
