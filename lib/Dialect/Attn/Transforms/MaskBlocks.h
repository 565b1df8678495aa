//===- MaskBlocks.h - which blocks a mask's band touches --------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Block skipping for the tiled lowerings: the range of key blocks a block of
// query rows sees, and the range of query blocks that see a block of keys,
// under a MaskBand. Blocks outside the range are never visited (so their
// tiles are never loaded); blocks inside still mask element by element.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_MASKBLOCKS_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_MASKBLOCKS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn::detail {

/// [begin, end) loop bounds over rows of length `length`: `first` and
/// `pastLast` (either may be null = unbounded) are clamped to [0, length],
/// and `begin` is rounded down to a multiple of `block`.
inline std::pair<Value, Value> blockLoopBounds(OpBuilder &b, Location loc,
                                               Value first, Value pastLast,
                                               Value length, int64_t block) {
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  auto clamp = [&](Value x) {
    return arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, x, c0), length);
  };
  Value begin = c0, end = length;
  if (first) {
    Value blockV = arith::ConstantIndexOp::create(b, loc, block);
    begin = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, clamp(first), blockV), blockV);
  }
  if (pastLast)
    end = clamp(pastLast);
  return {begin, end};
}

/// d(row) - row: Nk - Nq bottom-right, 0 top-left.
inline Value bandOffset(OpBuilder &b, Location loc, const MaskBand &band,
                        Value seqQ, Value seqKv) {
  if (band.topLeft)
    return arith::ConstantIndexOp::create(b, loc, 0);
  return arith::SubIOp::create(b, loc, seqKv, seqQ);
}

/// attn.attention's key_range for batch entry `batch`: [start, end) as
/// index values, clamped to [0, seqKv] with end >= start (as the GPU
/// kernels clamp them).
inline std::pair<Value, Value> keyRangeOf(OpBuilder &b, Location loc,
                                          Value starts, Value ends,
                                          Value batch, Value seqKv) {
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  auto at = [&](Value t) -> Value {
    Value x = tensor::ExtractOp::create(b, loc, t, batch);
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), x);
    return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, i, c0),
                                  seqKv);
  };
  Value start = at(starts);
  Value end = arith::MaxSIOp::create(b, loc, at(ends), start);
  return {start, end};
}

/// attn.attention's ALiBi slope (f32) of batch entry `batch` and query
/// head `head` in `slopes`, [Hq] (every entry) or [B, Hq].
inline Value alibiSlopeOf(OpBuilder &b, Location loc, Value slopes,
                          Value batch, Value head) {
  if (cast<RankedTensorType>(slopes.getType()).getRank() == 1)
    return tensor::ExtractOp::create(b, loc, slopes, head);
  return tensor::ExtractOp::create(b, loc, slopes, ValueRange{batch, head});
}

inline Value addConst(OpBuilder &b, Location loc, Value x, int64_t c) {
  if (c == 0)
    return x;
  return arith::AddIOp::create(b, loc, x,
                               arith::ConstantIndexOp::create(b, loc, c));
}

/// The key loop bounds for query rows [q0, q0 + rows): keys
/// [d(q0) - left, d(q0 + rows - 1) + right], `begin` at a `blockN` boundary.
inline std::pair<Value, Value> bandKeyLoop(OpBuilder &b, Location loc,
                                           const MaskBand &band, Value q0,
                                           Value rows, Value seqQ, Value seqKv,
                                           int64_t blockN) {
  if (band.isNone())
    return {arith::ConstantIndexOp::create(b, loc, 0), seqKv};
  Value d0 = arith::AddIOp::create(b, loc, q0,
                                   bandOffset(b, loc, band, seqQ, seqKv));
  Value first, pastLast;
  if (band.hasLeft())
    first = addConst(b, loc, d0, -band.left);
  if (band.hasRight())
    pastLast = addConst(b, loc, arith::AddIOp::create(b, loc, d0, rows),
                        band.right);
  return blockLoopBounds(b, loc, first, pastLast, seqKv, blockN);
}

/// The query loop bounds for keys [kv0, kv0 + cols): rows i with
/// kv0 - right <= d(i) <= kv0 + cols - 1 + left, `begin` at a `blockM`
/// boundary.
inline std::pair<Value, Value> bandQueryLoop(OpBuilder &b, Location loc,
                                             const MaskBand &band, Value kv0,
                                             Value cols, Value seqQ,
                                             Value seqKv, int64_t blockM) {
  if (band.isNone())
    return {arith::ConstantIndexOp::create(b, loc, 0), seqQ};
  Value k0 = arith::SubIOp::create(b, loc, kv0,
                                   bandOffset(b, loc, band, seqQ, seqKv));
  Value first, pastLast;
  if (band.hasRight())
    first = addConst(b, loc, k0, -band.right);
  if (band.hasLeft())
    pastLast = addConst(b, loc, arith::AddIOp::create(b, loc, k0, cols),
                        band.left);
  return blockLoopBounds(b, loc, first, pastLast, seqQ, blockM);
}

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_MASKBLOCKS_H
