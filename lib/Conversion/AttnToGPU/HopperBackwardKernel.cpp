//===- HopperBackwardKernel.cpp - the sm90a-wgmma dkdv kernel -------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Emits the Hopper (sm_90a) backward dkdv kernel (FlashAttention-3's
// algorithm) as an llvm.func of NVVM/LLVM/arith/scf operations. A thread
// block owns blockN keys of one (batch, kv head) and walks every query
// block of every query head that reads them:
//  * warpgroup 0, the producer, drops to a few registers (setmaxnreg.dec);
//    one thread brings K and V once and, per step, Q and dO of a query
//    block into a `stages`-deep ring by TMA, and warp 1 that step's
//    LSE·log2e and Δ (plain loads into the stage), each stage completing a
//    "full" mbarrier and freed by an "empty" one; warp 2 adds each step's
//    dQ tile to the accumulator (below);
//  * warpgroups 1.., the consumers (setmaxnreg.inc), own 64 keys each and
//    per step compute Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ with wgmma, Pᵀ =
//    exp2(Sᵀ·scale·log2e − LSE·log2e) and dSᵀ = Pᵀ∘(dPᵀ − Δ) in registers (softcap C: Sᵀ is first t = tanh(Sᵀ·scale / C), P's
//    constant C·log2e and dSᵀ takes the factor 1 − t²), then dV += Pᵀ·dO
//    and dK += dSᵀ·Q with Pᵀ and dSᵀ taken straight from registers (the
//    accumulator layout of m64nN is the A fragment layout: this is why the
//    kernel computes Sᵀ, not S). dSᵀ also
//    goes to shared memory; after a named barrier between the consumers,
//    dQ = dS·K (A = dSᵀ read MN-major, B = K read MN-major) is split over
//    the head dim between them (over the query rows at block-m 128, the
//    default at D <= 64), stored into an f32 tile in shared memory
//    and added to the f32 dQ accumulator by one cp.reduce.async.bulk of
//    producer warp 2 (the sm80 convert kernel scales and casts it);
//    deterministic kernels add in key-block order (emitDqWriter). With
//    two dQ tiles (deterministic, or the pipelined dQ), producer warps 2
//    and 3 add one each. Above D = 128 (the head-dim split, below) the
//    consumers add dQ from registers; deterministic, producer warp 2
//    acquires each step's turns before and passes them on after
//    (emitTurnKeeper), so that no consumer spins or fences.
//    Pipelined (the default up to D = 128): step j stores its dSᵀ once the
//    other consumer arrived on its "step j − 1 done" barrier (its dSᵀ(j −
//    1) stored, its dQ(j − 2) done), then issues dQ(j − 1) with its own dV
//    and dK and stores it while they run; a consumer never waits for the
//    other's current step, so one's products run under the other's
//    elementwise work. In-step (an sm90-schedule): dQ(j) within
//    step j after a barrier both consumers wait on.
//    At D <= 64 K and V are register A operands of Sᵀ and dPᵀ, read from
//    shared memory once (kvInRegisters()).
// Causal blocks take their tiles longest first within L2-sized sections of
// heads (HopperBackwardConfig::sectionBytes).
// Rows past Nq need no mask: TMA zero-fills Q and dO there and their LSE
// reads as +inf, so P = 0. Keys past Nk are zero-filled K and V rows
// (their dK and dV are never stored), masked in the last key block: their
// P = exp2(0 − LSE·log2e) would overflow for a row whose LSE is below about
// −88, and dS·K be inf·0, a NaN dQ.
//
// Accumulator fragments of wgmma m64nN: warp w of a warpgroup holds rows
// 16w..16w+15; with g = lane / 4 and t = lane % 4, register 4·j + e holds
// row g + 8·(e / 2), column 8·j + 2t + e % 2.
//
//===----------------------------------------------------------------------===//

#include "BackwardWorkspace.h"
#include "KernelTiles.h"
#include "attn/Dialect/AttnGPU/Utils/KernelBuilder.h"
#include "WgmmaHelpers.h"

#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Conversion/AttnToGPU/HopperBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/HopperKernel.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvvm;

namespace {

constexpr const char *kSharedMemorySymbol = "attn_dynamic_smem_sm90_bwd";
/// Bytes of one swizzled panel row: 64 16-bit elements.
constexpr int64_t kPanelRowBytes = 128;
/// Named barriers: 1 between the consumers (dSᵀ complete; in-step dQ and
/// the head-dim split), then per dQ tile buffer u and consumer c: 2 + 4u +
/// c "its dQ slice is in shared memory" and 4 + 4u + c "the dQ tile was
/// read by the bulk reductions" (with the producer's dQ warp), then (the
/// pipelined dQ) 10 + 2c + parity "consumer c's dSᵀ of a step of that
/// parity is in shared memory". The deterministic head-dim split (no dQ
/// tiles) reuses 2 + parity "the step's turns are acquired" and 4 +
/// parity "the consumers' dQ additions of the step are issued" between
/// the consumers and the turn warp.
constexpr int64_t kConsumerBarrier = 1, kDqFullBarrier = 2,
                  kDqEmptyBarrier = 4, kDqBufferBarrierStride = 4,
                  kDsReadyBarrier = 10, kTurnAcquiredBarrier = 2,
                  kDqAddedBarrier = 4;
/// Producer warps: 0 issues the TMA loads, 1 loads LSE and Δ, 2 issues
/// the dQ bulk reductions (with two dQ tiles: 2 and 3, one tile each).
constexpr int64_t kLseWarp = 1, kDqWarp = 2;

/// The sm90a backward kernel's parameters (docs/kernel-abi.md): the sm80
/// family's, then the Q, K, V and dO tensor maps.
KernelSignature hopperBackwardSignature(const FlashBackwardSpec &spec) {
  ::attn::runtime::KernelAbi abi;
  abi.backward = true;
  abi.tensorMaps = true;
  abi.keyRange = spec.keyRange;
  abi.alibi = spec.alibi;
  return KernelSignature(abi);
}

Value eq(KernelBuilder &kb, Value x, Value y) {
  return arith::CmpIOp::create(kb.builder(), kb.location(),
                               arith::CmpIPredicate::eq, x, y);
}

class HopperBackwardEmitter {
public:
  HopperBackwardEmitter(OpBuilder &builder, Location loc,
                        const FlashBackwardSpec &spec,
                        const HopperBackwardConfig &config)
      : kb(builder, loc), b(builder), loc(loc), spec(spec), config(config),
        params(hopperBackwardSignature(spec)), elt(spec.elementType),
        tileDim(hopperBackwardTileWidth(spec)) {}

  void emit(LLVM::LLVMFuncOp func);

private:
  /// A 16 x `cols` accumulator fragment (wgmma m64nN, one warp's rows).
  attn_gpu::FragmentType accumulator(int64_t cols) {
    return attn_gpu::FragmentType::getAccumulator(b.getContext(), cols);
  }
  Value arg(StringRef name) const { return params[name]; }
  Value barrierAt(int64_t slot, Value stage);
  /// tensor + batch·stride_b + head·stride_h, elements of type `eltTy`.
  Value headBase(StringRef tensor, Type eltTy, Value head);
  /// Query head and first row of step `it` of the walk.
  std::pair<Value, Value> stepAt(Value it);
  /// The walk's unit (headInGroup · qSteps + query block − qStart) of step
  /// `it`: `it` itself, rotated by this block's index (rotatedTurns()).
  Value rotatedStep(Value it);
  Value stageOf(Value it) { return kb.remu(it, kb.i32(config.stages)); }
  Value parityOf(Value it) {
    return kb.andi(kb.divu(it, kb.i32(config.stages)), 1);
  }
  void emitProducer();
  void emitLseLoader();
  void emitTmaLoads();
  /// Runs `body` with the block's scalars re-read through opaque moves:
  /// the producer warps have 24 registers, and LLVM would otherwise hoist
  /// 64-bit products of them out of their loops.
  template <typename Fn> void withFreshScalars(Fn body);
  /// The dQ warp of the buffer of step `firstStep` (0 or 1): adds the
  /// tiles of every dqBuffers()-th step from there.
  void emitDqWriter(Value firstStep);
  /// Deterministic dQ: spins until `semaphore` (query block q0's) holds
  /// this key block's turn, its index among the key blocks that visit q0,
  /// times the `arrivals` each key block makes on it (acquire), then
  /// passes the turn on (release increment).
  void waitForTurn(Value semaphore, Value q0, Value it,
                   int64_t arrivals = 1);
  /// Deterministic kernels without a mask band or key range walk their
  /// query blocks from their own index on (block n's step s visits unit
  /// (n + s) mod T) and unit t takes its key blocks in the order t, t − 1,
  /// ... (cyclic), so that in lockstep no block waits for another; only
  /// while the head's key blocks Nb <= T (else ascending). At N = 4096
  /// 1.08-1.17x the ascending order at D 64, 128 and the head-split, 0.98x
  /// on transposed-dkv (1.22x at 2048); level at 16k (bench/results/
  /// 2026-12-05-bwd-tdkv-m80.md).
  bool rotatedTurns() const {
    return config.deterministic && !spec.band.hasLeft() &&
           !spec.band.hasRight() && !spec.keyRange;
  }
  /// rotatedTurns(): this block's key-block index n and the head's count
  /// Nb when rotated at run time (Nb <= T), else 0 and 0. Read anew from
  /// the special registers at each use (the dQ warp has 24 registers).
  std::pair<Value, Value> rotationOf() {
    Value n = NVVM::BlockIdXOp::create(b, loc, b.getI32Type());
    Value blocks = NVVM::GridDimXOp::create(b, loc, b.getI32Type());
    // At most 64 blocks (all of a head's resident at once on the H200:
    // a block may wait for one dispatched after it).
    Value rotate = kb.andb(kb.slt(kb.sub(blocks, kb.i32(1)), numSteps),
                           kb.slt(blocks, kb.i32(65)));
    return {kb.select(rotate, n, kb.i32(0)),
            kb.select(rotate, blocks, kb.i32(0))};
  }
  /// The deterministic head-dim split's turn warp (producer warp 2): per
  /// step, lane s acquires the turn of the step's 16-row slice s for both
  /// consumers, arrives on kTurnAcquiredBarrier, waits on kDqAddedBarrier
  /// for the consumers' additions and passes the turn on. The consumers
  /// add from registers; this way they neither spin nor wait for their
  /// additions to complete (the release fence) before the next step.
  void emitTurnKeeper();
  /// The semaphore of the `sliceRows`-row slice of query rows from
  /// `rowStart` (a multiple of sliceRows) in the workspace region `region`.
  Value sliceSemaphore(Value region, Value rowStart, int64_t sliceRows);
  /// Named barrier `base` + the parity of step `it` (the turn warp's).
  Value turnBarrier(int64_t base, Value it) {
    return kb.add(kb.i32(base), kb.andi(it, 1));
  }
  int64_t turnBarrierThreads() const { return 32 + 128 * config.consumers(); }
  /// Deterministic with a right mask edge (causal): the key blocks of a
  /// query block add in descending order, from the last that sees it
  /// (FlashAttention-3's order). Block n visits each query block right
  /// after block n + 1 did, so no block waits for a chain of earlier
  /// blocks to reach its first query block (ascending, block n's first
  /// addition waits for n blocks' in turn). Block n + 1 is dispatched
  /// first (emit reverses the key blocks) so that every wait is for a
  /// block already running or done.
  bool descendingTurns() const {
    return config.deterministic && spec.band.hasRight();
  }
  /// Release increment of `semaphore` by `arrivals`.
  void passTurn(Value semaphore, int64_t arrivals = 1);
  /// This thread's LSE·log2e (offset 0) or Δ (offset blockM·4) of query
  /// columns 8·j + 2t + {0, 1}, j < cols / 8, from the shared stage of step
  /// `stage`; with the head-dim split, from this consumer's columns on.
  SmallVector<Value> sharedColumns(Value stage, int64_t offsetBytes,
                                   int64_t cols);
  /// Stores this consumer's dQ slice into the shared tile the dQ warp
  /// adds to the accumulator.
  /// `dqStep`: the walk step whose dQ this is (it picks the buffer).
  void storeDq(ArrayRef<Value> dq, Value dqStep);
  int64_t dqBuffers() const { return config.dqBuffers(); }
  /// Buffer of step `step`'s dQ tile (a constant 0 with one buffer).
  Value dqBufferOf(Value step) {
    return dqBuffers() == 1 ? Value() : kb.andi(step, 1);
  }
  Value dqTileOf(Value buffer) {
    return buffer ? kb.gepBytes(dqTile,
                                kb.mul(buffer, kb.i32(dqTileBytes())))
                  : dqTile;
  }
  /// Named barrier `base` + c of `buffer` (kDqFullBarrier or
  /// kDqEmptyBarrier).
  Value dqBarrier(int64_t base, Value buffer, Value c) {
    Value id = kb.add(kb.i32(base), c);
    return buffer ? kb.add(id, kb.mul(buffer, kb.i32(kDqBufferBarrierStride)))
                  : id;
  }
  /// Pipelined dQ: named barrier "consumer c finished a step of `parity`"
  /// (its dSᵀ stored, its dQ of the step before done), on which c arrives
  /// at the step's end and the other consumer waits in the next step
  /// before storing its dSᵀ. A barrier per parity: c cannot arrive twice
  /// on one before the other waited (its next arrival follows its own
  /// wait for the other's next step).
  Value dsReadyBarrier(Value c, Value parity) {
    return kb.add(kb.i32(kDsReadyBarrier), kb.add(kb.shl(c, 1), parity));
  }
  /// Before step `it` (> 0) stores its dSᵀ into the tile the other
  /// consumer's dQ(it − 2) read, and its dQ(it − 1) reads the other's
  /// dSᵀ(it − 1).
  void waitForOtherDs(Value it) {
    ifThen(kb, kb.slt(kb.i32(0), it), [&] {
      namedBarrierSync(kb,
                       dsReadyBarrier(kb.sub(kb.i32(1), consumer),
                                      kb.andi(kb.sub(it, kb.i32(1)), 1)),
                       128 * config.consumers());
    });
  }
  void emitConsumer();
  SmallVector<Value> emitStep(Value it, ValueRange carried);
  SmallVector<Value> emitStepBody(Value it, ValueRange carried);
  SmallVector<Value> emitSplitStepBody(Value it, ValueRange carried);
  /// One step of the transposed-dkv schedule (HopperBackwardConfig::
  /// transposedDkv). Carried: dKᵀ then dVᵀ, two m64n<blockN> tiles each
  /// (this consumer's head-dim rows [128c, 128c + 128)).
  SmallVector<Value> emitTransposedStepBody(Value it, ValueRange carried);
  /// transposedDkv: acc (m64n<cols>) = A·B (+ acc when `accumulate`) for
  /// head-dim rows [64p, 64p + 64): A = panel `aPanel` of `aTile`
  /// ([rows][d], read MN-major, `kSteps` k-steps of 16 rows), B the
  /// [key][query] tile `bTile`, K-major (k = query) or MN-major
  /// (`transposeB`: k = key).
  SmallVector<Value> issueHeadDimRows(Value aTile, int64_t aPanelBytes,
                                      Value aPanel, Value bTile,
                                      bool transposeB, int64_t kSteps,
                                      ValueRange acc, int64_t cols,
                                      bool accumulate);
  /// transposedDkv: dQᵀ rows [64p, 64p + 64) of step `it` added to the f32
  /// accumulator (grouped: groupedDq) from registers, four query rows of a
  /// column per red.global.add.v4.f32, rows < Nq and columns < D.
  void addDqTransposed(ArrayRef<Value> dq, Value it, Value panel);
  /// transposedDkv: dKᵀ·scale and dVᵀ of this consumer's head-dim rows
  /// into dK and dV (keys < Nk, columns < D), transposed through its
  /// panels of the K and V tiles.
  void emitTransposedEpilogue(ValueRange accs);
  /// Sᵀ or dPᵀ of this consumer's 64 keys and `cols` query columns: A (K
  /// or V rows, K-major) times Bᵀ (Q or dO rows from bTile, K-major),
  /// `depth` / 16 k-steps. Not committed.
  SmallVector<Value> issueABt(Value aTile, int64_t aPanelBytes, Value bTile,
                              int64_t bPanelBytes, int64_t depth,
                              ValueRange acc, int64_t cols);
  /// The same with A from registers: `aFrag`, an A-operand fragment of
  /// `depth` columns (kvInRegisters()).
  SmallVector<Value> issueRegisterABt(Value aFrag, Value bTile,
                                      int64_t bPanelBytes, int64_t depth,
                                      ValueRange acc, int64_t cols);
  /// This warp's 16 key rows of a K or V tile (128-byte swizzled panels
  /// of blockN rows) as an A-operand fragment of `depth` columns.
  Value loadOperandA(Value tile, int64_t depth);
  /// What the rows of a score fragment are (register 4·j + e sits at row
  /// warpKey0 + g + 8·(e/2), column 8·j + 2t + e%2): keys in Sᵀ, queries
  /// in the transposed-dkv schedule's S.
  enum class ScoreRows { keys, queries };
  /// The softcap's t = tanh(S·scale / C) and the masks (band, keys past
  /// the end, key_range) on a score tile of `cols` columns whose first
  /// query is firstQuery (`queries` of them) and first key kv0 + keyOffset
  /// (kv0 when keyOffset is null).
  SmallVector<Value> capAndMask(SmallVector<Value> s, ScoreRows rows,
                                Value firstQuery, Value keyOffset,
                                int64_t queries, int64_t cols);
  /// ALiBi: query head `head`'s slope, read at the step's start, before
  /// the products hide it, in the unit of the score P's constant
  /// multiplies (raw, or the softcap's t); none without ALiBi.
  std::optional<AlibiTerm> alibiOf(Value head) {
    std::optional<AlibiTerm> alibi;
    if (spec.alibi)
      alibi.emplace(kb, params, batch, head,
                    spec.softcap > 0 ? kb.f32(spec.softcap)
                                     : arg("softmax_scale"));
    return alibi;
  }
  /// Pᵀ = exp2(Sᵀ·cScale − LSE·log2e) (+ ALiBi's term) of `scores`.
  SmallVector<Value> probabilities(ArrayRef<Value> scores, Value stage,
                                   Value qCol0, int64_t cols, Value cScale,
                                   const std::optional<AlibiTerm> &alibi);
  /// Rounded into wgmma A operands (register 2·j + h: tile j's row-half
  /// h) from an accumulator of `cols` columns.
  SmallVector<Value> packA(ArrayRef<Value> x, int64_t cols);
  /// dSᵀ = Pᵀ ∘ (dPᵀ − Δ) (softcap: P recomputed from the masked t by
  /// `recompute`, times 1 − t²).
  SmallVector<Value>
  scoreGradient(SmallVector<Value> p, ArrayRef<Value> capT,
                ArrayRef<Value> dp, ArrayRef<Value> delta,
                function_ref<SmallVector<Value>(ArrayRef<Value>)> recompute);
  /// Packed A-operand pairs (register 2·j + h: tile j's row-half h) into a
  /// [key][query] tile with 128-byte swizzle, as TMA would write it, from
  /// query chunk `firstChunk` (16 bytes each) on.
  void storeTransposed(Value tile, ArrayRef<Value> frags, Value firstChunk);
  /// Packed pairs (register 2·j + h: the warp's rows 8h.., columns 8j..)
  /// stored transposed by stmatrix.trans into a 64-column panel `panel`
  /// (rows of 128 bytes, 128-byte swizzle, as TMA writes it): column
  /// firstRow + c of the pairs becomes the panel's row firstRow + c, and
  /// their rows the 16-byte chunks firstChunk + h of it. firstRow is a
  /// multiple of 8. Block-m 80: dSᵀ into the [query][key] dS tile (panel c,
  /// the consumer's keys); transposed-dkv: P and dS into [key][query]
  /// tiles.
  void storeTransposedPairs(Value panel, ArrayRef<Value> pairs,
                            Value firstRow, Value firstChunk);
  /// transposedDq(): the dQᵀ accumulator of head-dim rows [64c, 64c + 64)
  /// into the [query][d] f32 tile, element by element (d < D only).
  void storeDqTransposed(ArrayRef<Value> dq, Value tile);
  /// Head-dim split: acc += A·B[:, this consumer's half], A a [key][query]
  /// tile of `aRing` (K-major), B the stage's Q or dO (MN-major).
  SmallVector<Value> issueSharedAB(Value aRing, Value aStage, Value bRing,
                                   Value bStage, ValueRange acc, int64_t n);
  /// Head-dim split: this consumer's dQ columns of step `it` added to the
  /// f32 accumulator from registers, rows < Nq.
  void addDqFromRegisters(ArrayRef<Value> dq, Value it);
  void emitEpilogue(ValueRange accs);
  SmallVector<Value> issueDq(Value dsStage, ValueRange zeros);
  Value deltaBaseOf(Value it);
  /// Consumer c's first head-dim column of its dQ slice (and with the
  /// head-dim split of its dK and dV): c·tileDim / consumers.
  Value consumerCol0() {
    return kb.mul(consumer, kb.i32(tileDim / config.consumers()));
  }
  /// Emits `store` of the 8 head-dim columns from `first` + `col` (`first`
  /// a consumer's column offset, uniform over its warpgroup, or null for
  /// 0) for columns < D only: the tiles' columns past D are padding.
  void ifStoredColumns(Value first, int64_t col, function_ref<void()> store,
                       int64_t width);
  /// The same for the columns of dK and dQ (D wide).
  void ifStoredColumns(Value first, int64_t col, function_ref<void()> store) {
    ifStoredColumns(first, col, store, spec.headDim);
  }
  /// Query blocks of 128 rows (two 64-row panels of dSᵀ): consumer c's dQ
  /// takes query rows [64c, 64c + 64) and every head-dim column, else all
  /// 64 rows and columns [c·D/2, (c + 1)·D/2).
  bool splitDqRows() const {
    return !config.splitHeadDim && config.blockM == 128;
  }
  /// Block-m 80 (FlashAttention-3's at D = 128): dQ = dS·K would be m80,
  /// not a wgmma shape. Consumer c computes dQᵀ = Kᵀ·dSᵀ for head-dim
  /// rows [64c, 64c + 64), m64n<blockM>, from dS stored [query][key] (B
  /// K-major: storeDsRows), and stores it transposed into the [query][d]
  /// f32 tile (storeDqTransposed).
  bool transposedDq() const {
    return !config.splitHeadDim && config.blockM % 64 != 0;
  }
  /// Columns of this consumer's dQ accumulator (dQᵀ's: the query rows).
  int64_t dqCols() const {
    if (transposedDq())
      return config.blockM;
    return splitDqRows() ? tileDim : tileDim / config.consumers();
  }
  int64_t dqRegs() const { return dqCols() / 2; }
  /// One 64-query panel of a dSᵀ tile: blockN rows of 128 bytes.
  int64_t dsPanelBytes() const { return config.blockN * kPanelRowBytes; }

