//===- AttnFuseOnlineSoftmax.cpp - online softmax as fused tile math -----===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Expands attn.online_block and attn.online_finalize into linalg.generic ops
// on tiles. The arithmetic is the one the GPU kernels run: scores in the
// exp2 domain with scale·log2(e) folded into one multiply, rescale by
// exp2(m_old - m_new), P rounded to the input type before P·V.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "LinalgHelpers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSEONLINESOFTMAX
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
using namespace mlir::attn::detail;

Value emptyLike(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  return tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
}

/// m = -inf means "no key seen yet": shift by 0 so exp2(-inf - m) is 0.
Value safeMax(OpBuilder &b, Location loc, Value m) {
  Value ninf = f32Const(b, loc, -std::numeric_limits<double>::infinity());
  Value isNegInf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, ninf);
  return arith::SelectOp::create(b, loc, isNegInf, f32Const(b, loc, 0.0), m);
}

struct ExpandOnlineBlock : OpRewritePattern<OnlineBlockOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(OnlineBlockOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto qType = cast<RankedTensorType>(op.getQuery().getType());
    auto kType = cast<RankedTensorType>(op.getKey().getType());
    auto accType = cast<RankedTensorType>(op.getAcc().getType());
    if (!qType.hasStaticShape() || !kType.hasStaticShape() ||
        !accType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static tile shapes");
    int64_t br = qType.getDimSize(0), bc = kType.getDimSize(0);
    Type elt = qType.getElementType();

    AffineExpr i, j, r;
    bindDims(ctx, i, j, r);
    auto m3 = [&](ArrayRef<AffineExpr> e) {
      return AffineMap::get(3, 0, e, ctx);
    };
    auto m2 = [&](ArrayRef<AffineExpr> e) {
      return AffineMap::get(2, 0, e, ctx);
    };
    AffineMap id2 = rewriter.getMultiDimIdentityMap(2);
    AffineMap row2 = m2({i});
    AffineMap id1 = rewriter.getMultiDimIdentityMap(1);

    // S = Q · Kᵀ in f32.
    Value sInit = linalg::FillOp::create(rewriter, loc,
                                         f32Const(rewriter, loc, 0.0),
                                         emptyLike(rewriter, loc, {br, bc}))
                      .getResult(0);
    Value s = generic(
        rewriter, loc, {op.getQuery(), op.getKey()}, sInit,
        {m3({i, r}), m3({j, r}), m3({i, j})}, {kPar, kPar, kRed},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value prod = arith::MulFOp::create(b, l, extToF32(b, l, a[0]),
                                             extToF32(b, l, a[1]));
          return arith::AddFOp::create(b, l, a[2], prod);
        });

    // Into the exp2 domain with one multiply; mask the padding and the keys
    // outside the mask's band with -inf. A score_mod sees the natural-domain
    // scaled score (what FlexAttention's score_mod sees), so it costs one
    // more multiply: s * scale, modify, then * log2(e).
    // A bias and ALiBi's term are added in the natural domain too (after
    // the score_mod).
    Block *scoreMod = op.getScoreModBlock();
    Value bias = op.getBias();
    Value alibiSlope = op.getAlibiSlope();
    bool natural = scoreMod || bias || alibiSlope;
    // A compile-time scale folds log2(e) in double precision; a run-time one
    // is multiplied by it once per block, not per score.
    Value scaleLog2e;
    if (std::optional<APFloat> scaleAttr = op.getScale()) {
      double scaleV = scaleAttr->convertToDouble();
      scaleLog2e = f32Const(rewriter, loc, natural ? scaleV : scaleV * M_LOG2E);
    } else {
      scaleLog2e = op.getRuntimeScale();
      if (!natural)
        scaleLog2e = arith::MulFOp::create(rewriter, loc, scaleLog2e,
                                           f32Const(rewriter, loc, M_LOG2E));
    }
    MaskBand band = op.getMaskBand();
    Value keysLeft =
        arith::SubIOp::create(rewriter, loc, op.getSeqKv(), op.getKvStart());
    SmallVector<Value> biasIn;
    SmallVector<AffineMap> maps;
    if (bias) {
      biasIn.push_back(bias);
      maps.push_back(id2);
    }
    maps.push_back(id2);
    Value s2 = generic(
        rewriter, loc, biasIn, s, maps, {kPar, kPar},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value col = linalg::IndexOp::create(b, l, 1);
          Value valid = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                              col, keysLeft);
          Value qIdx, kvIdx;
          if (!band.isNone() || scoreMod || op.getKeyStart() || alibiSlope) {
            qIdx = arith::AddIOp::create(b, l, op.getQStart(),
                                         linalg::IndexOp::create(b, l, 0));
            kvIdx = arith::AddIOp::create(b, l, op.getKvStart(), col);
          }
          if (Value inBand = buildMaskVisible(b, l, band, qIdx, kvIdx,
                                              op.getSeqQ(), op.getSeqKv()))
            valid = arith::AndIOp::create(b, l, valid, inBand);
          if (Value start = op.getKeyStart()) {
            Value afterStart = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::sge, kvIdx, start);
            Value beforeEnd = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::slt, kvIdx, op.getKeyEnd());
            valid = arith::AndIOp::create(
                b, l, valid, arith::AndIOp::create(b, l, afterStart, beforeEnd));
          }
          Value scaled = arith::MulFOp::create(b, l, a.back(), scaleLog2e);
          if (scoreMod)
            scaled = inlineScoreMod(b, *scoreMod, scaled,
                                    {op.getBatch(), op.getHead(), qIdx, kvIdx});
          if (alibiSlope)
            scaled = arith::SubFOp::create(
                b, l, scaled,
                buildAlibiTerm(b, l, band, alibiSlope, qIdx, kvIdx,
                               op.getSeqQ(), op.getSeqKv()));
          if (bias)
            scaled = arith::AddFOp::create(b, l, scaled, extToF32(b, l, a[0]));
          if (natural)
            scaled = arith::MulFOp::create(b, l, scaled,
                                           f32Const(b, l, M_LOG2E));
          return arith::SelectOp::create(
              b, l, valid, scaled,
              f32Const(b, l, -std::numeric_limits<double>::infinity()));
        });

    // The block's row max, then m_new = max(m_old, block max).
    Value ninf = f32Const(rewriter, loc, -std::numeric_limits<double>::infinity());
    Value blockMaxInit =
        linalg::FillOp::create(rewriter, loc, ninf,
                               emptyLike(rewriter, loc, {br}))
            .getResult(0);
    Value blockMax =
        generic(rewriter, loc, {s2}, blockMaxInit, {id2, row2}, {kPar, kRed},
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  return arith::MaximumFOp::create(b, l, a[0], a[1]);
                });

    // alpha = exp2(m_old - m_new), the factor that rescales old state.
    Value alpha = generic(
        rewriter, loc, {op.getMax(), blockMax}, emptyLike(rewriter, loc, {br}),
        {id1, id1, id1}, {kPar},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value mNew = arith::MaximumFOp::create(b, l, a[0], a[1]);
          Value diff = arith::SubFOp::create(b, l, a[0], safeMax(b, l, mNew));
          return math::Exp2Op::create(b, l, diff);
        });

    // The state is updated in place (the old value is the init of its own
    // update), so the kv loop's iter_args bufferize to one buffer each.
    Value mNew = generic(rewriter, loc, {blockMax}, op.getMax(), {id1, id1},
                         {kPar},
                         [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                           return arith::MaximumFOp::create(b, l, a[0], a[1]);
                         });

    // P = exp2(S - m_new).
    Value p = generic(rewriter, loc, {mNew}, s2, {row2, id2}, {kPar, kPar},
                      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                        Value diff = arith::SubFOp::create(
                            b, l, a[1], safeMax(b, l, a[0]));
                        return math::Exp2Op::create(b, l, diff);
                      });

    // l_new = l_old * alpha + rowsum(P).
    Value lScaled = generic(
        rewriter, loc, {alpha}, op.getSum(), {id1, id1}, {kPar},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::MulFOp::create(b, l, a[1], a[0]);
        });
    Value lNew = generic(rewriter, loc, {p}, lScaled, {id2, row2},
                         {kPar, kRed},
                         [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                           return arith::AddFOp::create(b, l, a[0], a[1]);
                         });

    // acc_new = acc_old * alpha + P · V, with P rounded to the input type
    // as the tensor cores consume it.
    Value accScaled = generic(
        rewriter, loc, {alpha}, op.getAcc(), {row2, id2}, {kPar, kPar},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::MulFOp::create(b, l, a[1], a[0]);
        });
    Value accNew = generic(
        rewriter, loc, {p, op.getValue()}, accScaled,
        {m3({i, r}), m3({r, j}), m3({i, j})}, {kPar, kPar, kRed},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value pv = a[0];
          if (!elt.isF32())
            pv = extToF32(b, l, arith::TruncFOp::create(b, l, elt, pv));
          Value prod =
              arith::MulFOp::create(b, l, pv, extToF32(b, l, a[1]));
          return arith::AddFOp::create(b, l, a[2], prod);
        });

    rewriter.replaceOp(op, {accNew, mNew, lNew});
    return success();
  }
};

