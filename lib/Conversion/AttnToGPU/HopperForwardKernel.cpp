//===- HopperForwardKernel.cpp - the sm90a-wgmma forward kernel -----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Emits the Hopper (sm_90a) FlashAttention forward kernel as a gpu.func of
// NVVM/LLVM/arith/scf operations. A thread block owns block_m query rows of
// one (batch, query head) and is warp-specialised:
//  * warpgroup 0, the producer, drops to a few registers (setmaxnreg.dec)
//    and one of its threads brings Q once and K/V tiles into a
//    `stages`-deep shared-memory ring by TMA (cp.async.bulk.tensor), each
//    tile completing a "full" mbarrier;
//  * warpgroups 1.., the consumers, take the registers (setmaxnreg.inc),
//    own 64 query rows each and per key block wait for K, compute
//    S = Q·Kᵀ with wgmma from shared memory, release K's stage ("empty"
//    mbarrier), run the score_mod, mask and online softmax in registers
//    (exp2 domain, the sm80 kernel's masking), wait for V and accumulate
//    O += P·V with wgmma taking P from registers, then release V's stage.
// With the default grid a block owns one query block of one (batch, head);
// with the persistent one it walks its batch's (head, query block) tiles
// (forEachQueryBlock); a ring counter carried across query blocks keeps the
// K/V ring's stages and mbarrier phases running, and a "Q empty" mbarrier
// lets the producer load the next Q (and its first K/V) while the
// consumers finish the last P·V and write O.
// Tiles are stored as TMA writes them with 128-byte swizzle: 64-column
// panels of rows of 128 bytes, which is the layout wgmma's descriptors read
// (K-major for Q and K, MN-major — transposed — for V).
//
// Accumulator fragments of wgmma m64nN: warp w of a warpgroup holds rows
// 16w..16w+15; with g = lane / 4 and t = lane % 4, register 4·j + e holds
// row g + 8·(e / 2), column 8·j + 2t + e % 2 — the mma.m16n8 layout per 8
// columns, so masking, softmax and the P fragments follow the sm80 kernel.
//
//===----------------------------------------------------------------------===//

#include "KernelTiles.h"
#include "attn/Dialect/AttnGPU/Utils/KernelBuilder.h"
#include "ScoreModEmitter.h"
#include "WgmmaHelpers.h"
#include "attn/Conversion/AttnToGPU/HopperKernel.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::nvvm;

namespace {

constexpr const char *kHopperSharedMemorySymbol = "attn_dynamic_smem_sm90";
/// Bytes of one swizzled panel row: 64 16-bit elements.
constexpr int64_t kPanelRowBytes = 128;

/// The sm90a forward kernel's parameters (docs/kernel-abi.md): the sm80
/// family's, then the Q, K and V tensor maps.
KernelSignature hopperForwardSignature(const FlashKernelSpec &spec) {
  ::attn::runtime::KernelAbi abi;
  abi.tensorMaps = true;
  abi.keyRange = spec.keyRange;
  abi.alibi = spec.alibi;
  return KernelSignature(abi);
}

class HopperForwardEmitter {
public:
  HopperForwardEmitter(OpBuilder &builder, Location loc,
                       const FlashKernelSpec &spec,
                       const HopperKernelConfig &config)
      : kb(builder, loc), b(builder), loc(loc), spec(spec), config(config),
        params(hopperForwardSignature(spec)), dQK(hopperTileWidth(spec.headDim)),
        dV(hopperTileWidth(spec.valueHeadDim)) {}

  void emit(LLVM::LLVMFuncOp func);

private:
  /// Loop-carried state of a consumer thread: the O accumulator fragment
  /// (16 x Dv), the row max (exp2 domain) and the thread-partial row sum.
  struct State {
    Value o, m, l;
  };
  SmallVector<Value> flatten(const State &s) const;
  State unflatten(ValueRange values) const;

  Value barrierAt(int64_t first, Value stage);
  /// Per query block: q0 and the key blocks [firstBlock, numBlocks) it
  /// visits; those in [firstFull, numFull) need no mask.
  void setQueryBlock(Value queryBlockIndex);
  /// Key blocks this query block visits (K/V ring positions it uses).
  Value blockCount() { return kb.sub(numBlocks, firstBlock); }
  /// Position of key block `block` of this query block in the K/V ring's
  /// sequence (ringBase + block - firstBlock), its stage and its mbarrier
  /// phase parity.
  Value ringIndex(Value block) {
    return kb.add(ringBase, kb.sub(block, firstBlock));
  }
  Value stageOf(Value block);
  void forEachQueryBlock(llvm::function_ref<void(Value visit)> body);
  /// The query head `h` of this batch and its kvHead.
  void setHead(Value h);
  /// This head's O or LSE base.
  Value headBase(Value ptr, Type eltTy, std::array<Value, 2> stride);
  void emitProducer();
  void emitConsumer();
  Value parityOf(Value block);
  void release(int64_t emptySlot, Value block);
  Value issueScores(Value block, ValueRange fenceAlso,
                    SmallVector<Value> &fenced);
  Value issuePV(Value block, Value p, Value o);
  Value modifyAndMaskScores(Value block, Value s);
  Value softmax(Value s, const State &in, State &out, Value &alpha);
  State emitConsumerBlock(Value block, const State &in);
  State emitOverlappedBlock(Value block, const State &in, Value &p);
  void emitEpilogue(const State &state);
  void emitConsumerQueryBlock();
  void releaseQ();