  int64_t qPanelBytes() const { return config.blockM * kPanelRowBytes; }
  int64_t kvPanelBytes() const { return config.blockN * kPanelRowBytes; }
  int64_t qTileBytes() const { return config.blockM * tileDim * 2; }
  int64_t doTileBytes() const { return config.blockM * tileDim * 2; }
  int64_t kTileBytes() const { return config.blockN * tileDim * 2; }
  int64_t vTileBytes() const { return config.blockN * tileDim * 2; }
  int64_t dsTileBytes() const { return config.blockN * config.blockM * 2; }
  int64_t lseStageBytes() const { return 2 * config.blockM * 4; }
  /// The f32 dQ tile, unpadded (rows of D columns, not tileDim): its rows
  /// < Nq are contiguous in the accumulator, so that one bulk reduction
  /// adds it (per-row reductions from padded, conflict-free rows were
  /// 0.6-0.97x as fast).
  int64_t dqTileBytes() const { return config.blockM * spec.headDim * 4; }
  bool pipelined() const { return config.pipelineDq; }
  /// K and V as register A operands of Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ, read
  /// from shared memory once (ldmatrix), so that those products read only
  /// Q and dO there: their m64n64k16 steps with both operands in shared
  /// memory read 4 KB per 32 tensor-core cycles, the SM's shared-memory
  /// bandwidth. 2·D/4 registers per thread: at D <= 64 (at D = 128 K
  /// alone spilled, 0.83-0.94x; bench/results/
  /// 2026-12-04-bwd-dq-pipeline.md).
  bool kvInRegisters() const {
    return !config.splitHeadDim && tileDim <= 64 && config.blockM == 64;
  }

  // mbarrier slots, 8 bytes each (hopperBackwardBarrierBytes).
  int64_t kvFullSlot() const { return 0; }
  int64_t fullSlot() const { return 1; }
  int64_t emptySlot() const { return 1 + config.stages; }
  // transposedDkv: dO's own ring of one stage.
  int64_t doFullSlot() const { return 1 + 2 * config.stages; }
  int64_t doEmptySlot() const { return 2 + 2 * config.stages; }
  /// transposedDkv: the K tile's address, stored once and read per step
  /// (emitStep), so that ptxas cannot hoist the loop-invariant K, V and dO
  /// descriptors of every k-step out of the loop (spilled).
  int64_t kTileSlot() const { return 3 + 2 * config.stages; }

  KernelBuilder kb;
  OpBuilder &b;
  Location loc;
  const FlashBackwardSpec &spec;
  const HopperBackwardConfig &config;
  KernelSignature params;
  Type elt;
  /// The head dim the tiles and products span: D rounded up to 64, 128 or
  /// 256 (hopperTileWidth); TMA fills the columns past D
  /// with zeros, so they add nothing to Sᵀ and dPᵀ, their dK, dV and dQ
  /// are zero and never stored.
  int64_t tileDim;
  /// The depths of Sᵀ = K·Qᵀ (D) and dPᵀ = V·dOᵀ (Dv), rounded up to a
  /// k-step (16): the k-steps wholly in the padding would add zeros.
  int64_t scoreDepth() const { return llvm::alignTo(spec.headDim, 16); }
  int64_t valueDepth() const { return llvm::alignTo(spec.valueHeadDim, 16); }
  Block *entry = nullptr;

