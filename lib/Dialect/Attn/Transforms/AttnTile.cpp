//===- AttnTile.cpp - attn.attention -> FlashAttention block loops -------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Produces the tiled form: scf.forall over (batch, query head, query block)
// around an scf.for over key/value blocks that carries the online-softmax
// state. The per-block math stays in attn.online_block until
// attn-fuse-online-softmax expands it.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "MaskBlocks.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Extracts the [rows, cols] tile at (b, h, row0, 0) of a rank-4 tensor and
/// zero-pads it to [blockRows, cols].
Value extractPaddedTile(OpBuilder &b, Location loc, Value source, Value batch,
                        Value head, Value row0, Value rows, int64_t blockRows) {
  auto type = cast<RankedTensorType>(source.getType());
  int64_t cols = type.getDimSize(3);
  Type elt = type.getElementType();
  SmallVector<OpFoldResult> offsets = {batch, head, row0, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1), rows,
                                     b.getIndexAttr(cols)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  auto sliceType = RankedTensorType::get({ShapedType::kDynamic, cols}, elt);
  Value slice = tensor::ExtractSliceOp::create(b, loc, sliceType, source,
                                               offsets, sizes, strides);
  Value blockV = arith::ConstantIndexOp::create(b, loc, blockRows);
  Value padRows = arith::SubIOp::create(b, loc, blockV, rows);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  auto paddedType = RankedTensorType::get({blockRows, cols}, elt);
  return tensor::PadOp::create(
      b, loc, paddedType, slice,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{padRows, b.getIndexAttr(0)}, zero);
}

Value filled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, float v) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  Value c = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  return linalg::FillOp::create(b, loc, c, empty).getResult(0);
}

} // namespace

