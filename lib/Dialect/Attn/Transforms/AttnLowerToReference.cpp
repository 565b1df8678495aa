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
using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

Value extToF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

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

    // Scale, then mask: causal keeps j <= i + (Nk - Nq) (bottom-right).
    Value scale = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getF32FloatAttr(static_cast<float>(op.getEffectiveScale())));
    Value diagOffset;
    if (op.isCausal()) {
      Value nkV = getValueOrCreateConstantIndexOp(rewriter, loc, nk);
      Value nqV = getValueOrCreateConstantIndexOp(rewriter, loc, qSizes[2]);
      diagOffset = arith::SubIOp::create(rewriter, loc, nkV, nqV);
    }
    AffineMap id4 = rewriter.getMultiDimIdentityMap(4);
    Value masked =
        linalg::GenericOp::create(
            rewriter, loc, scores.getType(), ValueRange{}, scores,
            ArrayRef<AffineMap>{id4}, SmallVector<IteratorType>(4, kPar),
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value s = arith::MulFOp::create(nb, l, args[0], scale);
              if (diagOffset) {
                Value row = linalg::IndexOp::create(nb, l, 2);
                Value col = linalg::IndexOp::create(nb, l, 3);
                Value limit = arith::AddIOp::create(nb, l, row, diagOffset);
                Value visible = arith::CmpIOp::create(
                    nb, l, arith::CmpIPredicate::sle, col, limit);
                s = arith::SelectOp::create(nb, l, visible, s, ninf);
              }
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
      results.push_back(lse);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::attn::populateLowerToReferencePatterns(RewritePatternSet &patterns) {
  patterns.add<LowerAttentionToReference>(patterns.getContext());
}

namespace {
struct AttnLowerToReferencePass
    : mlir::attn::impl::AttnLowerToReferenceBase<AttnLowerToReferencePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateLowerToReferencePatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    WalkResult left = getOperation()->walk([](AttentionOp op) {
      op.emitOpError("could not be lowered to the reference form (dynamic "
                     "head counts are not supported)");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