  Value seqQ, seqKv, headsQ, diagonal;
  Value tid, warpgroup, lane, g, t;
  Value batch, kvHead, groupSize, kv0;
  // Keys outside [keyStart, keyEnd) are masked: [0, Nk), or the batch
  // entry's key_range (keyStart null without one).
  Value keyStart, keyEnd;
  Value qStart, qSteps, numSteps;
  Value kTile, vTile, dqTile, lseRing, barriers;
  Value qRing, doRing, dsRing; // !attn_gpu.ring values
  Value pRing;                 // Pᵀ tiles (head-dim split only)
  // Consumer-only: index (0..), warp in its warpgroup, first key row of
  // this warp's 16 within the block (64·consumer + 16·warp).
  Value consumer, warpInGroup, warpKey0;
  // kvInRegisters(): this warp's K and V rows as A-operand fragments.
  Value kFrag, vFrag;
};

Value HopperBackwardEmitter::barrierAt(int64_t slot, Value stage) {
  Value index = stage ? kb.add(kb.i32(slot), stage) : kb.i32(slot);
  return kb.gepBytes(barriers, kb.shl(index, 3));
}

void HopperBackwardEmitter::ifStoredColumns(Value first, int64_t col,
                                            function_ref<void()> store,
                                            int64_t width) {
  // The width is a multiple of 8: a group of 8 columns is all data or all
  // padding.
  int64_t lastFirst = first ? tileDim - tileDim / config.consumers() : 0;
  if (col >= width)
    return; // padding for every consumer (the first starts at column 0)
  if (lastFirst + col + 8 <= width)
    return store();
  ifThen(kb, kb.slt(kb.add(first, kb.i32(col)), kb.i32(width)), store);
}

Value HopperBackwardEmitter::headBase(StringRef tensor, Type eltTy,
                                      Value head) {
  Value off = kb.add(kb.mul(kb.zext64(batch), params.stride(tensor, 0)),
                     kb.mul(kb.zext64(head), params.stride(tensor, 1)));
  return kb.gep(arg(tensor), eltTy, off);
}

Value HopperBackwardEmitter::rotatedStep(Value it) {
  if (!rotatedTurns())
    return it;
  Value unit = kb.add(it, rotationOf().first);
  return kb.select(kb.slt(unit, numSteps), unit, kb.sub(unit, numSteps));
}

std::pair<Value, Value> HopperBackwardEmitter::stepAt(Value it) {
  it = rotatedStep(it);
  Value headInGroup = kb.divu(it, qSteps);
  Value qBlock = kb.add(qStart, kb.remu(it, qSteps));
  Value head = kb.add(kb.mul(kvHead, groupSize), headInGroup);
  return {head, kb.mul(qBlock, kb.i32(config.blockM))};
}

/// One thread issues every TMA load: K and V once, then per step Q and dO
/// into the ring stage the consumers released.
void HopperBackwardEmitter::emitProducer() {
  setMaxRegisters(kb, config.producerRegisters, /*increase=*/false);
  // Exclusive branches per warp: a value one role uses is not live (in the
  // 24 registers) through another role's loop.
  Value warp = kb.lshr(tid, 5);
  // The head-dim split adds dQ from the consumers' registers: no dQ warp.
  ifThenElse(
      kb, eq(kb, warp, kb.i32(kLseWarp)), [&] { emitLseLoader(); },
      [&] {
        if (config.splitHeadDim && !config.deterministic)
          return emitTmaLoads();
        if (config.splitHeadDim)
          return ifThenElse(
              kb, eq(kb, warp, kb.i32(kDqWarp)), [&] { emitTurnKeeper(); },
              [&] { emitTmaLoads(); });
        // A dQ warp per dQ tile (warps 2 and 3 with two), so that one
        // tile's reduction (and turns) overlap the other's.
        Value dqWarp = kb.sub(warp, kb.i32(kDqWarp));
        Value isDqWarp = kb.andb(kb.slt(kb.i32(-1), dqWarp),
                                 kb.slt(dqWarp, kb.i32(dqBuffers())));
        ifThenElse(
            kb, isDqWarp, [&] { emitDqWriter(dqWarp); },
            [&] { emitTmaLoads(); });
      });
}

/// Thread 0 of the producer: every TMA load.
void HopperBackwardEmitter::emitTmaLoads() {
  ifThen(kb, eq(kb, tid, kb.i32(0)), [&] {
    Value kvFull = barrierAt(kvFullSlot(), Value());
    mbarrierArriveExpectTx(kb, kvFull, kTileBytes() + vTileBytes());
    for (int64_t p = 0; p < tileDim / 64; ++p)
      tmaLoad4d(kb, kb.gepBytes(kTile, kb.i32(p * kvPanelBytes())),
                arg("k_tmap"), {kb.i32(64 * p), kv0, kvHead, batch}, kvFull);
    for (int64_t p = 0; p < tileDim / 64; ++p)
      tmaLoad4d(kb, kb.gepBytes(vTile, kb.i32(p * kvPanelBytes())),
                arg("v_tmap"), {kb.i32(64 * p), kv0, kvHead, batch}, kvFull);
    scf::ForOp::create(
        b, loc, kb.i32(0), numSteps, kb.i32(1), ValueRange{},
        [&](OpBuilder &, Location, Value it, ValueRange) {
          withFreshScalars([&] {
            auto [head, q0] = stepAt(it);
            Value stage = stageOf(it);
            // A fresh barrier counts as having completed the phase before
            // its first: the first round through the ring does not wait.
            mbarrierWait(kb, barrierAt(emptySlot(), stage),
                         kb.xori(parityOf(it), kb.i32(1)));
            Value full = barrierAt(fullSlot(), stage);
            Value doStage = stage, doFull = full;
            if (config.transposedDkv()) {
              // dO's single stage is released earlier in a step than Q's
              // (after dVᵀ), behind barriers of its own.
              mbarrierArriveExpectTx(kb, full, qTileBytes());
            } else {
              mbarrierArriveExpectTx(kb, full, qTileBytes() + doTileBytes());
            }
            for (int64_t p = 0; p < tileDim / 64; ++p)
              tmaLoad4d(kb, ringTile(kb, qRing, stage, p), arg("q_tmap"),
                        {kb.i32(64 * p), q0, head, batch}, full);
            if (config.transposedDkv()) {
              doStage = kb.i32(0);
              doFull = barrierAt(doFullSlot(), Value());
              mbarrierWait(kb, barrierAt(doEmptySlot(), Value()),
                           kb.xori(kb.andi(it, 1), kb.i32(1)));
              mbarrierArriveExpectTx(kb, doFull, doTileBytes());
            }
            for (int64_t p = 0; p < tileDim / 64; ++p)
              tmaLoad4d(kb, ringTile(kb, doRing, doStage, p), arg("do_tmap"),
                        {kb.i32(64 * p), q0, head, batch}, doFull);
          });
          scf::YieldOp::create(b, loc);
        });
  });
}

template <typename Fn> void HopperBackwardEmitter::withFreshScalars(Fn body) {
  SmallVector<Value *> scalars = {&batch, &kvHead,  &groupSize, &qStart,
                                  &qSteps, &seqQ,  &headsQ,    &lane};
  SmallVector<Value> saved;
  for (Value *v : scalars)
    saved.push_back(*v);
  for (auto [v, fresh] : llvm::zip(scalars, kb.pin(saved)))
    *v = fresh;
  body();
  for (auto [v, old] : llvm::zip(scalars, saved))
    *v = old;
}

/// Per step, LSE·log2e (+inf for rows past Nq and rows that saw no key, so
/// that P = 0) and Δ (0 past Nq) of the step's query rows into the shared
/// stage, one arrival per lane on the stage's "full" barrier.
void HopperBackwardEmitter::emitLseLoader() {
  Value inf = kb.f32(std::numeric_limits<double>::infinity());
  Value negInf = kb.f32(-std::numeric_limits<double>::infinity());
  scf::ForOp::create(
      b, loc, kb.i32(0), numSteps, kb.i32(1), ValueRange{},
      [&](OpBuilder &, Location, Value it, ValueRange) {
        withFreshScalars([&] {
          auto [head, q0] = stepAt(it);
          Value stage = stageOf(it);
          mbarrierWait(kb, barrierAt(emptySlot(), stage),
                       kb.xori(parityOf(it), kb.i32(1)));
          Value lseBase = headBase("lse", b.getF32Type(), head);
          Value deltaBase = deltaBaseOf(it);
          // Rows are clamped to Nq − 1 so that every load is in bounds.
          Value lastRow = kb.sub(seqQ, kb.i32(1));
          Value dst = kb.gepBytes(lseRing,
                                  kb.mul(stage, kb.i32(lseStageBytes())));
          for (int64_t e = 0, n = llvm::divideCeil(config.blockM, 32); e < n; ++e) {
            Value r = kb.add(lane, kb.i32(32 * e));
            auto load = [&] {
              Value row = kb.add(q0, r);
              Value inRange = kb.slt(row, seqQ);
              Value at = kb.sext64(kb.minsi(row, lastRow));
              Value lse = LLVM::LoadOp::create(
                  b, loc, b.getF32Type(),
                  kb.gep(lseBase, b.getF32Type(), at));
              lse = kb.select(kb.feq(lse, negInf), inf,
                              kb.fmul(lse, kb.f32(M_LOG2E)));
              Value delta = LLVM::LoadOp::create(
                  b, loc, b.getF32Type(),
                  kb.gep(deltaBase, b.getF32Type(), at));
              LLVM::StoreOp::create(b, loc, kb.select(inRange, lse, inf),
                                    kb.gep(dst, b.getF32Type(), r));
              LLVM::StoreOp::create(
                  b, loc, kb.select(inRange, delta, kb.f32(0.0)),
                  kb.gep(dst, b.getF32Type(),
                         kb.add(r, kb.i32(config.blockM))));
            };
            // Block-m 80: the last 32 lanes' pass holds 16 rows.
            if (32 * (e + 1) <= config.blockM)
              load();
            else
              ifThen(kb, kb.slt(r, kb.i32(config.blockM)), load);
          }
          mbarrierArrive(kb, barrierAt(fullSlot(), stage));
        });
        scf::YieldOp::create(b, loc);
      });
}

/// Per step, once every consumer stored its dQ slice: one
/// cp.reduce.async.bulk add of the tile's rows < Nq (contiguous in the f32
/// accumulator) by lane 0, then the tile is released once read (once
/// written, when deterministic).
/// Deterministic: key block n adds each turnRows-row slice of its tile of
/// query block m (lane s, slice s) only once the slice's semaphore reads
/// n's turn (waitForTurn: its index among the key blocks that visit m, in
/// ascending or descending order), and then increments it, so every
/// element of dQ is summed in key-block order. The key blocks that visit
/// m are contiguous (the band's edges are monotone in the key), and the
/// block a turn waits for is launched first (KeyTiles and the causal
/// renumbering take a head's key blocks in order, the descending turns
/// in reverse), so the wait ends.
void HopperBackwardEmitter::emitDqWriter(Value firstStep) {
  int64_t syncThreads = 128 + 32;
  auto releaseTile = [&](Value buffer) {
    for (int64_t c = 0; c < config.consumers(); ++c)
      namedBarrierArrive(kb, dqBarrier(kDqEmptyBarrier, buffer, kb.i32(c)),
                         syncThreads);
  };
  ifThen(kb, kb.slt(firstStep, numSteps),
         [&] { releaseTile(dqBufferOf(firstStep)); });
  scf::ForOp::create(
      b, loc, firstStep, numSteps, kb.i32(dqBuffers()), ValueRange{},
      [&](OpBuilder &, Location, Value it, ValueRange) {
        Value buffer = dqBufferOf(it);
        for (int64_t c = 0; c < config.consumers(); ++c)
          namedBarrierSync(kb, dqBarrier(kDqFullBarrier, buffer, kb.i32(c)),
                           syncThreads);
        // Offsets from the region's start (BackwardWorkspace.h's layout),
        // one address computation each. Atomic: lane 0 adds the tile.
        // Deterministic: lane s adds the tile's slice s of turnRows rows
        // under that slice's own turn, so the slices' waits, reductions
        // and fences overlap.
        int64_t sliceRows =
            config.deterministic ? config.turnRows : config.blockM;
        assert(config.blockM % sliceRows == 0 &&
               config.blockM / sliceRows <= 32 && "a lane per slice");
        bool sliced = sliceRows != config.blockM;
        Value q0 = stepAt(it).second;
        Value rowStart =
            sliced ? kb.add(q0, kb.mul(lane, kb.i32(sliceRows))) : q0;
        Value active =
            sliced ? arith::AndIOp::create(
                         b, loc,
                         kb.slt(lane, kb.i32(config.blockM / sliceRows)),
                         kb.slt(rowStart, seqQ))
                         .getResult()
                   : eq(kb, lane, kb.i32(0));
        ifThen(kb, active, [&] {
          Value seqQ4 = paddedSeqQ(kb, seqQ);
          Value rows = kb.minsi(kb.sub(seqQ, rowStart), kb.i32(sliceRows));
          Value region = deltaBaseOf(it);
          Value dst =
              kb.gep(region, b.getF32Type(),
                     kb.add(kb.zext64(seqQ4),
                            kb.mul(kb.sext64(rowStart),
                                   kb.i64(spec.headDim))));
          Value semaphore;
          if (config.deterministic) {
            semaphore = sliceSemaphore(region, rowStart, sliceRows);
            waitForTurn(semaphore, q0, it);
          }
          Value src = dqTileOf(buffer);
          if (sliced)
            src = kb.gepBytes(src, kb.mul(lane, kb.i32(sliceRows *
                                                       spec.headDim * 4)));
          attn_gpu::BulkReduceAddOp::create(
              b, loc, dst, src, kb.mul(rows, kb.i32(spec.headDim * 4)));
          NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
          // Deterministic: the reduction's writes, not only its reads, are
          // done before the turn passes and the buffer is released
          // (releasing it after the reads and passing the turn after the
          // writes was slower on the H200: bench/results/
          // 2026-12-02-bwd-deterministic-ordered.md).
          NVVM::CpAsyncBulkWaitGroupOp::create(
              b, loc, 0, config.deterministic ? UnitAttr() : b.getUnitAttr());
          if (config.deterministic)
            passTurn(semaphore);
        });
        // The consumers wait once per step: no release of a buffer after
        // its last step.
        ifThen(kb, kb.slt(kb.add(it, kb.i32(dqBuffers())), numSteps),
               [&] { releaseTile(buffer); });
        scf::YieldOp::create(b, loc);
      });
  ifThen(kb, eq(kb, lane, kb.i32(0)), [&] {
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, UnitAttr());
  });
}

void HopperBackwardEmitter::waitForTurn(Value semaphore, Value q0, Value it,
                                        int64_t arrivals) {
  // Ascending: key block n adds after n − 1, from the first block that
  // visits query block q0: a key_range's start skips the blocks before it,
  // and so does a window's left edge (the block of key d(q0) − left, as
  // backwardQueryWalk's end: no earlier block reaches the block's rows).
  Value turn;
  if (descendingTurns()) {
    // Descending, from the last block that visits q0: the last whose
    // walk starts at or before q0 (backwardQueryWalk's qStart: the block
    // of key d(q0 + blockM − 1) + right), below Nk and the key range's
    // end. This block (kv0) visits q0, so both differences are >= 0.
    // Two values per block, not four: the dQ warp has 24 registers.
    Value rowEdge = kb.sub(
        kb.add(diagonal, kb.i32(config.blockM - 1 + spec.band.right)), kv0);
    Value lastBlockTurn = kb.divu(kb.sub(kb.sub(keyEnd, kb.i32(1)), kv0),
                                  kb.i32(config.blockN));
    turn = kb.minsi(kb.divu(kb.add(q0, rowEdge), kb.i32(config.blockN)),
                    lastBlockTurn);
  } else {
    Value firstKey = keyStart ? keyStart : kb.i32(0);
    if (spec.band.hasLeft())
      firstKey = kb.maxsi(
          firstKey, kb.sub(kb.add(q0, diagonal), kb.i32(spec.band.left)));
    turn = kb.sub(kb.divu(kv0, kb.i32(config.blockN)),
                  kb.divu(firstKey, kb.i32(config.blockN)));
    if (rotatedTurns()) {
      // Unit t = (it + n) mod T takes blocks t, t − 1, ... (cyclic, those
      // below Nb): block n's rank is min(t, Nb − 1) − n, plus Nb if n > t.
      Value unit = rotatedStep(it);
      auto [rotation, turnBlocks] = rotationOf();
      Value last = kb.sub(turnBlocks, kb.i32(1));
      Value rank = kb.sub(kb.minsi(unit, last), rotation);
      rank = kb.add(rank, kb.select(kb.slt(unit, rotation), turnBlocks,
                                    kb.i32(0)));
      turn = kb.select(kb.slt(kb.i32(0), turnBlocks), rank, turn);
    }
  }
  if (arrivals > 1)
    turn = kb.mul(turn, kb.i32(arrivals));
  auto spin = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(b.createBlock(&spin.getBefore()));
    Value seen = LLVM::LoadOp::create(
        b, loc, b.getI32Type(), semaphore, /*alignment=*/4,
        /*isVolatile=*/false, /*isNonTemporal=*/false, /*isInvariant=*/false,
        /*isInvariantGroup=*/false, LLVM::AtomicOrdering::acquire, "device");
    // Several arrivals per key block: the next block's may already have
    // started once this block's all came in, so wait for at least the turn.
    scf::ConditionOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc,
                              arrivals > 1 ? arith::CmpIPredicate::slt
                                  : arith::CmpIPredicate::ne,
                              seen, turn),
        ValueRange{});
    b.setInsertionPointToStart(b.createBlock(&spin.getAfter()));
    scf::YieldOp::create(b, loc);
  }
  // The previous block's additions (generic-proxy acquire) come before
  // this block's bulk reduction (async proxy).
  NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKind::async_global,
                             NVVM::SharedSpaceAttr());
}

void HopperBackwardEmitter::emitTurnKeeper() {
  scf::ForOp::create(
      b, loc, kb.i32(0), numSteps, kb.i32(1), ValueRange{},
      [&](OpBuilder &, Location, Value it, ValueRange) {
        Value q0 = stepAt(it).second;
        Value sliceRow = kb.add(q0, kb.shl(lane, 4));
        Value active = arith::AndIOp::create(
                           b, loc, kb.slt(lane, kb.i32(config.blockM / 16)),
                           kb.slt(sliceRow, seqQ))
                           .getResult();
        Value semaphore = sliceSemaphore(deltaBaseOf(it), sliceRow, 16);
        ifThen(kb, active, [&] {
          waitForTurn(semaphore, q0, it, config.consumers());
        });
        namedBarrierArrive(kb, turnBarrier(kTurnAcquiredBarrier, it),
                           turnBarrierThreads());
        // The consumers' additions happen before the barrier completes
        // (CTA scope); the release fence in passTurn is cumulative, so they
        // are visible at GPU scope before the increment.
        namedBarrierSync(kb, turnBarrier(kDqAddedBarrier, it),
                         turnBarrierThreads());
        ifThen(kb, active,
               [&] { passTurn(semaphore, config.consumers()); });
        scf::YieldOp::create(b, loc);
      });
}