LogicalResult mlir::attn::tileAttention(RewriterBase &rewriter, AttentionOp op,
                                        const TileConfig &config) {
  Location loc = op.getLoc();
  RankedTensorType qType = op.getQueryType();
  int64_t hq = qType.getDimSize(1), hkv = op.getKeyType().getDimSize(1);
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv))
    return op.emitOpError("could not be tiled: dynamic head counts are not "
                          "supported");
  int64_t br = config.blockM, bc = config.blockN;
  int64_t dv = op.getValueHeadDim();
  Type elt = qType.getElementType();
  Type f32 = rewriter.getF32Type();
  op.expandScoreModSugar();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);

  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Value seqQ = tensor::DimOp::create(rewriter, loc, q, 2);
  Value seqKv = tensor::DimOp::create(rewriter, loc, k, 2);
  Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value brV = arith::ConstantIndexOp::create(rewriter, loc, br);
  Value bcV = arith::ConstantIndexOp::create(rewriter, loc, bc);
  Value groupV = arith::ConstantIndexOp::create(rewriter, loc, hq / hkv);
  Value numQBlocks = arith::CeilDivUIOp::create(rewriter, loc, seqQ, brV);

  // Results: O [B, Hq, Nq, Dv] and, when asked for, LSE [B, Hq, Nq].
  SmallVector<OpFoldResult> outSizes = tensor::getMixedSizes(rewriter, loc, q);
  outSizes[3] = rewriter.getIndexAttr(dv);
  SmallVector<Value> sharedOuts = {
      tensor::EmptyOp::create(rewriter, loc, outSizes, elt)};
  bool wantLse = static_cast<bool>(op.getLse());
  if (wantLse)
    sharedOuts.push_back(tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>(outSizes).take_front(3), f32));

  SmallVector<OpFoldResult> gridSizes =
      tensor::getMixedSizes(rewriter, loc, q);
  gridSizes[2] = numQBlocks;
  gridSizes.pop_back();
  auto forall = scf::ForallOp::create(rewriter, loc, gridSizes, sharedOuts,
                                      std::nullopt);
  forall->setAttr(
      "attn.tile",
      rewriter.getDictionaryAttr({
          rewriter.getNamedAttr("block_m", rewriter.getI64IntegerAttr(br)),
          rewriter.getNamedAttr("block_n", rewriter.getI64IntegerAttr(bc)),
          rewriter.getNamedAttr("source", rewriter.getStringAttr(config.source)),
      }));

  rewriter.setInsertionPoint(forall.getTerminator());
  ValueRange ivs = forall.getInductionVars();
  Value bi = ivs[0], hi = ivs[1], qb = ivs[2];
  Value q0 = arith::MulIOp::create(rewriter, loc, qb, brV);
  Value rows = arith::MinUIOp::create(
      rewriter, loc, arith::SubIOp::create(rewriter, loc, seqQ, q0), brV);
  // Grouped-query attention: q-head h reads kv-head h / (Hq / Hkv).
  Value kvHead = arith::DivUIOp::create(rewriter, loc, hi, groupV);
  Value qTile = extractPaddedTile(rewriter, loc, q, bi, hi, q0, rows, br);

  // Block skipping: key blocks outside the mask's band are never visited.
  MaskBand band = op.getMaskBand();
  Value kvBegin = c0, kvEnd = seqKv;
  if (!band.isNone())
    std::tie(kvBegin, kvEnd) =
        detail::bandKeyLoop(rewriter, loc, band, q0, rows, seqQ, seqKv, bc);

  Value acc0 = filled(rewriter, loc, {br, dv}, 0.0f);
  Value max0 =
      filled(rewriter, loc, {br}, -std::numeric_limits<float>::infinity());
  Value sum0 = filled(rewriter, loc, {br}, 0.0f);
  FloatAttr scale = rewriter.getF32FloatAttr(
      static_cast<float>(op.getEffectiveScale()));
  Block *scoreMod = op.getScoreModBlock();
  auto kvLoop = scf::ForOp::create(
      rewriter, loc, kvBegin, kvEnd, bcV, ValueRange{acc0, max0, sum0},
      [&](OpBuilder &b, Location l, Value kv0, ValueRange state) {
        Value cols = arith::MinUIOp::create(
            b, l, arith::SubIOp::create(b, l, seqKv, kv0), bcV);
        Value kTile = extractPaddedTile(b, l, k, bi, kvHead, kv0, cols, bc);
        Value vTile = extractPaddedTile(b, l, v, bi, kvHead, kv0, cols, bc);
        auto block = OnlineBlockOp::create(
            b, l, TypeRange(state.getTypes()), qTile, kTile, vTile, state[0],
            state[1], state[2], q0, kv0, seqQ, seqKv,
            scoreMod ? bi : Value(), scoreMod ? hi : Value(),
            op.getMaskAttr(), op.getWindowAttr(), scale);
        if (scoreMod) {
          IRMapping map;
          op.getScoreMod().cloneInto(&block.getScoreMod(), map);
        }
        scf::YieldOp::create(b, l, block.getResults());
      });
  auto finalize = OnlineFinalizeOp::create(
      rewriter, loc,
      TypeRange{RankedTensorType::get({br, dv}, elt),
                RankedTensorType::get({br}, f32)},
      kvLoop.getResult(0), kvLoop.getResult(1), kvLoop.getResult(2));

  // Keep only the rows that exist, then publish them.
  OpFoldResult zeroIdx = rewriter.getIndexAttr(0), oneIdx =
                                                       rewriter.getIndexAttr(1);
  Value oRows = tensor::ExtractSliceOp::create(
      rewriter, loc, RankedTensorType::get({ShapedType::kDynamic, dv}, elt),
      finalize.getOutput(), ArrayRef<OpFoldResult>{zeroIdx, zeroIdx},
      ArrayRef<OpFoldResult>{rows, rewriter.getIndexAttr(dv)},
      ArrayRef<OpFoldResult>{oneIdx, oneIdx});
  Value lseRows;
  if (wantLse)
    lseRows = tensor::ExtractSliceOp::create(
        rewriter, loc, RankedTensorType::get({ShapedType::kDynamic}, f32),
        finalize.getLse(), ArrayRef<OpFoldResult>{zeroIdx},
        ArrayRef<OpFoldResult>{rows}, ArrayRef<OpFoldResult>{oneIdx});

  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  ValueRange outs = forall.getRegionIterArgs();
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, oRows, outs[0],
      ArrayRef<OpFoldResult>{bi, hi, q0, zeroIdx},
      ArrayRef<OpFoldResult>{oneIdx, oneIdx, rows, rewriter.getIndexAttr(dv)},
      SmallVector<OpFoldResult>(4, oneIdx));
  if (wantLse)
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, lseRows, outs[1], ArrayRef<OpFoldResult>{bi, hi, q0},
        ArrayRef<OpFoldResult>{oneIdx, oneIdx, rows},
        SmallVector<OpFoldResult>(3, oneIdx));

  rewriter.replaceOp(op, forall.getResults());
  return success();
}

namespace {
struct AttnTilePass : mlir::attn::impl::AttnTileBase<AttnTilePass> {
  using AttnTileBase::AttnTileBase;

  void runOnOperation() override {
    // Pass options are cl::opt; print their values, not the options (which
    // would stream as a char).
    int64_t bm = blockM, bn = blockN, smem = sharedMemoryBytes;
    if ((bm != 0 && (bm < 1 || bm % 16 != 0)) ||
        (bn != 0 && (bn < 1 || bn % 16 != 0))) {
      getOperation()->emitError()
          << "attn-tile: block-m and block-n must be positive multiples of 16 "
             "(got block-m="
          << bm << ", block-n=" << bn << ")";
      return signalPassFailure();
    }
    if (smem <= 0) {
      getOperation()->emitError()
          << "attn-tile: shared-memory-bytes must be positive (got " << smem
          << ")";
      return signalPassFailure();
    }
    // Configs differ per op (head dim, dtype), so tile op by op.
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    for (AttentionOp op : ops) {
      int64_t eltBytes =
          op.getQueryType().getElementType().getIntOrFloatBitWidth() / 8;
      TileConfig config =
          chooseTileConfigHeuristic(op.getHeadDim(), eltBytes, smem);
      if (bm != 0 || bn != 0)
        config.source = "option";
      if (bm != 0)
        config.blockM = bm;
      if (bn != 0)
        config.blockN = bn;
      IRRewriter rewriter(op);
      if (failed(tileAttention(rewriter, op, config)))
        return signalPassFailure();
    }
  }
};
} // namespace
