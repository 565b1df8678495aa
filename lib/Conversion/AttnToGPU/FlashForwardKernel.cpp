//===- FlashForwardKernel.cpp - the sm80-family forward kernel ------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Emits the body of the FlashAttention-2 forward kernel as a gpu.func of
// NVVM/LLVM/arith/scf operations. One thread block handles block_m query
// rows of one (batch, query head); each warp owns 16 of those rows. See the
// description of convert-attn-to-gpu for the algorithm and
// docs/kernel-abi.md for the parameters.
//
// Register fragments follow PTX's mma.m16n8k16 layouts: with g = lane / 4
// and t = lane % 4, accumulator element (row, col) of an 8-column tile is
// held by lane 4·(row % 8) + col / 2, rows g and g + 8, columns 2t and
// 2t + 1 — which is also the A-operand layout, so P feeds P·V directly.
//
//===----------------------------------------------------------------------===//

#include "KernelSignature.h"
#include "KernelTiles.h"
#include "ScoreModEmitter.h"
#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::attn;
using nvvm::FragmentAddresses;
using nvvm::KernelBuilder;
using nvvm::TileLayout;

namespace {

constexpr const char *kSharedMemorySymbol = "attn_dynamic_smem";

/// The forward kernel's parameters (docs/kernel-abi.md).
nvvm::KernelSignature forwardSignature(const FlashKernelSpec &spec) {
  ::attn::runtime::KernelAbi abi;
  abi.bias = spec.bias;
  abi.varlen = spec.varlen;
  abi.keyRange = spec.keyRange;
  abi.alibi = spec.alibi;
  return nvvm::KernelSignature(abi);
}

/// One m16k16 A-operand fragment as ldmatrix loads it: four packed
/// registers (a 16x16 `a` fragment's).
using AFrag = std::array<Value, 4>;

class FlashForwardEmitter {
public:
  FlashForwardEmitter(OpBuilder &builder, Location loc,
                      const FlashKernelSpec &spec,
                      const FlashKernelConfig &config)
      : kb(builder, loc), b(builder), loc(loc), spec(spec), config(config),
        params(forwardSignature(spec)), mTiles(config.warpRows / 16),
        dQK(spec.tileHeadDim()), dV(spec.tileValueHeadDim()),
        qLayout(config.blockM, dQK),
        kLayout(config.blockN, dQK), vLayout(config.blockN, dV),
        oLayout(config.blockM, dV) {}

  void emit(gpu::GPUFuncOp func);

private:
  // Loop-carried state of one 16-row m-tile: the O accumulator fragment
  // (16 x Dv), the row max (exp2 domain) and the thread-partial row sum. A
  // warp owns `mTiles` such tiles.
  struct RowState {
    Value o, m, l;
  };
  using State = SmallVector<RowState>;
  SmallVector<Value> flatten(const State &state) const;
  State unflatten(ValueRange values) const;

  Value swizzledAddress(Value tileBase, const TileLayout &layout, Value row,
                        Value chunk) {
    return nvvm::swizzledAddress(kb, tileBase, layout, row, chunk);
  }
  void loadTile(Value globalBase, Value rowStride, Value row0, Value rowsLeft,
                const TileLayout &layout, Value sharedTile,
                int64_t width) {
    nvvm::loadTileAsync(kb, elt, config.threads(), tid, globalBase, rowStride,
                        row0, rowsLeft, layout, sharedTile, width / 8);
  }
  AFrag loadQFragment(ArrayRef<Value> qPtrs, int64_t mt, int64_t kk);
  void issueKvLoads(Value block, bool key);
  /// Global query row of this thread's row `h` (0: g, 1: g + 8) of m-tile
  /// `mt`.
  Value queryRow(int64_t mt, int h);
  State emitBlock(Value block, const State &in);
  /// Tile `nTile` of `acc` += A (k-step `aKStep` of `a`) · B (b0, b1), one
  /// mma.sync (attn_gpu.warp_mma).
  Value warpMma(Value a, Value b0, Value b1, Value acc, int64_t nTile,
                int64_t aKStep = 0) {
    return attn_gpu::WarpMmaOp::create(b, loc, a, b0, b1, acc, nTile, aKStep);
  }
  void emitEpilogue(const State &state);

