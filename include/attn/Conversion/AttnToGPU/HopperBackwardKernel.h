//===- HopperBackwardKernel.h - sm_90a (wgmma/TMA) backward -----*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The Hopper backward family (FlashAttention-3 style) of attn.attention_grad:
// the sm80 family's preprocess (Δ, zeroed dQ accumulator and semaphores)
// and convert kernels around a dkdv kernel built on TMA, mbarriers,
// wgmma and warp specialisation (HopperBackwardKernel.cpp; its
// configuration: HopperBackwardConfig.cpp). The workspace
// and parameters are the sm80 backward's, plus four TMA tensor maps (q, k,
// v, do) the runtime encodes (docs/kernel-abi.md, "Backward").
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_HOPPERBACKWARDKERNEL_H
#define ATTN_CONVERSION_ATTNTOGPU_HOPPERBACKWARDKERNEL_H

#include "attn/Conversion/AttnToGPU/FlashBackwardKernel.h"

namespace mlir::attn {

/// The Hopper backward family (manifest "family").
inline constexpr const char *kHopperBackwardFamily = "sm90a-wgmma";

/// How the Hopper dkdv kernel tiles the work: one thread block per (key
/// block of blockN keys, batch, kv head); a producer warpgroup brings K and
/// V once and Q, dO per query block of blockM rows into a `stages`-deep
/// ring; blockN / 64 consumer warpgroups own 64 keys each, or, with
/// splitHeadDim, two consumers share the block's 64 keys.
struct HopperBackwardConfig {
  /// Query rows per step (the N of Sᵀ = K·Qᵀ): 64, 128 at D <= 64, or 80
  /// at 64 < D <= 128 (FlashAttention-3's, dQ computed transposed).
  int64_t blockM = 64;
  int64_t blockN = 128; // keys per thread block, 64 per consumer
  int64_t stages = 2;   // depth of the Q/dO ring
  int64_t producerRegisters = 24;  // setmaxnreg.dec of the producer
  int64_t consumerRegisters = 240; // setmaxnreg.inc of the consumers
  /// Bit-reproducible dQ: the key blocks of a head add their dQ tiles of a
  /// query block in key-block order (FlashAttention-3's), each waiting on
  /// the block's semaphore in the workspace for the previous one.
  bool deterministic = false;
  /// Software-pipelined dQ: step j issues dQ(j − 1) = dS(j − 1)·K with
  /// its own dV and dK, after storing its dSᵀ(j) once the other consumer
  /// finished step j − 1 (a named barrier each consumer arrives on at a
  /// step's end and the other waits on), so that no consumer waits for
  /// the other's current step and the two drift apart, one's elementwise
  /// work under the other's products; off: dQ(j) in step j, after both
  /// consumers stored dSᵀ(j) (a barrier both wait on).
  bool pipelineDq = true;
  /// Causal: the order in which thread blocks take their (batch·kv head,
  /// key block) tiles. 0: head-major, the launch grid's order; otherwise
  /// longest first within sections of as many kv heads as have Q and dO in
  /// sectionBytes (at least one): key block 0 of each head of the section,
  /// the one with the most query blocks, then block 1, ..., so that a
  /// section's last wave holds short tiles while its Q and dO stay in L2.
  int64_t sectionBytes = 32 << 20;
  /// In-step dQ: issue dQ before dK, so that the dQ slice is stored into
  /// shared memory while dK runs (else dK first, dQ stored after both).
  bool dqBeforeDk = true;
  /// Deterministic: the dQ tile's rows are added in slices of this many
  /// rows, each slice with its own turn (semaphore) and its own lane of
  /// the dQ warp, so that the slices' waits, reductions and fences
  /// overlap (blockM: one turn per tile). 16 rows measured 1.3% faster
  /// than a turn per 64-row tile, 32 rows 0.8% (bench/results/
  /// 2026-12-03-bwd-deterministic-slices.md).
  int64_t turnRows = 16;
  /// Head dims above 128 (FlashAttention-3's split): a consumer's dK and
  /// dV of 64 keys would be 2·D/2 f32 registers per thread, over the 240
  /// setmaxnreg gives it. Instead both consumers take the block's 64 keys:
  /// consumer c computes Sᵀ and dPᵀ for query columns [32c, 32c + 32) of
  /// the step, Pᵀ and dSᵀ go through shared memory, and c accumulates dK,
  /// dV and the step's dQ for head-dim columns [c·D/2, (c + 1)·D/2), the
  /// dQ added from registers (red.global.add.v2.f32: the f32 dQ tile does
  /// not fit next to two Q/dO stages at D = 256). Set from the head dim by
  /// chooseHopperBackwardConfig.
  bool splitHeadDim = false;
  std::string source = "heuristic";

