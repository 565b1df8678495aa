//===- AttnTileAttentionGrad.cpp - FlashAttention's backward loops --------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// attn.attention_grad -> FlashAttention-2's backward on tiles: Δ once on
// whole tensors, then per key/value block a loop over query blocks that
// recomputes P from the saved LSE and accumulates dK and dV in the loop
// carry. dQ is either accumulated in place across key/value blocks (the
// CPU's analogue of the GPU's atomic adds) or, deterministic, computed by a
// second loop nest per query block with its own key/value loop.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "LinalgHelpers.h"
#include "MaskBlocks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILEATTENTIONGRAD
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

OpFoldResult idx(OpBuilder &b, int64_t v) { return b.getIndexAttr(v); }

/// The [rows, cols] tile at (b, h, row0, 0) of a rank-4 tensor, zero-padded
/// to [blockRows, cols].
Value paddedTile(OpBuilder &b, Location loc, Value source, Value batch,
                 Value head, Value row0, Value rows, int64_t blockRows) {
  auto type = cast<RankedTensorType>(source.getType());
  int64_t cols = type.getDimSize(3);
  Type elt = type.getElementType();
  Value slice = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({ShapedType::kDynamic, cols}, elt), source,
      ArrayRef<OpFoldResult>{batch, head, row0, idx(b, 0)},
      ArrayRef<OpFoldResult>{idx(b, 1), idx(b, 1), rows, idx(b, cols)},
      SmallVector<OpFoldResult>(4, idx(b, 1)));
  Value pad = arith::SubIOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, blockRows), rows);
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get({blockRows, cols}, elt), slice,
      ArrayRef<OpFoldResult>{idx(b, 0), idx(b, 0)},
      ArrayRef<OpFoldResult>{pad, idx(b, 0)},
      Value(arith::ConstantOp::create(b, loc, b.getZeroAttr(elt))));
}

/// The [rows] slice at (b, h, row0) of a rank-3 f32 tensor, zero-padded to
/// [blockRows] (padded rows are masked where they are used).
Value paddedRow(OpBuilder &b, Location loc, Value source, Value batch,
                Value head, Value row0, Value rows, int64_t blockRows) {
  Value slice = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({ShapedType::kDynamic}, b.getF32Type()),
      source, ArrayRef<OpFoldResult>{batch, head, row0},
      ArrayRef<OpFoldResult>{idx(b, 1), idx(b, 1), rows},
      SmallVector<OpFoldResult>(3, idx(b, 1)));
  Value pad = arith::SubIOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, blockRows), rows);
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get({blockRows}, b.getF32Type()), slice,
      ArrayRef<OpFoldResult>{idx(b, 0)}, ArrayRef<OpFoldResult>{pad},
      f32Const(b, loc, 0.0));
}

Value zerosF32(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  return linalg::FillOp::create(b, loc, f32Const(b, loc, 0.0), empty)
      .getResult(0);
}

enum class Contract { ABt, AtB, AB };

/// init[m, n] += sum_k lhs · rhs, in f32, with lhs/rhs read as [m, k]/[n, k]
/// (ABt), [k, m]/[k, n] (AtB) or [m, k]/[k, n] (AB).
Value contract(OpBuilder &b, Location loc, Contract kind, Value lhs, Value rhs,
               Value init) {
  MLIRContext *ctx = b.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  auto map = [&](AffineExpr x, AffineExpr y) {
    return AffineMap::get(3, 0, {x, y}, ctx);
  };
  AffineMap lhsMap = kind == Contract::AtB ? map(k, m) : map(m, k);
  AffineMap rhsMap = kind == Contract::ABt ? map(n, k) : map(k, n);
  return generic(b, loc, ValueRange{lhs, rhs}, init,
                 {lhsMap, rhsMap, map(m, n)}, {kPar, kPar, kRed},
                 [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                   Value prod = arith::MulFOp::create(
                       nb, l, extToF32(nb, l, a[0]), extToF32(nb, l, a[1]));
                   return arith::AddFOp::create(nb, l, a[2], prod);
                 });
}

