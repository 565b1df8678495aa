//===- KernelTiles.cpp - swizzled shared-memory tiles ---------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "KernelTiles.h"

#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn::nvvm;

Value mlir::attn::nvvm::swizzledAddress(KernelBuilder &kb, Value tileBase,
                                        const TileLayout &layout, Value row,
                                        Value chunk) {
  Value swz = kb.andi(kb.lshr(row, layout.swizzleShift), layout.swizzleMod - 1);
  Value physChunk = kb.xori(chunk, swz);
  Value offset = kb.add(kb.mul(row, kb.i32(layout.rowBytes())),
                        kb.shl(physChunk, 4));
  return kb.gepBytes(tileBase, offset);
}

void mlir::attn::nvvm::loadTileAsync(KernelBuilder &kb, Type elt,
                                     int64_t threads, Value tid,
                                     Value globalBase, Value rowStride,
                                     Value row0, Value rowsLeft,
                                     const TileLayout &layout,
                                     Value sharedTile, int64_t validChunks) {
  int64_t rowsPerWave = threads / layout.chunks;
  int64_t waves = std::max<int64_t>(1, layout.rows / rowsPerWave);
  Value row = kb.lshr(tid, llvm::Log2_64(layout.chunks));
  Value chunk = kb.andi(tid, layout.chunks - 1);
  Value dst0 = swizzledAddress(kb, sharedTile, layout, row, chunk);
  Value src0 = kb.gep(globalBase, elt,
                      kb.add(kb.mul(kb.sext64(kb.add(row0, row)), rowStride),
                             kb.sext64(kb.shl(chunk, 3))));
  Value waveStride = kb.mul(rowStride, kb.i64(rowsPerWave));
  // A tile narrower than one wave leaves the threads past its last row idle.
  bool partialWave = rowsPerWave > layout.rows;
  for (int64_t w = 0; w < waves; ++w) {
    Value inRange = kb.slt(row, kb.sub(rowsLeft, kb.i32(w * rowsPerWave)));
    // A zero-padded head dim: chunks past the tensor's width read nothing.
    if (validChunks > 0 && validChunks < layout.chunks)
      inRange = kb.andb(inRange, kb.slt(chunk, kb.i32(validChunks)));
    Value validBytes = kb.select(inRange, kb.i32(16), kb.i32(0));
    // Chained, so that no multiple of the stride stays live in a register;
    // out-of-range rows read nothing and point at the tile's base.
    if (w > 0)
      src0 = kb.pin(kb.gep(src0, elt, waveStride));
    Value src = kb.select(inRange, src0, globalBase);
    // The swizzle repeats every 8 rows: waves 8 rows apart differ by a
    // constant; narrower waves need the full address.
    Value dst = w == 0 ? dst0
                : rowsPerWave % 8 == 0
                    ? kb.gepBytes(dst0,
                                  kb.i32(w * rowsPerWave * layout.rowBytes()))
                    : swizzledAddress(kb, sharedTile, layout,
                                      kb.add(row, kb.i32(w * rowsPerWave)),
                                      chunk);
    if (!partialWave) {
      kb.cpAsync16(dst, src, validBytes);
      continue;
    }
    OpBuilder &b = kb.builder();
    auto ifOp = scf::IfOp::create(b, kb.location(),
                                  kb.slt(row, kb.i32(layout.rows)),
                                  /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    kb.cpAsync16(dst, src, validBytes);
  }
}

FragmentAddresses::FragmentAddresses(KernelBuilder &kb,
                                     const TileLayout &layout, Value rowLane,
                                     Value chunkLane)
    : kb(kb), layout(layout) {
  Value swz =
      kb.andi(kb.lshr(rowLane, layout.swizzleShift), layout.swizzleMod - 1);
  Value rowOffset = kb.mul(rowLane, kb.i32(layout.rowBytes()));
  for (int64_t j = 0; j < std::max<int64_t>(1, layout.swizzleMod / 2); ++j) {
    Value chunk = kb.xori(kb.add(kb.i32(2 * j), chunkLane), swz);
    laneOffsets.push_back(kb.add(rowOffset, kb.shl(chunk, 4)));
  }
}

SmallVector<Value> FragmentAddresses::lanePointers(Value tileBase) {
  SmallVector<Value> ptrs;
  for (Value offset : laneOffsets)
    ptrs.push_back(kb.gepBytes(tileBase, offset));
  return kb.pin(ptrs);
}

Value FragmentAddresses::address(ArrayRef<Value> lanePtrs, int64_t rowBase,
                                 int64_t pair) {
  int64_t period = static_cast<int64_t>(laneOffsets.size());
  int64_t constant =
      rowBase * layout.rowBytes() + 16 * 2 * period * (pair / period);
  Value lanePart = lanePtrs[pair % period];
  return constant ? kb.gepBytes(lanePart, kb.i32(constant)) : lanePart;
}

SmallVector<Value> mlir::attn::nvvm::maskScores(
    KernelBuilder &kb, const MaskBand &band, ValueRange scores, Value kv0,
    Value t, Value keyStart, Value keyEnd, Value bandOffset,
    llvm::function_ref<Value()> firstRow) {
  // Each test compares a compile-time column offset with one per-thread
  // value: key < Nk <=> col < Nk - kv0 - 2t, and key <= d(row) + right
  // <=> col - rowOffset <= d(firstRow) - kv0 - 2t + right.
  Value keysLeft = kb.sub(kb.sub(keyEnd, kv0), kb.shl(t, 1));
  Value rowMinusKey;
  if (!band.isNone())
    rowMinusKey =
        kb.sub(kb.sub(kb.add(bandOffset, firstRow()), kv0), kb.shl(t, 1));
  Value keysBefore;
  if (keyStart)
    keysBefore = kb.sub(kb.sub(keyStart, kv0), kb.shl(t, 1));
  OpBuilder &b = kb.builder();
  auto side = [&](bool has, int64_t value) {
    return has ? b.getI64IntegerAttr(value) : IntegerAttr();
  };
  auto op = attn_gpu::MaskScoresOp::create(
      b, kb.location(), scores.getTypes(), scores, keysLeft,
      rowMinusKey, keysBefore,
      side(band.hasLeft(), band.left), side(band.hasRight(), band.right));
  return SmallVector<Value>(op.getResults());
}

Value mlir::attn::nvvm::keyBlockSteps(KernelBuilder &kb, Value numSteps,
                                      Value kv0, int64_t blockN,
                                      const KeyBounds &bounds) {
  Value overlaps = kb.andb(kb.slt(kv0, bounds.end),
                           kb.slt(bounds.start, kb.add(kv0, kb.i32(blockN))));
  return kb.select(overlaps, numSteps, kb.i32(0));
}

KeyBounds mlir::attn::nvvm::keyBoundsOf(KernelBuilder &kb,
                                        const KernelSignature &params,
                                        bool keyRange, Value batch,
                                        Value seqKv) {
  if (!keyRange)
    return {Value(), seqKv};
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  Type i32 = b.getI32Type();
  auto at = [&](Value base) -> Value {
    Value x = LLVM::LoadOp::create(b, loc, i32,
                                   kb.gep(base, i32, kb.zext64(batch)));
    return kb.minsi(kb.maxsi(x, kb.i32(0)), seqKv);
  };
  KeyBounds bounds;
  bounds.start = at(params["key_start"]);
  bounds.end = kb.maxsi(at(params["key_end"]), bounds.start);
  return bounds;
}

ForwardKeyWalk mlir::attn::nvvm::forwardKeyWalk(
    KernelBuilder &kb, const MaskBand &band, int64_t blockN, Value q0,
    Value rows, Value bandOffset, Value seqKv, const KeyBounds &keys) {
  auto clampKv = [&](Value x) {
    return kb.minsi(kb.maxsi(x, kb.i32(0)), seqKv);
  };
  Value d0 = kb.add(q0, bandOffset);
  Value kvBegin = kb.i32(0), kvEnd = seqKv;
  Value fullBegin = kb.i32(0), fullEnd = seqKv;
  if (band.hasRight()) {
    kvEnd = clampKv(kb.add(kb.add(d0, rows), kb.i32(band.right)));
    fullEnd = clampKv(kb.add(d0, kb.i32(band.right + 1)));
  }
  if (band.hasLeft()) {
    kvBegin = clampKv(kb.sub(d0, kb.i32(band.left)));
    fullBegin =
        clampKv(kb.sub(kb.add(d0, kb.sub(rows, kb.i32(1))), kb.i32(band.left)));
  }
  if (keys.start) {
    kvBegin = kb.maxsi(kvBegin, keys.start);
    fullBegin = kb.maxsi(fullBegin, keys.start);
    kvEnd = kb.minsi(kvEnd, keys.end);
    fullEnd = kb.minsi(fullEnd, keys.end);
  }
  ForwardKeyWalk walk;
  walk.numBlocks = kb.divu(kb.add(kvEnd, kb.i32(blockN - 1)), kb.i32(blockN));
  walk.numFull = kb.minsi(kb.divu(fullEnd, kb.i32(blockN)), walk.numBlocks);
  walk.firstBlock = kb.divu(kvBegin, kb.i32(blockN));
  walk.firstFull =
      kb.divu(kb.add(fullBegin, kb.i32(blockN - 1)), kb.i32(blockN));
  return walk;
}

BackwardQueryWalk mlir::attn::nvvm::backwardQueryWalk(
    KernelBuilder &kb, Value seqQ, int64_t blockM, int64_t blockN, Value kv0,
    Value diagonal, const MaskBand &band, Value groupSize) {
  Value numQBlocks =
      kb.divu(kb.add(seqQ, kb.i32(blockM - 1)), kb.i32(blockM));
  BackwardQueryWalk walk;
  walk.qStart = kb.i32(0);
  // The first row that sees key kv0: d(i) + right >= kv0.
  if (band.hasRight()) {
    Value first = kb.sub(kv0, diagonal);
    if (band.right)
      first = kb.sub(first, kb.i32(band.right));
    walk.qStart = kb.minsi(
        kb.divu(kb.maxsi(first, kb.i32(0)), kb.i32(blockM)), numQBlocks);
  }
  Value qEnd = numQBlocks;
  // One past the last row that sees key kv0 + blockN − 1: d(i) − left <=
  // that key. Clamped at qStart, so that a key block no row sees walks
  // nothing.
  if (band.hasLeft()) {
    Value last = kb.add(kb.sub(kv0, diagonal),
                        kb.i32(blockN - 1 + band.left));
    Value end = kb.divu(kb.add(kb.maxsi(last, kb.i32(-1)), kb.i32(blockM)),
                        kb.i32(blockM));
    qEnd = kb.maxsi(kb.minsi(end, numQBlocks), walk.qStart);
  }
  walk.qSteps = kb.sub(qEnd, walk.qStart);
  walk.numSteps = kb.mul(walk.qSteps, groupSize);
  return walk;
}

Value mlir::attn::nvvm::backwardSoftmaxConstant(KernelBuilder &kb,
                                                Value softmaxScale,
                                                double softcap) {
  if (softcap > 0)
    return kb.f32(softcap * M_LOG2E);
  return kb.fmul(softmaxScale, kb.f32(M_LOG2E));
}

AlibiTerm::AlibiTerm(KernelBuilder &kb, const KernelSignature &params,
                     Value batch, Value head, Value unit)
    : kb(kb) {
  OpBuilder &b = kb.builder();
  Type f32 = b.getF32Type();
  Value at = kb.add(kb.mul(kb.sext64(batch), params["alibi_slopes_stride_b"]),
                    kb.sext64(head));
  Value slope = LLVM::LoadOp::create(b, kb.location(), f32,
                                     kb.gep(params["alibi_slopes"], f32, at));
  Value negSlope = LLVM::FNegOp::create(b, kb.location(), slope);
  factor = unit ? kb.fdiv(negSlope, unit) : negSlope;
}

Value AlibiTerm::rowBase(Value base) const {
  return LLVM::SIToFPOp::create(kb.builder(), kb.location(),
                                kb.builder().getF32Type(), base);
}

Value AlibiTerm::apply(Value u, Value rowBaseF32, int64_t offset) const {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  Value x = offset ? kb.fadd(rowBaseF32, kb.f32(static_cast<double>(offset)))
                   : rowBaseF32;
  Value dist = kb.fabs(x);
  return LLVM::FMAOp::create(b, loc, dist, factor, u);
}
