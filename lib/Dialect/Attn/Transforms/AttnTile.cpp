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

#include "MaskBlocks.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Support/OptionLimits.h"

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

/// Extracts the [rows, cols] tile at (token0, head, 0) of a packed
/// [T, H, X] tensor and zero-pads it to [blockRows, cols].
Value extractPaddedPackedTile(OpBuilder &b, Location loc, Value source,
                              Value token0, Value head, Value rows,
                              int64_t blockRows) {
  auto type = cast<RankedTensorType>(source.getType());
  int64_t cols = type.getDimSize(2);
  Type elt = type.getElementType();
  auto sliceType = RankedTensorType::get({ShapedType::kDynamic, cols}, elt);
  Value slice = tensor::ExtractSliceOp::create(
      b, loc, sliceType, source,
      ArrayRef<OpFoldResult>{token0, head, b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{rows, b.getIndexAttr(1), b.getIndexAttr(cols)},
      SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
  Value blockV = arith::ConstantIndexOp::create(b, loc, blockRows);
  Value padRows = arith::SubIOp::create(b, loc, blockV, rows);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get({blockRows, cols}, elt), slice,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{padRows, b.getIndexAttr(0)}, zero);
}

/// The [rows, cols] tile of bias [B|1, H|1, Nq, Nk] at (row0, col0) for
/// (batch, head) (index 0 along broadcast dims), zero-padded to
/// [blockRows, blockCols].
Value extractPaddedBiasTile(OpBuilder &b, Location loc, Value bias,
                            Value batch, Value head, Value row0, Value rows,
                            Value col0, Value cols, int64_t blockRows,
                            int64_t blockCols) {
  auto type = cast<RankedTensorType>(bias.getType());
  Type elt = type.getElementType();
  OpFoldResult zeroIdx = b.getIndexAttr(0), one = b.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets = {
      type.getDimSize(0) == 1 ? zeroIdx : OpFoldResult(batch),
      type.getDimSize(1) == 1 ? zeroIdx : OpFoldResult(head), row0, col0};
  auto sliceType = RankedTensorType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic}, elt);
  Value slice = tensor::ExtractSliceOp::create(
      b, loc, sliceType, bias, offsets,
      ArrayRef<OpFoldResult>{one, one, rows, cols},
      SmallVector<OpFoldResult>(4, one));
  auto padBy = [&](int64_t block, Value n) -> OpFoldResult {
    return arith::SubIOp::create(
               b, loc, arith::ConstantIndexOp::create(b, loc, block), n)
        .getResult();
  };
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get({blockRows, blockCols}, elt), slice,
      ArrayRef<OpFoldResult>{zeroIdx, zeroIdx},
      ArrayRef<OpFoldResult>{padBy(blockRows, rows), padBy(blockCols, cols)},
      zero);
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
  // Variable length: packed [T, H, X] tensors, the grid over (sequence,
  // head, query block of the longest sequence); each sequence's lengths
  // and token offsets come from cu_seqlens inside the loop.
  bool varlen = op.isVarlen();
  Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value brV = arith::ConstantIndexOp::create(rewriter, loc, br);
  Value bcV = arith::ConstantIndexOp::create(rewriter, loc, bc);
  Value groupV = arith::ConstantIndexOp::create(rewriter, loc, hq / hkv);
  Value seqQ, seqKv, numQBlocks;
  SmallVector<OpFoldResult> outSizes, lseSizes, gridSizes;
  if (varlen) {
    outSizes = tensor::getMixedSizes(rewriter, loc, q);
    Value maxQ =
        arith::ConstantIndexOp::create(rewriter, loc, op.getMaxSeqlenQ());
    numQBlocks = arith::CeilDivUIOp::create(rewriter, loc, maxQ, brV);
    Value batch = arith::SubIOp::create(
        rewriter, loc,
        tensor::DimOp::create(rewriter, loc, op.getCuSeqlensQ(), 0), c1);
    outSizes[2] = rewriter.getIndexAttr(dv);
    lseSizes = {outSizes[1], outSizes[0]};
    gridSizes = {batch, outSizes[1], numQBlocks};
  } else {
    seqQ = tensor::DimOp::create(rewriter, loc, q, 2);
    seqKv = tensor::DimOp::create(rewriter, loc, k, 2);
    numQBlocks = arith::CeilDivUIOp::create(rewriter, loc, seqQ, brV);
    outSizes = tensor::getMixedSizes(rewriter, loc, q);
    outSizes[3] = rewriter.getIndexAttr(dv);
    lseSizes.assign(outSizes.begin(), outSizes.begin() + 3);
  }

  // Results: O [B, Hq, Nq, Dv] (varlen [Tq, Hq, Dv]) and, when asked for,
  // LSE [B, Hq, Nq] (varlen [Hq, Tq]).
  SmallVector<Value> sharedOuts = {
      tensor::EmptyOp::create(rewriter, loc, outSizes, elt)};
  bool wantLse = static_cast<bool>(op.getLse());
  if (wantLse)
    sharedOuts.push_back(
        tensor::EmptyOp::create(rewriter, loc, lseSizes, f32));
  if (!varlen) {
    gridSizes = tensor::getMixedSizes(rewriter, loc, q);
    gridSizes[2] = numQBlocks;
    gridSizes.pop_back();
  }
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
  Value tokenQ0, tokenK0; // varlen: the sequence's first query / key token
  if (varlen) {
    auto cuAt = [&](Value cu, Value idx) -> Value {
      Value x = tensor::ExtractOp::create(rewriter, loc, cu, idx);
      return arith::IndexCastOp::create(rewriter, loc,
                                        rewriter.getIndexType(), x);
    };
    Value next = arith::AddIOp::create(rewriter, loc, bi, c1);
    tokenQ0 = cuAt(op.getCuSeqlensQ(), bi);
    tokenK0 = cuAt(op.getCuSeqlensKv(), bi);
    seqQ = arith::SubIOp::create(rewriter, loc,
                                 cuAt(op.getCuSeqlensQ(), next), tokenQ0);
    seqKv = arith::SubIOp::create(rewriter, loc,
                                  cuAt(op.getCuSeqlensKv(), next), tokenK0);
  }
  // Query blocks past a shorter sequence's end have no rows (varlen).
  Value left = arith::SubIOp::create(rewriter, loc, seqQ, q0);
  Value rows =
      varlen ? arith::MinSIOp::create(
                   rewriter, loc, arith::MaxSIOp::create(rewriter, loc, left, c0),
                   brV)
                   .getResult()
             : arith::MinUIOp::create(rewriter, loc, left, brV).getResult();
  // Grouped-query attention: q-head h reads kv-head h / (Hq / Hkv).
  Value kvHead = arith::DivUIOp::create(rewriter, loc, hi, groupV);
  auto rowTile = [&](OpBuilder &b, Location l, Value source, Value head,
                     Value row0, Value n, int64_t block) -> Value {
    if (!varlen)
      return extractPaddedTile(b, l, source, bi, head, row0, n, block);
    Value token0 = arith::AddIOp::create(
        b, l, source == q ? tokenQ0 : tokenK0, row0);
    return extractPaddedPackedTile(b, l, source, token0, head, n, block);
  };
  Value qTile = rowTile(rewriter, loc, q, hi, q0, rows, br);

  // Block skipping: key blocks outside the mask's band are never visited.
  MaskBand band = op.getMaskBand();
  Value kvBegin = c0, kvEnd = seqKv;
  if (!band.isNone())
    std::tie(kvBegin, kvEnd) =
        detail::bandKeyLoop(rewriter, loc, band, q0, rows, seqQ, seqKv, bc);
  if (varlen) {
    Value noRows = arith::CmpIOp::create(rewriter, loc,
                                         arith::CmpIPredicate::eq, rows, c0);
    kvEnd = arith::SelectOp::create(rewriter, loc, noRows, kvBegin, kvEnd);
  }
  // key_range: only batch entry bi's [start, end) of keys (block-aligned
  // start; each block masks the rest).
  Value keyStart, keyEnd;
  if (op.getKeyStart()) {
    std::tie(keyStart, keyEnd) = detail::keyRangeOf(
        rewriter, loc, op.getKeyStart(), op.getKeyEnd(), bi, seqKv);
    Value alignedStart = arith::MulIOp::create(
        rewriter, loc, arith::DivUIOp::create(rewriter, loc, keyStart, bcV),
        bcV);
    kvBegin = arith::MaxSIOp::create(rewriter, loc, kvBegin, alignedStart);
    kvEnd = arith::MinSIOp::create(rewriter, loc, kvEnd, keyEnd);
  }

  Value acc0 = filled(rewriter, loc, {br, dv}, 0.0f);
  Value max0 =
      filled(rewriter, loc, {br}, -std::numeric_limits<float>::infinity());
  Value sum0 = filled(rewriter, loc, {br}, 0.0f);
  // A compile-time scale stays an attribute of each block; a run-time one
  // is the blocks' operand.
  Value runtimeScale = op.getRuntimeScale();
  FloatAttr scale;
  if (std::optional<double> known = op.getStaticScale())
    scale = rewriter.getF32FloatAttr(static_cast<float>(*known));
  Block *scoreMod = op.getScoreModBlock();
  // ALiBi: this (batch entry, head)'s slope, one per tile.
  Value alibiSlope;
  if (Value slopes = op.getAlibiSlopes())
    alibiSlope = detail::alibiSlopeOf(rewriter, loc, slopes, bi, hi);
  auto kvLoop = scf::ForOp::create(
      rewriter, loc, kvBegin, kvEnd, bcV, ValueRange{acc0, max0, sum0},
      [&](OpBuilder &b, Location l, Value kv0, ValueRange state) {
        Value cols = arith::MinUIOp::create(
            b, l, arith::SubIOp::create(b, l, seqKv, kv0), bcV);
        Value kTile = rowTile(b, l, k, kvHead, kv0, cols, bc);
        Value vTile = rowTile(b, l, v, kvHead, kv0, cols, bc);
        Value biasTile;
        if (Value bias = op.getBias())
          biasTile = extractPaddedBiasTile(b, l, bias, bi, hi, q0, rows, kv0,
                                           cols, br, bc);
        auto block = OnlineBlockOp::create(
            b, l, TypeRange(state.getTypes()), qTile, kTile, vTile, state[0],
            state[1], state[2], q0, kv0, seqQ, seqKv, scoreMod ? bi : Value(),
            scoreMod ? hi : Value(), biasTile, runtimeScale, keyStart, keyEnd,
            alibiSlope, op.getMaskAttr(), op.getWindowAttr(), scale);
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

  Value outRow0;
  if (varlen)
    outRow0 = arith::AddIOp::create(rewriter, loc, tokenQ0, q0);
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  ValueRange outs = forall.getRegionIterArgs();
  if (varlen) {
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, oRows, outs[0],
        ArrayRef<OpFoldResult>{outRow0, hi, zeroIdx},
        ArrayRef<OpFoldResult>{rows, oneIdx, rewriter.getIndexAttr(dv)},
        SmallVector<OpFoldResult>(3, oneIdx));
    if (wantLse)
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, lseRows, outs[1],
          ArrayRef<OpFoldResult>{hi, outRow0},
          ArrayRef<OpFoldResult>{oneIdx, rows},
          SmallVector<OpFoldResult>(2, oneIdx));
  } else {
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, oRows, outs[0],
        ArrayRef<OpFoldResult>{bi, hi, q0, zeroIdx},
        ArrayRef<OpFoldResult>{oneIdx, oneIdx, rows,
                               rewriter.getIndexAttr(dv)},
        SmallVector<OpFoldResult>(4, oneIdx));
    if (wantLse)
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, lseRows, outs[1], ArrayRef<OpFoldResult>{bi, hi, q0},
          ArrayRef<OpFoldResult>{oneIdx, oneIdx, rows},
          SmallVector<OpFoldResult>(3, oneIdx));
  }

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
    // Beyond these the tiles' sizes overflow or cannot be allocated.
    if (bm > ::attn::kMaxBlockSize || bn > ::attn::kMaxBlockSize ||
        smem > ::attn::kMaxSharedMemoryBytes) {
      getOperation()->emitError()
          << "attn-tile: block-m and block-n must be at most "
          << ::attn::kMaxBlockSize << " and shared-memory-bytes at most "
          << ::attn::kMaxSharedMemoryBytes << " (got block-m=" << bm
          << ", block-n=" << bn << ", shared-memory-bytes=" << smem << ")";
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
