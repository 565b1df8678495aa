//===- LowerAttnGPUTiles.cpp - fragments to registers, rings to pointers --===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The first half of attn_gpu's lowering: every `!attn_gpu.frag` becomes its
// registers (a 1:N type conversion) and every op on fragments the
// instruction-level ops on them, in the fragment's layout (AttnGPUTypes.td);
// every `!attn_gpu.ring` becomes its base pointer and its stages' tiles and
// descriptors the address arithmetic of its layout. scf.for/if/yield
// carrying fragments carry the registers instead. Each op's replacement
// takes its place, so the schedule's order is kept.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"
#include "attn/Dialect/AttnGPU/Utils/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>
#include <optional>

namespace mlir::attn {
#define GEN_PASS_DEF_LOWERATTNGPUTILES
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn_gpu;
using mlir::attn::nvvm::KernelBuilder;

namespace {

/// The tile values this pass lowers: fragments and rings.
bool isTileValue(Type type) { return isa<FragmentType, RingType>(type); }

bool hasTileValues(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), isTileValue) ||
         llvm::any_of(op->getResultTypes(), isTileValue);
}

/// The accumulator layout (AttnGPUTypes.td): register r of a thread holds
/// the element at this column and row half (0 or 1: rows g, g + 8) from
/// its own first.
int64_t accColumn(int64_t r) { return 8 * (r / 4) + (r & 1); }
int64_t accRowHalf(int64_t r) { return (r % 4) / 2; }

/// The flat registers of converted operands.
SmallVector<Value> flatten(ArrayRef<ValueRange> operands) {
  SmallVector<Value> flat;
  for (ValueRange values : operands)
    flat.append(values.begin(), values.end());
  return flat;
}

/// Replaces `op` by `values`, cut into one range per result: one value for
/// a register, a fragment's registers for a fragment.
void replaceByResult(ConversionPatternRewriter &rewriter, Operation *op,
                     ValueRange values) {
  SmallVector<SmallVector<Value>> groups;
  size_t at = 0;
  for (Type t : op->getResultTypes()) {
    size_t n = 1;
    if (auto f = dyn_cast<FragmentType>(t))
      n = f.getRegisterCount();
    groups.emplace_back(values.begin() + at, values.begin() + at + n);
    at += n;
  }
  rewriter.replaceOpWithMultiple(op, std::move(groups));
}

template <typename Op>
struct TilePattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  using OneToNOpAdaptor = typename OpConversionPattern<Op>::OneToNOpAdaptor;
};

struct FragUndefLowering : TilePattern<FragUndefOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(FragUndefOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FragmentType type = op.getType();
    Value undef = LLVM::UndefOp::create(rewriter, op.getLoc(),
                                        type.getRegisterType());
    rewriter.replaceOpWithMultiple(
        op, {SmallVector<Value>(type.getRegisterCount(), undef)});
    return success();
  }
};

struct FragSplatLowering : TilePattern<FragSplatOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(FragSplatOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithMultiple(
        op, {SmallVector<Value>(op.getType().getRegisterCount(),
                                adaptor.getValue().front())});
    return success();
  }
};

struct FragFromRegistersLowering : TilePattern<FragFromRegistersOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(FragFromRegistersOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithMultiple(op, {flatten(adaptor.getOperands())});
    return success();
  }
};

struct FragRegistersLowering : TilePattern<FragRegistersOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(FragRegistersOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getFragment());
    return success();
  }
};

/// The value-threading ops (wgmma fence and wait) take the registers of
/// the fragments they thread.
template <typename Op>
struct ThreadingLowering : TilePattern<Op> {
  using TilePattern<Op>::TilePattern;
  using typename TilePattern<Op>::OneToNOpAdaptor;
  LogicalResult
  matchAndRewrite(Op op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> flat = flatten(adaptor.getOperands());
    OperationState state(op.getLoc(), op->getName());
    state.addOperands(flat);
    state.addTypes(ValueRange(flat).getTypes());
    state.addAttributes(op->getAttrs());
    Operation *lowered = rewriter.create(state);
    replaceByResult(rewriter, op, lowered->getResults());
    return success();
  }
};