  int64_t qPanelBytes() const { return config.blockM * kPanelRowBytes; }
  int64_t kvPanelBytes() const { return config.blockN * kPanelRowBytes; }
  int64_t kTileBytes() const { return config.blockN * dQK * 2; }
  int64_t vTileBytes() const { return config.blockN * dV * 2; }

  KernelBuilder kb;
  OpBuilder &b;
  Location loc;
  const FlashKernelSpec &spec;
  const HopperKernelConfig &config;
  KernelSignature params;
  Type elt;
  /// The head dims the tiles span (hopperTileWidth: 64, 128 or 256): TMA
  /// fills the columns past D and Dv with zeros, the k-steps
  /// of S = Q·Kᵀ stop at D rounded up to 16, and O's padding columns are
  /// never stored.
  int64_t dQK, dV;

  Value qMap, kMap, vMap;
  // O and LSE bases of the head, where setHead computes them (else null:
  // the epilogue does).
  Value oBase, lseBase;
  Value oArg, lseArg, headsQ, headsKv;
  std::array<Value, 2> oBatchHeadStride, lseBatchHeadStride;
  Value seqQ, seqKv, oRowStride;
  Value keyStart, keyEnd; // key_range of this batch entry (keyEnd: Nk without)
  Value softmaxScale; // the run-time scale of the scores (f32)
  // softcap's region C · tanh(s · k) as {k, C}: scale · k is one multiply
  // before the tanh and C joins the softmax's log2(e), two multiplies per
  // score fewer than the region as written (1.029 vs 1.146 ms at D = 128,
  // N = 4096 on the H200; docs/variants.md).
  std::optional<std::pair<double, double>> foldedSoftcap;
  /// An additive score_mod (matchAdditiveScoreMod).
  std::optional<AdditiveScoreMod> additiveTerm;
  /// alibi_slopes: the head's slope (setHead), its term on the score the
  /// softmax's constant multiplies.
  std::optional<AlibiTerm> alibi;
  Value bandOffset; // d(i) - i: Nk - Nq bottom-right, 0 top-left
  Value tid, warpgroup, lane, g, t;
  Value batch, head, kvHead, q0;
  Value qTile, barriers;
  Value kRing, vRing; // !attn_gpu.ring values: `stages` K and V tiles
  Value numBlocks, numFull, firstBlock, firstFull;
  Value numQueryBlocks;
  // K/V ring positions used by earlier query blocks of this thread block.
  Value ringBase;
  // Consumer-only: first query row of this warp's 16, Q's descriptor.
  Value warpRow0, qDesc;
  // Ping-pong: this consumer's named barrier and the next one's.
  Value myTurn, otherTurn;
  /// Waits until the previous consumer (round-robin) has issued its GEMMs
  /// (no-op without ping-pong); schedulerArrive lets the next one go.
  void schedulerSync() {
    if (myTurn)
      namedBarrierSync(kb, myTurn, 256);
  }
  void schedulerArrive() {
    if (otherTurn)
      namedBarrierArrive(kb, otherTurn, 256);
  }

  // mbarrier slots (8 bytes each) after the tiles.
  int64_t qFullSlot() const { return 0; }
  int64_t kFullSlot() const { return 1; }
  int64_t vFullSlot() const { return 1 + config.stages; }
  int64_t kEmptySlot() const { return 1 + 2 * config.stages; }
  int64_t vEmptySlot() const { return 1 + 3 * config.stages; }
  int64_t qEmptySlot() const { return 1 + 4 * config.stages; }
};

SmallVector<Value> HopperForwardEmitter::flatten(const State &s) const {
  return {s.o, s.m, s.l};
}

HopperForwardEmitter::State
HopperForwardEmitter::unflatten(ValueRange values) const {
  return {values[0], values[1], values[2]};
}

Value HopperForwardEmitter::barrierAt(int64_t first, Value stage) {
  Value slot = stage ? kb.add(kb.i32(first), stage) : kb.i32(first);
  return kb.gepBytes(barriers, kb.shl(slot, 3));
}

/// One thread issues every TMA load: Q once, then per key block K and V
/// into the ring stage the consumers have released.
void HopperForwardEmitter::emitProducer() {
  setMaxRegisters(kb, config.producerRegisters, /*increase=*/false);
  Value leader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                       kb.i32(0));
  auto ifOp = scf::IfOp::create(b, loc, leader, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());