  /// The head-dim split as FlashAttention-3 runs it at D = 256 (schedule
  /// "transposed-dkv", block-n 80: the block-n picks it): S = Q·Kᵀ and dP =
  /// dO·Vᵀ (consumer c takes keys [40c, 40c + 40)), P and dS to shared
  /// memory as [key][query] rows, and consumer c accumulates dVᵀ = dOᵀ·P,
  /// dKᵀ = Qᵀ·dS and dQᵀ = Kᵀ·dSᵀ for head-dim rows [128c, 128c + 128):
  /// the head dim is the M of the products, so that 80 keys fit the
  /// registers (dKᵀ and dVᵀ are two m64n80 tiles each), a fifth fewer dQ
  /// reductions per FLOP than 64-key blocks. dO has one stage (two do not
  /// fit next to 80-row K and V).
  bool transposedDkv() const { return splitHeadDim && blockN == 80; }
  /// Its dQ accumulator is grouped (BackwardWorkspace.h,
  /// dqAccumulatorOffset): the dQᵀ registers add four rows of a column at
  /// a time (red.global.add.v4.f32), not one.
  bool groupedDq() const { return transposedDkv(); }

  /// Stages of the dO ring: the Q ring's, one with transposedDkv.
  int64_t doStages() const { return transposedDkv() ? 1 : stages; }