Value HopperBackwardEmitter::sliceSemaphore(Value region, Value rowStart,
                                            int64_t sliceRows) {
  return kb.gep(
      region, b.getI32Type(),
      kb.add(kb.mul(kb.zext64(paddedSeqQ(kb, seqQ)),
                    kb.i64(::attn::runtime::backwardWorkspaceSemaphoresAt(
                        spec.headDim))),
             kb.zext64(kb.divu(rowStart, kb.i32(sliceRows)))));
}

void HopperBackwardEmitter::passTurn(Value semaphore, int64_t arrivals) {
  NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKind::async_global,
                             NVVM::SharedSpaceAttr());
  // NVPTX (LLVM 22) emits a release atomicrmw as a relaxed atom: the fence
  // (fence.acq_rel.gpu, lighter than membar.gl's fence.sc.gpu) orders the
  // additions before the increment.
  LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::release, "device");
  LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::add, semaphore,
                            kb.i32(arrivals), LLVM::AtomicOrdering::release,
                            "device", /*alignment=*/4);
}

SmallVector<Value> HopperBackwardEmitter::sharedColumns(Value stage,
                                                        int64_t offsetBytes,
                                                        int64_t cols) {
  Value within = kb.add(kb.i32(offsetBytes), kb.shl(t, 3));
  if (config.splitHeadDim)
    within = kb.add(within, kb.mul(consumer, kb.i32(cols * 4)));
  Value base = kb.gepBytes(
      lseRing, kb.add(kb.mul(stage, kb.i32(lseStageBytes())), within));
  Type pair = VectorType::get({2}, b.getF32Type());
  SmallVector<Value> out;
  for (int64_t j = 0; j < cols / 8; ++j) {
    Value v = LLVM::LoadOp::create(b, loc, pair,
                                   kb.gepBytes(base, kb.i32(32 * j)), 8);
    for (int64_t e = 0; e < 2; ++e)
      out.push_back(LLVM::ExtractElementOp::create(b, loc, v, kb.i32(e)));
  }
  return out;
}

/// The tile is [query row][head dim] f32; consumer c writes columns
/// [c·D/2, (c + 1)·D/2) of the step's buffer (at block-m 128: rows
/// [64c, 64c + 64)) once the dQ warp has added what the buffer held
/// before.
void HopperBackwardEmitter::storeDq(ArrayRef<Value> dq, Value dqStep) {
  int64_t dqCols = this->dqCols();
  int64_t syncThreads = 128 + 32;
  Value buffer = dqBufferOf(dqStep);
  namedBarrierSync(kb, dqBarrier(kDqEmptyBarrier, buffer, consumer),
                   syncThreads);
  Type pair = VectorType::get({2}, b.getF32Type());
  if (transposedDq())
    storeDqTransposed(dq, dqTileOf(buffer));
  for (int h = 0; h < 2 && !transposedDq(); ++h) {
    Value row =
        kb.add(kb.mul(warpInGroup, kb.i32(16)), kb.add(g, kb.i32(8 * h)));
    Value col = kb.shl(t, 1);
    Value firstCol;
    if (splitDqRows()) {
      row = kb.add(row, kb.mul(consumer, kb.i32(64)));
    } else {
      firstCol = consumerCol0();
      col = kb.add(firstCol, col);
    }
    Value rowPtr = kb.gepBytes(
        dqTileOf(buffer),
        kb.add(kb.mul(row, kb.i32(spec.headDim * 4)), kb.shl(col, 2)));
    for (int64_t j = 0; j < dqCols / 8; ++j)
      ifStoredColumns(firstCol, 8 * j, [&] {
        Value v = LLVM::UndefOp::create(b, loc, pair);
        v = LLVM::InsertElementOp::create(b, loc, v, dq[4 * j + 2 * h],
                                          kb.i32(0));
        v = LLVM::InsertElementOp::create(b, loc, v, dq[4 * j + 2 * h + 1],
                                          kb.i32(1));
        LLVM::StoreOp::create(b, loc, v, kb.gepBytes(rowPtr, kb.i32(32 * j)),
                              8);
      });
  }
  // The generic-proxy stores become visible to the bulk copy (async proxy).
  fenceProxyAsyncShared(kb);
  namedBarrierArrive(kb, dqBarrier(kDqFullBarrier, buffer, consumer),
                     syncThreads);
}

SmallVector<Value> HopperBackwardEmitter::issueABt(Value aTile,
                                                   int64_t aPanelBytes,
                                                   Value bTile,
                                                   int64_t bPanelBytes,
                                                   int64_t depth,
                                                   ValueRange acc,
                                                   int64_t cols) {
  // This consumer's 64 rows of each A panel (the head-dim split: the
  // block's 64, shared).
  Value aDesc = wgmmaDescriptor(
      kb,
      config.splitHeadDim
          ? aTile
          : kb.gepBytes(aTile, kb.mul(consumer, kb.i32(64 * kPanelRowBytes))),
      16, 8 * kPanelRowBytes);
  Value bDesc = wgmmaDescriptor(kb, bTile, 16, 8 * kPanelRowBytes);
  Value c = kb.fragment(accumulator(cols), acc);
  for (int64_t kk = 0; kk < depth / 16; ++kk) {
    int64_t panel = kk / 4, within = (kk % 4) * 32;
    c = warpgroupMma(
        kb, wgmmaDescriptorAdvance(kb, aDesc, panel * aPanelBytes + within),
        wgmmaDescriptorAdvance(kb, bDesc, panel * bPanelBytes + within), c,
        /*accumulate=*/kk > 0, /*transposeB=*/false, elt);
  }
  return kb.registers(c);
}

SmallVector<Value> HopperBackwardEmitter::issueRegisterABt(
    Value aFrag, Value bTile, int64_t bPanelBytes, int64_t depth,
    ValueRange acc, int64_t cols) {
  Value bDesc = wgmmaDescriptor(kb, bTile, 16, 8 * kPanelRowBytes);
  Value c = kb.fragment(accumulator(cols), acc);
  for (int64_t kk = 0; kk < depth / 16; ++kk) {
    int64_t panel = kk / 4, within = (kk % 4) * 32;
    c = warpgroupMma(
        kb, aFrag,
        wgmmaDescriptorAdvance(kb, bDesc, panel * bPanelBytes + within), c,
        /*accumulate=*/kk > 0, /*transposeB=*/false, Type(), kk);
  }
  return kb.registers(c);
}

/// ldmatrix.x4 per k-step: lane l reads row l % 8 + 8·(l / 8 % 2) of the
/// warp's 16 and 16-byte chunk l / 16 of the step's 32 bytes, so that its
/// four registers are the step's (g, 2t), (g + 8, 2t), (g, 8 + 2t),
/// (g + 8, 8 + 2t) pairs, the A-operand order. The swizzle XORs the chunk
/// with the row % 8 (= l % 8: warpKey0 is a multiple of 16).
Value HopperBackwardEmitter::loadOperandA(Value tile, int64_t depth) {
  Value row = kb.add(warpKey0, kb.add(kb.andi(lane, 7),
                                      kb.shl(kb.andi(kb.lshr(lane, 3), 1), 3)));
  Value rowPtr = kb.gepBytes(tile, kb.mul(row, kb.i32(kPanelRowBytes)));
  Value half = kb.lshr(lane, 4);
  SmallVector<Value> regs;
  for (int64_t kk = 0; kk < depth / 16; ++kk) {
    Value chunk = kb.xori(kb.add(half, kb.i32(2 * (kk % 4))), kb.andi(lane, 7));
    Value at = kb.add(kb.i32(kk / 4 * kvPanelBytes()), kb.shl(chunk, 4));
    llvm::append_range(regs, kb.ldmatrixX4(kb.gepBytes(rowPtr, at), false));
  }
  return kb.fragment(
      attn_gpu::FragmentType::getOperandA(elt, depth), regs);
}

SmallVector<Value> HopperBackwardEmitter::capAndMask(SmallVector<Value> s,
                                                     ScoreRows rows,
                                                     Value firstQuery,
                                                     Value keyOffset,
                                                     int64_t queries,
                                                     int64_t cols) {
  // Softcap: S becomes t = tanh(S·scale / C) before the mask, P's constant
  // is C·log2e, and dS takes the cap's derivative 1 − t².
  if (spec.softcap > 0) {
    Value inner = kb.fmul(arg("softmax_scale"), kb.f32(1.0 / spec.softcap));
    for (Value &v : s)
      v = attn_gpu::TanhOp::create(b, loc, kb.fmul(v, inner));
  }

  // Register 4·j + e holds key key + kOff and query query + qOff, where
  // key and query are this thread's first (built by the lambdas below, in
  // the branch that needs them) and kOff, qOff are its row offset 8·(e/2)
  // and column offset 8·j + e%2, one each as `rows` says. The band:
  // d(query) − left <= key <= d(query) + right (d(i) = i + diagonal), i.e.
  //   right: kOff − qOff <= query + diagonal + right − key;
  //   left:  qOff − kOff <= left − diagonal − query + key;
  // the keys past Nk: kOff <= Nk − key − 1; key_range: −kOff <= key −
  // start. maskFragment's (col, row) are kOff's and qOff's coefficients.
  // Blocks clear of an edge skip its compares.
  bool keyRows = rows == ScoreRows::keys;
  int64_t keyCol = keyRows ? 0 : 1, keyRow = keyRows ? 1 : 0;
  int64_t queryCol = 1 - keyCol, queryRow = 1 - keyRow;
  auto rowLane = [&] { return kb.add(warpKey0, g); };
  auto colLane = [&] { return kb.shl(t, 1); };
  auto firstKey = [&] { return keyOffset ? kb.add(kv0, keyOffset) : kv0; };
  auto key = [&] {
    return keyRows ? kb.add(kb.add(firstKey(), warpKey0), g)
                   : kb.add(firstKey(), colLane());
  };
  // query + diagonal (+ right) − key, with `reach` = firstQuery + diagonal
  // (+ right).
  auto reachMinusKey = [&](Value reach) {
    return keyRows ? kb.add(kb.sub(kb.sub(reach, kb.add(firstKey(), warpKey0)),
                                   g),
                            colLane())
                   : kb.sub(kb.add(reach, kb.sub(rowLane(), colLane())),
                            firstKey());
  };
  Value sTile = kb.fragment(accumulator(cols), s);
  if (spec.band.hasRight()) {
    Value reach = kb.add(firstQuery, diagonal);
    if (spec.band.right)
      reach = kb.add(reach, kb.i32(spec.band.right));
    sTile = maskFragment(
        kb, sTile, kb.slt(reach, kb.add(kv0, kb.i32(config.blockN - 1))),
        [&] { return reachMinusKey(reach); }, keyCol - queryCol,
        keyRow - queryRow);
  }
  if (spec.band.hasLeft()) {
    // The lowest key the block's last query sees.
    Value lowest = kb.sub(kb.add(firstQuery, diagonal),
                          kb.i32(spec.band.left - (queries - 1)));
    sTile = maskFragment(
        kb, sTile, kb.slt(kv0, lowest),
        [&] {
          Value left =
              kb.sub(kb.i32(spec.band.left), kb.add(firstQuery, diagonal));
          return keyRows ? kb.sub(kb.add(left, key()), colLane())
                         : kb.sub(kb.add(left, firstKey()),
                                  kb.sub(rowLane(), colLane()));
        },
        queryCol - keyCol, queryRow - keyRow);
  }
  sTile = maskFragment(
      kb, sTile, kb.slt(keyEnd, kb.add(kv0, kb.i32(config.blockN))),
      [&] {
        return keyRows ? kb.sub(kb.sub(keyEnd, kb.add(firstKey(), warpKey0)),
                                kb.add(g, kb.i32(1)))
                       : kb.sub(kb.sub(keyEnd, firstKey()),
                                kb.add(colLane(), kb.i32(1)));
      },
      keyCol, keyRow);
  if (keyStart)
    sTile = maskFragment(
        kb, sTile, kb.slt(kv0, keyStart),
        [&] { return kb.sub(key(), keyStart); }, -keyCol, -keyRow);
  return kb.registers(sTile);
}

SmallVector<Value> HopperBackwardEmitter::probabilities(
    ArrayRef<Value> scores, Value stage, Value qCol0, int64_t cols,
    Value cScale, const std::optional<AlibiTerm> &alibi) {
  SmallVector<Value> lse = sharedColumns(stage, 0, cols);
  SmallVector<Value> p(scores);
  // Register 4·j + e: query qCol0 + 8·j + 2t + e%2, key kv0 + warpKey0 + g
  // + 8·(e/2).
  Value alibiBase;
  if (alibi)
    alibiBase = alibi->rowBase(
        kb.sub(kb.add(kb.add(qCol0, diagonal), kb.shl(t, 1)),
               kb.add(kb.add(kv0, warpKey0), g)));
  for (int64_t j = 0; j < cols / 8; ++j)
    for (int e = 0; e < 4; ++e) {
      Value negLse = arith::NegFOp::create(b, loc, lse[2 * j + (e & 1)]);
      Value &v = p[4 * j + e];
      if (alibi)
        v = alibi->apply(v, alibiBase, 8 * j + (e & 1) - 8 * (e / 2));
      v = kb.exp2(LLVM::FMAOp::create(b, loc, v, cScale, negLse));
    }
  return p;
}

SmallVector<Value> HopperBackwardEmitter::packA(ArrayRef<Value> x,
                                                int64_t cols) {
  return kb.registers(attn_gpu::ToOperandOp::create(
      b, loc, attn_gpu::FragmentType::getOperandA(elt, cols),
      kb.fragment(accumulator(cols), x)));
}

SmallVector<Value> HopperBackwardEmitter::scoreGradient(
    SmallVector<Value> p, ArrayRef<Value> capT, ArrayRef<Value> dp,
    ArrayRef<Value> delta,
    function_ref<SmallVector<Value>(ArrayRef<Value>)> recompute) {
  if (!capT.empty()) {
    // P again, times 1 − min(t², 1): a masked t is −inf (P = 0), for which
    // 1 − t² would make 0 · −inf.
    p = recompute(capT);
    for (size_t i = 0; i < p.size(); ++i)
      p[i] = kb.fmul(p[i], kb.fsub(kb.f32(1.0),
                                   arith::MinimumFOp::create(
                                       b, loc, kb.fmul(capT[i], capT[i]),
                                       kb.f32(1.0))));
  }
  for (size_t j = 0; j < p.size() / 4; ++j)
    for (int e = 0; e < 4; ++e)
      p[4 * j + e] = kb.fmul(p[4 * j + e],
                             kb.fsub(dp[4 * j + e], delta[2 * j + (e & 1)]));
  return p;
}

/// One 128-byte row per key in each 64-query panel (two at blockM 128):
/// the pair of query chunk c of key row r goes to panel c / 8, r·128 +
/// ((c % 8 ^ r % 8)·16) + 4t.
void HopperBackwardEmitter::storeTransposed(Value tile, ArrayRef<Value> frags,
                                            Value firstChunk) {
  for (int h = 0; h < 2; ++h) {
    Value row = kb.add(warpKey0, kb.add(g, kb.i32(8 * h)));
    Value rowPtr = kb.gepBytes(
        tile, kb.add(kb.mul(row, kb.i32(kPanelRowBytes)), kb.shl(t, 2)));
    for (size_t j = 0; j < frags.size() / 2; ++j) {
      // Query chunks past 8 go to the next 64-query panel.
      Value chunk = kb.i32(j % 8);
      if (firstChunk)
        chunk = kb.add(chunk, firstChunk);
      chunk = kb.xori(chunk, g); // row % 8 == g
      Value at = kb.shl(chunk, 4);
      if (j >= 8)
        at = kb.add(at, kb.i32(j / 8 * dsPanelBytes()));
      LLVM::StoreOp::create(b, loc, frags[2 * j + h], kb.gepBytes(rowPtr, at));
    }
  }
}