  KernelBuilder kb;
  OpBuilder &b;
  Location loc;
  const FlashKernelSpec &spec;
  const FlashKernelConfig &config;
  nvvm::KernelSignature params;
  int64_t mTiles;
  int64_t dQK, dV; // head dims as computed (FlashKernelSpec::tileHeadDim)
  TileLayout qLayout, kLayout, vLayout, oLayout;
  Type elt;

  // Kernel-wide values.
  Value qPtr, kPtr, vPtr, oPtr, lsePtr;
  Value biasPtr, biasRowStride; // this (batch, head)'s bias [Nq, Nk]
  Value seqQ, seqKv, diagonal; // diagonal = Nk - Nq (causal alignment)
  Value keyEnd;                // keys at or past it are masked: Nk, or key_range
  Value keyStart;              // key_range: keys before it are masked
  Value softmaxScale;          // the run-time scale of the scores (f32)
  Value bandOffset;            // d(i) - i: Nk - Nq bottom-right, 0 top-left
  Value batchIdx, headIdx;     // for score_mod
  std::optional<nvvm::AlibiTerm> alibi; // alibi_slopes: its term
  Value qRowStride, kRowStride, vRowStride, oRowStride;
  Value tid, lane, warp, g, t;
  Value q0, smem, qTile, kRing, vRing;
  Value numBlocks, numFull; // key blocks visited; those needing no mask
  Value firstBlock, firstFull; // the same from the left (sliding windows)
  SmallVector<SmallVector<AFrag>> qFrags; // [mt][kk] when Q stays in registers
  std::optional<FragmentAddresses> qAddresses, kAddresses, vAddresses;
};

SmallVector<Value> FlashForwardEmitter::flatten(const State &state) const {
  SmallVector<Value> values;
  for (const RowState &rs : state)
    values.append({rs.o, rs.m, rs.l});
  return values;
}

FlashForwardEmitter::State
FlashForwardEmitter::unflatten(ValueRange values) const {
  State state;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    state.push_back({values[3 * mt], values[3 * mt + 1], values[3 * mt + 2]});
  return state;
}

/// The A fragment of Q for m-tile `mt`, head-dim columns 16·kk .. +15.
AFrag FlashForwardEmitter::loadQFragment(ArrayRef<Value> qPtrs, int64_t mt,
                                         int64_t kk) {
  return kb.ldmatrixX4(qAddresses->address(qPtrs, 16 * mt, kk),
                       /*transpose=*/false);
}

void FlashForwardEmitter::issueKvLoads(Value block, bool key) {
  const TileLayout &layout = key ? kLayout : vLayout;
  Value stage = kb.remu(block, kb.i32(config.stages));
  Value ring = key ? kRing : vRing;
  Value tile = kb.gepBytes(ring, kb.mul(stage, kb.i32(layout.bytes())));
  Value row0 = kb.mul(block, kb.i32(config.blockN));
  Value rowsLeft = kb.sub(seqKv, row0);
  loadTile(key ? kPtr : vPtr, key ? kRowStride : vRowStride, row0, rowsLeft,
           layout, tile, key ? spec.headDim : spec.valueHeadDim);
}

Value FlashForwardEmitter::queryRow(int64_t mt, int h) {
  return kb.add(kb.add(q0, kb.mul(warp, kb.i32(config.warpRows))),
                kb.add(g, kb.i32(16 * mt + 8 * h)));
}

/// One key/value block: S = Q·Kᵀ, online softmax, O += P·V, with the next
/// block's K and V prefetched into the other ring stage.
FlashForwardEmitter::State
FlashForwardEmitter::emitBlock(Value block, const State &in) {
  Value next = kb.add(block, kb.i32(1));
  Value hasNext = kb.slt(next, numBlocks);
  auto prefetch = [&](bool key) {
    auto ifOp = scf::IfOp::create(b, loc, hasNext, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    issueKvLoads(next, key);
  };

  // K(block) has landed (only the newest group, V(block), may be pending)
  // and every warp is done with block - 1, whose ring stage we refill.
  kb.cpAsyncWait(1);
  kb.barrier();
  prefetch(/*key=*/true);
  kb.cpAsyncCommit(); // possibly empty: keeps the group count regular

  Value stage = kb.remu(block, kb.i32(config.stages));
  Value kTile = kb.gepBytes(kRing, kb.mul(stage, kb.i32(kLayout.bytes())));
  Value vTile = kb.gepBytes(vRing, kb.mul(stage, kb.i32(vLayout.bytes())));

  // S = Q · Kᵀ: blockN / 8 accumulator tiles per m-tile. Each K fragment
  // is loaded once and used by all of the warp's m-tiles.
  int64_t sTiles = config.blockN / 8;
  MLIRContext *ctx = b.getContext();
  auto sTy = attn_gpu::FragmentType::getAccumulator(ctx, config.blockN);
  auto qTy = attn_gpu::FragmentType::getOperandA(elt, 16);
  Value zero = kb.f32(0.0);
  SmallVector<Value> s(mTiles,
                       attn_gpu::FragSplatOp::create(b, loc, sTy, zero));
  SmallVector<Value> qPtrs, kPtrs = kAddresses->lanePointers(kTile);
  if (!config.qInRegisters)
    qPtrs = qAddresses->lanePointers(qTile);
  for (int64_t kk = 0; kk < dQK / 16; ++kk) {
    SmallVector<Value> a;
    for (int64_t mt = 0; mt < mTiles; ++mt)
      a.push_back(kb.fragment(qTy, config.qInRegisters
                                       ? qFrags[mt][kk]
                                       : loadQFragment(qPtrs, mt, kk)));
    for (int64_t np = 0; np < sTiles / 2; ++np) {
      auto r = kb.ldmatrixX4(kAddresses->address(kPtrs, 16 * np, kk),
                             /*transpose=*/false);
      for (int64_t mt = 0; mt < mTiles; ++mt) {
        s[mt] = warpMma(a[mt], r[0], r[1], s[mt], 2 * np);
        s[mt] = warpMma(a[mt], r[2], r[3], s[mt], 2 * np + 1);
      }
    }
  }

  // Mask where needed: padding past Nk, and keys above the (bottom-right
  // aligned) diagonal.
  // Element e of tile nt in m-tile mt, row half h, is key
  // kv0 + 2t + (8·nt + e%2) of query row q0 + warp·warpRows + g + 16·mt + 8·h,
  // so both tests compare a compile-time constant with one per-thread value:
  //   key < Nk            <=>  8·nt + e%2 < Nk - kv0 - 2t
  //   key <= row + Nk-Nq  <=>  8·nt + e%2 - 16·mt - 8·h <=
  //                            (Nk - Nq) - kv0 - 2t + q0 + warp·warpRows + g
  const MaskBand &band = spec.band;
  // score_mod on the natural-domain scaled score of every element, then
  // ALiBi's term and the bias, before the mask (masked elements are
  // replaced below whatever they give). ALiBi alone adds its term to the
  // raw score.
  bool natural = spec.scoreMod || spec.bias;
  if (natural || alibi) {
    // Element by element: tile nt's register e of m-tile mt.
    SmallVector<SmallVector<Value>> regs;
    for (Value tile : s)
      regs.push_back(kb.registers(tile));
    Value kv0 = kb.mul(block, kb.i32(config.blockN));
    Value keyBase = kb.add(kv0, kb.shl(t, 1));
    Value scale = softmaxScale;
    // Bias reads are clamped into [Nq, Nk]: padding rows and keys read a
    // real element and are masked below.
    Value lastRow = kb.sub(seqQ, kb.i32(1)), lastKey = kb.sub(seqKv, kb.i32(1));
    std::optional<ScoreModTileEmitter> mod;
    if (spec.scoreMod) {
      SmallVector<Value> rows;
      for (int64_t mt = 0; mt < mTiles; ++mt)
        for (int h = 0; h < 2; ++h)
          rows.push_back(queryRow(mt, h));
      mod.emplace(b, loc, *spec.scoreMod, batchIdx, headIdx, rows, keyBase);
    }
    // ALiBi: d(row) − key of the thread's first element (row queryRow(0,
    // 0), key keyBase); the others differ by compile-time offsets, so one
    // register serves them all.
    Value alibiBase;
    if (alibi)
      alibiBase = alibi->rowBase(
          kb.sub(kb.add(queryRow(0, 0), bandOffset), keyBase));
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t nt = 0; nt < sTiles; ++nt)
        for (int e = 0; e < 4; ++e) {
          Value x = regs[mt][4 * nt + e];
          if (natural)
            x = kb.fmul(x, scale);
          if (mod)
            x = mod->emit(x, 2 * mt + e / 2, 8 * nt + (e & 1));
          if (alibi)
            x = alibi->apply(x, alibiBase,
                             16 * mt + 8 * (e / 2) - 8 * nt - (e & 1));
          if (spec.bias) {
            Value row = queryRow(mt, e / 2);
            Value key = kb.add(keyBase, kb.i32(8 * nt + (e & 1)));
            Value offset = kb.add(
                kb.mul(kb.sext64(kb.minsi(row, lastRow)), biasRowStride),
                kb.sext64(kb.minsi(key, lastKey)));
            Value raw = LLVM::LoadOp::create(b, loc, elt,
                                             kb.gep(biasPtr, elt, offset));
            x = kb.fadd(x, LLVM::FPExtOp::create(b, loc, b.getF32Type(), raw));
          }
          regs[mt][4 * nt + e] = x;
        }
    for (int64_t mt = 0; mt < mTiles; ++mt)
      s[mt] = kb.fragment(sTy, regs[mt]);
  }
  {
    // Only blocks at or past numFull (the diagonal and the sequence tail)
    // pay for the mask; one loop with a branch keeps register allocation
    // to one loop body.
    Value needsMask = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge, block, numFull);
    if (band.hasLeft() || keyStart)
      needsMask = arith::OrIOp::create(b, loc, needsMask,
                                       kb.slt(block, firstFull));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange(ValueRange(s)),
                                  needsMask, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value kv0 = kb.mul(block, kb.i32(config.blockN));
      scf::YieldOp::create(
          b, loc,
          maskScores(kb, band, s, kv0, t, keyStart, keyEnd, bandOffset,
                     [&] { return queryRow(0, 0); }));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, s);
    }
    s.assign(ifOp.getResults().begin(), ifOp.getResults().end());
  }

  // Online softmax in the exp2 domain: with c = scale·log2(e) > 0,
  // max(c·s) = c·max(s), and p = exp2(c·s - m) is one FMA and one ex2.
  // (With a score_mod or a bias the scale was applied before them:
  // c = log2(e).)
  Value c = natural
                ? kb.f32(M_LOG2E)
                : kb.fmul(softmaxScale, kb.f32(M_LOG2E));
  State out(mTiles);
  SmallVector<Value> p(mTiles); // A operands of P·V
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    auto step = attn_gpu::OnlineSoftmaxOp::create(b, loc, s[mt], in[mt].m,
                                                  in[mt].l, c,
                                                  /*exp2_fma_tiles=*/0);
    out[mt].m = step.getNewM();
    out[mt].l = step.getNewL();
    // Round P to the input type right away: the packed A fragments take
    // half the registers of the f32 probabilities.
    p[mt] = attn_gpu::ToOperandOp::create(
        b, loc, attn_gpu::FragmentType::getOperandA(elt, config.blockN),
        step.getP());
    out[mt].o =
        attn_gpu::ScaleRowsOp::create(b, loc, in[mt].o, step.getAlpha());
  }

  // V(block) has landed; refill the other V stage.
  kb.cpAsyncWait(1);
  kb.barrier();
  prefetch(/*key=*/false);
  kb.cpAsyncCommit();

  // O += P · V with P (rounded to the input type) straight from registers;
  // each V fragment is loaded once for all m-tiles.
  SmallVector<Value> vPtrs = vAddresses->lanePointers(vTile);
  for (int64_t kk = 0; kk < config.blockN / 16; ++kk) {
    for (int64_t dp = 0; dp < dV / 16; ++dp) {
      auto r = kb.ldmatrixX4(vAddresses->address(vPtrs, 16 * kk, dp),
                             /*transpose=*/true);
      for (int64_t mt = 0; mt < mTiles; ++mt) {
        Value &o = out[mt].o;
        o = warpMma(p[mt], r[0], r[1], o, 2 * dp, kk);
        o = warpMma(p[mt], r[2], r[3], o, 2 * dp + 1, kk);
      }
    }
  }
  return out;
}