  forEachQueryBlock([&](Value visit) {
        // Q's buffer is free once the consumers finished the previous
        // query block's Q·Kᵀ (a fresh barrier passes parity 1 at once).
        if (config.persistent)
          mbarrierWait(kb, barrierAt(qEmptySlot(), Value()),
                       kb.xori(kb.andi(visit, 1), kb.i32(1)));
        Value qFull = barrierAt(qFullSlot(), Value());
        mbarrierArriveExpectTx(kb, qFull, config.blockM * dQK * 2);
        for (int64_t p = 0; p < dQK / 64; ++p)
          tmaLoad4d(kb, kb.gepBytes(qTile, kb.i32(p * qPanelBytes())), qMap,
                    {kb.i32(64 * p), q0, head, batch}, qFull);

        scf::ForOp::create(
            b, loc, firstBlock, numBlocks, kb.i32(1), ValueRange{},
            [&](OpBuilder &, Location, Value block, ValueRange) {
              Value stage = stageOf(block);
              // A fresh barrier counts as having completed the phase
              // before its first: the first round through the ring does
              // not wait.
              Value parity = kb.xori(parityOf(block), kb.i32(1));
              Value row0 = kb.mul(block, kb.i32(config.blockN));
              auto load = [&](int64_t emptySlot, int64_t fullSlot,
                              Value ring, int64_t tileBytes, int64_t dim,
                              Value map) {
                mbarrierWait(kb, barrierAt(emptySlot, stage), parity);
                Value full = barrierAt(fullSlot, stage);
                mbarrierArriveExpectTx(kb, full, tileBytes);
                for (int64_t p = 0; p < dim / 64; ++p)
                  tmaLoad4d(kb, ringTile(kb, ring, stage, p), map,
                            {kb.i32(64 * p), row0, kvHead, batch}, full);
              };
              load(kEmptySlot(), kFullSlot(), kRing, kTileBytes(), dQK,
                   kMap);
              load(vEmptySlot(), vFullSlot(), vRing, vTileBytes(), dV, vMap);
              scf::YieldOp::create(b, loc);
            });
  });
}

void HopperForwardEmitter::setHead(Value h) {
  head = h;
  kvHead = kb.divu(h, kb.divu(headsQ, headsKv));
  // ALiBi's unit: the folded softcap's C, 1 after a score_mod region
  // (natural domain), else the scale (raw scores).
  if (spec.alibi)
    alibi.emplace(kb, params, batch, h,
                  foldedSoftcap ? kb.f32(foldedSoftcap->second)
                  : spec.scoreMod && !additiveTerm ? Value()
                                                   : softmaxScale);
  // Where the O and LSE bases are computed decides which tiles ptxas fits
  // in 240 registers, and measurably nothing else (H200, 2026-12-01):
  // computed in the epilogue, D = 256 block-n 80 and D = 128 block-n 192
  // fit without a mask (kept live across the key loop they spill 24 bytes)
  // and D = 256 runs 1% faster; on the length-major (causal) grid the
  // early bases keep D = 128 block-n 192 from spilling and D = 256 2-3%
  // faster.
  oBase = lseBase = Value();
  if (hopperLengthMajorTiles(spec)) {
    oBase = headBase(oArg, elt, oBatchHeadStride);
    lseBase = spec.withLse
                  ? headBase(lseArg, b.getF32Type(), lseBatchHeadStride)
                  : lseArg;
  }
}

Value HopperForwardEmitter::headBase(Value ptr, Type eltTy,
                                     std::array<Value, 2> stride) {
  Value off = kb.add(kb.mul(kb.zext64(batch), stride[0]),
                     kb.mul(kb.zext64(head), stride[1]));
  return kb.gep(ptr, eltTy, off);
}

/// Runs `body` for each query block this thread block owns, with the head,
/// setQueryBlock and ringBase set and `visit` counting the block's query
/// blocks. One block per query block (the default grid) needs no loop: the
/// ring starts at 0, and the kernel stays as lean as before persistence;
/// with causal masks x is a (head, query block) tile taken length-major
/// (hopperLengthMajorTiles), so the hardware dispatches every head's
/// longest query blocks first.
/// The persistent grid (x blocks per batch, y = batch) walks the batch's
/// heads · query blocks (head-major; causal length-major), block x taking
/// x, x + gridDim.x, ...:
/// the blocks running at any time hold neighbouring query blocks of one or
/// two heads, which read the same K/V tiles from L2. (Walking one head per
/// thread block instead put up to 132 heads' K/V in flight and went to
/// DRAM: 20% slower at D = 256, N = 1024 on the H200.)
void HopperForwardEmitter::forEachQueryBlock(
    llvm::function_ref<void(Value visit)> body) {
  Value blockX = NVVM::BlockIdXOp::create(b, loc, b.getI32Type());
  if (!config.persistent) {
    ringBase = kb.i32(0);
    if (hopperLengthMajorTiles(spec)) {
      setHead(kb.remu(blockX, headsQ));
      setQueryBlock(kb.divu(blockX, headsQ));
    } else {
      setQueryBlock(blockX);
    }
    body(kb.i32(0));
    return;
  }
  Value gridX = NVVM::GridDimXOp::create(b, loc, b.getI32Type());
  Value tiles = kb.mul(numQueryBlocks, headsQ);
  scf::ForOp::create(
      b, loc, blockX, tiles, gridX, ValueRange{kb.i32(0), kb.i32(0)},
      [&](OpBuilder &, Location, Value tile, ValueRange iter) {
        ringBase = iter[0];
        Value visit = iter[1];
        if (hopperLengthMajorTiles(spec)) {
          setHead(kb.remu(tile, headsQ));
          setQueryBlock(kb.divu(tile, headsQ));
        } else {
          setHead(kb.divu(tile, numQueryBlocks));
          setQueryBlock(kb.remu(tile, numQueryBlocks));
        }
        body(visit);
        scf::YieldOp::create(
            b, loc,
            ValueRange{kb.add(ringBase, blockCount()),
                       kb.add(visit, kb.i32(1))});
      });
}