/// One wgmma k-step on the accumulator registers: wgmma_ss for a
/// descriptor A, wgmma_rs for this k-step's four registers of an A
/// fragment.
struct WarpgroupMmaLowering : TilePattern<WarpgroupMmaOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(WarpgroupMmaOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange acc = adaptor.getAcc();
    auto n = rewriter.getI64IntegerAttr(
        cast<FragmentType>(op.getAcc().getType()).getCols());
    TypeAttr input = TypeAttr::get(op.getInputType());
    BoolAttr accumulate = rewriter.getBoolAttr(op.getAccumulate());
    UnitAttr transposeB = op.getTransposeB() ? rewriter.getUnitAttr()
                                             : UnitAttr();
    Operation *lowered;
    if (!isa<FragmentType>(op.getA().getType())) {
      lowered = WgmmaSSOp::create(
          rewriter, op.getLoc(), acc.getTypes(), adaptor.getA().front(),
          adaptor.getDescB().front(), acc, n, input, accumulate,
          op.getTransposeA() ? rewriter.getUnitAttr() : UnitAttr(),
          transposeB);
    } else {
      ValueRange a = adaptor.getA().slice(4 * op.getAKStep(), 4);
      lowered = WgmmaRSOp::create(rewriter, op.getLoc(), acc.getTypes(), a[0],
                                  a[1], a[2], a[3], adaptor.getDescB().front(),
                                  acc, n, input, accumulate, transposeB);
    }
    rewriter.replaceOpWithMultiple(
        op, {SmallVector<Value>(lowered->getResults())});
    return success();
  }
};

/// mma.sync on tile n_tile's four registers; the others pass through.
struct WarpMmaLowering : TilePattern<WarpMmaOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(WarpMmaOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder kb(rewriter, op.getLoc());
    SmallVector<Value> acc(adaptor.getAcc());
    int64_t tile = op.getNTile(), kStep = op.getAKStep();
    std::array<Value, 4> d = kb.mma16816(
        op.getA().getType().getElementType(),
        SmallVector<Value>(adaptor.getA().slice(4 * kStep, 4)),
        {adaptor.getB0().front(), adaptor.getB1().front()},
        ArrayRef(acc).slice(4 * tile, 4));
    llvm::copy(d, acc.begin() + 4 * tile);
    rewriter.replaceOpWithMultiple(op, {acc});
    return success();
  }
};

/// Each test one compare of a register's constant column (and row) offset
/// with a per-thread value.
struct MaskScoresLowering : TilePattern<MaskScoresOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(MaskScoresOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder kb(rewriter, op.getLoc());
    Value keysLeft = adaptor.getKeysLeft().front();
    Value rightLimit, leftLimit, keysBefore;
    if (std::optional<int64_t> right = op.getWindowRight())
      rightLimit = kb.add(adaptor.getRowMinusKey().front(), kb.i32(*right));
    if (std::optional<int64_t> left = op.getWindowLeft())
      leftLimit = kb.sub(adaptor.getRowMinusKey().front(), kb.i32(*left));
    if (!adaptor.getKeysBefore().empty())
      keysBefore = adaptor.getKeysBefore().front();
    auto visible = [&](int64_t col, int64_t rowOffset) {
      Value valid = kb.slt(kb.i32(col), keysLeft);
      Value rel = kb.i32(col - rowOffset);
      if (rightLimit)
        valid = kb.andb(valid, kb.sle(rel, rightLimit));
      if (leftLimit)
        valid = kb.andb(valid, kb.sle(leftLimit, rel));
      if (keysBefore)
        valid = kb.andb(valid, kb.sle(keysBefore, kb.i32(col)));
      return valid;
    };
    Value negInf = kb.f32(-std::numeric_limits<double>::infinity());
    SmallVector<SmallVector<Value>> results;
    for (auto [i, scores] : llvm::enumerate(adaptor.getScores())) {
      SmallVector<Value> &masked = results.emplace_back();
      for (auto [r, s] : llvm::enumerate(scores)) {
        Value valid = visible(accColumn(r), 16 * int64_t(i) + 8 * accRowHalf(r));
        masked.push_back(kb.select(valid, s, negInf));
      }
    }
    rewriter.replaceOpWithMultiple(op, std::move(results));
    return success();
  }
};