/// Register 4·j + e: head-dim row 64c + 16w + g + 8·(e / 2), query column
/// 8·j + 2t + e % 2; the f32 tile is [query][D].
void HopperBackwardEmitter::storeDqTransposed(ArrayRef<Value> dq,
                                              Value tile) {
  int64_t rowBytes = spec.headDim * 4;
  for (int h = 0; h < 2; ++h) {
    // warpKey0 = 64c + 16w: consumer c's dQᵀ rows are its key rows' numbers.
    Value d = kb.add(warpKey0, kb.add(g, kb.i32(8 * h)));
    auto store = [&] {
      Value colPtr = kb.gepBytes(
          tile, kb.add(kb.shl(d, 2), kb.mul(kb.shl(t, 1), kb.i32(rowBytes))));
      for (int64_t j = 0; j < dqCols() / 8; ++j)
        for (int e = 0; e < 2; ++e)
          LLVM::StoreOp::create(
              b, loc, dq[4 * j + 2 * h + e],
              kb.gepBytes(colPtr, kb.i32((8 * j + e) * rowBytes)), 4);
    };
    // Head-dim rows past D (the last 64-row panel of a D < 128) are padding.
    if (spec.headDim % 64 == 0)
      store();
    else
      ifThen(kb, kb.slt(d, kb.i32(spec.headDim)), store);
  }
}

/// One step: query block q0 of query head `head` against this consumer's
/// 64 keys. Carried: dK (D / 2 registers) then dV (Dv / 2).
SmallVector<Value> HopperBackwardEmitter::emitStep(Value it,
                                                   ValueRange carried) {
  // Lane coordinates, tile bases and the consumer index, re-read per step:
  // otherwise LLVM hoists every descriptor and fragment offset derived
  // from them out of the loop, and those dozens of registers stay live
  // next to the accumulators (ptxas then spills).
  Value tLoop = t, gLoop = g, kTileLoop = kTile, vTileLoop = vTile;
  Value consumerLoop = consumer, warpKey0Loop = warpKey0;
  SmallVector<Value> fresh = kb.pin(
      {tLoop, gLoop, consumerLoop, warpKey0Loop, kTileLoop, vTileLoop});
  t = fresh[0];
  g = fresh[1];
  consumer = fresh[2];
  warpKey0 = fresh[3];
  kTile = fresh[4];
  vTile = fresh[5];
  if (config.transposedDkv()) {
    Value at = LLVM::LoadOp::create(b, loc, b.getI64Type(),
                                    barrierAt(kTileSlot(), Value()), 8,
                                    /*isVolatile=*/true);
    kTile = LLVM::IntToPtrOp::create(b, loc, kTileLoop.getType(), at);
    vTile = kb.gepBytes(kTile, kb.i32(kTileBytes()));
  }
  SmallVector<Value> out = config.transposedDkv()
                               ? emitTransposedStepBody(it, carried)
                           : config.splitHeadDim
                               ? emitSplitStepBody(it, carried)
                               : emitStepBody(it, carried);
  t = tLoop, g = gLoop, kTile = kTileLoop, vTile = vTileLoop;
  consumer = consumerLoop, warpKey0 = warpKey0Loop;
  return out;
}

SmallVector<Value> HopperBackwardEmitter::emitStepBody(Value it,
                                                       ValueRange carried) {
  auto [head, q0] = stepAt(it);
  Value stage = stageOf(it);
  Value qTile = ringTile(kb, qRing, stage);
  Value doTile = ringTile(kb, doRing, stage);
  int64_t sRegs = config.blockM / 2;
  size_t dkRegs = tileDim / 2, dvRegs = tileDim / 2;
  std::optional<AlibiTerm> alibi = alibiOf(head);

  // Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ, two commit groups.
  mbarrierWait(kb, barrierAt(fullSlot(), stage), parityOf(it));
  SmallVector<Value> fenced =
      wgmmaFence(kb, SmallVector<Value>(2 * sRegs, kb.undefF32()));
  auto issueScores = [&](Value aTile, Value aFrag, Value bTile,
                         int64_t depth, ValueRange acc) {
    return aFrag ? issueRegisterABt(aFrag, bTile, qPanelBytes(), depth, acc,
                                    config.blockM)
                 : issueABt(aTile, kvPanelBytes(), bTile, qPanelBytes(),
                            depth, acc, config.blockM);
  };
  SmallVector<Value> s = issueScores(kTile, kFrag, qTile, scoreDepth(),
                                     ArrayRef(fenced).take_front(sRegs));
  wgmmaCommitGroup(kb);
  SmallVector<Value> dp = issueScores(vTile, vFrag, doTile, valueDepth(),
                                      ArrayRef(fenced).slice(sRegs, sRegs));
  wgmmaCommitGroup(kb);
  s = wgmmaWaitGroup(kb, 1, s);
  s = capAndMask(std::move(s), ScoreRows::keys, q0, Value(), config.blockM,
                 config.blockM);
  bool softcap = spec.softcap > 0;

  // Pᵀ = exp2(Sᵀ·c − LSE·log2e), LSE·log2e of this thread's query columns
  // 8·j + 2t + {0, 1} read only now (after the mask: fewer live registers).
  // Softcap: the masked t stay in s (the derivative needs them) and P is
  // recomputed from them for dSᵀ: keeping both P and t spilled at D = 128.
  // ALiBi's term joins P's exponent here, after the mask (a masked −inf
  // stays −inf), so that the softcap's t in s stay the cap's alone.
  Value cScale =
      backwardSoftmaxConstant(kb, arg("softmax_scale"), spec.softcap);
  auto probabilities = [&](ArrayRef<Value> scores) {
    return this->probabilities(scores, stage, q0, config.blockM, cScale,
                               alibi);
  };
  SmallVector<Value> capT;
  if (softcap)
    capT = std::exchange(s, probabilities(s));
  else
    s = probabilities(s);
  auto pack = [&](ArrayRef<Value> x) { return packA(x, config.blockM); };
  SmallVector<Value> pFrags = pack(s);

  // dV += Pᵀ·dO and dK += dSᵀ·Q: A from registers, B MN-major (the query
  // is the reduction dim; the leading offset steps between 64-column
  // panels, the stride between groups of 8 query rows). With the in-step
  // dQ, dV is issued right away, so that it runs under the dSᵀ work
  // (+3-13% at D = 128); with the pipelined dQ, dQ(j − 1), dV and dK go
  // together after dSᵀ.
  bool dvEarly = !pipelined();
  Value doDesc = ringDescriptor(kb, doRing, stage, /*mnMajor=*/true);
  Value qDesc = ringDescriptor(kb, qRing, stage, /*mnMajor=*/true);
  SmallVector<Value> dV, pF;
  auto issueDv = [&] {
    Value a = kb.fragment(
        attn_gpu::FragmentType::getOperandA(elt, config.blockM), pF);
    Value acc = kb.fragment(accumulator(tileDim), dV);
    for (int64_t kk = 0; kk < config.blockM / 16; ++kk)
      acc = warpgroupMma(
          kb, a,
          wgmmaDescriptorAdvance(kb, doDesc, kk * 16 * kPanelRowBytes), acc,
          /*accumulate=*/true, /*transposeB=*/true, Type(), kk);
    dV = kb.registers(acc);
  };
  if (dvEarly) {
    SmallVector<Value> regs(carried.begin() + dkRegs, carried.end());
    regs.append(pFrags);
    regs = wgmmaFence(kb, regs);
    dV.assign(regs.begin(), regs.begin() + dvRegs);
    pF.assign(regs.begin() + dvRegs, regs.end());
    issueDv();
    wgmmaCommitGroup(kb);
  }

  // dSᵀ = Pᵀ ∘ (dPᵀ − Δ). Pending behind dPᵀ: dV when issued early.
  dp = wgmmaWaitGroup(kb, dvEarly ? 1 : 0, dp);
  SmallVector<Value> delta =
      sharedColumns(stage, config.blockM * 4, config.blockM);
  s = scoreGradient(std::move(s), capT, dp, delta, probabilities);
  SmallVector<Value> dsFrags = pack(s);

  // dSᵀ to shared memory for dQ. Pipelined: once the other consumer's
  // dQ(j − 2) no longer reads the tile and its dSᵀ(j − 1) is stored (the
  // wait before the store: 2026-12-04's first version waited after it,
  // and dQ came out wrong 3 times in 138 checks at D = 96-128).
  Value dsStage = kb.andi(it, 1);
  if (pipelined())
    waitForOtherDs(it);
  if (transposedDq())
    // warpKey0 = 64c + 16w: the warp's keys are chunks 2w and 2w + 1 of
    // panel c.
    storeTransposedPairs(
        kb.gepBytes(ringTile(kb, dsRing, dsStage),
                    kb.mul(consumer, kb.i32(qPanelBytes()))),
        dsFrags, kb.i32(0), kb.andi(kb.lshr(warpKey0, 3), 7));
  else
    storeTransposed(ringTile(kb, dsRing, dsStage), dsFrags, Value());
  // The generic-proxy stores become visible to wgmma (the async proxy).
  fenceProxyAsyncShared(kb);

  SmallVector<Value> regs(carried.begin(), carried.begin() + dkRegs);
  if (!dvEarly) {
    regs.append(carried.begin() + dkRegs, carried.end());
    regs.append(pFrags);
  }
  regs.append(dsFrags);
  // Pipelined: dQ(j − 1) = dS(j − 1)·K first, so that it is stored while
  // dV and dK run (step 0 multiplies the unwritten tile and discards the
  // result: no branch around in-flight registers).
  SmallVector<Value> dqPrev;
  if (pipelined())
    regs.append(dqRegs(), kb.undefF32());
  regs = wgmmaFence(kb, regs);
  if (pipelined()) {
    dqPrev = issueDq(kb.andi(kb.add(it, kb.i32(1)), 1),
                     ArrayRef(regs).take_back(dqRegs()));
    wgmmaCommitGroup(kb);
    regs.resize(regs.size() - dqRegs());
  }
  SmallVector<Value> dK(regs.begin(), regs.begin() + dkRegs);
  if (!dvEarly) {
    dV.assign(regs.begin() + dkRegs, regs.begin() + dkRegs + dvRegs);
    pF.assign(regs.begin() + dkRegs + dvRegs,
              regs.begin() + dkRegs + dvRegs + pFrags.size());
    issueDv();
  }
  SmallVector<Value> dsF(regs.end() - dsFrags.size(), regs.end());
  bool inStepDq = !pipelined();
  SmallVector<Value> dq;
  auto issueInStepDq = [&] {
    // Every consumer's dSᵀ rows are in shared memory.
    namedBarrierSync(kb, kb.i32(kConsumerBarrier), 128 * config.consumers());
    dq = wgmmaFence(kb, SmallVector<Value>(dqRegs(), kb.undefF32()));
    dq = issueDq(dsStage, dq);
    wgmmaCommitGroup(kb);
  };
  // dQ before dK: dQ is stored while dK still runs.
  bool dqFirst = inStepDq && config.dqBeforeDk;
  if (dqFirst)
    issueInStepDq();
  {
    Value a = kb.fragment(
        attn_gpu::FragmentType::getOperandA(elt, config.blockM), dsF);
    Value acc = kb.fragment(accumulator(tileDim), dK);
    for (int64_t kk = 0; kk < config.blockM / 16; ++kk)
      acc = warpgroupMma(
          kb, a, wgmmaDescriptorAdvance(kb, qDesc, kk * 16 * kPanelRowBytes),
          acc, /*accumulate=*/true, /*transposeB=*/true, Type(), kk);
    dK = kb.registers(acc);
  }
  wgmmaCommitGroup(kb);

  if (pipelined()) {
    // dQ(j − 1) is stored while dV/dK run (still pending).
    dqPrev = wgmmaWaitGroup(kb, 1, dqPrev);
    ifThen(kb, kb.slt(kb.i32(0), it),
           [&] { storeDq(dqPrev, kb.sub(it, kb.i32(1))); });
  }
  if (inStepDq && !dqFirst)
    issueInStepDq();
  if (dqFirst) {
    // dV and dQ are complete, dK is pending: store dQ under it.
    SmallVector<Value> done(dV);
    done.append(dq);
    done.append(pF.begin(), pF.end());
    done = wgmmaWaitGroup(kb, 1, done);
    dV.assign(done.begin(), done.begin() + dvRegs);
    storeDq(ArrayRef(done).slice(dvRegs, dqRegs()), it);
    dq.clear();
  }

  // Wait for every group; the A fragments stay live until then.
  SmallVector<Value> waited(dK);
  waited.append(dV);
  waited.append(dq);
  if (!dqFirst)
    waited.append(pF.begin(), pF.end());
  waited.append(dsF.begin(), dsF.end());
  waited = wgmmaWaitGroup(kb, 0, waited);

  // Q, dO, LSE and Δ of this stage are no longer read: every thread
  // arrives, so that its own LSE/Δ loads are ordered before the release
  // (one arrival per warp after a warp barrier is not: racecheck reports
  // the LSE warp's next stores to the stage racing the other lanes' loads).
  mbarrierArrive(kb, barrierAt(emptySlot(), stage));

  if (inStepDq && !dqFirst)
    storeDq(ArrayRef(waited).slice(dkRegs + dvRegs, dqRegs()), it);
  // Pipelined: this consumer's dSᵀ(j) is in shared memory, and its
  // dQ(j − 1) no longer reads dSᵀ(j − 1), whose tile the other consumer
  // fills in step j + 1.
  if (pipelined())
    namedBarrierArrive(kb, dsReadyBarrier(consumer, kb.andi(it, 1)),
                       128 * config.consumers());
  waited.resize(dkRegs + dvRegs);
  return waited;
}