Value HopperForwardEmitter::stageOf(Value block) {
  return kb.remu(ringIndex(block), kb.i32(config.stages));
}

Value HopperForwardEmitter::parityOf(Value block) {
  return kb.andi(kb.divu(ringIndex(block), kb.i32(config.stages)), 1);
}

/// One arrival per consumer warp releases a stage (count 4 per consumer).
void HopperForwardEmitter::release(int64_t emptySlot, Value block) {
  Value laneZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         lane, kb.i32(0));
  auto ifOp = scf::IfOp::create(b, loc, laneZero, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  mbarrierArrive(kb, barrierAt(emptySlot, stageOf(block)));
}

/// Waits for K(block) and issues S = Q·Kᵀ: ⌈D / 16⌉ wgmma k-steps (four per
/// 64-column panel), the first overwriting the accumulators. Not committed.
/// `fenceAlso` (O and P of the overlapped schedule) goes through the same
/// fence and comes back as `fenced`.
Value HopperForwardEmitter::issueScores(Value block, ValueRange fenceAlso,
                                        SmallVector<Value> &fenced) {
  Value stage = stageOf(block);
  mbarrierWait(kb, barrierAt(kFullSlot(), stage), parityOf(block));
  Value kDesc = ringDescriptor(kb, kRing, stage, /*mnMajor=*/false);
  SmallVector<Value> regs{attn_gpu::FragUndefOp::create(
      b, loc, attn_gpu::FragmentType::getAccumulator(b.getContext(),
                                                     config.blockN))};
  regs.append(fenceAlso.begin(), fenceAlso.end());
  regs = wgmmaFence(kb, regs);
  Value s = regs.front();
  fenced.assign(regs.begin() + 1, regs.end());
  for (int64_t kk = 0; kk < llvm::alignTo(spec.headDim, 16) / 16; ++kk) {
    int64_t panel = kk / 4, within = (kk % 4) * 32;
    Value a = wgmmaDescriptorAdvance(kb, qDesc,
                                     panel * qPanelBytes() + within);
    Value bDesc = wgmmaDescriptorAdvance(kb, kDesc,
                                         panel * kvPanelBytes() + within);
    s = warpgroupMma(kb, a, bDesc, s, /*accumulate=*/kk > 0,
                     /*transposeB=*/false, elt);
  }
  return s;
}

/// Waits for V(block) and issues O += P·V: blockN / 16 k-steps of 16 keys,
/// P from registers, V MN-major (Dv contiguous: the leading offset steps
/// between 64-column panels, the stride between groups of 8 keys). The
/// caller fenced `o` and `p`. Not committed.
Value HopperForwardEmitter::issuePV(Value block, Value p, Value o) {
  Value stage = stageOf(block);
  Value vDesc = ringDescriptor(kb, vRing, stage, /*mnMajor=*/true);
  for (int64_t kk = 0; kk < config.blockN / 16; ++kk) {
    Value bDesc = wgmmaDescriptorAdvance(kb, vDesc, kk * 16 * kPanelRowBytes);
    o = warpgroupMma(kb, p, bDesc, o, /*accumulate=*/true,
                     /*transposeB=*/true, Type(), /*aKStep=*/kk);
  }
  return o;
}