struct ExpandOnlineFinalize : OpRewritePattern<OnlineFinalizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(OnlineFinalizeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    auto lseType = cast<RankedTensorType>(op.getLse().getType());
    if (!outType.hasStaticShape() || !lseType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static tile shapes");
    Type elt = outType.getElementType();
    AffineMap id2 = rewriter.getMultiDimIdentityMap(2);
    AffineMap row2 = AffineMap::get(2, 0, rewriter.getAffineDimExpr(0),
                                    rewriter.getContext());
    AffineMap id1 = rewriter.getMultiDimIdentityMap(1);

    // O = acc / l once per row; rows that saw no key (l = 0) give 0.
    Value outInit = tensor::EmptyOp::create(rewriter, loc, outType.getShape(),
                                            elt);
    Value out = generic(
        rewriter, loc, {op.getAcc(), op.getSum()}, outInit, {id2, row2, id2},
        {kPar, kPar}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value zero = f32Const(b, l, 0.0);
          Value empty =
              arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, a[1], zero);
          Value o = arith::SelectOp::create(
              b, l, empty, zero, arith::DivFOp::create(b, l, a[0], a[1]));
          if (!elt.isF32())
            o = arith::TruncFOp::create(b, l, elt, o);
          return o;
        });

    // LSE = (m + log2(l)) · ln 2, -inf for rows that saw no key.
    Value lseInit = emptyLike(rewriter, loc, lseType.getShape());
    Value lse = generic(
        rewriter, loc, {op.getMax(), op.getSum()}, lseInit, {id1, id1, id1},
        {kPar}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value empty = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                              a[1], f32Const(b, l, 0.0));
          Value log2Sum = math::Log2Op::create(b, l, a[1]);
          // Built in separate statements: argument evaluation order is
          // unspecified, and the IR must not depend on the host compiler.
          Value ln2 = f32Const(b, l, M_LN2);
          Value v = arith::MulFOp::create(
              b, l, arith::AddFOp::create(b, l, a[0], log2Sum), ln2);
          return arith::SelectOp::create(
              b, l, empty,
              f32Const(b, l, -std::numeric_limits<double>::infinity()), v);
        });
    rewriter.replaceOp(op, {out, lse});
    return success();
  }
};

struct AttnFuseOnlineSoftmaxPass
    : mlir::attn::impl::AttnFuseOnlineSoftmaxBase<AttnFuseOnlineSoftmaxPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseOnlineSoftmaxPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    WalkResult left = getOperation()->walk([](Operation *op) {
      if (!isa<OnlineBlockOp, OnlineFinalizeOp>(op))
        return WalkResult::advance();
      op->emitOpError("could not be expanded: tiles must have static shapes");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

void mlir::attn::populateFuseOnlineSoftmaxPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandOnlineBlock, ExpandOnlineFinalize>(patterns.getContext());
}