/// One step of the head-dim split: query block q0 of query head `head`
/// against the block's 64 keys. This consumer takes query columns
/// [32c, 32c + 32) of Sᵀ and dPᵀ, both consumers' Pᵀ and dSᵀ meet in
/// shared memory, and it accumulates head-dim columns [c·D/2, (c + 1)·D/2)
/// of dK, dV and dQ. Carried: dK (D / 4 registers) then dV (Dv / 4).
SmallVector<Value> HopperBackwardEmitter::emitSplitStepBody(Value it,
                                                            ValueRange carried) {
  auto [head, q0] = stepAt(it);
  Value stage = stageOf(it);
  int64_t cols = config.blockM / 2, sRegs = cols / 2;
  size_t dkRegs = tileDim / 4;
  Value qCol0 = kb.add(q0, kb.mul(consumer, kb.i32(cols)));
  // This consumer's query rows of each 64-column panel of Q and dO (B of
  // Sᵀ and dPᵀ, K-major).
  Value bRows = kb.mul(consumer, kb.i32(cols * kPanelRowBytes));
  std::optional<AlibiTerm> alibi = alibiOf(head);

  mbarrierWait(kb, barrierAt(fullSlot(), stage), parityOf(it));
  SmallVector<Value> fenced =
      wgmmaFence(kb, SmallVector<Value>(2 * sRegs, kb.undefF32()));
  SmallVector<Value> s = issueABt(
      kTile, kvPanelBytes(), kb.gepBytes(ringTile(kb, qRing, stage), bRows),
      qPanelBytes(), scoreDepth(), ArrayRef(fenced).take_front(sRegs), cols);
  wgmmaCommitGroup(kb);
  SmallVector<Value> dp = issueABt(
      vTile, kvPanelBytes(), kb.gepBytes(ringTile(kb, doRing, stage), bRows),
      qPanelBytes(), valueDepth(), ArrayRef(fenced).drop_front(sRegs),
      cols);
  wgmmaCommitGroup(kb);
  s = wgmmaWaitGroup(kb, 1, s);
  s = capAndMask(std::move(s), ScoreRows::keys, qCol0, Value(), cols, cols);
  Value cScale =
      backwardSoftmaxConstant(kb, arg("softmax_scale"), spec.softcap);
  auto probabilities = [&](ArrayRef<Value> scores) {
    return this->probabilities(scores, stage, qCol0, cols, cScale, alibi);
  };
  SmallVector<Value> capT;
  if (spec.softcap > 0)
    capT = std::exchange(s, probabilities(s));
  else
    s = probabilities(s);
  SmallVector<Value> pFrags = packA(s, cols);
  dp = wgmmaWaitGroup(kb, 0, dp);
  SmallVector<Value> delta = sharedColumns(stage, config.blockM * 4, cols);
  SmallVector<Value> dsFrags =
      packA(scoreGradient(std::move(s), capT, dp, delta, probabilities), cols);

  // Pᵀ and dSᵀ of this consumer's query chunks (8 queries of 16 bytes
  // each) into the step's tiles; both consumers' before either reads.
  Value buffer = kb.andi(it, 1);
  Value firstChunk = kb.mul(consumer, kb.i32(cols / 8));
  storeTransposed(ringTile(kb, pRing, buffer), pFrags, firstChunk);
  storeTransposed(ringTile(kb, dsRing, buffer), dsFrags, firstChunk);
  fenceProxyAsyncShared(kb);
  namedBarrierSync(kb, kb.i32(kConsumerBarrier), 128 * config.consumers());

  // dQ = dS·K, dV += Pᵀ·dO and dK += dSᵀ·Q, each for this consumer's half
  // of the head dim: three groups in flight, dQ first so that its adds
  // run under dV and dK.
  SmallVector<Value> regs = carried;
  regs.append(dqRegs(), kb.undefF32());
  regs = wgmmaFence(kb, regs);
  SmallVector<Value> dK(regs.begin(), regs.begin() + dkRegs);
  SmallVector<Value> dV(regs.begin() + dkRegs, regs.begin() + 2 * dkRegs);
  SmallVector<Value> dq(regs.begin() + 2 * dkRegs, regs.end());
  dq = issueDq(buffer, dq);
  wgmmaCommitGroup(kb);
  dV = issueSharedAB(pRing, buffer, doRing, stage, dV, tileDim / 2);
  wgmmaCommitGroup(kb);
  dK = issueSharedAB(dsRing, buffer, qRing, stage, dK, tileDim / 2);
  wgmmaCommitGroup(kb);
  dq = wgmmaWaitGroup(kb, 2, dq);
  addDqFromRegisters(dq, it);
  SmallVector<Value> waited(dK);
  waited.append(dV);
  waited = wgmmaWaitGroup(kb, 0, waited);
  // Q, dO, LSE and Δ of this stage are no longer read (every thread
  // arrives: see emitStepBody).
  mbarrierArrive(kb, barrierAt(emptySlot(), stage));
  return waited;
}

/// One step of the transposed-dkv schedule: query block q0 of query head
/// `head` against the block's blockN keys. Consumer c computes S and dP for
/// keys [key0, key0 + blockN / 2), key0 = c·blockN / 2, and both
/// consumers' P and dS meet in shared memory as [key][query] tiles; then c
/// issues, for its head-dim rows [128c, 128c + 128) (panels 2c and 2c + 1),
///   dQᵀ(2c) = Kᵀ·dSᵀ, dVᵀ += dOᵀ·P (both panels), dQᵀ(2c + 1), dKᵀ +=
///   Qᵀ·dS (both panels),
/// adding each dQᵀ panel from registers once it is done, so that one
/// 32-register dQᵀ panel is live next to dKᵀ and dVᵀ (160 registers).
SmallVector<Value>
HopperBackwardEmitter::emitTransposedStepBody(Value it, ValueRange carried) {
  auto [head, q0] = stepAt(it);
  Value stage = stageOf(it);
  int64_t keys = config.blockN / 2, sRegs = keys / 2;
  // Two 64-row panels of the head dim per consumer (tileDim is 256).
  int64_t tileRegs = config.blockN / 2, panels = 2;
  Value key0 = kb.mul(consumer, kb.i32(keys));
  Value keyRows = kb.mul(key0, kb.i32(kPanelRowBytes));
  Value qTile = ringTile(kb, qRing, stage);
  // dO's single stage, from the K tile's address read this step (ptxas
  // would otherwise keep its loop-invariant descriptors live: spills).
  Value doTile = kb.gepBytes(
      kTile, kb.i32(kTileBytes() + vTileBytes() + config.stages * qTileBytes()));
  std::optional<AlibiTerm> alibi = alibiOf(head);

  // S = Q·Kᵀ and dP = dO·Vᵀ of this consumer's keys: A = Q or dO (K-major),
  // B = its rows of K or V (K-major).
  mbarrierWait(kb, barrierAt(fullSlot(), stage), parityOf(it));
  SmallVector<Value> fenced =
      wgmmaFence(kb, SmallVector<Value>(2 * sRegs, kb.undefF32()));
  SmallVector<Value> sc =
      issueABt(qTile, qPanelBytes(), kb.gepBytes(kTile, keyRows),
               kvPanelBytes(), scoreDepth(),
               ArrayRef(fenced).take_front(sRegs), keys);
  wgmmaCommitGroup(kb);
  Value doParity = kb.andi(it, 1);
  mbarrierWait(kb, barrierAt(doFullSlot(), Value()), doParity);
  SmallVector<Value> dp =
      issueABt(doTile, qPanelBytes(), kb.gepBytes(vTile, keyRows),
               kvPanelBytes(), valueDepth(),
               ArrayRef(fenced).drop_front(sRegs), keys);
  wgmmaCommitGroup(kb);
  sc = wgmmaWaitGroup(kb, 1, sc);
  bool softcap = spec.softcap > 0;
  sc = capAndMask(std::move(sc), ScoreRows::queries, q0, key0, config.blockM,
                  keys);

  // P = exp2(S·c − LSE·log2e) (+ ALiBi's term) and dS = P∘(dP − Δ),
  // LSE·log2e and Δ of this thread's two query rows (16w + g + 8h of the
  // block).
  Value cScale =
      backwardSoftmaxConstant(kb, arg("softmax_scale"), spec.softcap);
  Value lseBase = kb.gepBytes(
      lseRing, kb.add(kb.mul(stage, kb.i32(lseStageBytes())),
                      kb.shl(kb.add(warpKey0, g), 2)));
  Value negLse[2], delta[2];
  for (int h = 0; h < 2; ++h) {
    Value at = kb.gepBytes(lseBase, kb.i32(32 * h));
    negLse[h] = arith::NegFOp::create(
        b, loc, LLVM::LoadOp::create(b, loc, b.getF32Type(), at, 4));
    delta[h] = LLVM::LoadOp::create(
        b, loc, b.getF32Type(),
        kb.gepBytes(at, kb.i32(config.blockM * 4)), 4);
  }
  // ALiBi: register 4·j + e is d(query) − key = base + 8·(e/2) − 8·j − e%2
  // with base = q0 + d + 16w + g − kv0 − key0 − 2t.
  Value alibiBase;
  if (alibi)
    alibiBase = alibi->rowBase(kb.sub(
        kb.add(kb.add(q0, diagonal), kb.add(warpKey0, g)),
        kb.add(kb.add(kv0, key0), kb.shl(t, 1))));
  auto probabilities = [&](ArrayRef<Value> scores) {
    SmallVector<Value> out(scores);
    for (size_t i = 0; i < out.size(); ++i) {
      int64_t j = i / 4, e = i % 4;
      if (alibi)
        out[i] = alibi->apply(out[i], alibiBase,
                              8 * (e / 2) - 8 * j - (e & 1));
      out[i] = kb.exp2(
          LLVM::FMAOp::create(b, loc, out[i], cScale, negLse[e / 2]));
    }
    return out;
  };
  SmallVector<Value> p = probabilities(sc);
  // P into the step's tile now, so that only its f32 values stay live
  // (for dS) next to dP.
  Value buffer = kb.andi(it, 1);
  Value pTile = ringTile(kb, pRing, buffer);
  Value dsTile = ringTile(kb, dsRing, buffer);
  // Pairs (register 2·j + h: rows g + 8h, columns 8j + 2t, + 1) packed
  // here: 40 columns are not whole A-operand k-steps of 16.
  auto packPairs = [&](ArrayRef<Value> x) {
    SmallVector<Value> pairs;
    for (size_t j = 0; j < x.size() / 4; ++j)
      for (int h = 0; h < 2; ++h)
        pairs.push_back(
            kb.packPair(elt, x[4 * j + 2 * h], x[4 * j + 2 * h + 1]));
    return pairs;
  };
  // The warp's 16 queries are chunks 2w and 2w + 1 of a key's row.
  Value queryChunk = kb.lshr(warpKey0, 3);
  storeTransposedPairs(pTile, packPairs(p), key0, queryChunk);
  dp = wgmmaWaitGroup(kb, 0, dp);
  // Softcap: P again from the masked t (keeping both spilled at D = 128 in
  // emitStepBody), times 1 − min(t², 1) (a masked t is −inf).
  SmallVector<Value> ds = softcap ? probabilities(sc) : p;
  for (size_t i = 0; i < ds.size(); ++i) {
    if (softcap)
      ds[i] = kb.fmul(ds[i], kb.fsub(kb.f32(1.0),
                                     arith::MinimumFOp::create(
                                         b, loc, kb.fmul(sc[i], sc[i]),
                                         kb.f32(1.0))));
    ds[i] = kb.fmul(ds[i], kb.fsub(dp[i], delta[i % 4 / 2]));
  }

  // Both consumers' P and dS in the step's tiles before either reads them
  // (two tiles each: a consumer's stores of step j + 2 follow the barrier
  // of step j + 1, after the other's reads of step j).
  storeTransposedPairs(dsTile, packPairs(ds), key0, queryChunk);
  fenceProxyAsyncShared(kb);
  namedBarrierSync(kb, kb.i32(kConsumerBarrier), 128 * config.consumers());

  // Products over the head-dim rows of panels 2c.. (this consumer's).
  // Their tile bases re-read here: the descriptors derived from them are
  // then computed here too, not kept live through S and dP.
  {
    SmallVector<Value> fresh = kb.pin({kTile, qTile, doTile, pTile, dsTile});
    kTile = fresh[0], qTile = fresh[1], doTile = fresh[2];
    pTile = fresh[3], dsTile = fresh[4];
  }
  Value firstPanel = kb.mul(consumer, kb.i32(panels));
  auto panelOf = [&](int64_t i) { return kb.add(firstPanel, kb.i32(i)); };
  int64_t blockKeySteps = config.blockN / 16, querySteps = config.blockM / 16;
  SmallVector<Value> regs(carried.begin(), carried.end());
  int64_t dqRegsPerPanel = config.blockM / 2;
  regs.append(dqRegsPerPanel, kb.undefF32());
  regs = wgmmaFence(kb, regs);
  SmallVector<Value> dK(regs.begin(), regs.begin() + panels * tileRegs);
  SmallVector<Value> dV(regs.begin() + panels * tileRegs,
                        regs.begin() + 2 * panels * tileRegs);
  SmallVector<Value> dq(regs.end() - dqRegsPerPanel, regs.end());
  auto issueDqPanel = [&](int64_t i, ValueRange zeros) {
    return issueHeadDimRows(kTile, kvPanelBytes(), panelOf(i), dsTile,
                            /*transposeB=*/true, blockKeySteps, zeros,
                            config.blockM, /*accumulate=*/false);
  };
  auto issuePanels = [&](SmallVector<Value> &accs, Value aTile, Value bTile) {
    for (int64_t i = 0; i < panels; ++i) {
      SmallVector<Value> tile(accs.begin() + i * tileRegs,
                              accs.begin() + (i + 1) * tileRegs);
      tile = issueHeadDimRows(aTile, qPanelBytes(), panelOf(i), bTile,
                              /*transposeB=*/false, querySteps, tile,
                              config.blockN, /*accumulate=*/true);
      llvm::copy(tile, accs.begin() + i * tileRegs);
    }
  };
  // Commit groups, in order: dQᵀ(2c), dVᵀ, dQᵀ(2c + 1), dKᵀ.
  dq = issueDqPanel(0, dq);
  wgmmaCommitGroup(kb);
  issuePanels(dV, doTile, pTile);
  wgmmaCommitGroup(kb);
  dq = wgmmaWaitGroup(kb, 1, dq);
  // Deterministic: the turn warp acquired the step's turns (emitTurnKeeper)
  // before either panel is added, and passes them on once both are issued.
  if (config.deterministic)
    namedBarrierSync(kb, turnBarrier(kTurnAcquiredBarrier, it),
                     turnBarrierThreads());
  addDqTransposed(dq, it, panelOf(0));
  dq = wgmmaFence(kb, SmallVector<Value>(dqRegsPerPanel, kb.undefF32()));
  dq = issueDqPanel(1, dq);
  wgmmaCommitGroup(kb);
  issuePanels(dK, qTile, dsTile);
  wgmmaCommitGroup(kb);
  // dVᵀ and dQᵀ(2c + 1) done: dO's stage is free (the next dO loads under
  // dKᵀ; every thread arrives, see emitStepBody).
  SmallVector<Value> done(dV);
  done.append(dq);
  done = wgmmaWaitGroup(kb, 1, done);
  dV.assign(done.begin(), done.begin() + dV.size());
  mbarrierArrive(kb, barrierAt(doEmptySlot(), Value()));
  addDqTransposed(ArrayRef(done).drop_front(dV.size()), it, panelOf(1));
  if (config.deterministic)
    namedBarrierArrive(kb, turnBarrier(kDqAddedBarrier, it),
                       turnBarrierThreads());
  dK = wgmmaWaitGroup(kb, 0, dK);
  // Q, LSE and Δ of this stage are no longer read.
  mbarrierArrive(kb, barrierAt(emptySlot(), stage));
  SmallVector<Value> out(dK);
  out.append(dV);
  return out;
}