/// Applies the score_mod to every score (natural domain: the scale
/// first), then masks blocks outside [firstFull, numFull) (the band's edges
/// and the sequence tail): register 4·nt + e is key kv0 + 8·nt + 2t + e % 2
/// of query row warpRow0 + g + 8·(e / 2).
Value HopperForwardEmitter::modifyAndMaskScores(Value block, Value scores) {
  int64_t sTiles = config.blockN / 8;
  Value kv0 = kb.mul(block, kb.i32(config.blockN));
  // The score_mod is applied register by register.
  SmallVector<Value> s;
  if (foldedSoftcap || spec.scoreMod || alibi)
    s = kb.registers(scores);
  if (foldedSoftcap) {
    Value k = kb.fmul(softmaxScale, kb.f32(foldedSoftcap->first));
    for (Value &v : s)
      v = attn_gpu::TanhOp::create(b, loc, kb.fmul(v, k));
  } else if (spec.scoreMod) {
    Value scale = softmaxScale;
    SmallVector<Value> rows;
    for (int h = 0; h < 2; ++h)
      rows.push_back(kb.add(warpRow0, kb.add(g, kb.i32(8 * h))));
    Value keyBase = kb.add(kv0, kb.shl(t, 1));
    if (!additiveTerm) {
      ScoreModTileEmitter mod(b, loc, *spec.scoreMod, batch, head, rows,
                              keyBase);
      for (int64_t nt = 0; nt < sTiles; ++nt)
        for (int e = 0; e < 4; ++e) {
          Value &v = s[4 * nt + e];
          v = mod.emit(kb.fmul(v, scale), e / 2, 8 * nt + (e & 1));
        }
    } else {
      // score · scale ± r · y = scale · (score ± (r / scale) · y): the raw
      // score plus the term, with plain attention's softmax constant.
      const AdditiveScoreMod &add = *additiveTerm;
      SmallVector<Value> roots{add.perKey};
      if (add.rowFactor)
        roots.push_back(add.rowFactor);
      ScoreModTileEmitter mod(b, loc, *spec.scoreMod, batch, head, rows,
                              keyBase, roots);
      Value constant = kb.fdiv(kb.f32(add.sign), softmaxScale);
      std::array<Value, 2> factor = {constant, constant};
      if (add.rowFactor)
        for (int h = 0; h < 2; ++h)
          factor[h] = kb.fmul(mod.rowValue(h, add.rowFactor), constant);
      for (int64_t nt = 0; nt < sTiles; ++nt)
        for (int e = 0; e < 4; ++e) {
          Value &v = s[4 * nt + e];
          v = LLVM::FMAOp::create(b, loc, mod.emit({}, e / 2, 8 * nt + (e & 1)),
                                  factor[e / 2], v);
        }
    }
  }
  // ALiBi after the score modification: register 4·nt + e is row
  // warpRow0 + g + 8·(e/2), key kv0 + 2t + 8·nt + e%2.
  if (alibi) {
    Value base = alibi->rowBase(kb.sub(kb.add(kb.add(warpRow0, g), bandOffset),
                                       kb.add(kv0, kb.shl(t, 1))));
    for (int64_t nt = 0; nt < sTiles; ++nt)
      for (int e = 0; e < 4; ++e)
        s[4 * nt + e] = alibi->apply(s[4 * nt + e], base,
                                     8 * (e / 2) - 8 * nt - (e & 1));
  }
  if (!s.empty())
    scores = kb.fragment(scores.getType(), s);
  Value needsMask = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                          block, numFull);
  if (spec.band.hasLeft() || keyStart)
    needsMask = arith::OrIOp::create(b, loc, needsMask,
                                     kb.slt(block, firstFull));
  auto ifOp = scf::IfOp::create(b, loc, scores.getType(), needsMask,
                                /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value masked =
      maskScores(kb, spec.band, scores, kv0, t, keyStart, keyEnd, bandOffset,
                 [&] { return kb.add(warpRow0, g); })
          .front();
  scf::YieldOp::create(b, loc, masked);
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(b, loc, scores);
  return ifOp.getResult(0);
}

/// Online softmax of masked scores `s` in the exp2 domain (both forward
/// families' attn_gpu.online_softmax): updates m and l in `out` from `in`,
/// returns P as the A operand of P·V and the rows' rescaling factors.
Value HopperForwardEmitter::softmax(Value s, const State &in, State &out,
                                    Value &alpha) {
  // With a score_mod the scale was applied before it: c = log2(e); a
  // folded softcap leaves its C here too, an additive one the scale.
  Value c = foldedSoftcap ? kb.f32(foldedSoftcap->second * M_LOG2E)
            : spec.scoreMod && !additiveTerm
                ? kb.f32(M_LOG2E)
                : kb.fmul(softmaxScale, kb.f32(M_LOG2E));
  auto step = attn_gpu::OnlineSoftmaxOp::create(b, loc, s, in.m, in.l, c,
                                                config.exp2Emulated);
  out.m = step.getNewM();
  out.l = step.getNewL();
  alpha = step.getAlpha();
  return attn_gpu::ToOperandOp::create(
      b, loc, attn_gpu::FragmentType::getOperandA(elt, config.blockN),
      step.getP());
}

/// One key block, in order: S, softmax, P·V (no overlap).
HopperForwardEmitter::State
HopperForwardEmitter::emitConsumerBlock(Value block, const State &in) {
  SmallVector<Value> none;
  Value s = issueScores(block, {}, none);
  wgmmaCommitGroup(kb);
  s = wgmmaWaitGroup(kb, 0, s).front();
  release(kEmptySlot(), block);
  State out;
  Value alpha;
  Value p = softmax(modifyAndMaskScores(block, s), in, out, alpha);
  Value o = attn_gpu::ScaleRowsOp::create(b, loc, in.o, alpha);
  Value stage = stageOf(block);
  mbarrierWait(kb, barrierAt(vFullSlot(), stage), parityOf(block));
  SmallVector<Value> fenced = wgmmaFence(kb, {o, p});
  o = issuePV(block, fenced[1], fenced[0]);
  wgmmaCommitGroup(kb);
  out.o = wgmmaWaitGroup(kb, 0, o).front();
  release(vEmptySlot(), block);
  return out;
}