  int64_t consumers() const { return splitHeadDim ? 2 : blockN / 64; }
  /// f32 dQ tiles in shared memory, each with its own dQ warp (producer
  /// warps 2 and 3), so that the consumers fill one while the other is
  /// added. Deterministic kernels: the dQ warps wait for their turns, two
  /// tiles in flight (one dQ warp for both buffers held D = 64 to
  /// 0.78-0.92x the atomic kernel; 0.89-1.01x with two,
  /// bench/results/2026-12-04-bwd-det-order.md). The pipelined dQ: its
  /// store of dQ(j - 1) no longer waits for the reduction of dQ(j - 2) to
  /// read the tile (1.00-1.05x at D = 64; the in-step dQ at D = 128 was
  /// 0.92-1.02x with two, bench/results/2026-12-04-bwd-dq-buffers.md).
  /// Block-m 128 at D = 64 fits two with the mbarriers in the alignment
  /// padding (232,432 of 232,448 bytes; hopperBackwardSharedMemoryBytes).
  /// Block-m 80 (D = 128): one, as FlashAttention-3's; a second 40 KB
  /// tile does not fit next to the 80-row Q and dO stages.
  int64_t dqBuffers() const {
    if (blockM == 80)
      return 1;
    return deterministic || pipelineDq ? 2 : 1;
  }
  int64_t threads() const { return 128 * (consumers() + 1); }
};

/// One TMA tensor map parameter of the dkdv kernel, after the 40 backward
/// parameters: a 4-D map {head dim, sequence, heads, batch} of `tensor`,
/// box {boxCols, boxRows, 1, 1}, 128-byte swizzle.
struct HopperBackwardTensorMap {
  std::string name;   // q_tmap, k_tmap, v_tmap, do_tmap
  std::string tensor; // q, k, v, do
  int64_t boxCols = 64;
  int64_t boxRows = 0;
};

/// Whether the Hopper backward can compile `spec` for `chip` ("" when it
/// can, else why not): the capability table's sm90a backward row
/// (KernelCapabilities.cpp: sm_90a, f16/bf16, head dims D and Dv, equal or
/// not, multiples of 8 up to 256, atomic or deterministic).
std::string hopperBackwardSupports(const FlashBackwardSpec &spec,
                                   StringRef chip);
/// Whether `family` (sm80, sm90a or auto) compiles the sm90a dkdv kernel
/// for `spec`: sm90a, or auto where hopperBackwardSupports accepts it.
bool usesHopperBackward(const FlashBackwardSpec &spec, StringRef chip,
                        StringRef family);
/// The heuristic's configuration: pipelined dQ up to D = 128, the
/// head-dim split (block-n 64) above; deterministic dQ (the causal tiles
/// head-major, no sections) or atomic.
HopperBackwardConfig chooseHopperBackwardConfig(const FlashBackwardSpec &spec,
                                                bool deterministic);
/// The dQ schedule of `config` as the tuning database and the
/// sm90-schedule option name it: "dq-pipelined" (dQ(j − 1) with step j's
/// dV and dK), "dq-first" (in-step, dQ issued before dK and stored under
/// it) or "dk-first" (in-step, dQ after dK); "deterministic" for the deterministic
/// kernels (dQ added in key-block order, with the head dim's default dQ
/// schedule); above D = 128 (splitHeadDim) "head-split" (block-n 64) or
/// "transposed-dkv" (block-n 80).
std::string hopperBackwardSchedule(const HopperBackwardConfig &config);
/// Sets `config`'s dQ schedule from its name ("" leaves it; above D = 128
/// it sets the block-n that names the schedule); returns why the name is
/// not one ("" when it is).
std::string applyHopperBackwardSchedule(HopperBackwardConfig &config,
                                        StringRef schedule);
/// Whether the dkdv kernel can take query blocks of 128 rows (block-m
/// 128): at head dims up to 64, where Sᵀ and dPᵀ of 128 columns (64
/// registers each) fit next to dK and dV.
bool hopperBackwardTakesBlockM128(const FlashBackwardSpec &spec);
/// Whether the dkdv kernel can take query blocks of 80 rows (block-m 80,
/// FlashAttention-3's at D = 128): at head dims in (64, 128], whose tiles
/// are 128 columns wide. dQ = dS·K would be m80, not a wgmma shape, so the
/// consumers compute dQᵀ = Kᵀ·dSᵀ (m64n80 per 64 head-dim columns) from
/// dS stored [query][key].
bool hopperBackwardTakesBlockM80(const FlashBackwardSpec &spec);
/// Why `config` cannot implement `spec` ("" when it can); names the option.
std::string validateHopperBackward(const FlashBackwardSpec &spec,
                                   const HopperBackwardConfig &config);
int64_t hopperBackwardSharedMemoryBytes(const FlashBackwardSpec &spec,
                                        const HopperBackwardConfig &config);
/// The mbarriers' bytes: K/V full, then full and empty per ring stage.
int64_t hopperBackwardBarrierBytes(const HopperBackwardConfig &config);
/// The width the dkdv kernel computes at: the wider of D and Dv rounded up
/// to 64, 128 or 256 (hopperTileWidth). The narrower tensors' tensor maps
/// carry their real width, so TMA zero-fills their columns past it: they
/// add nothing to the products, and those columns of the gradients are
/// never stored.
int64_t hopperBackwardTileWidth(const FlashBackwardSpec &spec);
/// attn_bwd_sm90_d<D>[v<Dv>]_<dtype>[_causal][_kr]_dkdv_n<N>m<M>s<S>
/// [_det|_sdq|_dkf|_hsplit|_tdkv]
/// (no suffix: the pipelined dQ; _sdq: dQ first; _dkf: dK first; _hsplit:
/// the head-dim split; _tdkv: its transposed-dkv schedule).
std::string hopperBackwardKernelName(const FlashBackwardSpec &spec,
                                     const HopperBackwardConfig &config);
SmallVector<HopperBackwardTensorMap>
hopperBackwardTensorMaps(const HopperBackwardConfig &config);

/// Emits the Hopper dkdv kernel into `module` as an llvm.func marked
/// gpu.kernel / nvvm.kernel. The caller validated the configuration.
void emitHopperBackwardKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                              StringRef name, const FlashBackwardSpec &spec,
                              const HopperBackwardConfig &config);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOGPU_HOPPERBACKWARDKERNEL_H