/// stmatrix.x4.trans of 8x8 tiles {(j, 0), (j, 1), (j + 1, 0), (j + 1, 1)}
/// (.x2 for a last odd j): tile i stores its column r as the 16 bytes of
/// chunk firstChunk + i % 2 of row firstRow + 8·(j + i / 2) + r, from the
/// address lane 8i + r gives: row·128 + ((chunk ^ row % 8)·16).
void HopperBackwardEmitter::storeTransposedPairs(Value panel,
                                                 ArrayRef<Value> pairs,
                                                 Value firstRow,
                                                 Value firstChunk) {
  Value r = kb.andi(lane, 7);
  // Matrix i = lane / 8 of an .x4 (of an .x2: lanes 16-31 repeat the
  // addresses of 0-15, so that none points past the tile).
  auto baseOf = [&](Value matrix) {
    Value row = kb.add(firstRow, kb.add(kb.shl(kb.lshr(matrix, 1), 3), r));
    Value chunk = kb.add(firstChunk, kb.andi(matrix, 1));
    return kb.gepBytes(panel, kb.add(kb.mul(row, kb.i32(kPanelRowBytes)),
                                     kb.shl(kb.xori(chunk, r), 4)));
  };
  Value matrix = kb.lshr(lane, 3);
  for (size_t j = 0; j < pairs.size(); j += 4) {
    size_t count = std::min<size_t>(4, pairs.size() - j);
    Value base = baseOf(count == 4 ? matrix : kb.andi(matrix, 1));
    NVVM::StMatrixOp::create(
        b, loc, kb.gepBytes(base, kb.i32(j / 4 * 16 * kPanelRowBytes)),
        pairs.slice(j, count), NVVM::MMALayout::col,
        NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
        NVVM::LdStMatrixEltType::B16);
  }
}

SmallVector<Value> HopperBackwardEmitter::issueHeadDimRows(
    Value aTile, int64_t aPanelBytes, Value aPanel, Value bTile,
    bool transposeB, int64_t kSteps, ValueRange acc, int64_t cols,
    bool accumulate) {
  Value aDesc = wgmmaDescriptor(
      kb, kb.gepBytes(aTile, kb.mul(aPanel, kb.i32(aPanelBytes))),
      aPanelBytes, 8 * kPanelRowBytes);
  // K-major B (k = query): 32 bytes along its 128-byte key rows per k-step;
  // MN-major B (k = key, n = the 64 queries of one panel): 16 key rows.
  Value bDesc = transposeB
                    ? wgmmaDescriptor(kb, bTile, config.blockN * kPanelRowBytes,
                                      8 * kPanelRowBytes)
                    : wgmmaDescriptor(kb, bTile, 16, 8 * kPanelRowBytes);
  Value c = kb.fragment(accumulator(cols), acc);
  for (int64_t kk = 0; kk < kSteps; ++kk)
    c = warpgroupMma(
        kb, wgmmaDescriptorAdvance(kb, aDesc, kk * 16 * kPanelRowBytes),
        wgmmaDescriptorAdvance(kb, bDesc,
                               transposeB ? kk * 16 * kPanelRowBytes
                                          : kk * 32),
        c, accumulate || kk > 0, transposeB, elt,
        /*aKStep=*/0, /*transposeA=*/true);
  return kb.registers(c);
}

/// Register 4·j + e of the m64n<blockM> dQᵀ panel p: head-dim column 64p +
/// 16w + g + 8·(e/2), query row q0 + 8·j + 2t + e%2. The accumulator is
/// grouped (groupedDq): in a whole group of 16 rows 16k.., registers
/// 4·(2k + a) + 2h + {0, 1} (rows 8a + 2t + {0, 1}) are 4 consecutive
/// floats of column 16w + g + 8h.
void HopperBackwardEmitter::addDqTransposed(ArrayRef<Value> dq, Value it,
                                            Value panel) {
  assert(config.groupedDq() && "the dQᵀ registers add in the grouped layout");
  Value q0 = stepAt(it).second;
  Value accum = dqAccumulator(kb, deltaBaseOf(it), seqQ);
  for (int h = 0; h < 2; ++h) {
    Value col = kb.add(kb.shl(panel, 6), kb.add(warpKey0, kb.add(g, kb.i32(8 * h))));
    auto add = [&](bool guarded) {
      // The block's groups, 16·D floats apart, this thread's 4 rows of
      // column col in each from here.
      Value grouped = kb.gep(
          accum, b.getF32Type(),
          kb.add(kb.mul(kb.sext64(q0), kb.i64(spec.headDim)),
                 kb.zext64(kb.add(kb.shl(col, 4), kb.shl(t, 2)))));
      if (!guarded) {
        SmallVector<Value> quads;
        for (int64_t k = 0; k < config.blockM / 16; ++k)
          for (int a = 0; a < 2; ++a)
            for (int e = 0; e < 2; ++e)
              quads.push_back(dq[4 * (2 * k + a) + 2 * h + e]);
        attn_gpu::GlobalReduceAddOp::create(b, loc, grouped, quads,
                                            /*width=*/4,
                                            /*stride=*/16 * spec.headDim * 4);
        return;
      }
      // A tail block: rows of whole groups (below Nq rounded down to 16)
      // where the grouped layout puts them, the others row-major
      // (dqAccumulatorOffset), each from one of two pointers plus an
      // immediate.
      Value wholeRows = kb.andi(seqQ, ~int64_t(15));
      Value firstRow = kb.add(q0, kb.shl(t, 1));
      Value rowMajor = kb.gep(
          accum, b.getF32Type(),
          kb.add(kb.mul(kb.sext64(firstRow), kb.i64(spec.headDim)),
                 kb.zext64(col)));
      for (int64_t j = 0; j < config.blockM / 8; ++j)
        for (int e = 0; e < 2; ++e) {
          Value row = kb.add(firstRow, kb.i32(8 * j + e));
          int64_t dq4 = 4 * j + 2 * h + e;
          ifThenElse(
              kb, kb.slt(row, wholeRows),
              [&] {
                attn_gpu::GlobalReduceAddOp::create(
                    b, loc,
                    kb.gep(grouped, b.getF32Type(),
                           kb.i64(j / 2 * 16 * spec.headDim + 2 * (j % 2) + e)),
                    ValueRange{dq[dq4]});
              },
              [&] {
                ifThen(kb, kb.slt(row, seqQ), [&] {
                  attn_gpu::GlobalReduceAddOp::create(
                      b, loc,
                      kb.gep(rowMajor, b.getF32Type(),
                             kb.i64((8 * j + e) * spec.headDim)),
                      ValueRange{dq[dq4]});
                });
              });
        }
    };
    // Whole query blocks (all but a tail) add without row checks.
    auto rows = [&] {
      ifThenElse(
          kb, kb.sle(kb.add(q0, kb.i32(config.blockM)), seqQ),
          [&] { add(false); }, [&] { add(true); });
    };
    // Head-dim columns past D (padding of the last panel) are not added.
    if (spec.headDim == tileDim)
      rows();
    else
      ifThen(kb, kb.slt(col, kb.i32(spec.headDim)), rows);
  }
}

/// Register 4·j + e of dKᵀ (dVᵀ) panel i: head-dim column 64·(2c + i) +
/// 16w + g + 8·(e/2), key kv0 + 8·j + 2t + e%2. Element stores from these
/// registers would write 2 bytes each, 16 rows apart, and the addresses
/// spilled; through shared memory every store is a 16-byte row chunk.
void HopperBackwardEmitter::emitTransposedEpilogue(ValueRange accs) {
  Value scale = arg("softmax_scale");
  int64_t panels = tileDim / 128, tileRegs = config.blockN / 2;
  int64_t consumerThreads = 128 * config.consumers();
  Value firstPanel = kb.mul(consumer, kb.i32(panels));
  auto panelBase = [&](Value tile, Value panel) {
    return kb.gepBytes(tile, kb.mul(panel, kb.i32(kvPanelBytes())));
  };
  // Once both consumers' last products have read K and V, each stores its
  // dKᵀ·scale and dVᵀ transposed into its panels of the K and V tiles
  // ([key][64 d], 128-byte swizzle, as TMA wrote them): the warp's 16
  // head-dim rows are chunks 2w and 2w + 1 of a key's row.
  namedBarrierSync(kb, kb.i32(kConsumerBarrier), consumerThreads);
  Value warpChunk = kb.lshr(warpKey0, 3);
  auto stage = [&](Value tile, int64_t firstReg, bool scaled) {
    for (int64_t i = 0; i < panels; ++i) {
      SmallVector<Value> pairs;
      for (int64_t j = 0; j < tileRegs / 4; ++j)
        for (int h = 0; h < 2; ++h) {
          Value lo = accs[firstReg + i * tileRegs + 4 * j + 2 * h];
          Value hi = accs[firstReg + i * tileRegs + 4 * j + 2 * h + 1];
          if (scaled) {
            lo = kb.fmul(lo, scale);
            hi = kb.fmul(hi, scale);
          }
          pairs.push_back(kb.packPair(elt, lo, hi));
        }
      storeTransposedPairs(panelBase(tile, kb.add(firstPanel, kb.i32(i))),
                           pairs, kb.i32(0), warpChunk);
    }
  };
  stage(kTile, 0, /*scaled=*/true);
  stage(vTile, panels * tileRegs, /*scaled=*/false);
  namedBarrierSync(kb, kb.i32(kConsumerBarrier), consumerThreads);

  // Each consumer copies its panels out, 16-byte chunks of the rows of
  // keys < Nk and columns < D (D is a multiple of 8).
  Value thread = kb.andi(tid, 127);
  int64_t chunksPerPanel = config.blockN * (kPanelRowBytes / 16);
  assert(chunksPerPanel % 128 == 0 && "a pass of 128 chunks spans one panel");
  auto v4i32 = VectorType::get({4}, b.getI32Type());
  auto copy = [&](StringRef tensor, Value tile) {
    Value base = headBase(tensor, elt, kvHead);
    Value rowStride = params.stride(tensor, 2);
    for (int64_t k = 0; k < panels * chunksPerPanel / 128; ++k) {
      Value idx = kb.add(thread, kb.i32(128 * k));
      Value panel = kb.add(firstPanel, kb.i32(128 * k / chunksPerPanel));
      Value inPanel = kb.sub(idx, kb.i32(128 * k / chunksPerPanel *
                                         chunksPerPanel));
      Value row = kb.lshr(inPanel, 3), chunk = kb.andi(inPanel, 7);
      Value key = kb.add(kv0, row);
      Value col = kb.add(kb.shl(panel, 6), kb.shl(chunk, 3));
      ifThen(kb,
             kb.andb(kb.slt(key, seqKv), kb.slt(col, kb.i32(spec.headDim))),
             [&] {
               Value at = kb.add(kb.mul(row, kb.i32(kPanelRowBytes)),
                                 kb.shl(kb.xori(chunk, kb.andi(row, 7)), 4));
               Value data = LLVM::LoadOp::create(
                   b, loc, v4i32,
                   kb.gepBytes(panelBase(tile, panel), at), 16);
               Value offset = kb.add(kb.mul(kb.sext64(key), rowStride),
                                     kb.sext64(col));
               LLVM::StoreOp::create(b, loc, data, kb.gep(base, elt, offset),
                                     16);
             });
    }
  };
  copy("dk", kTile);
  copy("dv", vTile);
}

SmallVector<Value> HopperBackwardEmitter::issueSharedAB(Value aRing,
                                                        Value aStage,
                                                        Value bRing,
                                                        Value bStage,
                                                        ValueRange acc,
                                                        int64_t n) {
  Value aDesc = ringDescriptor(kb, aRing, aStage, /*mnMajor=*/false);
  // This consumer's n columns start at its 64-column panel n / 64 · c.
  Value bDesc = wgmmaDescriptor(
      kb,
      kb.gepBytes(ringTile(kb, bRing, bStage),
                  kb.mul(consumer, kb.i32(n / 64 * qPanelBytes()))),
      qPanelBytes(), 8 * kPanelRowBytes);
  Value c = kb.fragment(accumulator(n), acc);
  // k-steps of 16 queries: 32 bytes along A's 128-byte rows, 16 rows of B.
  for (int64_t kk = 0; kk < config.blockM / 16; ++kk)
    c = warpgroupMma(kb, wgmmaDescriptorAdvance(kb, aDesc, kk * 32),
                     wgmmaDescriptorAdvance(kb, bDesc,
                                            kk * 16 * kPanelRowBytes),
                     c, /*accumulate=*/true, /*transposeB=*/true, elt);
  return kb.registers(c);
}

/// Register 4·j + e of the m64n(D/2) fragment: row 16·warp + g + 8·(e/2)
/// of the step's query block, column c·D/2 + 8·j + 2t + e%2.
/// Deterministic: warp w adds its 16 rows (slice (q0 + 16w) / 16 of the
/// query head) only once the slice's semaphore counts both consumers'
/// arrivals from every earlier key block that visits q0, then arrives
/// itself: each element of dQ is summed in key-block order (the consumers'
/// column halves are disjoint).
void HopperBackwardEmitter::addDqFromRegisters(ArrayRef<Value> dq, Value it) {
  Value q0 = stepAt(it).second;
  Value region = deltaBaseOf(it);
  Value accum = dqAccumulator(kb, region, seqQ);
  int64_t dqCols = tileDim / 2;
  Value col0 = kb.add(consumerCol0(), kb.shl(t, 1));
  Value sliceRow = kb.add(q0, kb.mul(warpInGroup, kb.i32(16)));
  if (config.deterministic) {
    assert(config.turnRows == 16 && "a warp's rows are one slice");
    // The turn warp acquired this step's turns (emitTurnKeeper).
    namedBarrierSync(kb, turnBarrier(kTurnAcquiredBarrier, it),
                     turnBarrierThreads());
  }
  for (int h = 0; h < 2; ++h) {
    Value row = kb.add(sliceRow, kb.add(g, kb.i32(8 * h)));
    ifThen(kb, kb.slt(row, seqQ), [&] {
      Value rowPtr = kb.gep(
          accum, b.getF32Type(),
          kb.add(kb.mul(kb.sext64(row), kb.i64(spec.headDim)),
                 kb.zext64(col0)));
      for (int64_t j = 0; j < dqCols / 8; ++j)
        ifStoredColumns(consumerCol0(), 8 * j, [&] {
          attn_gpu::GlobalReduceAddOp::create(
              b, loc, kb.gep(rowPtr, b.getF32Type(), kb.i64(8 * j)),
              ValueRange{dq[4 * j + 2 * h], dq[4 * j + 2 * h + 1]},
              /*width=*/2);
        });
    });
  }
  // The turn warp passes the turns on once every consumer thread's
  // additions are issued; no thread waits for them to complete.
  if (config.deterministic)
    namedBarrierArrive(kb, turnBarrier(kDqAddedBarrier, it),
                       turnBarrierThreads());
}