void FlashForwardEmitter::emitEpilogue(const State &state) {
  kb.cpAsyncWait(0);
  kb.barrier(); // every warp is done with the Q/K/V tiles we now overwrite

  Value zero = kb.f32(0.0);
  Value negInf = kb.f32(-std::numeric_limits<double>::infinity());
  Value oTile = smem;
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    SmallVector<Value> o = kb.registers(state[mt].o),
                       m = kb.registers(state[mt].m),
                       ls = kb.registers(state[mt].l);
    std::array<Value, 2> sum, inv;
    for (int h = 0; h < 2; ++h) {
      Value l = ls[h];
      l = kb.fadd(l, kb.shuffleXor(l, 1));
      l = kb.fadd(l, kb.shuffleXor(l, 2));
      sum[h] = l;
      // Rows that saw no key: O = 0 (and LSE = -inf below), never NaN.
      inv[h] = kb.select(kb.feq(l, zero), zero, kb.fdiv(kb.f32(1.0), l));
    }

    // Stage the normalised O tile in shared memory...
    for (int64_t nt = 0; nt < dV / 8; ++nt)
      for (int h = 0; h < 2; ++h) {
        Value packed =
            kb.packPair(elt, kb.fmul(o[4 * nt + 2 * h], inv[h]),
                        kb.fmul(o[4 * nt + 2 * h + 1], inv[h]));
        Value row = kb.add(kb.mul(warp, kb.i32(config.warpRows)),
                           kb.add(g, kb.i32(16 * mt + 8 * h)));
        // Column 8·nt + 2t lives in chunk nt at byte 4t.
        Value addr = kb.gepBytes(
            swizzledAddress(oTile, oLayout, row, kb.i32(nt)), kb.shl(t, 2));
        LLVM::StoreOp::create(b, loc, packed, addr);
      }

    // ...and write LSE = (m + log2 l)·ln 2 from one thread per row.
    if (spec.withLse) {
      for (int h = 0; h < 2; ++h) {
        Value row = queryRow(mt, h);
        Value writes = kb.andb(
            kb.slt(row, seqQ),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t,
                                  kb.i32(0)));
        auto ifOp = scf::IfOp::create(b, loc, writes, /*withElse=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        Value lse = kb.fmul(kb.fadd(m[h], kb.log2(sum[h])),
                            kb.f32(M_LN2));
        lse = kb.select(kb.feq(sum[h], zero), negInf, lse);
        LLVM::StoreOp::create(b, loc, lse,
                              kb.gep(lsePtr, b.getF32Type(), kb.sext64(row)));
      }
    }
  }
  kb.barrier();

  // Coalesced 16-byte stores of the rows that exist.
  int64_t total = oLayout.rows * oLayout.chunks;
  int64_t chunkShift = llvm::Log2_64(oLayout.chunks);
  auto v4i32 = VectorType::get({4}, b.getI32Type());
  for (int64_t it = 0; it < total / config.threads(); ++it) {
    Value idx = kb.add(tid, kb.i32(it * config.threads()));
    Value row = kb.lshr(idx, chunkShift);
    Value chunk = kb.andi(idx, oLayout.chunks - 1);
    Value globalRow = kb.add(q0, row);
    Value stores = kb.slt(globalRow, seqQ);
    if (dV != spec.valueHeadDim) // the padding columns are not O's
      stores = kb.andb(stores, kb.slt(chunk, kb.i32(spec.valueHeadDim / 8)));
    auto ifOp = scf::IfOp::create(b, loc, stores, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value data = LLVM::LoadOp::create(
        b, loc, v4i32, swizzledAddress(oTile, oLayout, row, chunk), 16);
    Value offset = kb.add(kb.mul(kb.sext64(globalRow), oRowStride),
                          kb.sext64(kb.shl(chunk, 3)));
    LLVM::StoreOp::create(b, loc, data, kb.gep(oPtr, elt, offset), 16);
  }
}

void FlashForwardEmitter::emit(gpu::GPUFuncOp func) {
  elt = spec.elementType;
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  params.bind(entry);
  lsePtr = params["lse"];
  seqQ = params["seq_q"];
  seqKv = params["seq_kv"];
  softmaxScale = params["softmax_scale"];
  Value headsQ = params["heads_q"], headsKv = params["heads_kv"];
  qRowStride = params.stride("q", 2);
  kRowStride = params.stride("k", 2);
  vRowStride = params.stride("v", 2);
  oRowStride = params.stride("o", 2);
  diagonal = kb.sub(seqKv, seqQ);
  bandOffset = spec.band.topLeft ? kb.i32(0) : diagonal;

  Type i32 = b.getI32Type();
  tid = NVVM::ThreadIdXOp::create(b, loc, i32);
  lane = kb.andi(tid, 31);
  warp = kb.lshr(tid, 5);
  g = kb.lshr(lane, 2);
  t = kb.andi(lane, 3);
  Value qBlock = NVVM::BlockIdXOp::create(b, loc, i32);
  if (spec.band.hasRight() && !spec.band.hasLeft()) {
    // Longest first: causal query blocks near the end see the most keys;
    // starting them first keeps the tail of the launch short.
    Value numQBlocks = NVVM::GridDimXOp::create(b, loc, i32);
    qBlock = kb.sub(kb.sub(numQBlocks, kb.i32(1)), qBlock);
  }
  Value batchHead = NVVM::BlockIdYOp::create(b, loc, i32);
  Value batch = kb.divu(batchHead, headsQ);
  Value head = kb.remu(batchHead, headsQ);
  Value kvHead = kb.divu(head, kb.divu(headsQ, headsKv));
  batchIdx = batch;
  headIdx = head;
  q0 = kb.mul(qBlock, kb.i32(config.blockM));

  // Variable length: sequence `batch` owns query tokens [cu_q[b], cu_q[b+1])
  // and keys [cu_kv[b], cu_kv[b+1]); seq_q/seq_kv were the maxima (the
  // grid), from here on they are this sequence's lengths.
  Value tokenQ0, tokenK0;
  if (spec.varlen) {
    auto cuAt = [&](Value cu, Value idx) -> Value {
      return LLVM::LoadOp::create(b, loc, i32, kb.gep(cu, i32, kb.zext64(idx)));
    };
    Value cuQ = params["cu_seqlens_q"], cuK = params["cu_seqlens_kv"];
    Value next = kb.add(batch, kb.i32(1));
    tokenQ0 = cuAt(cuQ, batch);
    tokenK0 = cuAt(cuK, batch);
    seqQ = kb.sub(cuAt(cuQ, next), tokenQ0);
    seqKv = kb.sub(cuAt(cuK, next), tokenK0);
    diagonal = kb.sub(seqKv, seqQ);
    bandOffset = spec.band.topLeft ? kb.i32(0) : diagonal;
  }
  // Key padding: batch entry b sees keys [key_start[b], key_end[b]) only.
  nvvm::KeyBounds bounds =
      nvvm::keyBoundsOf(kb, params, spec.keyRange, batch, seqKv);
  keyStart = bounds.start;
  keyEnd = bounds.end;
  // ALiBi's term is added to the raw score (the softmax constant stays
  // scale·log2e), or to the natural-domain one after a score_mod or
  // before a bias.
  if (spec.alibi)
    alibi.emplace(kb, params, batch, head,
                  spec.scoreMod || spec.bias ? Value() : softmaxScale);

  // Per-(batch, head) base pointers; varlen: the sequence's first token
  // instead of a batch stride.
  auto base = [&](StringRef tensor, Value h, Value token0) {
    Value first = token0
                      ? kb.mul(kb.zext64(token0), params.stride(tensor, 2))
                      : kb.mul(kb.zext64(batch), params.stride(tensor, 0));
    Value off = kb.add(first, kb.mul(kb.zext64(h), params.stride(tensor, 1)));
    return kb.gep(params[tensor], elt, off);
  };
  qPtr = base("q", head, tokenQ0);
  kPtr = base("k", kvHead, tokenK0);
  vPtr = base("v", kvHead, tokenK0);
  oPtr = base("o", head, tokenQ0);
  if (spec.withLse) {
    // LSE rows are contiguous: varlen [Hq, Tq] starts at token cu_q[b].
    Value off = kb.mul(kb.zext64(head), params["lse_stride_h"]);
    off = kb.add(off, tokenQ0 ? kb.zext64(tokenQ0)
                              : kb.mul(kb.zext64(batch),
                                       params["lse_stride_b"]));
    lsePtr = kb.gep(lsePtr, b.getF32Type(), off);
  }
  if (spec.bias) {
    // Broadcast dims have stride 0 (the runtime passes them so).
    Value off = kb.add(kb.mul(kb.zext64(batch), params.stride("bias", 0)),
                       kb.mul(kb.zext64(head), params.stride("bias", 1)));
    biasPtr = kb.gep(params["bias"], elt, off);
    biasRowStride = params.stride("bias", 2);
  }

  // Query blocks past the end of a shorter sequence have nothing to do
  // (varlen: the grid covers the longest one).
  scf::IfOp hasRows;
  if (spec.varlen) {
    hasRows = scf::IfOp::create(b, loc, kb.slt(q0, seqQ), /*withElse=*/false);
    b.setInsertionPointToStart(&hasRows.getThenRegion().front());
  }

  // Dynamic shared memory: Q tile, then the K ring, then the V ring.
  smem = LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
      kSharedMemorySymbol);
  qTile = smem;
  kRing = kb.gepBytes(smem, kb.i32(qLayout.bytes()));
  vRing = kb.gepBytes(kRing, kb.i32(config.stages * kLayout.bytes()));

  // ldmatrix x4: lane l addresses row l % 8 of matrix i = l / 8.
  //  * Q (A operand): matrix i covers rows 8·(i % 2), columns 8·(i / 2).
  //  * K (B operand of Q·Kᵀ): keys 8·(i / 2), head dims 8·(i % 2).
  //  * V (B operand of P·V, transposed): keys 8·(i % 2), columns 8·(i / 2).
  Value matrix = kb.lshr(lane, 3);
  Value rowInMatrix = kb.andi(lane, 7);
  Value lowBit = kb.andi(matrix, 1), highBit = kb.lshr(matrix, 1);
  qAddresses.emplace(kb, qLayout,
                     kb.add(kb.add(kb.mul(warp, kb.i32(config.warpRows)),
                                   kb.shl(lowBit, 3)),
                            rowInMatrix),
                     highBit);
  kAddresses.emplace(kb, kLayout, kb.add(kb.shl(highBit, 3), rowInMatrix),
                     lowBit);
  vAddresses.emplace(kb, vLayout, kb.add(kb.shl(lowBit, 3), rowInMatrix),
                     highBit);

  // Which key blocks this query block visits (block skipping).
  Value rowsHere = kb.minsi(kb.i32(config.blockM), kb.sub(seqQ, q0));
  nvvm::ForwardKeyWalk walk =
      nvvm::forwardKeyWalk(kb, spec.band, config.blockN, q0, rowsHere,
                           bandOffset, seqKv, {keyStart, keyEnd});
  firstBlock = walk.firstBlock;
  numBlocks = walk.numBlocks;
  firstFull = walk.firstFull;
  numFull = walk.numFull;

  // Prologue: Q with K(0) in one group, V(0) in the next.
  loadTile(qPtr, qRowStride, q0, kb.sub(seqQ, q0), qLayout, qTile,
           spec.headDim);
  issueKvLoads(firstBlock, /*key=*/true);
  kb.cpAsyncCommit();
  issueKvLoads(firstBlock, /*key=*/false);
  kb.cpAsyncCommit();
  if (config.qInRegisters) {
    kb.cpAsyncWait(1);
    kb.barrier();
    qFrags.resize(mTiles);
    SmallVector<Value> qPtrs = qAddresses->lanePointers(qTile);
    for (int64_t mt = 0; mt < mTiles; ++mt)
      for (int64_t kk = 0; kk < dQK / 16; ++kk)
        qFrags[mt].push_back(loadQFragment(qPtrs, mt, kk));
  }

  State init(mTiles);
  Value zero = kb.f32(0.0);
  Value negInf = kb.f32(-std::numeric_limits<double>::infinity());
  auto rows = attn_gpu::FragmentType::getRows(b.getContext());
  for (RowState &rs : init) {
    rs.o = attn_gpu::FragSplatOp::create(
        b, loc, attn_gpu::FragmentType::getAccumulator(b.getContext(), dV),
        zero);
    rs.m = attn_gpu::FragSplatOp::create(b, loc, rows, negInf);
    rs.l = attn_gpu::FragSplatOp::create(b, loc, rows, zero);
  }

  auto loop = scf::ForOp::create(
      b, loc, firstBlock, numBlocks, kb.i32(1), flatten(init),
      [&](OpBuilder &, Location, Value block, ValueRange iterArgs) {
        State next = emitBlock(block, unflatten(iterArgs));
        scf::YieldOp::create(b, loc, flatten(next));
      });
  State final = unflatten(loop.getResults());
  emitEpilogue(final);
  if (hasRows)
    b.setInsertionPointAfter(hasRows);
  gpu::ReturnOp::create(b, loc);
}

} // namespace

