//===- FlashBackwardKernel.h - FlashAttention backward kernels --*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The sm80-family backward pass of attn.attention_grad: three kernels
// launched in order on one stream (docs/kernel-abi.md, "Backward"):
//
//  1. preprocess: Δ = rowsum(dO ∘ O) into the workspace, and the f32 dQ
//     accumulator zeroed;
//  2. dkdv: one thread block per (key block, batch, key/value head) walks
//     every query block of every query head that reads the head,
//     recomputing P = exp2(S·scale·log2e − LSE·log2e) tile by tile, and
//     accumulates dV = Pᵀ·dO and dK = dSᵀ·Q·scale in registers; dQ += dS·K
//     goes to the f32 accumulator with atomic adds;
//  3. convert: dQ = accumulator · scale, rounded to the element type.
//
// Deterministic mode replaces the atomics and step 3 with a dq kernel: one
// thread block per query block walks the key blocks in order, recomputing
// P and dS, and sums dQ in registers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_FLASHBACKWARDKERNEL_H
#define ATTN_CONVERSION_ATTNTOGPU_FLASHBACKWARDKERNEL_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace mlir::attn {

class AttentionGradOp;

/// What the backward kernels compute.
struct FlashBackwardSpec {
  int64_t headDim = 0;
  int64_t valueHeadDim = 0;
  Type elementType; // f16 or bf16
  /// The band is exactly bottom-right causal (a window as wide as the
  /// sequences is none): the sm90a kernels' causal tile order. Both
  /// families take any band.
  bool causal = false;
  MaskKind mask = MaskKind::none; // as written (for diagnostics)
  MaskBand band;
  /// The softcap C (0: none): S = C·tanh(Q·Kᵀ·scale / C), and dS takes the
  /// factor 1 − tanh² (both families).
  double softcap = 0.0;
  /// Per-batch key_range [start, end): masked keys get dK = dV = 0.
  bool keyRange = false;
  /// alibi_slopes: S − slope[b, h]·|d(i) − j| (after the softcap) in the
  /// recomputed P; dS is unchanged (both families).
  bool alibi = false;

  /// The width of the shared-memory tiles and of the preprocess/convert
  /// kernels' rows: the wider of the head dims (equal in the sm80 dkdv
  /// kernel; the sm90a one takes D != Dv) rounded up to 32, 64, 128 or
  /// 256, whole swizzle periods. The columns past a tensor's head dim are
  /// zero-filled on load and never stored.
  int64_t tileHeadDim() const;
  /// The width the tensor-core products run over: the head dim rounded up
  /// to 16 (one k-step of mma.m16n8k16), so the zero columns of a padded
  /// tile cost no product beyond that.
  int64_t mmaHeadDim() const;

  /// Columns [start, start + width) of dK, dV and dQ.
  struct ColumnSlice {
    int64_t start = 0, width = 0;
  };
  /// The widest slice a dkdv walk accumulates: a warp's dK and dV of 16
  /// keys over 128 columns take 128 registers.
  static constexpr int64_t kMaxSliceWidth = 128;
  /// The slices of mmaHeadDim() the dkdv kernel accumulates one walk each
  /// (one up to D = 128; two above, which recompute S and dP: the products
  /// cost 7/5 of one walk's at D = 256).
  SmallVector<ColumnSlice> columnSlices() const;

  static FlashBackwardSpec fromOp(AttentionGradOp op);
};

/// How the dkdv kernel tiles the work.
struct FlashBackwardConfig {
  int64_t blockN = 0; // keys per thread block: 16 per warp
  int64_t blockM = 0; // query rows per step of the walk
  /// dQ by a separate kernel instead of atomic adds: bit-reproducible.
  bool deterministic = false;
  /// dQ's atomic adds two floats at a time (red.global.add.v2.f32, sm_90
  /// and newer); else one (red.global.add.f32).
  bool pairedReductions = false;
  /// The convert kernel reads a grouped dQ accumulator (the sm90a
  /// transposed-dkv kernel's, HopperBackwardConfig::groupedDq).
  bool groupedDq = false;
  std::string source; // "heuristic" or "option"

  int64_t warps() const { return blockN / 16; }
  int64_t threads() const { return 32 * warps(); }
  /// The deterministic dq kernel: 16 query rows per warp, 4 warps, 64 keys
  /// per step.
  int64_t dqBlockM() const { return 64; }
  int64_t dqBlockN() const { return 64; }
  int64_t dqThreads() const { return 32 * dqBlockM() / 16; }
};

/// Threads per block of the preprocess and convert kernels.
inline constexpr int64_t kBackwardAuxThreads = 128;

/// Names of the kernels of one backward configuration: preprocess, dkdv,
/// then convert (atomic dQ) or dqDeterministic.
struct FlashBackwardKernelNames {
  std::string preprocess, dkdv, convert, dqDeterministic;
};

FlashBackwardConfig chooseFlashBackwardConfig(const FlashBackwardSpec &spec,
                                              StringRef chip);
/// Why `config` cannot implement `spec` on `chip` ("" when it can).
std::string validateFlashBackward(const FlashBackwardSpec &spec,
                                  const FlashBackwardConfig &config,
                                  StringRef chip);
/// Dynamic shared memory of the dkdv kernel, in bytes.
int64_t flashBackwardSharedMemoryBytes(const FlashBackwardSpec &spec,
                                       const FlashBackwardConfig &config);
/// Dynamic shared memory of the deterministic dq kernel, in bytes.
int64_t flashBackwardDqSharedMemoryBytes(const FlashBackwardSpec &spec,
                                         const FlashBackwardConfig &config);
/// Query rows per block of the preprocess and convert kernels: one
/// 8-element chunk of a tileHeadDim() row per thread.
int64_t backwardAuxRowsPerBlock(const FlashBackwardSpec &spec);

FlashBackwardKernelNames flashBackwardKernelNames(
    const FlashBackwardSpec &spec, const FlashBackwardConfig &config);

/// Emits the three kernels into `module` (parameters as in
/// docs/kernel-abi.md); an empty `names.dkdv` skips the dkdv kernel (the
/// sm90a family brings its own). The caller validated the configuration.
void emitFlashBackwardKernels(OpBuilder &builder, gpu::GPUModuleOp module,
                              const FlashBackwardKernelNames &names,
                              const FlashBackwardSpec &spec,
                              const FlashBackwardConfig &config);

/// convert-attn-to-gpu's part for attn.attention_grad: emits the backward
/// kernels the #attn.kernel_config of every grad op of `module` names
/// (KernelSelection.h) into `kernels` and records them on the op
/// (`attn.kernel` = the dkdv kernel, an `#attn.launch` with the ordered
/// `kernels`). Family sm80 is the sm80 dkdv kernel, sm90a the Hopper one
/// (HopperBackwardKernel.h). `inputSymbols` are the names @attn_kernels
/// held before the pass.
LogicalResult convertAttentionGradOps(ModuleOp module,
                                      gpu::GPUModuleOp kernels, StringRef chip,
                                      const llvm::StringSet<> &inputSymbols);

/// Fails with a diagnostic on `op` when `name`, a kernel generated for it,
/// is one of `inputSymbols` (the input's own @attn_kernels functions), which
/// would be compiled in its place.
LogicalResult checkKernelName(Operation *op, StringRef name,
                              const llvm::StringSet<> &inputSymbols);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOGPU_FLASHBACKWARDKERNEL_H