/// The softmax scale: known at compile time (constants made where they are
/// used, as before the run-time operand existed), or the op's run-time f32
/// operand, with scale·log2(e) formed once.
struct Scale {
  std::optional<double> known;
  Value runtime, runtimeLog2e;

  /// scale, as an f32 value where `b` inserts.
  Value value(OpBuilder &b, Location loc) const {
    return known ? f32Const(b, loc, *known) : runtime;
  }
  /// scale · log2(e), folded in double precision when known.
  Value log2e(OpBuilder &b, Location loc) const {
    return known ? f32Const(b, loc, *known * M_LOG2E) : runtimeLog2e;
  }
  bool isOne() const { return known && *known == 1.0; }
};

/// Everything one (query block, key/value block) pair needs.
struct BlockInputs {
  Value q, k, v, dO;  // tiles [Br, D], [Bc, D], [Bc, Dv], [Br, Dv]
  Value lse, delta;   // [Br]
  Value q0, kv0;      // first rows of the tiles
  Value rows, cols;   // rows of each tile that exist
  MaskBand band;
  Value seqQ, seqKv;  // whole lengths, for the band
  Value keyStart, keyEnd; // key_range of the batch entry, or null
  Value alibiSlope;       // ALiBi's slope of the batch entry and head, or null
};

/// P = exp2(S·scale·log2e − LSE·log2e) (0 where masked: padding, above the
/// diagonal, or a row with LSE = −inf) and dS = P ∘ (dO·Vᵀ − Δ), both
/// [Br, Bc] f32. With a softcap C the score is C·tanh(S·scale / C) and dS
/// takes the factor 1 − tanh².
std::pair<Value, Value> probsAndScoreGrads(OpBuilder &b, Location loc,
                                           const BlockInputs &in, int64_t br,
                                           int64_t bc, const Scale &scale,
                                           std::optional<double> softcap) {
  Value s = contract(b, loc, Contract::ABt, in.q, in.k, zerosF32(b, loc, {br, bc}));
  Value c = scale.log2e(b, loc);
  // tanh(S·scale / C): its argument's factor, and the softmax's C·log2e.
  Value capInner, capLog2e;
  if (softcap) {
    capInner = arith::MulFOp::create(b, loc, scale.value(b, loc),
                                     f32Const(b, loc, 1.0 / *softcap));
    capLog2e = f32Const(b, loc, *softcap * M_LOG2E);
  }
  auto capTanh = [&](OpBuilder &nb, Location l, Value raw) -> Value {
    return math::TanhOp::create(nb, l,
                                arith::MulFOp::create(nb, l, raw, capInner));
  };
  Value log2e = f32Const(b, loc, M_LOG2E);
  Value zero = f32Const(b, loc, 0.0);
  Value ninf = f32Const(b, loc, -std::numeric_limits<double>::infinity());
  MLIRContext *ctx = b.getContext();
  AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap row = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
  Value probs = generic(
      b, loc, ValueRange{in.lse}, s, {row, id2}, {kPar, kPar},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value i = linalg::IndexOp::create(nb, l, 0);
        Value j = linalg::IndexOp::create(nb, l, 1);
        Value keep = arith::AndIOp::create(
            nb, l,
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, i, in.rows),
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, j, in.cols));
        keep = arith::AndIOp::create(
            nb, l, keep,
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::ONE, a[0], ninf));
        if (!in.band.isNone()) {
          Value key = arith::AddIOp::create(nb, l, in.kv0, j);
          Value query = arith::AddIOp::create(nb, l, in.q0, i);
          keep = arith::AndIOp::create(
              nb, l, keep,
              buildMaskVisible(nb, l, in.band, query, key, in.seqQ, in.seqKv));
        }
        if (in.keyStart) {
          Value key = arith::AddIOp::create(nb, l, in.kv0, j);
          keep = arith::AndIOp::create(
              nb, l, keep,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, key,
                                    in.keyStart));
          keep = arith::AndIOp::create(
              nb, l, keep,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, key,
                                    in.keyEnd));
        }
        // One statement per op: their order in the IR must not depend on
        // the compiler's argument evaluation order.
        Value lse2 = arith::MulFOp::create(nb, l, a[0], log2e);
        Value s2 = softcap ? arith::MulFOp::create(nb, l, capTanh(nb, l, a[1]),
                                                   capLog2e)
                           : arith::MulFOp::create(nb, l, a[1], c);
        if (in.alibiSlope) {
          Value key = arith::AddIOp::create(nb, l, in.kv0, j);
          Value query = arith::AddIOp::create(nb, l, in.q0, i);
          Value term = buildAlibiTerm(nb, l, in.band, in.alibiSlope, query,
                                      key, in.seqQ, in.seqKv);
          Value term2 = arith::MulFOp::create(nb, l, term, log2e);
          s2 = arith::SubFOp::create(nb, l, s2, term2);
        }
        Value x = arith::SubFOp::create(nb, l, s2, lse2);
        Value p = math::Exp2Op::create(nb, l, x);
        return arith::SelectOp::create(nb, l, keep, p, zero);
      });
  Value dP =
      contract(b, loc, Contract::ABt, in.dO, in.v, zerosF32(b, loc, {br, bc}));
  // dS = P ∘ (dP − Δ), times 1 − tanh² of the raw scores with a softcap.
  SmallVector<Value> ins = {probs, in.delta};
  SmallVector<AffineMap> maps = {id2, row};
  if (softcap) {
    ins.push_back(s);
    maps.push_back(id2);
  }
  maps.push_back(id2);
  Value dS = generic(
      b, loc, ins, dP, maps, {kPar, kPar},
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        Value ds = arith::MulFOp::create(
            nb, l, a[0], arith::SubFOp::create(nb, l, a.back(), a[1]));
        if (!softcap)
          return ds;
        Value t = capTanh(nb, l, a[2]);
        Value factor = arith::SubFOp::create(
            nb, l, f32Const(nb, l, 1.0), arith::MulFOp::create(nb, l, t, t));
        return arith::MulFOp::create(nb, l, ds, factor);
      });
  return {probs, dS};
}