/// Block `block` >= 1 with intra-warpgroup overlap: S(block) = Q·K(block)ᵀ
/// and O += P(block-1)·V(block-1) are both in flight while the softmax of
/// S(block) runs once the first completes (FlashAttention-3's
/// intra-warpgroup pipelining). `in.o` is already rescaled for P(block-1).
HopperForwardEmitter::State
HopperForwardEmitter::emitOverlappedBlock(Value block, const State &in,
                                          Value &p) {
  Value prev = kb.sub(block, kb.i32(1));
  SmallVector<Value> fenced;
  schedulerSync();
  Value s = issueScores(block, {in.o, p}, fenced);
  wgmmaCommitGroup(kb);
  Value prevStage = stageOf(prev);
  mbarrierWait(kb, barrierAt(vFullSlot(), prevStage), parityOf(prev));
  Value fencedP = fenced[1];
  Value o = issuePV(prev, fencedP, fenced[0]);
  wgmmaCommitGroup(kb);
  schedulerArrive();
  // The older group (S) is complete; P·V may still run.
  s = wgmmaWaitGroup(kb, 1, s).front();
  release(kEmptySlot(), block);
  State out;
  Value alpha;
  Value nextP = softmax(modifyAndMaskScores(block, s), in, out, alpha);
  // P(block-1) stays live until its wgmma is done.
  o = wgmmaWaitGroup(kb, 0, {o, fencedP}).front();
  release(vEmptySlot(), prev);
  out.o = attn_gpu::ScaleRowsOp::create(b, loc, o, alpha);
  p = nextP;
  return out;
}

/// Normalise and write this thread's O elements straight from registers
/// (4-byte pairs), and LSE from one thread per row.
void HopperForwardEmitter::emitEpilogue(const State &state) {
  Value oPtr = oBase ? oBase : headBase(oArg, elt, oBatchHeadStride);
  Value lsePtr = lseBase ? lseBase
                 : spec.withLse
                     ? headBase(lseArg, b.getF32Type(), lseBatchHeadStride)
                     : lseArg;
  Value zero = kb.f32(0.0);
  Value negInf = kb.f32(-std::numeric_limits<double>::infinity());
  SmallVector<Value> o = kb.registers(state.o), m = kb.registers(state.m),
                     ls = kb.registers(state.l);
  for (int h = 0; h < 2; ++h) {
    Value l = ls[h];
    l = kb.fadd(l, kb.shuffleXor(l, 1));
    l = kb.fadd(l, kb.shuffleXor(l, 2));
    // Rows that saw no key: O = 0 and LSE = -inf, never NaN.
    Value inv = kb.select(kb.feq(l, zero), zero, kb.fdiv(kb.f32(1.0), l));
    Value row = kb.add(warpRow0, kb.add(g, kb.i32(8 * h)));
    auto ifOp = scf::IfOp::create(b, loc, kb.slt(row, seqQ),
                                  /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value rowPtr = kb.gep(oPtr, elt,
                          kb.add(kb.mul(kb.sext64(row), oRowStride),
                                 kb.sext64(kb.shl(t, 1))));
    for (int64_t nt = 0; nt < spec.valueHeadDim / 8; ++nt) { // not the padding
      Value packed = kb.packPair(elt, kb.fmul(o[4 * nt + 2 * h], inv),
                                 kb.fmul(o[4 * nt + 2 * h + 1], inv));
      LLVM::StoreOp::create(b, loc, packed,
                            kb.gep(rowPtr, elt, kb.i32(8 * nt)), 4);
    }
    if (spec.withLse) {
      auto lseIf = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t,
                                kb.i32(0)),
          /*withElse=*/false);
      b.setInsertionPointToStart(&lseIf.getThenRegion().front());
      Value lse = kb.fmul(kb.fadd(m[h], kb.log2(l)), kb.f32(M_LN2));
      lse = kb.select(kb.feq(l, zero), negInf, lse);
      LLVM::StoreOp::create(b, loc, lse,
                            kb.gep(lsePtr, b.getF32Type(), kb.sext64(row)));
    }
  }
}

void HopperForwardEmitter::emitConsumer() {
  setMaxRegisters(kb, config.consumerRegisters, /*increase=*/true);
  Value consumer = kb.sub(warpgroup, kb.i32(1));
  Value warpInGroup = kb.andi(kb.lshr(tid, 5), 3);
  Value rowInBlock = kb.add(kb.mul(consumer, kb.i32(64)),
                            kb.mul(warpInGroup, kb.i32(16)));
  // This warpgroup's 64 rows of each Q panel.
  qDesc = wgmmaDescriptor(
      kb, kb.gepBytes(qTile, kb.mul(consumer, kb.i32(64 * kPanelRowBytes))),
      16, 8 * kPanelRowBytes);

  // Ping-pong between the consumers (FlashAttention-3): consumer c waits on
  // named barrier c + 1 (0 is bar.sync's) before issuing its GEMMs and then
  // arrives on the next consumer's, round-robin; the last consumer lets
  // consumer 0 go first.
  int64_t n = config.consumers();
  if (config.overlap && config.pingPong && n >= 2) {
    myTurn = kb.add(consumer, kb.i32(1));
    Value next = kb.add(consumer, kb.i32(1));
    next = kb.select(kb.slt(next, kb.i32(n)), next, kb.i32(0));
    otherTurn = kb.add(next, kb.i32(1));
    auto last = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, consumer,
                              kb.i32(n - 1)),
        /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&last.getThenRegion().front());
    schedulerArrive();
  }

  forEachQueryBlock([&](Value visit) {
    warpRow0 = kb.add(q0, rowInBlock);
    mbarrierWait(kb, barrierAt(qFullSlot(), Value()), kb.andi(visit, 1));
    emitConsumerQueryBlock();
  });
}

