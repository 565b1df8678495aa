//===- AttnLowerToReference.cpp - attn.attention -> plain linalg ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The reference semantics of attn.attention, written with linalg.generic on
// whole tensors. Every other lowering is tested against this one.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "LinalgHelpers.h"
#include "MaskBlocks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTOREFERENCE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
using namespace mlir::attn::detail;

Value negInf(OpBuilder &b, Location loc) {
  return arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
}

/// An f32 tensor of the given mixed sizes, filled with `init`.
Value filledF32(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                Value init) {
  Value empty = tensor::EmptyOp::create(b, loc, sizes, b.getF32Type());
  return linalg::FillOp::create(b, loc, init, empty).getResult(0);
}

/// [T, H, X] (packed tokens) as [1, H, T, X]: the dense layout with one
/// batch entry holding every sequence.
Value packedToDense(OpBuilder &b, Location loc, Value packed) {
  auto type = cast<RankedTensorType>(packed.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, packed);
  auto expandedType = RankedTensorType::get(
      {1, type.getDimSize(0), type.getDimSize(1), type.getDimSize(2)},
      type.getElementType());
  Value expanded = tensor::ExpandShapeOp::create(
      b, loc, expandedType, packed,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), sizes[0], sizes[1], sizes[2]});
  Value init = tensor::EmptyOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), sizes[1], sizes[0], sizes[2]},
      type.getElementType());
  return linalg::TransposeOp::create(b, loc, expanded, init,
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      .getResult()[0];
}

/// The inverse of packedToDense for O: [1, H, T, X] -> [T, H, X].
Value denseToPacked(OpBuilder &b, Location loc, Value dense) {
  auto type = cast<RankedTensorType>(dense.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, dense);
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{sizes[0], sizes[2], sizes[1], sizes[3]},
      type.getElementType());
  Value transposed = linalg::TransposeOp::create(b, loc, dense, init,
                                                 ArrayRef<int64_t>{0, 2, 1, 3})
                         .getResult()[0];
  return tensor::CollapseShapeOp::create(
      b, loc, transposed, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
}

/// The sequence of every packed token: seg[t] = #{s in [1, B] : cu[s] <= t}
/// (sequences of length 0 own no token), as an i32 tensor [T].
Value sequenceOfTokens(OpBuilder &b, Location loc, Value cu, Value tokens) {
  MLIRContext *ctx = b.getContext();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value size = tensor::DimOp::create(b, loc, cu, 0);
  Value batch = arith::SubIOp::create(b, loc, size, one);
  Value tail = tensor::ExtractSliceOp::create(
      b, loc, cu, ArrayRef<OpFoldResult>{b.getIndexAttr(1)},
      ArrayRef<OpFoldResult>{batch}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  Type i32 = b.getI32Type();
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<OpFoldResult>{tokens},
                                        i32);
  Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  AffineExpr t, s;
  bindDims(ctx, t, s);
  return generic(b, loc, tail, init,
                 {AffineMap::get(2, 0, {s}, ctx), AffineMap::get(2, 0, {t}, ctx)},
                 {kPar, kRed},
                 [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                   Value tok = arith::IndexCastOp::create(
                       nb, l, i32, linalg::IndexOp::create(nb, l, 0));
                   Value past = arith::CmpIOp::create(
                       nb, l, arith::CmpIPredicate::sle, a[0], tok);
                   Value inc = arith::ExtUIOp::create(nb, l, i32, past);
                   return arith::AddIOp::create(nb, l, a[1], inc);
                 });
}

/// Whether key `col` (index) lies in a key_range entry's [start, end)
/// (i32 values).
Value keyInRange(OpBuilder &b, Location loc, Value col, Value start,
                 Value end) {
  Value col32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), col);
  Value afterStart = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                           col32, start);
  Value beforeEnd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          col32, end);
  return arith::AndIOp::create(b, loc, afterStart, beforeEnd);
}


