//===- HopperKernel.h - the sm_90a (wgmma/TMA) kernel family ----*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_HOPPERKERNEL_H
#define ATTN_CONVERSION_ATTNTOGPU_HOPPERKERNEL_H

#include "attn/Conversion/AttnToGPU/FlashKernel.h"

namespace mlir::attn {

/// The Hopper kernel family (manifest "family").
inline constexpr const char *kHopperKernelFamily = "sm90a-wgmma";

/// The width the sm90a kernels (forward and backward) lay a head dim out
/// at: whole 128-byte swizzle panels, 64, 128 or 256. TMA zero-fills the
/// columns past the head dim, the products over it stop at the head dim
/// rounded up to 16, and the padding columns are never stored.
inline int64_t hopperTileWidth(int64_t headDim) {
  return std::max<int64_t>(64, llvm::PowerOf2Ceil(headDim));
}

/// How the Hopper kernel computes: one producer warpgroup issuing TMA and
/// blockM / 64 consumer warpgroups, each owning 64 query rows. The knobs a
/// tuner may set (validateHopperKernel says why a combination is illegal):
///  * blockM: 64, 128 or 192 (one, two or three consumer warpgroups);
///  * blockN: a multiple of 16 in [16, 256] whose S, P and O fragments fit
///    the consumers' registers (hopperConsumerRegisterNeed);
///  * stages: [2, 8], within the 227 KiB of shared memory;
///  * persistent: each block walks several (head, query block) tiles of its
///    batch, so the next tile's Q and K/V loads overlap this one's epilogue;
///  * overlap / pingPong: the intra-warpgroup and inter-warpgroup overlap
///    (on by default; off only to measure what they bring; ping-pong needs
///    overlap and two or three consumers, and is a no-op with one).
/// The setmaxnreg split follows the consumer count (hopperRegisterSplit).
struct HopperKernelConfig {
  int64_t blockM = 0; // query rows per thread block (64 per consumer)
  int64_t blockN = 0; // keys per K/V tile (the N of S = Q·Kᵀ)
  int64_t stages = 2; // depth of the K/V shared-memory ring
  int64_t producerRegisters = 40;  // setmaxnreg.dec of the producer
  int64_t consumerRegisters = 232; // setmaxnreg.inc of the consumers
  /// Intra-warpgroup overlap: S(j+1) = Q·K(j+1)ᵀ and O += P(j)·V(j) in
  /// flight together while the softmax of S(j+1) runs.
  bool overlap = true;
  /// Ping-pong (two or three consumers, with overlap): named barriers hand
  /// the tensor cores round-robin from one consumer to the next, so one
  /// consumer's softmax runs under another's GEMMs.
  bool pingPong = true;
  /// Persistent: grid = (min(heads · query blocks, SMs / batch), batch) and
  /// each thread block loops over its batch's tiles, head-major; from 4096
  /// query rows on one block per tile (hopperKernelGrid). The heuristic's
  /// choice without a mask.
  bool persistent = false;
  /// Of every 8 columns of 8 keys in a score tile, how many take their
  /// exp2 on the FMA pipe (KernelBuilder::exp2Poly) instead of the MUFU,
  /// which softcap's tanh (and at head dim 64 the softmax alone) saturates.
  int64_t exp2Emulated = 0;
  /// The persistent grid's 40/232 setmaxnreg split on the plain grid too
  /// (an experiment; setHopperRegisterSplit).
  bool wideProducer = false;
  std::string source;              // "heuristic" or "option"