/// dQ[:, slice] = dS·K[:, slice] of the dSᵀ ring's tile `dsStage`, accumulating
/// into the fenced zeros `dq`: A = dSᵀ [key][query] read MN-major (the
/// query is A's M), B = K [key][d] read MN-major; blockN / 16 k-steps of
/// 16 keys. Consumer c takes head-dim columns [c·dqCols, (c + 1)·dqCols)
/// (splitDqRows: query rows [64c, 64c + 64), every column). Not committed.
SmallVector<Value> HopperBackwardEmitter::issueDq(Value dsStage,
                                                  ValueRange zeros) {
  int64_t dqCols = this->dqCols();
  if (transposedDq()) {
    // dQᵀ = Kᵀ·dSᵀ: A = panel c of K (head-dim columns [64c, 64c + 64))
    // read MN-major (the head dim is A's M), B = dS [query][key] K-major;
    // blockN / 16 k-steps of 16 keys, 4 per 64-key panel of dS.
    Value kDesc = wgmmaDescriptor(
        kb, kb.gepBytes(kTile, kb.mul(consumer, kb.i32(kvPanelBytes()))),
        kvPanelBytes(), 8 * kPanelRowBytes);
    Value dsDesc = wgmmaDescriptor(kb, ringTile(kb, dsRing, dsStage), 16,
                                   8 * kPanelRowBytes);
    Value dq = kb.fragment(accumulator(dqCols), zeros);
    for (int64_t kk = 0; kk < config.blockN / 16; ++kk)
      dq = warpgroupMma(
          kb, wgmmaDescriptorAdvance(kb, kDesc, kk * 16 * kPanelRowBytes),
          wgmmaDescriptorAdvance(kb, dsDesc,
                                 kk / 4 * qPanelBytes() + kk % 4 * 32),
          dq, /*accumulate=*/kk > 0, /*transposeB=*/false, elt,
          /*aKStep=*/0, /*transposeA=*/true);
    return kb.registers(dq);
  }
  Value dsDesc, sliceOffset;
  if (splitDqRows()) {
    // This consumer's 64 query rows: panel c of the dSᵀ tile; all of K.
    dsDesc = wgmmaDescriptor(
        kb,
        kb.gepBytes(ringTile(kb, dsRing, dsStage),
                    kb.mul(consumer, kb.i32(dsPanelBytes()))),
        dsPanelBytes(), 8 * kPanelRowBytes);
    sliceOffset = kb.i32(0);
  } else {
    dsDesc = ringDescriptor(kb, dsRing, dsStage, /*mnMajor=*/true);
    Value colBytes = kb.mul(consumer, kb.i32(dqCols * 2));
    // Whole 64-column panels step by kvPanelBytes, narrower slices move
    // within the 128-byte row (the swizzle is applied on the address).
    sliceOffset =
        dqCols >= 64 ? kb.mul(kb.divu(colBytes, kb.i32(kPanelRowBytes)),
                              kb.i32(kvPanelBytes()))
                     : colBytes;
  }
  Value kDesc = wgmmaDescriptor(kb, kb.gepBytes(kTile, sliceOffset),
                                kvPanelBytes(), 8 * kPanelRowBytes);
  Value dq = kb.fragment(accumulator(dqCols), zeros);
  for (int64_t kk = 0; kk < config.blockN / 16; ++kk) {
    int64_t step = kk * 16 * kPanelRowBytes;
    dq = warpgroupMma(kb, wgmmaDescriptorAdvance(kb, dsDesc, step),
                      wgmmaDescriptorAdvance(kb, kDesc, step), dq,
                      /*accumulate=*/kk > 0, /*transposeB=*/true, elt,
                      /*aKStep=*/0, /*transposeA=*/true);
  }
  return kb.registers(dq);
}

/// The workspace region (Δ, then the dQ accumulator) of step `it`'s query
/// head.
Value HopperBackwardEmitter::deltaBaseOf(Value it) {
  Value head = stepAt(it).first;
  Value bh = kb.add(kb.mul(batch, headsQ), head);
  return workspaceRegion(kb, arg("workspace"), bh, seqQ, spec.headDim);
}

/// dK·scale and dV of this warp's key rows < Nk, packed pairs (the
/// head-dim split: this consumer's half of the columns).
void HopperBackwardEmitter::emitEpilogue(ValueRange accs) {
  Value scale = arg("softmax_scale");
  int64_t share = config.splitHeadDim ? 2 : 1;
  int64_t cols = tileDim / share;
  Value first = config.splitHeadDim ? consumerCol0() : Value();
  auto store = [&](StringRef tensor, size_t firstReg, bool scaled,
                   int64_t width) {
    Value base = headBase(tensor, elt, kvHead);
    Value col0 = kb.shl(t, 1);
    if (first)
      col0 = kb.add(col0, first);
    for (int h = 0; h < 2; ++h) {
      Value row = kb.add(kb.add(kv0, warpKey0), kb.add(g, kb.i32(8 * h)));
      ifThen(kb, kb.slt(row, seqKv), [&] {
        Value rowPtr =
            kb.gep(base, elt,
                   kb.add(kb.mul(kb.sext64(row), params.stride(tensor, 2)),
                          kb.sext64(col0)));
        for (int64_t j = 0; j < cols / 8; ++j)
          ifStoredColumns(
              first, 8 * j,
              [&] {
                Value lo = accs[firstReg + 4 * j + 2 * h];
                Value hi = accs[firstReg + 4 * j + 2 * h + 1];
                if (scaled) {
                  lo = kb.fmul(lo, scale);
                  hi = kb.fmul(hi, scale);
                }
                LLVM::StoreOp::create(b, loc, kb.packPair(elt, lo, hi),
                                      kb.gep(rowPtr, elt, kb.i64(8 * j)), 4);
              },
              width);
      });
    }
  };
  store("dk", 0, /*scaled=*/true, spec.headDim);
  store("dv", cols / 2, /*scaled=*/false, spec.valueHeadDim);
}

void HopperBackwardEmitter::emitConsumer() {
  setMaxRegisters(kb, config.consumerRegisters, /*increase=*/true);
  consumer = kb.sub(warpgroup, kb.i32(1));
  warpInGroup = kb.andi(kb.lshr(tid, 5), 3);
  // The head-dim split's consumers share the block's 64 keys.
  warpKey0 = kb.mul(warpInGroup, kb.i32(16));
  if (!config.splitHeadDim)
    warpKey0 = kb.add(kb.mul(consumer, kb.i32(64)), warpKey0);
  mbarrierWait(kb, barrierAt(kvFullSlot(), Value()), kb.i32(0));
  if (kvInRegisters()) {
    kFrag = loadOperandA(kTile, scoreDepth());
    vFrag = loadOperandA(vTile, valueDepth());
  }
  // dK and dV: D / 2 + Dv / 2 registers, half that with the split.
  int64_t carriedRegs = tileDim;
  if (config.splitHeadDim)
    carriedRegs /= 2;
  // transposedDkv: dKᵀ and dVᵀ, tileDim / 128 m64n<blockN> tiles each.
  if (config.transposedDkv())
    carriedRegs = 2 * (tileDim / 128) * (config.blockN / 2);
  SmallVector<Value> init(carriedRegs, kb.f32(0.0));
  auto loop = scf::ForOp::create(
      b, loc, kb.i32(0), numSteps, kb.i32(1), init,
      [&](OpBuilder &, Location, Value it, ValueRange iterArgs) {
        scf::YieldOp::create(b, loc, emitStep(it, iterArgs));
      });
  // Pipelined: the last step's dQ (the barrier closing that step made
  // every consumer's dSᵀ visible).
  if (pipelined())
    ifThen(kb, kb.slt(kb.i32(0), numSteps), [&] {
      Value last = kb.sub(numSteps, kb.i32(1));
      waitForOtherDs(numSteps);
      SmallVector<Value> dq =
          wgmmaFence(kb, SmallVector<Value>(dqRegs(), kb.undefF32()));
      dq = issueDq(kb.andi(last, 1), dq);
      wgmmaCommitGroup(kb);
      dq = wgmmaWaitGroup(kb, 0, dq);
      storeDq(dq, last);
    });
  if (config.transposedDkv())
    emitTransposedEpilogue(loop.getResults());
  else
    emitEpilogue(loop.getResults());
}

void HopperBackwardEmitter::emit(LLVM::LLVMFuncOp func) {
  entry = &func.getBody().front();
  params.bind(*entry);
  b.setInsertionPointToStart(entry);
  seqQ = arg("seq_q");
  seqKv = arg("seq_kv");
  headsQ = arg("heads_q");
  Value headsKv = arg("heads_kv");
  diagonal = spec.band.topLeft ? kb.i32(0) : kb.sub(seqKv, seqQ);

  Type i32 = b.getI32Type();
  tid = NVVM::ThreadIdXOp::create(b, loc, i32);
  warpgroup = kb.lshr(tid, 7);
  lane = kb.andi(tid, 31);
  g = kb.lshr(lane, 2);
  t = kb.andi(lane, 3);
  Value kvBlock = NVVM::BlockIdXOp::create(b, loc, i32);
  Value bhKv = NVVM::BlockIdYOp::create(b, loc, i32);
  groupSize = kb.divu(headsQ, headsKv);
  if (spec.causal && config.sectionBytes > 0) {
    // Blocks are dispatched in linear order (x fastest; the product fits in
    // 32 bits for any K that fits in memory): renumber so that each section
    // of `width` kv heads is taken key block by key block.
    Value kvBlocks = NVVM::GridDimXOp::create(b, loc, i32);
    Value heads = NVVM::GridDimYOp::create(b, loc, i32);
    int64_t rowBytes = (spec.headDim + spec.valueHeadDim) * 2;
    Value perSection = kb.minsi(
        kb.maxsi(kb.divu(kb.divu(kb.i32(config.sectionBytes / rowBytes),
                                 groupSize),
                         seqQ),
                 kb.i32(1)),
        heads);
    Value linear = kb.add(kb.mul(bhKv, kvBlocks), kvBlock);
    Value sectionTiles = kb.mul(kvBlocks, perSection);
    Value first = kb.mul(kb.divu(linear, sectionTiles), perSection);
    Value width = kb.minsi(kb.sub(heads, first), perSection);
    Value within = kb.remu(linear, sectionTiles);
    kvBlock = kb.divu(within, width);
    bhKv = kb.add(first, kb.remu(within, width));
  }
  // Descending turns: key block n waits for n + 1, dispatched before it.
  if (descendingTurns())
    kvBlock = kb.sub(kb.sub(NVVM::GridDimXOp::create(b, loc, i32), kb.i32(1)),
                     kvBlock);
  batch = kb.divu(bhKv, headsKv);
  kvHead = kb.remu(bhKv, headsKv);
  kv0 = kb.mul(kvBlock, kb.i32(config.blockN));

  BackwardQueryWalk walk =
      backwardQueryWalk(kb, seqQ, config.blockM, config.blockN, kv0, diagonal,
                        spec.band, groupSize);
  qStart = walk.qStart;
  qSteps = walk.qSteps;
  numSteps = walk.numSteps;
  KeyBounds bounds = keyBoundsOf(kb, params, spec.keyRange, batch, seqKv);
  keyStart = bounds.start;
  keyEnd = bounds.end;
  if (keyStart)
    numSteps = keyBlockSteps(kb, numSteps, kv0, config.blockN, bounds);

  // Dynamic shared memory from a 1024-byte boundary (the swizzle atom):
  // K, V, the Q and dO rings, two dSᵀ tiles (the head-dim split: then two
  // Pᵀ tiles, and no dQ tile), the dQ tiles, the LSE/Δ ring; the mbarriers
  // in the padding below the boundary, or after the ring.
  Value smem = LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
      kSharedMemorySymbol);
  Value addr = sharedAddress(kb, smem);
  Value pad = kb.sub(kb.andi(kb.add(addr, kb.i32(1023)), ~int64_t(1023)),
                     addr);
  kTile = kb.gepBytes(smem, pad);
  vTile = kb.gepBytes(kTile, kb.i32(kTileBytes()));
  Value qBase = kb.gepBytes(vTile, kb.i32(vTileBytes()));
  Value doBase = kb.gepBytes(qBase, kb.i32(config.stages * qTileBytes()));
  Value dsBase =
      kb.gepBytes(doBase, kb.i32(config.doStages() * doTileBytes()));
  dqTile = kb.gepBytes(dsBase, kb.i32(2 * dsTileBytes()));
  if (config.splitHeadDim) {
    pRing = ringView(kb, dqTile, 2, config.blockN, config.blockM, elt);
    lseRing = kb.gepBytes(dqTile, kb.i32(2 * dsTileBytes()));
    dqTile = Value();
  } else {
    lseRing = kb.gepBytes(dqTile, kb.i32(dqBuffers() * dqTileBytes()));
  }
  // The mbarriers go below the aligned tiles where the alignment left room
  // for them (hopperBackwardSharedMemoryBytes counts on it), else last.
  Value barriersLast =
      kb.gepBytes(lseRing, kb.i32(config.stages * lseStageBytes()));
  Value roomBelow = kb.slt(kb.i32(hopperBackwardBarrierBytes(config) - 1), pad);
  barriers = LLVM::SelectOp::create(b, loc, roomBelow, smem, barriersLast);
  qRing = ringView(kb, qBase, config.stages, config.blockM, tileDim, elt);
  doRing =
      ringView(kb, doBase, config.doStages(), config.blockM, tileDim, elt);
  // dSᵀ [key][query] (transposedDq: dS [query][key]): two tiles, one per
  // step parity.
  dsRing = transposedDq()
               ? ringView(kb, dsBase, 2, config.blockM, config.blockN, elt)
               : ringView(kb, dsBase, 2, config.blockN, config.blockM, elt);

  // Thread 0 initialises the mbarriers: "full" ones expect the producer's
  // arrival with the TMA bytes and one per lane of the LSE warp, "empty"
  // ones one arrival per consumer thread.
  ifThen(kb, eq(kb, tid, kb.i32(0)), [&] {
    mbarrierInit(kb, barrierAt(kvFullSlot(), Value()), 1);
    for (int64_t s = 0; s < config.stages; ++s) {
      mbarrierInit(kb, barrierAt(fullSlot() + s, Value()), 1 + 32);
      mbarrierInit(kb, barrierAt(emptySlot() + s, Value()),
                   128 * config.consumers());
    }
    if (config.transposedDkv()) {
      mbarrierInit(kb, barrierAt(doFullSlot(), Value()), 1);
      mbarrierInit(kb, barrierAt(doEmptySlot(), Value()),
                   128 * config.consumers());
      LLVM::StoreOp::create(
          b, loc, LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), kTile),
          barrierAt(kTileSlot(), Value()), 8);
    }
    mbarrierInitFence(kb);
  });
  kb.barrier();

  ifThenElse(
      kb, eq(kb, warpgroup, kb.i32(0)), [&] { emitProducer(); },
      [&] { emitConsumer(); });
  LLVM::ReturnOp::create(b, loc, ValueRange());
}

} // namespace

void mlir::attn::emitHopperBackwardKernel(OpBuilder &builder,
                                          gpu::GPUModuleOp module,
                                          StringRef name,
                                          const FlashBackwardSpec &spec,
                                          const HopperBackwardConfig &config) {
  Location loc = module.getLoc();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  if (!module.lookupSymbol(kSharedMemorySymbol))
    LLVM::GlobalOp::create(
        builder, loc, LLVM::LLVMArrayType::get(builder.getI8Type(), 0),
        /*isConstant=*/false, LLVM::Linkage::External, kSharedMemorySymbol,
        Attribute(), /*alignment=*/1024, /*addrSpace=*/3);

  LLVM::LLVMFuncOp func = nvvm::createHopperKernelFunc(
      builder, loc, name, hopperBackwardSignature(spec), config.threads());
  HopperBackwardEmitter(builder, loc, spec, config).emit(func);
}