/// `tile` [B?, X] f32 times `scale` (when not 1), rounded to `elt`, its first
/// `rows` rows.
Value finishTile(OpBuilder &b, Location loc, Value tile, Type elt,
                 const Scale &scale, Value rows) {
  auto type = cast<RankedTensorType>(tile.getType());
  int64_t cols = type.getDimSize(1);
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), elt);
  AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  Value s = scale.value(b, loc);
  Value out = generic(b, loc, tile, init, {id2, id2}, {kPar, kPar},
                      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                        Value x = a[0];
                        if (!scale.isOne())
                          x = arith::MulFOp::create(nb, l, x, s);
                        if (!elt.isF32())
                          x = arith::TruncFOp::create(nb, l, elt, x);
                        return x;
                      });
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({ShapedType::kDynamic, cols}, elt), out,
      ArrayRef<OpFoldResult>{idx(b, 0), idx(b, 0)},
      ArrayRef<OpFoldResult>{rows, idx(b, cols)},
      ArrayRef<OpFoldResult>{idx(b, 1), idx(b, 1)});
}

/// Writes the [rows, X] `tile` into `dest` at (b, h, row0, 0).
Value insertTile(OpBuilder &b, Location loc, Value tile, Value dest,
                 Value batch, Value head, Value row0, Value rows) {
  int64_t cols = cast<RankedTensorType>(tile.getType()).getDimSize(1);
  return tensor::InsertSliceOp::create(
      b, loc, tile, dest, ArrayRef<OpFoldResult>{batch, head, row0, idx(b, 0)},
      ArrayRef<OpFoldResult>{idx(b, 1), idx(b, 1), rows, idx(b, cols)},
      SmallVector<OpFoldResult>(4, idx(b, 1)));
}

struct TileGrad {
  AttentionGradOp op;
  int64_t br, bc;
  bool deterministic;