  int64_t consumers() const { return blockM / 64; }
  int64_t threads() const { return 128 * (consumers() + 1); }
};

/// The setmaxnreg split {producer, consumer} for `consumers` consumer
/// warpgroups: 24/240 for one or two (40/232 on the persistent grid, whose
/// producer loop needs more), 32/160 for three (FlashAttention-3's),
/// so that 128 · (producer + consumers · consumer) fits the registers the
/// block is launched with (threads · hopperLaunchRegisters): setmaxnreg only
/// redistributes those, and an .inc beyond them never returns.
std::pair<int64_t, int64_t> hopperRegisterSplit(int64_t consumers,
                                                bool persistent);
/// Registers per thread the block is launched with: what ptxas allocates
/// for maxntid = threads and one block per SM (168 for 384 threads, 128
/// for 512). ptxas reports this count in the manifest.
int64_t hopperLaunchRegisters(const HopperKernelConfig &config);
/// Sets config's producer/consumer registers from its consumer count (and
/// grid, or wideProducer).
void setHopperRegisterSplit(HopperKernelConfig &config);

/// Registers of a consumer thread beyond its S, P and O fragments
/// (calibrated on ptxas: block-m 192 block-n 128 D 64 fits 160 without
/// spills).
inline constexpr int64_t kHopperConsumerRegisterOverhead = 32;

/// Registers a consumer thread needs for blockN / valueHeadDim: S (blockN /
/// 2), P of the previous block (blockN / 4, packed pairs), O (Dv / 2) and
/// the softmax state, addresses and descriptors around them.
int64_t hopperConsumerRegisterNeed(const FlashKernelSpec &spec,
                                   const HopperKernelConfig &config);

/// Whether the Hopper family can compile `spec` for `chip` ("" when it can,
/// else why not): sm_90a, f16/bf16, head dims 64, 128 or 256, any mask and
/// score_mod, no variable length or bias.
std::string hopperFamilySupports(const FlashKernelSpec &spec, StringRef chip);

HopperKernelConfig chooseHopperKernelConfig(const FlashKernelSpec &spec);

/// Why `config` cannot implement `spec` ("" when it can); names the option.
std::string validateHopperKernel(const FlashKernelSpec &spec,
                                 const HopperKernelConfig &config);

int64_t hopperKernelSharedMemoryBytes(const FlashKernelSpec &spec,
                                      const HopperKernelConfig &config);

/// attn_fwd_sm90_d<D>[v<Dv>]_<dtype>[_<mask>][_mod<hash>]_m<M>n<N>s<S>[_p].
std::string hopperKernelName(const FlashKernelSpec &spec,
                             const HopperKernelConfig &config);

/// One TMA tensor map the kernel takes as a 128-byte __grid_constant__
/// parameter after the sm80 family's parameters: a 4-D map of `tensor`
/// (q, k or v) with dims {head dim, sequence, heads, batch}, a box of
/// {boxCols, boxRows, 1, 1} and 128-byte swizzle (docs/kernel-abi.md).
struct HopperTensorMap {
  std::string name;   // parameter name: q_tmap, k_tmap, v_tmap
  std::string tensor; // q, k, v
  int64_t boxCols = 64;
  int64_t boxRows = 0;
};
SmallVector<HopperTensorMap> hopperTensorMaps(const FlashKernelSpec &spec,
                                              const HopperKernelConfig &config);

/// Whether the (head, query block) tiles are taken length-major: causal
/// masks (a right bound, no left one) give query block i i + 1 key
/// blocks, so every head's longest query block goes first, then the next
/// longest of every head, ... (the longest-processing-time rule: the last
/// wave holds short tiles only). Without such a mask head-major, so that
/// blocks running together share K/V in L2.
bool hopperLengthMajorTiles(const FlashKernelSpec &spec);

/// The launch grid's policy (#attn.grid, docs/kernel-abi.md): one block per
/// query block (query_tiles; length-major tiles: length_major), or with
/// `persistent` at most as many as the SMs allow (persistent).
GridPolicy hopperKernelGrid(const FlashKernelSpec &spec,
                            const HopperKernelConfig &config);

/// Emits the Hopper forward kernel into `module` as an llvm.func marked
/// gpu.kernel / nvvm.kernel. The caller validated the configuration.
Operation *emitHopperForwardKernel(OpBuilder &builder,
                                       gpu::GPUModuleOp module, StringRef name,
                                       const FlashKernelSpec &spec,
                                       const HopperKernelConfig &config);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOGPU_HOPPERKERNEL_H