/// Tells the producer this warp is done reading Q (one arrival per warp);
/// only the persistent grid loads a next Q.
void HopperForwardEmitter::releaseQ() {
  if (!config.persistent)
    return;
  Value laneZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         lane, kb.i32(0));
  auto ifOp = scf::IfOp::create(b, loc, laneZero, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  mbarrierArrive(kb, barrierAt(qEmptySlot(), Value()));
}

/// One query block of a consumer: its key blocks, then the epilogue.
void HopperForwardEmitter::emitConsumerQueryBlock() {
  Value zero = kb.f32(0.0);
  Value negInf = kb.f32(-std::numeric_limits<double>::infinity());
  auto rows = attn_gpu::FragmentType::getRows(b.getContext());
  State init;
  init.o = attn_gpu::FragSplatOp::create(
      b, loc,
      attn_gpu::FragmentType::getAccumulator(b.getContext(), dV), zero);
  init.m = attn_gpu::FragSplatOp::create(b, loc, rows, negInf);
  init.l = attn_gpu::FragSplatOp::create(b, loc, rows, zero);
  if (!config.overlap) {
    auto loop = scf::ForOp::create(
        b, loc, firstBlock, numBlocks, kb.i32(1), flatten(init),
        [&](OpBuilder &, Location, Value block, ValueRange iterArgs) {
          State next = emitConsumerBlock(block, unflatten(iterArgs));
          scf::YieldOp::create(b, loc, flatten(next));
        });
    releaseQ();
    emitEpilogue(unflatten(loop.getResults()));
    return;
  }

  // Overlapped: the first block's scores and softmax first, then per block
  // b > first S(b) with P(b-1)·V(b-1), and the last P·V after the loop. A
  // query block with no key at all skips everything (O = 0, LSE = -inf).
  auto any = scf::IfOp::create(
      b, loc, TypeRange(ValueRange(flatten(init))),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, numBlocks,
                            firstBlock),
      /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&any.getThenRegion().front());
    Value first = firstBlock;
    SmallVector<Value> none;
    schedulerSync();
    Value s = issueScores(first, {}, none);
    wgmmaCommitGroup(kb);
    schedulerArrive();
    s = wgmmaWaitGroup(kb, 0, s).front();
    release(kEmptySlot(), first);
    State state;
    Value alpha;
    Value p = softmax(modifyAndMaskScores(first, s), init, state, alpha);
    state.o = init.o; // zero: no rescale needed
    SmallVector<Value> iter = flatten(state);
    iter.push_back(p);
    auto loop = scf::ForOp::create(
        b, loc, kb.add(firstBlock, kb.i32(1)), numBlocks, kb.i32(1), iter,
        [&](OpBuilder &, Location, Value block, ValueRange iterArgs) {
          State in = unflatten(iterArgs.drop_back());
          Value carriedP = iterArgs.back();
          State next = emitOverlappedBlock(block, in, carriedP);
          SmallVector<Value> yield = flatten(next);
          yield.push_back(carriedP);
          scf::YieldOp::create(b, loc, yield);
        });
    // Every Q·Kᵀ of this query block is complete.
    releaseQ();
    ValueRange results = loop.getResults();
    State last = unflatten(results.drop_back());
    Value lastP = results.back();
    Value lastBlock = kb.sub(numBlocks, kb.i32(1));
    Value lastStage = stageOf(lastBlock);
    mbarrierWait(kb, barrierAt(vFullSlot(), lastStage), parityOf(lastBlock));
    schedulerSync();
    SmallVector<Value> fenced = wgmmaFence(kb, {last.o, lastP});
    Value o = issuePV(lastBlock, fenced[1], fenced[0]);
    wgmmaCommitGroup(kb);
    schedulerArrive();
    last.o = wgmmaWaitGroup(kb, 0, o).front();
    release(vEmptySlot(), lastBlock);
    scf::YieldOp::create(b, loc, flatten(last));
    b.setInsertionPointToStart(&any.getElseRegion().front());
    releaseQ();
    scf::YieldOp::create(b, loc, flatten(init));
  }
  emitEpilogue(unflatten(any.getResults()));
}

void HopperForwardEmitter::setQueryBlock(Value queryBlockIndex) {
  const MaskBand &band = spec.band;
  Value qBlock = queryBlockIndex;
  // Causal (either alignment), longest first: the last query blocks see
  // the most keys.
  if (band.hasRight() && !band.hasLeft())
    qBlock = kb.sub(kb.sub(numQueryBlocks, kb.i32(1)), qBlock);
  q0 = kb.mul(qBlock, kb.i32(config.blockM));
  // Block skipping (the key blocks outside the band and the key range
  // are never loaded).
  Value rowsHere = kb.minsi(kb.i32(config.blockM), kb.sub(seqQ, q0));
  nvvm::ForwardKeyWalk walk =
      nvvm::forwardKeyWalk(kb, band, config.blockN, q0, rowsHere, bandOffset,
                           seqKv, {keyStart, keyEnd});
  firstBlock = walk.firstBlock;
  numBlocks = walk.numBlocks;
  firstFull = walk.firstFull;
  numFull = walk.numFull;
}