struct LowerAttentionToReference : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    int64_t hq = op.getQueryType().getDimSize(1);
    int64_t hkv = op.getKeyType().getDimSize(1);
    if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv))
      return rewriter.notifyMatchFailure(
          op, "reference lowering needs static head counts");
    int64_t group = hq / hkv;

    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    // Variable length: every sequence in one [1, H, T, D] batch entry, with
    // keys of other sequences masked out below.
    bool varlen = op.isVarlen();
    Value segQ, segK;
    if (varlen) {
      Value tq = tensor::DimOp::create(rewriter, loc, q, 0);
      Value tk = tensor::DimOp::create(rewriter, loc, k, 0);
      segQ = sequenceOfTokens(rewriter, loc, op.getCuSeqlensQ(), tq);
      segK = sequenceOfTokens(rewriter, loc, op.getCuSeqlensKv(), tk);
      q = packedToDense(rewriter, loc, q);
      k = packedToDense(rewriter, loc, k);
      v = packedToDense(rewriter, loc, v);
    }
    SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(rewriter, loc, q);
    SmallVector<OpFoldResult> kSizes = tensor::getMixedSizes(rewriter, loc, k);
    SmallVector<OpFoldResult> vSizes = tensor::getMixedSizes(rewriter, loc, v);
    OpFoldResult nk = kSizes[2], dv = vSizes[3];

    // Dims of the score space: (b, h, i, j) and the contraction dims d / e.
    AffineExpr b, h, i, j, r;
    bindDims(ctx, b, h, i, j, r);
    AffineExpr kvHead = h.floorDiv(group);
    auto map = [&](ArrayRef<AffineExpr> results) {
      return AffineMap::get(5, 0, results, ctx);
    };
    auto map4 = [&](ArrayRef<AffineExpr> results) {
      return AffineMap::get(4, 0, results, ctx);
    };

    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0.0f));
    Value ninf = negInf(rewriter, loc);

    // S[b,h,i,j] = sum_d Q[b,h,i,d] * K[b,h/G,j,d], in f32.
    SmallVector<OpFoldResult> sSizes = {qSizes[0], qSizes[1], qSizes[2], nk};
    Value sInit = filledF32(rewriter, loc, sSizes, zero);
    Value scores =
        linalg::GenericOp::create(
            rewriter, loc, sInit.getType(), ValueRange{q, k}, sInit,
            ArrayRef<AffineMap>{map({b, h, i, r}), map({b, kvHead, j, r}),
                                map({b, h, i, j})},
            ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed},
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value prod = arith::MulFOp::create(
                  nb, l, extToF32(nb, l, args[0]), extToF32(nb, l, args[1]));
              linalg::YieldOp::create(
                  nb, l, ValueRange{arith::AddFOp::create(nb, l, args[2], prod)});
            })
            .getResult(0);

    // Scale, modify (score_mod), then mask: keys outside the band get -inf.
    op.expandScoreModSugar();
    Block *scoreMod = op.getScoreModBlock();
    Value scale = op.buildScale(rewriter, loc);
    MaskBand band = op.getMaskBand();
    Value nqV = getValueOrCreateConstantIndexOp(rewriter, loc, qSizes[2]);
    Value nkV = getValueOrCreateConstantIndexOp(rewriter, loc, nk);
    AffineMap id4 = rewriter.getMultiDimIdentityMap(4);
    // Inputs of the scale/modify/mask step besides the scores: the bias
    // (broadcast dims read index 0) and, varlen, the tokens' sequences.
    SmallVector<Value> extraIns;
    SmallVector<AffineMap> extraMaps;
    Value bias = op.getBias();
    if (bias) {
      auto bt = cast<RankedTensorType>(bias.getType());
      AffineExpr zeroExpr = getAffineConstantExpr(0, ctx);
      extraIns.push_back(bias);
      extraMaps.push_back(map4({bt.getDimSize(0) == 1 ? zeroExpr : b,
                                bt.getDimSize(1) == 1 ? zeroExpr : h, i, j}));
    }
    if (varlen) {
      extraIns.append({segQ, segK});
      extraMaps.append({map4({i}), map4({j})});
    }
    // Key padding: batch entry b's [start, end) of keys.
    Value keyStart = op.getKeyStart();
    if (keyStart) {
      extraIns.append({keyStart, op.getKeyEnd()});
      extraMaps.append({map4({b}), map4({b})});
    }
    extraMaps.push_back(id4);
    Value cuQ = op.getCuSeqlensQ(), cuK = op.getCuSeqlensKv();
    Value alibi = op.getAlibiSlopes();
    Value masked =
        linalg::GenericOp::create(
            rewriter, loc, scores.getType(), extraIns, scores, extraMaps,
            SmallVector<IteratorType>(4, kPar),
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value s = arith::MulFOp::create(nb, l, args.back(), scale);
              SmallVector<Value> pos;
              if (scoreMod || !band.isNone() || varlen || keyStart || alibi)
                for (unsigned d = 0; d < 4; ++d)
                  pos.push_back(linalg::IndexOp::create(nb, l, d));
              Value rowLen = nqV, colLen = nkV, sameSequence;
              if (varlen) {
                // Positions within the row's sequence; keys of another
                // sequence are never visible.
                unsigned at = bias ? 1 : 0;
                Type index = nb.getIndexType();
                Value sq = args[at], sk = args[at + 1];
                sameSequence = arith::CmpIOp::create(
                    nb, l, arith::CmpIPredicate::eq, sq, sk);
                Value seq = arith::IndexCastOp::create(nb, l, index, sq);
                Value next = arith::AddIOp::create(
                    nb, l, seq, arith::ConstantIndexOp::create(nb, l, 1));
                auto at32 = [&](Value cu, Value idx) -> Value {
                  Value x = tensor::ExtractOp::create(nb, l, cu, idx);
                  return arith::IndexCastOp::create(nb, l, index, x);
                };
                Value q0 = at32(cuQ, seq), k0 = at32(cuK, seq);
                rowLen = arith::SubIOp::create(nb, l, at32(cuQ, next), q0);
                colLen = arith::SubIOp::create(nb, l, at32(cuK, next), k0);
                pos[0] = seq;
                pos[2] = arith::SubIOp::create(nb, l, pos[2], q0);
                pos[3] = arith::SubIOp::create(nb, l, pos[3], k0);
              }
              if (scoreMod)
                s = inlineScoreMod(nb, *scoreMod, s, pos);
              if (alibi) {
                Value slope = mlir::attn::detail::alibiSlopeOf(
                    nb, l, alibi, pos[0], pos[1]);
                s = arith::SubFOp::create(
                    nb, l, s,
                    buildAlibiTerm(nb, l, band, slope, pos[2], pos[3], rowLen,
                                   colLen));
              }
              if (bias)
                s = arith::AddFOp::create(nb, l, s, extToF32(nb, l, args[0]));
              Value visible = sameSequence;
              if (!band.isNone()) {
                Value inBand = buildMaskVisible(nb, l, band, pos[2], pos[3],
                                                rowLen, colLen);
                visible = visible ? arith::AndIOp::create(nb, l, visible,
                                                          inBand)
                                  : inBand;
              }
              if (keyStart) {
                unsigned at = (bias ? 1 : 0) + (varlen ? 2 : 0);
                Value inRange = keyInRange(nb, l, pos[3], args[at],
                                           args[at + 1]);
                visible = visible ? arith::AndIOp::create(nb, l, visible,
                                                          inRange)
                                  : inRange;
              }
              if (visible)
                s = arith::SelectOp::create(nb, l, visible, s, ninf);
              linalg::YieldOp::create(nb, l, ValueRange{s});
            })
            .getResult(0);

    // Row max m, with fully masked rows (m = -inf) shifted by 0 instead so
    // that exp(-inf - m) is 0, not NaN.
    SmallVector<OpFoldResult> rowSizes = {qSizes[0], qSizes[1], qSizes[2]};
    AffineMap rowMap = map4({b, h, i});
    Value maxInit = filledF32(rewriter, loc, rowSizes, ninf);
    Value rowMax =
        linalg::GenericOp::create(
            rewriter, loc, maxInit.getType(), masked, maxInit,
            ArrayRef<AffineMap>{id4, rowMap},
            ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
            [&](OpBuilder &nb, Location l, ValueRange args) {
              linalg::YieldOp::create(
                  nb, l,
                  ValueRange{arith::MaximumFOp::create(nb, l, args[0], args[1])});
            })
            .getResult(0);

    auto safeShift = [&](OpBuilder &nb, Location l, Value m) -> Value {
      Value isNegInf = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                             m, ninf);
      return arith::SelectOp::create(nb, l, isNegInf, zero, m);
    };

    // P = exp(S - m).
    Value probs =
        linalg::GenericOp::create(
            rewriter, loc, masked.getType(), ValueRange{rowMax}, masked,
            ArrayRef<AffineMap>{rowMap, id4}, SmallVector<IteratorType>(4, kPar),
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value shifted = arith::SubFOp::create(
                  nb, l, args[1], safeShift(nb, l, args[0]));
              linalg::YieldOp::create(
                  nb, l, ValueRange{math::ExpOp::create(nb, l, shifted)});
            })
            .getResult(0);

    // l = sum_j P.
    Value sumInit = filledF32(rewriter, loc, rowSizes, zero);
    Value rowSum =
        linalg::GenericOp::create(
            rewriter, loc, sumInit.getType(), probs, sumInit,
            ArrayRef<AffineMap>{id4, rowMap},
            ArrayRef<IteratorType>{kPar, kPar, kPar, kRed},
            [&](OpBuilder &nb, Location l, ValueRange args) {
              linalg::YieldOp::create(
                  nb, l, ValueRange{arith::AddFOp::create(nb, l, args[0], args[1])});
            })
            .getResult(0);

    // acc[b,h,i,e] = sum_j P[b,h,i,j] * V[b,h/G,j,e].
    SmallVector<OpFoldResult> oSizes = {qSizes[0], qSizes[1], qSizes[2], dv};
    Value accInit = filledF32(rewriter, loc, oSizes, zero);
    // Here the fifth dim r is the contraction over keys and j is e.
    Value acc =
        linalg::GenericOp::create(
            rewriter, loc, accInit.getType(), ValueRange{probs, v}, accInit,
            ArrayRef<AffineMap>{map({b, h, i, r}), map({b, kvHead, r, j}),
                                map({b, h, i, j})},
            ArrayRef<IteratorType>{kPar, kPar, kPar, kPar, kRed},
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value prod = arith::MulFOp::create(nb, l, args[0],
                                                 extToF32(nb, l, args[1]));
              linalg::YieldOp::create(
                  nb, l, ValueRange{arith::AddFOp::create(nb, l, args[2], prod)});
            })
            .getResult(0);

    // O = acc / l, 0 for rows that saw no key.
    Type elt = op.getOutputType().getElementType();
    Value outInit = tensor::EmptyOp::create(rewriter, loc, oSizes, elt);
    Value out =
        linalg::GenericOp::create(
            rewriter, loc, outInit.getType(), ValueRange{acc, rowSum}, outInit,
            ArrayRef<AffineMap>{id4, rowMap, id4},
            SmallVector<IteratorType>(4, kPar),
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value empty = arith::CmpFOp::create(
                  nb, l, arith::CmpFPredicate::OEQ, args[1], zero);
              Value div = arith::DivFOp::create(nb, l, args[0], args[1]);
              Value o = arith::SelectOp::create(nb, l, empty, zero, div);
              if (elt != nb.getF32Type())
                o = arith::TruncFOp::create(nb, l, elt, o);
              linalg::YieldOp::create(nb, l, ValueRange{o});
            })
            .getResult(0);

    if (varlen)
      out = denseToPacked(rewriter, loc, out);
    SmallVector<Value> results = {out};
    if (op.getLse()) {
      // LSE = m + log(l); -inf + log(0) stays -inf for masked rows.
      AffineMap id3 = rewriter.getMultiDimIdentityMap(3);
      Value lseInit = tensor::EmptyOp::create(rewriter, loc, rowSizes,
                                              rewriter.getF32Type());
      Value lse =
          linalg::GenericOp::create(
              rewriter, loc, lseInit.getType(), ValueRange{rowMax, rowSum},
              lseInit, ArrayRef<AffineMap>{id3, id3, id3},
              SmallVector<IteratorType>(3, kPar),
              [&](OpBuilder &nb, Location l, ValueRange args) {
                Value logSum = math::LogOp::create(nb, l, args[1]);
                linalg::YieldOp::create(
                    nb, l, ValueRange{arith::AddFOp::create(nb, l, args[0], logSum)});
              })
              .getResult(0);
      if (varlen) // [1, Hq, Tq] -> [Hq, Tq]
        lse = tensor::CollapseShapeOp::create(
            rewriter, loc, lse,
            ArrayRef<ReassociationIndices>{{0, 1}, {2}});
      results.push_back(lse);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Sums a per-query-head tensor [B, Hq, N, X] over the query heads of each
/// key/value head: [B, Hkv, N, X] (expand Hq into Hkv x G, reduce G).
Value sumOverGroups(OpBuilder &b, Location loc, Value perHead, int64_t hkv,
                    int64_t group) {
  if (group == 1)
    return perHead;
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(perHead.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, perHead);
  SmallVector<OpFoldResult> expandedSizes = {sizes[0], b.getIndexAttr(hkv),
                                             b.getIndexAttr(group), sizes[2],
                                             sizes[3]};
  auto expandedType = RankedTensorType::get(
      {type.getDimSize(0), hkv, group, type.getDimSize(2), type.getDimSize(3)},
      type.getElementType());
  Value expanded = tensor::ExpandShapeOp::create(
      b, loc, expandedType, perHead,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}}, expandedSizes);
  Value init =
      filledF32(b, loc, {sizes[0], b.getIndexAttr(hkv), sizes[2], sizes[3]},
                f32Const(b, loc, 0.0));
  AffineExpr d0, d1, d2, d3, d4;
  bindDims(ctx, d0, d1, d2, d3, d4);
  return generic(
      b, loc, expanded, init,
      {AffineMap::get(5, 0, {d0, d1, d4, d2, d3}, ctx),
       AffineMap::get(5, 0, {d0, d1, d2, d3}, ctx)},
      {kPar, kPar, kPar, kPar, kRed},
      [](OpBuilder &nb, Location l, ValueRange a) -> Value {
        return arith::AddFOp::create(nb, l, a[0], a[1]);
      });
}