  LogicalResult run(RewriterBase &rewriter) {
    Location loc = op.getLoc();
    RankedTensorType qType = op.getQueryType();
    int64_t hq = qType.getDimSize(1), hkv = op.getKeyType().getDimSize(1);
    if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv))
      return op.emitOpError("could not be tiled: dynamic head counts are not "
                            "supported");
    std::optional<double> softcap;
    if (std::optional<APFloat> cap = op.getSoftcap())
      softcap = cap->convertToDouble();
    int64_t group = hq / hkv, d = op.getHeadDim(), dv = op.getValueHeadDim();
    Type elt = qType.getElementType();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    Scale scale;
    scale.known = op.getStaticScale();
    if (!scale.known) {
      scale.runtime = op.getRuntimeScale();
      scale.runtimeLog2e =
          arith::MulFOp::create(rewriter, op.getLoc(), scale.runtime,
                                f32Const(rewriter, op.getLoc(), M_LOG2E));
    }
    MLIRContext *ctx = op.getContext();

    Value q = op.getQuery(), k = op.getKey(), v = op.getValue(),
          dO = op.getGradOutput(), lse = op.getLse();
    Value batch = tensor::DimOp::create(rewriter, loc, q, 0);
    Value seqQ = tensor::DimOp::create(rewriter, loc, q, 2);
    Value seqKv = tensor::DimOp::create(rewriter, loc, k, 2);
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value brV = arith::ConstantIndexOp::create(rewriter, loc, br);
    Value bcV = arith::ConstantIndexOp::create(rewriter, loc, bc);
    Value hkvV = arith::ConstantIndexOp::create(rewriter, loc, hkv);
    Value hqV = arith::ConstantIndexOp::create(rewriter, loc, hq);
    Value groupV = arith::ConstantIndexOp::create(rewriter, loc, group);
    MaskBand band = op.getMaskBand();
    // key_range: batch entry bi's [start, end) (null values without one).
    auto keyRange = [&](OpBuilder &b, Location l,
                        Value bi) -> std::pair<Value, Value> {
      if (!op.getKeyStart())
        return {Value(), Value()};
      return mlir::attn::detail::keyRangeOf(b, l, op.getKeyStart(), op.getKeyEnd(), bi,
                                seqKv);
    };
    // ALiBi: batch entry bi's, query head h's slope (null without one).
    auto alibiSlope = [&](OpBuilder &b, Location l, Value bi,
                          Value h) -> Value {
      Value slopes = op.getAlibiSlopes();
      return slopes ? mlir::attn::detail::alibiSlopeOf(b, l, slopes, bi, h)
                    : Value();
    };

    // Preprocess: Δ[b,h,i] = rowsum(dO ∘ O), once, on whole tensors.
    SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(rewriter, loc, q);
    SmallVector<OpFoldResult> rowSizes(qSizes.begin(), qSizes.begin() + 3);
    Value deltaEmpty = tensor::EmptyOp::create(rewriter, loc, rowSizes,
                                               rewriter.getF32Type());
    Value deltaInit = linalg::FillOp::create(
                          rewriter, loc, f32Const(rewriter, loc, 0.0),
                          deltaEmpty)
                          .getResult(0);
    AffineMap id4 = rewriter.getMultiDimIdentityMap(4);
    AffineMap rowMap = AffineMap::get(
        4, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx),
               getAffineDimExpr(2, ctx)},
        ctx);
    Value delta = generic(
        rewriter, loc, ValueRange{dO, op.getOutput()}, deltaInit,
        {id4, id4, rowMap}, {kPar, kPar, kPar, kRed},
        [](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value prod = arith::MulFOp::create(nb, l, extToF32(nb, l, a[0]),
                                             extToF32(nb, l, a[1]));
          return arith::AddFOp::create(nb, l, a[2], prod);
        });

    SmallVector<OpFoldResult> kSizes = tensor::getMixedSizes(rewriter, loc, k);
    SmallVector<OpFoldResult> vSizes = tensor::getMixedSizes(rewriter, loc, v);
    Value dK0 = tensor::EmptyOp::create(rewriter, loc, kSizes, elt);
    Value dV0 = tensor::EmptyOp::create(rewriter, loc, vSizes, elt);
    // In-place dQ: one f32 accumulator for the whole tensor, carried through
    // every key/value block.
    SmallVector<Value> carried = {dK0, dV0};
    if (!deterministic) {
      Value dQEmpty = tensor::EmptyOp::create(rewriter, loc, qSizes,
                                              rewriter.getF32Type());
      carried.push_back(linalg::FillOp::create(rewriter, loc,
                                               f32Const(rewriter, loc, 0.0),
                                               dQEmpty)
                            .getResult(0));
    }

    // dK, dV: for each (batch, kv-head) and key/value block.
    Value numHeads = arith::MulIOp::create(rewriter, loc, batch, hkvV);
    auto kvOuter = scf::ForOp::create(
        rewriter, loc, c0, numHeads, c1, carried,
        [&](OpBuilder &b, Location l, Value bh, ValueRange outer) {
          Value bi = arith::DivUIOp::create(b, l, bh, hkvV);
          Value hk = arith::RemUIOp::create(b, l, bh, hkvV);
          auto kvLoop = scf::ForOp::create(
              b, l, c0, seqKv, bcV, outer,
              [&](OpBuilder &b, Location l, Value kv0, ValueRange state) {
                Value cols = arith::MinUIOp::create(
                    b, l, arith::SubIOp::create(b, l, seqKv, kv0), bcV);
                Value kTile = paddedTile(b, l, k, bi, hk, kv0, cols, bc);
                Value vTile = paddedTile(b, l, v, bi, hk, kv0, cols, bc);
                // Only the query blocks whose rows see one of these keys
                // (the mask's band) are visited.
                Value qStart, qEnd;
                std::tie(qStart, qEnd) = bandQueryLoop(b, l, band, kv0, cols,
                                                       seqQ, seqKv, br);
                SmallVector<Value> inner = {zerosF32(b, l, {bc, d}),
                                            zerosF32(b, l, {bc, dv})};
                if (!deterministic)
                  inner.push_back(state[2]);
                auto groupLoop = scf::ForOp::create(
                    b, l, c0, groupV, c1, inner,
                    [&](OpBuilder &b, Location l, Value g, ValueRange acc) {
                      Value h = arith::AddIOp::create(
                          b, l, arith::MulIOp::create(b, l, hk, groupV), g);
                      auto qLoop = scf::ForOp::create(
                          b, l, qStart, qEnd, brV, acc,
                          [&](OpBuilder &b, Location l, Value q0,
                              ValueRange acc) {
                            Value rows = arith::MinUIOp::create(
                                b, l, arith::SubIOp::create(b, l, seqQ, q0),
                                brV);
                            BlockInputs in;
                            in.q = paddedTile(b, l, q, bi, h, q0, rows, br);
                            in.dO = paddedTile(b, l, dO, bi, h, q0, rows, br);
                            in.lse = paddedRow(b, l, lse, bi, h, q0, rows, br);
                            in.delta =
                                paddedRow(b, l, delta, bi, h, q0, rows, br);
                            in.k = kTile;
                            in.v = vTile;
                            in.q0 = q0;
                            in.kv0 = kv0;
                            in.rows = rows;
                            in.cols = cols;
                            in.band = band;
                            in.seqQ = seqQ;
                            in.seqKv = seqKv;
                            std::tie(in.keyStart, in.keyEnd) = keyRange(b, l, bi);
                            in.alibiSlope = alibiSlope(b, l, bi, h);
                            auto [p, dS] =
                                probsAndScoreGrads(b, l, in, br, bc, scale, softcap);
                            // dV += Pᵀ·dO, dK += dSᵀ·Q (scaled once at the
                            // end), written over the carried accumulators.
                            SmallVector<Value> next = {
                                contract(b, l, Contract::AtB, dS, in.q, acc[0]),
                                contract(b, l, Contract::AtB, p, in.dO,
                                         acc[1])};
                            if (!deterministic) {
                              // dQ[rows of this block] += dS·K·scale, in
                              // place.
                              Value dQ = contract(b, l, Contract::AB, dS,
                                                  kTile,
                                                  zerosF32(b, l, {br, d}));
                              Value part = tensor::ExtractSliceOp::create(
                                  b, l,
                                  RankedTensorType::get(
                                      {ShapedType::kDynamic, d},
                                      b.getF32Type()),
                                  dQ,
                                  ArrayRef<OpFoldResult>{idx(b, 0), idx(b, 0)},
                                  ArrayRef<OpFoldResult>{rows, idx(b, d)},
                                  ArrayRef<OpFoldResult>{idx(b, 1),
                                                         idx(b, 1)});
                              Value old = tensor::ExtractSliceOp::create(
                                  b, l,
                                  RankedTensorType::get(
                                      {ShapedType::kDynamic, d},
                                      b.getF32Type()),
                                  acc[2],
                                  ArrayRef<OpFoldResult>{bi, h, q0, idx(b, 0)},
                                  ArrayRef<OpFoldResult>{idx(b, 1), idx(b, 1),
                                                         rows, idx(b, d)},
                                  SmallVector<OpFoldResult>(4, idx(b, 1)));
                              AffineMap id2 =
                                  AffineMap::getMultiDimIdentityMap(2, ctx);
                              Value s = scale.value(b, l);
                              Value sum = generic(
                                  b, l, part, old, {id2, id2}, {kPar, kPar},
                                  [&](OpBuilder &nb, Location l2,
                                      ValueRange a) -> Value {
                                    return arith::AddFOp::create(
                                        nb, l2, a[1],
                                        arith::MulFOp::create(nb, l2, a[0], s));
                                  });
                              next.push_back(
                                  insertTile(b, l, sum, acc[2], bi, h, q0, rows));
                            }
                            scf::YieldOp::create(b, l, next);
                          });
                      scf::YieldOp::create(b, l, qLoop.getResults());
                    });
                Value dKTile = finishTile(b, l, groupLoop.getResult(0),
                                          op.getKeyType().getElementType(),
                                          scale, cols);
                Value dVTile = finishTile(b, l, groupLoop.getResult(1),
                                          op.getValueType().getElementType(),
                                          Scale{1.0, {}, {}}, cols);
                SmallVector<Value> next = {
                    insertTile(b, l, dKTile, state[0], bi, hk, kv0, cols),
                    insertTile(b, l, dVTile, state[1], bi, hk, kv0, cols)};
                if (!deterministic)
                  next.push_back(groupLoop.getResult(2));
                scf::YieldOp::create(b, l, next);
              });
          scf::YieldOp::create(b, l, kvLoop.getResults());
        });

    Value dQ;
    if (!deterministic) {
      // Round the f32 accumulator to the element type.
      Value init = tensor::EmptyOp::create(rewriter, loc, qSizes, elt);
      dQ = generic(rewriter, loc, kvOuter.getResult(2), init, {id4, id4},
                   {kPar, kPar, kPar, kPar},
                   [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                     return elt.isF32()
                                ? a[0]
                                : arith::TruncFOp::create(nb, l, elt, a[0])
                                      .getResult();
                   });
    } else {
      // Deterministic dQ: per (batch, q-head) and query block, its own loop
      // over key/value blocks; every tile of dQ is written exactly once.
      Value numQHeads = arith::MulIOp::create(rewriter, loc, batch, hqV);
      Value dQ0 = tensor::EmptyOp::create(rewriter, loc, qSizes, elt);
      auto qOuter = scf::ForOp::create(
          rewriter, loc, c0, numQHeads, c1, ValueRange{dQ0},
          [&](OpBuilder &b, Location l, Value bh, ValueRange outer) {
            Value bi = arith::DivUIOp::create(b, l, bh, hqV);
            Value h = arith::RemUIOp::create(b, l, bh, hqV);
            Value hk = arith::DivUIOp::create(b, l, h, groupV);
            auto qLoop = scf::ForOp::create(
                b, l, c0, seqQ, brV, outer,
                [&](OpBuilder &b, Location l, Value q0, ValueRange state) {
                  Value rows = arith::MinUIOp::create(
                      b, l, arith::SubIOp::create(b, l, seqQ, q0), brV);
                  BlockInputs in;
                  in.q = paddedTile(b, l, q, bi, h, q0, rows, br);
                  in.dO = paddedTile(b, l, dO, bi, h, q0, rows, br);
                  in.lse = paddedRow(b, l, lse, bi, h, q0, rows, br);
                  in.delta = paddedRow(b, l, delta, bi, h, q0, rows, br);
                  in.q0 = q0;
                  in.rows = rows;
                  in.band = band;
                  in.seqQ = seqQ;
                  in.seqKv = seqKv;
                  std::tie(in.keyStart, in.keyEnd) = keyRange(b, l, bi);
                  in.alibiSlope = alibiSlope(b, l, bi, h);
                  // Key blocks outside the band are never visited (as in
                  // the forward).
                  Value kvBegin, kvEnd;
                  std::tie(kvBegin, kvEnd) =
                      bandKeyLoop(b, l, band, q0, rows, seqQ, seqKv, bc);
                  auto kvLoop = scf::ForOp::create(
                      b, l, kvBegin, kvEnd, bcV,
                      ValueRange{zerosF32(b, l, {br, d})},
                      [&](OpBuilder &b, Location l, Value kv0,
                          ValueRange acc) {
                        BlockInputs blk = in;
                        blk.kv0 = kv0;
                        blk.cols = arith::MinUIOp::create(
                            b, l, arith::SubIOp::create(b, l, seqKv, kv0),
                            bcV);
                        blk.k = paddedTile(b, l, k, bi, hk, kv0, blk.cols, bc);
                        blk.v = paddedTile(b, l, v, bi, hk, kv0, blk.cols, bc);
                        Value dS =
                            probsAndScoreGrads(b, l, blk, br, bc, scale, softcap)
                                .second;
                        scf::YieldOp::create(
                            b, l,
                            ValueRange{contract(b, l, Contract::AB, dS, blk.k,
                                                acc[0])});
                      });
                  Value tile =
                      finishTile(b, l, kvLoop.getResult(0), elt, scale, rows);
                  scf::YieldOp::create(
                      b, l,
                      ValueRange{insertTile(b, l, tile, state[0], bi, h, q0,
                                            rows)});
                });
            scf::YieldOp::create(b, l, qLoop.getResults());
          });
      dQ = qOuter.getResult(0);
    }
    kvOuter->setAttr(
        "attn.tile",
        rewriter.getDictionaryAttr({
            rewriter.getNamedAttr("block_m", rewriter.getI64IntegerAttr(br)),
            rewriter.getNamedAttr("block_n", rewriter.getI64IntegerAttr(bc)),
            rewriter.getNamedAttr("deterministic",
                                  rewriter.getBoolAttr(deterministic)),
        }));
    rewriter.replaceOp(op, {dQ, kvOuter.getResult(0), kvOuter.getResult(1)});
    return success();
  }
};

struct AttnTileAttentionGradPass
    : mlir::attn::impl::AttnTileAttentionGradBase<AttnTileAttentionGradPass> {
  using AttnTileAttentionGradBase::AttnTileAttentionGradBase;

  void runOnOperation() override {
    int64_t bm = blockM, bn = blockN;
    if (bm < 1 || bm % 16 != 0 || bn < 1 || bn % 16 != 0) {
      getOperation()->emitError()
          << "attn-tile-attention-grad: block-m and block-n must be positive "
             "multiples of 16 (got block-m="
          << bm << ", block-n=" << bn << ")";
      return signalPassFailure();
    }
    SmallVector<AttentionGradOp> ops;
    getOperation()->walk([&](AttentionGradOp op) { ops.push_back(op); });
    for (AttentionGradOp op : ops) {
      IRRewriter rewriter(op);
      TileGrad tiler{op, bm, bn, deterministic};
      if (failed(tiler.run(rewriter)))
        return signalPassFailure();
    }
  }
};
} // namespace