void HopperForwardEmitter::emit(LLVM::LLVMFuncOp func) {
  elt = spec.elementType;
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  params.bind(entry);
  oArg = params["o"];
  lseArg = params["lse"];
  seqQ = params["seq_q"];
  seqKv = params["seq_kv"];
  softmaxScale = params["softmax_scale"];
  headsQ = params["heads_q"];
  headsKv = params["heads_kv"];
  oBatchHeadStride = {params.stride("o", 0), params.stride("o", 1)};
  lseBatchHeadStride = {params["lse_stride_b"], params["lse_stride_h"]};
  oRowStride = params.stride("o", 2);
  qMap = params["q_tmap"];
  kMap = params["k_tmap"];
  vMap = params["v_tmap"];
  bandOffset = spec.band.topLeft ? kb.i32(0) : kb.sub(seqKv, seqQ);
  if (spec.scoreMod)
    foldedSoftcap = matchSoftcap(*spec.scoreMod);
  if (spec.scoreMod && !foldedSoftcap)
    additiveTerm = matchAdditiveScoreMod(*spec.scoreMod);

  Type i32 = b.getI32Type();
  tid = NVVM::ThreadIdXOp::create(b, loc, i32);
  warpgroup = kb.lshr(tid, 7);
  lane = kb.andi(tid, 31);
  g = kb.lshr(lane, 2);
  t = kb.andi(lane, 3);
  numQueryBlocks = kb.divu(kb.add(seqQ, kb.i32(config.blockM - 1)),
                           kb.i32(config.blockM));
  // The default grid's y is batch · heads_q; the persistent grid's and
  // the length-major one's is the batch, and each tile names its head
  // (forEachQueryBlock).
  Value blockY = NVVM::BlockIdYOp::create(b, loc, i32);
  if (config.persistent || hopperLengthMajorTiles(spec)) {
    batch = blockY;
  } else {
    batch = kb.divu(blockY, headsQ);
    setHead(kb.remu(blockY, headsQ));
  }
  // Key padding: batch entry b sees keys [key_start[b], key_end[b]) only.
  nvvm::KeyBounds bounds =
      nvvm::keyBoundsOf(kb, params, spec.keyRange, batch, seqKv);
  keyStart = bounds.start;
  keyEnd = bounds.end;

  // Dynamic shared memory, rounded up to 1024 bytes (the swizzle atom):
  // Q, the K ring, the V ring, then the mbarriers.
  Value smem = LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
      kHopperSharedMemorySymbol);
  Value addr = sharedAddress(kb, smem);
  Value pad = kb.sub(kb.andi(kb.add(addr, kb.i32(1023)), ~int64_t(1023)),
                     addr);
  qTile = kb.gepBytes(smem, pad);
  Value kBase = kb.gepBytes(qTile, kb.i32(config.blockM * dQK * 2));
  Value vBase = kb.gepBytes(kBase, kb.i32(config.stages * kTileBytes()));
  barriers = kb.gepBytes(vBase, kb.i32(config.stages * vTileBytes()));
  kRing = ringView(kb, kBase, config.stages, config.blockN, dQK, elt);
  vRing = ringView(kb, vBase, config.stages, config.blockN, dV, elt);

  // Thread 0 initialises the mbarriers: the "full" ones expect one
  // arrival (the producer's, with the TMA bytes), the "empty" ones (K, V
  // stages and Q) one per consumer warp.
  {
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                        kb.i32(0));
    auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    int64_t consumerWarps = 4 * config.consumers();
    mbarrierInit(kb, barrierAt(qFullSlot(), Value()), 1);
    mbarrierInit(kb, barrierAt(qEmptySlot(), Value()), consumerWarps);
    for (int64_t s = 0; s < config.stages; ++s) {
      mbarrierInit(kb, barrierAt(kFullSlot() + s, Value()), 1);
      mbarrierInit(kb, barrierAt(vFullSlot() + s, Value()), 1);
      mbarrierInit(kb, barrierAt(kEmptySlot() + s, Value()), consumerWarps);
      mbarrierInit(kb, barrierAt(vEmptySlot() + s, Value()), consumerWarps);
    }
    mbarrierInitFence(kb);
  }
  kb.barrier();

  ifThenElse(
      kb,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warpgroup,
                            kb.i32(0)),
      [&] { emitProducer(); }, [&] { emitConsumer(); });
  LLVM::ReturnOp::create(b, loc, ValueRange());
}

} // namespace

Operation *mlir::attn::emitHopperForwardKernel(
    OpBuilder &builder, gpu::GPUModuleOp module, StringRef name,
    const FlashKernelSpec &spec, const HopperKernelConfig &config) {
  Location loc = module.getLoc();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());

  if (!module.lookupSymbol(kHopperSharedMemorySymbol))
    LLVM::GlobalOp::create(
        builder, loc, LLVM::LLVMArrayType::get(builder.getI8Type(), 0),
        /*isConstant=*/false, LLVM::Linkage::External,
        kHopperSharedMemorySymbol, Attribute(), /*alignment=*/1024,
        /*addrSpace=*/3);

  LLVM::LLVMFuncOp func = nvvm::createHopperKernelFunc(
      builder, loc, name, hopperForwardSignature(spec), config.threads());

  HopperForwardEmitter emitter(builder, loc, spec, config);
  emitter.emit(func);
  return func;
}