/// attn.attention_grad on whole tensors: P recomputed from the LSE, then
/// dV = Pᵀ·dO, dP = dO·Vᵀ, Δ = rowsum(dO ∘ O), dS = P ∘ (dP − Δ),
/// dQ = dS·K·scale and dK = dSᵀ·Q·scale, all in f32; dK and dV summed over
/// the query heads of each key/value head.
struct LowerAttentionGradToReference : OpRewritePattern<AttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    int64_t hq = op.getQueryType().getDimSize(1);
    int64_t hkv = op.getKeyType().getDimSize(1);
    if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv))
      return rewriter.notifyMatchFailure(
          op, "reference lowering needs static head counts");
    int64_t group = hq / hkv;

    Value q = op.getQuery(), k = op.getKey(), v = op.getValue(),
          o = op.getOutput(), dO = op.getGradOutput(), lse = op.getLse();
    SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(rewriter, loc, q);
    SmallVector<OpFoldResult> kSizes = tensor::getMixedSizes(rewriter, loc, k);
    SmallVector<OpFoldResult> vSizes = tensor::getMixedSizes(rewriter, loc, v);
    OpFoldResult nk = kSizes[2];

    AffineExpr b, h, i, j, r;
    bindDims(ctx, b, h, i, j, r);
    AffineExpr kvHead = h.floorDiv(group);
    auto map = [&](ArrayRef<AffineExpr> results) {
      return AffineMap::get(5, 0, results, ctx);
    };
    auto map4 = [&](ArrayRef<AffineExpr> results) {
      return AffineMap::get(4, 0, results, ctx);
    };
    AffineMap id4 = rewriter.getMultiDimIdentityMap(4);
    AffineMap rowMap = map4({b, h, i});
    SmallVector<IteratorType> contract = {kPar, kPar, kPar, kPar, kRed};
    SmallVector<IteratorType> par4(4, kPar);
    Value zero = f32Const(rewriter, loc, 0.0);
    Value ninf = negInf(rewriter, loc);
    auto mulAdd = [](OpBuilder &nb, Location l, ValueRange a) -> Value {
      Value prod = arith::MulFOp::create(nb, l, extToF32(nb, l, a[0]),
                                         extToF32(nb, l, a[1]));
      return arith::AddFOp::create(nb, l, a[2], prod);
    };

    // S[b,h,i,j] = sum_d Q[b,h,i,d] * K[b,h/G,j,d].
    SmallVector<OpFoldResult> sSizes = {qSizes[0], qSizes[1], qSizes[2], nk};
    Value scores = generic(
        rewriter, loc, ValueRange{q, k}, filledF32(rewriter, loc, sSizes, zero),
        {map({b, h, i, r}), map({b, kvHead, j, r}), map({b, h, i, j})},
        contract, mulAdd);

    // P = exp(S·scale − LSE) where key j is visible from row i, else 0;
    // rows with LSE = −inf saw no key and give 0, not NaN.
    Value scale = op.buildScale(rewriter, loc);
    MaskBand band = op.getMaskBand();
    Value nqV = getValueOrCreateConstantIndexOp(rewriter, loc, qSizes[2]);
    Value nkV = getValueOrCreateConstantIndexOp(rewriter, loc, nk);
    // A softcap C: the score is C·tanh(S·scale / C), and dS takes the
    // factor 1 − tanh² below.
    std::optional<double> cap;
    if (std::optional<APFloat> c = op.getSoftcap())
      cap = c->convertToDouble();
    auto capTanh = [&](OpBuilder &nb, Location l, Value raw) -> Value {
      Value s = arith::MulFOp::create(nb, l, raw, scale);
      return math::TanhOp::create(
          nb, l, arith::MulFOp::create(nb, l, s, f32Const(nb, l, 1.0 / *cap)));
    };
    Value alibi = op.getAlibiSlopes();
    SmallVector<Value> probIns = {lse};
    SmallVector<AffineMap> probMaps = {rowMap};
    Value keyStart = op.getKeyStart();
    if (keyStart) {
      probIns.append({keyStart, op.getKeyEnd()});
      probMaps.append({map4({b}), map4({b})});
    }
    probMaps.push_back(id4);
    Value probs = generic(
        rewriter, loc, probIns, scores, probMaps, par4,
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value raw = a.back();
          Value s = cap ? arith::MulFOp::create(nb, l, capTanh(nb, l, raw),
                                                f32Const(nb, l, *cap))
                        : arith::MulFOp::create(nb, l, raw, scale);
          if (alibi) {
            SmallVector<Value> pos;
            for (unsigned d = 0; d < 4; ++d)
              pos.push_back(linalg::IndexOp::create(nb, l, d));
            Value slope = mlir::attn::detail::alibiSlopeOf(nb, l, alibi,
                                                           pos[0], pos[1]);
            s = arith::SubFOp::create(
                nb, l, s,
                buildAlibiTerm(nb, l, band, slope, pos[2], pos[3], nqV, nkV));
          }
          Value p =
              math::ExpOp::create(nb, l, arith::SubFOp::create(nb, l, s, a[0]));
          Value keep = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::ONE,
                                             a[0], ninf);
          if (!band.isNone()) {
            Value row = linalg::IndexOp::create(nb, l, 2);
            Value col = linalg::IndexOp::create(nb, l, 3);
            keep = arith::AndIOp::create(
                nb, l, keep,
                buildMaskVisible(nb, l, band, row, col, nqV, nkV));
          }
          if (keyStart)
            keep = arith::AndIOp::create(
                nb, l, keep,
                keyInRange(nb, l, linalg::IndexOp::create(nb, l, 3), a[1],
                           a[2]));
          return arith::SelectOp::create(nb, l, keep, p, zero);
        });

    // dP[b,h,i,j] = sum_e dO[b,h,i,e] * V[b,h/G,j,e].
    Value dP = generic(
        rewriter, loc, ValueRange{dO, v}, filledF32(rewriter, loc, sSizes, zero),
        {map({b, h, i, r}), map({b, kvHead, j, r}), map({b, h, i, j})},
        contract, mulAdd);

    // Δ[b,h,i] = sum_e dO[b,h,i,e] * O[b,h,i,e].
    SmallVector<OpFoldResult> rowSizes = {qSizes[0], qSizes[1], qSizes[2]};
    Value delta = generic(
        rewriter, loc, ValueRange{dO, o},
        filledF32(rewriter, loc, rowSizes, zero), {id4, id4, rowMap},
        {kPar, kPar, kPar, kRed}, mulAdd);

    // dS = P ∘ (dP − Δ) (∘ (1 − tanh²) with a softcap), written over dP.
    SmallVector<Value> dsIns = {probs, delta};
    SmallVector<AffineMap> dsMaps = {id4, rowMap};
    if (cap) {
      dsIns.push_back(scores);
      dsMaps.push_back(id4);
    }
    dsMaps.push_back(id4);
    Value dS = generic(
        rewriter, loc, dsIns, dP, dsMaps, par4,
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value ds = arith::MulFOp::create(
              nb, l, a[0], arith::SubFOp::create(nb, l, a.back(), a[1]));
          if (!cap)
            return ds;
          Value t = capTanh(nb, l, a[2]);
          return arith::MulFOp::create(
              nb, l, ds,
              arith::SubFOp::create(nb, l, f32Const(nb, l, 1.0),
                                    arith::MulFOp::create(nb, l, t, t)));
        });

    // Per query head: dV_h[b,h,j,e] = sum_i P[b,h,i,j] * dO[b,h,i,e] and
    // dK_h[b,h,j,d] = sum_i dS[b,h,i,j] * Q[b,h,i,d]; here i is the fifth
    // dim r and (j, e) are dims (i, j).
    auto perHeadKV = [&](Value lhs, Value rhs, OpFoldResult cols) {
      SmallVector<OpFoldResult> sizes = {qSizes[0], qSizes[1], nk, cols};
      return generic(rewriter, loc, ValueRange{lhs, rhs},
                     filledF32(rewriter, loc, sizes, zero),
                     {map({b, h, r, i}), map({b, h, r, j}), map({b, h, i, j})},
                     contract, mulAdd);
    };
    Value dV = sumOverGroups(rewriter, loc, perHeadKV(probs, dO, vSizes[3]),
                             hkv, group);
    Value dK = sumOverGroups(rewriter, loc, perHeadKV(dS, q, qSizes[3]), hkv,
                             group);

    // dQ[b,h,i,d] = sum_j dS[b,h,i,j] * K[b,h/G,j,d].
    Value dQ = generic(
        rewriter, loc, ValueRange{dS, k},
        filledF32(rewriter, loc, qSizes, zero),
        {map({b, h, i, r}), map({b, kvHead, r, j}), map({b, h, i, j})},
        contract, mulAdd);

    // Scale dQ and dK, and round every gradient to its element type.
    auto finish = [&](Value grad, Type resultType, bool scaled) -> Value {
      auto type = cast<RankedTensorType>(resultType);
      Type elt = type.getElementType();
      Value init = tensor::EmptyOp::create(
          rewriter, loc, tensor::getMixedSizes(rewriter, loc, grad), elt);
      return generic(rewriter, loc, grad, init, {id4, id4}, par4,
                     [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                       Value x = a[0];
                       if (scaled)
                         x = arith::MulFOp::create(nb, l, x, scale);
                       if (elt != nb.getF32Type())
                         x = arith::TruncFOp::create(nb, l, elt, x);
                       return x;
                     });
    };
    rewriter.replaceOp(op, {finish(dQ, op.getGradQuery().getType(), true),
                            finish(dK, op.getGradKey().getType(), true),
                            finish(dV, op.getGradValue().getType(), false)});
    return success();
  }
};

} // namespace

void mlir::attn::populateLowerToReferencePatterns(RewritePatternSet &patterns) {
  patterns.add<LowerAttentionToReference, LowerAttentionGradToReference>(
      patterns.getContext());
}

namespace {
struct AttnLowerToReferencePass
    : mlir::attn::impl::AttnLowerToReferenceBase<AttnLowerToReferencePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateLowerToReferencePatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    WalkResult left = getOperation()->walk([](Operation *op) {
      if (!isa<AttentionOp, AttentionGradOp>(op))
        return WalkResult::advance();
      op->emitOpError("could not be lowered to the reference form (dynamic "
                      "head counts are not supported)");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