struct MaskLimitLowering : TilePattern<MaskLimitOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(MaskLimitOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder kb(rewriter, op.getLoc());
    Value limit = adaptor.getLimit().front();
    Value negInf = kb.f32(-std::numeric_limits<double>::infinity());
    int64_t col = op.getCol(), row = op.getRow();
    SmallVector<Value> masked;
    for (auto [r, s] : llvm::enumerate(adaptor.getScores())) {
      int64_t offset = col * accColumn(r) + row * 8 * accRowHalf(r);
      masked.push_back(
          kb.select(kb.sle(kb.i32(offset), limit), s, negInf));
    }
    rewriter.replaceOpWithMultiple(op, {masked});
    return success();
  }
};

/// Rows g and g + 8: registers 4·j + 2h and 4·j + 2h + 1 are row h's; its
/// other columns are in the three other threads of the quad (lanes 4g..).
struct OnlineSoftmaxLowering : TilePattern<OnlineSoftmaxOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(OnlineSoftmaxOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder kb(rewriter, op.getLoc());
    Location loc = op.getLoc();
    SmallVector<Value> s(adaptor.getScores());
    ValueRange m = adaptor.getM(), l = adaptor.getL();
    Value c = adaptor.getC().front();
    int64_t fmaTiles = op.getExp2FmaTiles();
    Value zero = kb.f32(0.0);
    Value negInf = kb.f32(-std::numeric_limits<double>::infinity());
    int64_t tiles = static_cast<int64_t>(s.size()) / 4;
    SmallVector<Value> newM(2), newL(2), alpha(2);
    for (int h = 0; h < 2; ++h) {
      Value mx = negInf;
      for (int64_t nt = 0; nt < tiles; ++nt)
        mx = kb.fmax(mx, kb.fmax(s[4 * nt + 2 * h], s[4 * nt + 2 * h + 1]));
      mx = kb.fmax(mx, kb.shuffleXor(mx, 1));
      mx = kb.fmax(mx, kb.shuffleXor(mx, 2));
      Value mNew = kb.fmax(m[h], kb.fmul(mx, c));
      newM[h] = mNew;
      // A row with no visible key yet keeps m = -inf: shift by 0 instead,
      // so that exp2(-inf - m) is 0 rather than NaN.
      Value shift = kb.select(kb.feq(mNew, negInf), zero, mNew);
      Value negShift = arith::NegFOp::create(rewriter, loc, shift);
      alpha[h] = kb.exp2(kb.fsub(m[h], shift));
      Value sum = zero;
      for (int64_t nt = 0; nt < tiles; ++nt)
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          Value &v = s[4 * nt + e];
          Value x = LLVM::FMAOp::create(rewriter, loc, v, c, negShift);
          v = nt % 8 < fmaTiles ? kb.exp2Poly(x) : kb.exp2(x);
          sum = kb.fadd(sum, v);
        }
      newL[h] = kb.fadd(kb.fmul(l[h], alpha[h]), sum);
    }
    rewriter.replaceOpWithMultiple(op, {s, newM, newL, alpha});
    return success();
  }
};

struct ScaleRowsLowering : TilePattern<ScaleRowsOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(ScaleRowsOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder kb(rewriter, op.getLoc());
    ValueRange factors = adaptor.getFactors();
    SmallVector<Value> scaled;
    for (auto [i, v] : llvm::enumerate(adaptor.getFragment()))
      scaled.push_back(kb.fmul(v, factors[accRowHalf(i)]));
    rewriter.replaceOpWithMultiple(op, {scaled});
    return success();
  }
};