gpu::GPUFuncOp mlir::attn::emitFlashForwardKernel(
    OpBuilder &builder, gpu::GPUModuleOp module, StringRef name,
    const FlashKernelSpec &spec, const FlashKernelConfig &config) {
  MLIRContext *ctx = builder.getContext();
  Location loc = module.getLoc();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());

  // The dynamic shared memory every attn kernel of this module uses.
  if (!module.lookupSymbol(kSharedMemorySymbol)) {
    auto global = LLVM::GlobalOp::create(
        builder, loc, LLVM::LLVMArrayType::get(builder.getI8Type(), 0),
        /*isConstant=*/false, LLVM::Linkage::External, kSharedMemorySymbol,
        Attribute(), /*alignment=*/16, /*addrSpace=*/3);
    (void)global;
  }

  auto func = gpu::GPUFuncOp::create(
      builder, loc, name,
      builder.getFunctionType(forwardSignature(spec).types(ctx), {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  int32_t threads = static_cast<int32_t>(config.threads());
  func.setKnownBlockSizeAttr(builder.getDenseI32ArrayAttr({threads, 1, 1}));
  func->setAttr("nvvm.maxntid", builder.getDenseI32ArrayAttr({threads, 1, 1}));

  FlashForwardEmitter emitter(builder, loc, spec, config);
  emitter.emit(func);
  return func;
}