/// k-step k's four registers: tile 2k rows g and g + 8, then tile 2k + 1.
struct ToOperandLowering : TilePattern<ToOperandOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(ToOperandOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder kb(rewriter, op.getLoc());
    Type element = op.getType().getElementType();
    ValueRange s = adaptor.getFragment();
    SmallVector<Value> packed;
    for (size_t kk = 0; kk < s.size() / 8; ++kk)
      for (size_t tile : {2 * kk, 2 * kk + 1})
        for (size_t pair : {0, 2})
          packed.push_back(
              kb.packPair(element, s[4 * tile + pair], s[4 * tile + pair + 1]));
    rewriter.replaceOpWithMultiple(op, {packed});
    return success();
  }
};

/// A ring is its base pointer; stage s's tile is s tiles on.
Value ringTile(KernelBuilder &kb, RingType ring, Value base, Value stage) {
  return kb.gepBytes(base, kb.mul(stage, kb.i32(ring.getTileBytes())));
}

struct RingViewLowering : TilePattern<RingViewOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(RingViewOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithMultiple(op, {adaptor.getBase()});
    return success();
  }
};

struct RingTileLowering : TilePattern<RingTileOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(RingTileOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder kb(rewriter, op.getLoc());
    RingType ring = op.getRing().getType();
    Value tile = ringTile(kb, ring, adaptor.getRing().front(),
                          adaptor.getStage().front());
    if (std::optional<int64_t> panel = op.getPanel())
      tile = kb.gepBytes(tile, kb.i32(*panel * ring.getPanelBytes()));
    rewriter.replaceOp(op, tile);
    return success();
  }
};

/// Rows of 128 bytes in groups of 8 (the swizzle's period): the stride
/// between 8-row groups is 1024 bytes; K-major, the leading offset is the
/// 16 bytes of a k-step's second 8 columns (ignored by the hardware under
/// 128-byte swizzle), MN-major it is one 64-column panel.
struct RingDescriptorLowering : TilePattern<RingDescriptorOp> {
  using TilePattern::TilePattern;
  LogicalResult
  matchAndRewrite(RingDescriptorOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    KernelBuilder kb(rewriter, op.getLoc());
    RingType ring = op.getRing().getType();
    Value tile = ringTile(kb, ring, adaptor.getRing().front(),
                          adaptor.getStage().front());
    int64_t leading = op.getMnMajor() ? ring.getPanelBytes() : 16;
    rewriter.replaceOpWithNewOp<WgmmaDescriptorOp>(op, tile, leading,
                                                   8 * 128);
    return success();
  }
};

struct LowerAttnGPUTilesPass
    : mlir::attn::impl::LowerAttnGPUTilesBase<LowerAttnGPUTilesPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    converter.addConversion(
        [](FragmentType type, SmallVectorImpl<Type> &registers) {
          registers.append(type.getRegisterCount(), type.getRegisterType());
          return success();
        });
    converter.addConversion([](RingType type) -> Type {
      return LLVM::LLVMPointerType::get(type.getContext(), 3);
    });
    ConversionTarget target(*context);
    target.markUnknownOpDynamicallyLegal(
        [](Operation *op) { return !hasTileValues(op); });
    RewritePatternSet patterns(context);
    mlir::attn::populateAttnGPUTileLoweringPatterns(converter, patterns);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::attn::populateAttnGPUTileLoweringPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<FragUndefLowering, FragSplatLowering, FragFromRegistersLowering,
               FragRegistersLowering, ThreadingLowering<WgmmaFenceOp>,
               ThreadingLowering<WgmmaWaitGroupOp>, WarpgroupMmaLowering,
               MaskScoresLowering, MaskLimitLowering, OnlineSoftmaxLowering, ScaleRowsLowering,
               ToOperandLowering, WarpMmaLowering, RingViewLowering, RingTileLowering,
               RingDescriptorLowering>(converter, patterns.getContext());
}
