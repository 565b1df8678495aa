//===- AttnGPUToNVVM.cpp - attn_gpu to NVVM -------------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// One pattern per attn_gpu op. Each replacement is created at the op's own
// place, so the schedule's program order is the issue order of the NVVM ops.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnGPUToNVVM/AttnGPUToNVVM.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"

#include <string>

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNGPUTONVVM
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn_gpu;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Value constI32(OpBuilder &b, Location loc, int64_t v) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                  b.getI32IntegerAttr(static_cast<int32_t>(v)));
}

/// A call of the LLVM intrinsic `name` (NVPTX intrinsics that MLIR's NVVM
/// dialect has no op for, e.g. the approximate transcendental functions).
Value callIntrinsic(OpBuilder &b, Location loc, Type result, StringRef name,
                    ValueRange args) {
  return LLVM::CallIntrinsicOp::create(b, loc, result,
                                       b.getStringAttr(name), args)
      .getResult(0);
}

/// The `count` members of the struct `s`.
SmallVector<Value> unpackStruct(OpBuilder &b, Location loc, Value s,
                                size_t count) {
  SmallVector<Value> values;
  for (size_t i = 0; i < count; ++i)
    values.push_back(LLVM::ExtractValueOp::create(b, loc, s, i));
  return values;
}

/// The one place attn writes inline PTX: instructions that neither NVVM nor
/// LLVM's NVPTX intrinsics express. Side-effecting, so LLVM keeps it in
/// program order; `results` come back unpacked.
SmallVector<Value> inlinePtx(OpBuilder &b, Location loc, TypeRange results,
                             ValueRange operands, StringRef code,
                             StringRef constraints) {
  Type resultType;
  if (results.size() == 1)
    resultType = results.front();
  else if (results.size() > 1)
    resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                  SmallVector<Type>(results));
  auto op = LLVM::InlineAsmOp::create(
      b, loc, resultType ? TypeRange(resultType) : TypeRange(), operands, code,
      constraints, /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
      ArrayAttr());
  if (results.size() <= 1)
    return SmallVector<Value>(op->getResults());
  return unpackStruct(b, loc, op.getResult(0), results.size());
}

/// The accumulators as the LLVM struct NVVM's wgmma reads and writes.
Value packStruct(OpBuilder &b, Location loc, ValueRange values) {
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(values.getTypes()));
  Value s = LLVM::UndefOp::create(b, loc, type);
  for (auto [i, v] : llvm::enumerate(values))
    s = LLVM::InsertValueOp::create(b, loc, s, v, i);
  return s;
}

NVVM::WGMMATypes wgmmaType(Type t) {
  return t.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
}

//===----------------------------------------------------------------------===//
// mbarriers
//===----------------------------------------------------------------------===//

struct MBarrierInitLowering : OpRewritePattern<MBarrierInitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MBarrierInitOp op,
                                PatternRewriter &rewriter) const override {
    Value count = constI32(rewriter, op.getLoc(), op.getCountAttr().getInt());
    rewriter.replaceOpWithNewOp<NVVM::MBarrierInitOp>(op, op.getBarrier(),
                                                      count, Value());
    return success();
  }
};

struct MBarrierInitFenceLowering : OpRewritePattern<MBarrierInitFenceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MBarrierInitFenceOp op,
                                PatternRewriter &rewriter) const override {
    NVVM::FenceMbarrierInitOp::create(rewriter, op.getLoc());
    rewriter.replaceOpWithNewOp<NVVM::FenceProxyOp>(
        op, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(rewriter.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    return success();
  }
};

struct MBarrierArriveLowering : OpRewritePattern<MBarrierArriveOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MBarrierArriveOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::MBarrierArriveOp>(
        op, /*res=*/Type(), op.getBarrier(), /*count=*/Value());
    return success();
  }
};

struct MBarrierArriveExpectTxLowering
    : OpRewritePattern<MBarrierArriveExpectTxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MBarrierArriveExpectTxOp op,
                                PatternRewriter &rewriter) const override {
    Value bytes = constI32(rewriter, op.getLoc(), op.getBytesAttr().getInt());
    rewriter.replaceOpWithNewOp<NVVM::MBarrierArriveExpectTxOp>(
        op, /*res=*/Type(), op.getBarrier(), bytes, NVVM::MemScopeKind::CTA,
        /*relaxed=*/false, /*predicate=*/Value());
    return success();
  }
};

/// NVVM's parity wait is the whole loop (try_wait.parity until it returns
/// true) in one instruction sequence, so the kernel's basic blocks stay as
/// the schedule wrote them: a loop in the IR would split the block, and LLVM
/// would sink the register A operands of a wgmma past its wgmma.fence into
/// the block after the wait (ptxas then injects a warpgroup.arrive). The
/// suspend-time hint is upstream NVGPU's (10 ms): the thread wakes when the
/// phase completes either way.
struct MBarrierWaitLowering : OpRewritePattern<MBarrierWaitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MBarrierWaitOp op,
                                PatternRewriter &rewriter) const override {
    Value ticks = constI32(rewriter, op.getLoc(), 10000000);
    rewriter.replaceOpWithNewOp<NVVM::MBarrierTryWaitParityOp>(
        op, op.getBarrier(), op.getParity(), ticks);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// TMA and named barriers
//===----------------------------------------------------------------------===//

struct TmaLoadLowering : OpRewritePattern<TmaLoadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TmaLoadOp op,
                                PatternRewriter &rewriter) const override {
    // The CTA's own shared memory as a shared::cluster address: the
    // .shared::cta destination needs PTX 8.6, the kernels are PTX 8.1.
    Value dst = LLVM::AddrSpaceCastOp::create(
        rewriter, op.getLoc(),
        LLVM::LLVMPointerType::get(rewriter.getContext(),
                                   static_cast<unsigned>(
                                       NVVM::NVVMMemorySpace::SharedCluster)),
        op.getDst());
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
        op, dst, op.getTensorMap(), op.getCoordinates(),
        op.getBarrier(), /*im2colOffsets=*/ValueRange(),
        /*multicastMask=*/Value(), /*l2CacheHint=*/Value(),
        NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
        /*group=*/NVVM::CTAGroupKindAttr(), /*predicate=*/Value());
    return success();
  }
};

struct BulkReduceAddLowering : OpRewritePattern<BulkReduceAddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BulkReduceAddOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value src = LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                         op.getSrc());
    inlinePtx(rewriter, loc, TypeRange(),
              ValueRange{op.getDst(), src, op.getBytes()},
              "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 "
              "[$0], [$1], $2;",
              "l,r,r");
    rewriter.eraseOp(op);
    return success();
  }
};

struct GlobalReduceAddLowering : OpRewritePattern<GlobalReduceAddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GlobalReduceAddOp op,
                                PatternRewriter &rewriter) const override {
    ValueRange values = op.getValues();
    SmallVector<Value> operands{op.getPtr()};
    llvm::append_range(operands, values);
    int64_t width = op.getGroupWidth();
    std::string ptx, constraints = "l";
    for (int64_t i = 0; i * width < static_cast<int64_t>(values.size());
         ++i) {
      int64_t offset = op.getGroupOffset(i);
      ptx += i ? "\n" : "";
      ptx += width == 1 ? "red.global.add.f32 "
                        : "red.global.add.v" + std::to_string(width) + ".f32 ";
      ptx += offset ? "[$0+" + std::to_string(offset) + "], " : "[$0], ";
      SmallVector<std::string> regs;
      for (int64_t k = 0; k < width; ++k) {
        regs.push_back("$" + std::to_string(i * width + k + 1));
        constraints += ",f";
      }
      ptx += width == 1 ? regs[0] : "{" + llvm::join(regs, ", ") + "}";
      ptx += ";";
    }
    inlinePtx(rewriter, op.getLoc(), TypeRange(), operands, ptx, constraints);
    rewriter.eraseOp(op);
    return success();
  }
};

struct NamedBarrierSyncLowering : OpRewritePattern<NamedBarrierSyncOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NamedBarrierSyncOp op,
                                PatternRewriter &rewriter) const override {
    Value threads =
        constI32(rewriter, op.getLoc(), op.getThreadsAttr().getInt());
    rewriter.replaceOpWithNewOp<NVVM::BarrierOp>(
        op, /*res=*/Type(), op.getId(), threads,
        /*reductionOp=*/NVVM::BarrierReductionAttr(),
        /*reductionPredicate=*/Value());
    return success();
  }
};

/// NVVM's barrier.arrive op lowers to inline PTX; the NVPTX intrinsic is
/// the same instruction without it.
struct NamedBarrierArriveLowering : OpRewritePattern<NamedBarrierArriveOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(NamedBarrierArriveOp op,
                                PatternRewriter &rewriter) const override {
    Value threads =
        constI32(rewriter, op.getLoc(), op.getThreadsAttr().getInt());
    LLVM::CallIntrinsicOp::create(
        rewriter, op.getLoc(),
        rewriter.getStringAttr("llvm.nvvm.barrier.cta.arrive.aligned.count"),
        ValueRange{op.getId(), threads});
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Warpgroup MMA
//===----------------------------------------------------------------------===//

struct WgmmaDescriptorLowering : OpRewritePattern<WgmmaDescriptorOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WgmmaDescriptorOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // Bits 0-13: start address >> 4; 16-29: leading byte offset >> 4;
    // 32-45: stride byte offset >> 4; 62-63: 1 = 128-byte swizzle.
    uint64_t leading = static_cast<uint64_t>(op.getLeadingBytesAttr().getInt());
    uint64_t stride = static_cast<uint64_t>(op.getStrideBytesAttr().getInt());
    uint64_t fixed = (((leading >> 4) & 0x3fff) << 16) |
                     (((stride >> 4) & 0x3fff) << 32) | (uint64_t{1} << 62);
    Value addr = LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                          op.getTile());
    Value start = arith::AndIOp::create(
        rewriter, loc,
        arith::ShRUIOp::create(rewriter, loc, addr,
                               arith::ConstantIntOp::create(rewriter, loc, 4, 32)),
        arith::ConstantIntOp::create(rewriter, loc, 0x3fff, 32));
    Value wide =
        arith::ExtUIOp::create(rewriter, loc, rewriter.getI64Type(), start);
    rewriter.replaceOpWithNewOp<arith::OrIOp>(
        op, wide,
        arith::ConstantIntOp::create(rewriter, loc, static_cast<int64_t>(fixed),
                                     64));
    return success();
  }
};

struct WgmmaFenceLowering : OpRewritePattern<WgmmaFenceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WgmmaFenceOp op,
                                PatternRewriter &rewriter) const override {
    NVVM::WgmmaFenceAlignedOp::create(rewriter, op.getLoc());
    rewriter.replaceOp(op, op.getValues());
    return success();
  }
};

struct WgmmaCommitGroupLowering : OpRewritePattern<WgmmaCommitGroupOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WgmmaCommitGroupOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::WgmmaGroupSyncAlignedOp>(op);
    return success();
  }
};

struct WgmmaWaitGroupLowering : OpRewritePattern<WgmmaWaitGroupOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WgmmaWaitGroupOp op,
                                PatternRewriter &rewriter) const override {
    NVVM::WgmmaWaitGroupSyncOp::create(
        rewriter, op.getLoc(),
        static_cast<uint64_t>(op.getPendingAttr().getInt()));
    rewriter.replaceOp(op, op.getValues());
    return success();
  }
};

struct WgmmaSSLowering : OpRewritePattern<WgmmaSSOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WgmmaSSOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value acc = packStruct(rewriter, loc, op.getAcc());
    NVVM::WGMMATypes type = wgmmaType(op.getElementType());
    int64_t n = op.getNAttr().getInt();
    // K-major is "row" for A and "col" for B, as in upstream NVGPU's lowering.
    auto mma = NVVM::WgmmaMmaAsyncOp::create(
        rewriter, loc, acc.getType(), acc, op.getDescA(), op.getDescB(),
        NVVM::MMAShapeAttr::get(rewriter.getContext(), 64,
                                static_cast<int>(n), 16),
        type, type, NVVM::WGMMATypes::f32,
        op.getAccumulate() ? NVVM::WGMMAScaleOut::one
                           : NVVM::WGMMAScaleOut::zero,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        op.getTransposeA() ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        op.getTransposeB() ? NVVM::MMALayout::row : NVVM::MMALayout::col,
        /*satfinite=*/NVVM::MMAIntOverflowAttr());
    rewriter.replaceOp(op, unpackStruct(rewriter, loc, mma.getResults(),
                                        op.getAcc().size()));
    return success();
  }
};

/// NVVM's wgmma takes A only as a shared-memory descriptor: the register
/// form is inline PTX, the accumulators tied in place ("=f" ... "0").
struct WgmmaRSLowering : OpRewritePattern<WgmmaRSOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(WgmmaRSOp op,
                                PatternRewriter &rewriter) const override {
    size_t regs = op.getAcc().size();
    std::string type = op.getElementType().isBF16() ? "bf16" : "f16";
    std::string code = "{\n.reg .pred p;\nsetp.ne.b32 p, " +
                       std::to_string(op.getAccumulate() ? 1 : 0) +
                       ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                       std::to_string(op.getNAttr().getInt()) + "k16.f32." +
                       type + "." + type + " {";
    std::string constraints;
    for (size_t i = 0; i < regs; ++i) {
      code += (i ? ", $" : "$") + std::to_string(i);
      constraints += i ? ",=f" : "=f";
    }
    for (size_t i = 0; i < regs; ++i)
      constraints += "," + std::to_string(i);
    size_t next = 2 * regs;
    code += "}, {";
    for (int i = 0; i < 4; ++i)
      code += (i ? ", $" : "$") + std::to_string(next++);
    code += "}, $" + std::to_string(next) + ", p, 1, 1, " +
            (op.getTransposeB() ? "1" : "0") + ";\n}";
    constraints += ",r,r,r,r,l";
    SmallVector<Value> operands(op.getAcc());
    llvm::append_range(operands, op.getARegisters());
    operands.push_back(op.getDescB());
    rewriter.replaceOp(op, inlinePtx(rewriter, op.getLoc(),
                                     TypeRange(op.getResults()), operands,
                                     code, constraints));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Online-softmax math and scheduling aids
//===----------------------------------------------------------------------===//

/// 2^x on the FMA pipe for x <= 0: floor by an add rounding down onto
/// 1.5 · 2^23, a degree-3 minimax polynomial on the fraction, the floor
/// added to the exponent bits. x below -127 clamps to -127, whose floor
/// cancels 1.0's exponent: 0.
Value exp2OnFmaPipe(OpBuilder &b, Location loc, Value x) {
  Type f32 = b.getF32Type();
  Type i32 = b.getI32Type();
  // Constants by their bits, as the PTX ISA writes them (0fXXXXXXXX).
  auto f = [&](uint32_t bits) {
    return LLVM::ConstantOp::create(
        b, loc, f32, b.getF32FloatAttr(llvm::bit_cast<float>(bits)));
  };
  auto call = [&](StringRef name, ValueRange args) {
    return callIntrinsic(b, loc, f32, name, args);
  };
  Value magic = f(0x4B400000); // 1.5 * 2^23
  Value xc = call("llvm.nvvm.fmax.ftz.f", {x, f(0xC2FE0000)}); // -127
  Value r = call("llvm.nvvm.add.rm.ftz.f", {xc, magic});
  Value floor = LLVM::FSubOp::create(b, loc, r, magic);
  Value frac = LLVM::FSubOp::create(b, loc, xc, floor);
  Value p = call("llvm.nvvm.fma.rn.ftz.f", {frac, f(0x3D9DF09D), f(0x3E6906A4)});
  p = call("llvm.nvvm.fma.rn.ftz.f", {p, frac, f(0x3F31F519)});
  p = call("llvm.nvvm.fma.rn.ftz.f", {p, frac, f(0x3F800000)});
  Value exponent = LLVM::ShlOp::create(
      b, loc, LLVM::BitcastOp::create(b, loc, i32, r), constI32(b, loc, 23));
  Value bits = LLVM::AddOp::create(
      b, loc, LLVM::BitcastOp::create(b, loc, i32, p), exponent);
  return LLVM::BitcastOp::create(b, loc, f32, bits);
}

struct Exp2Lowering : OpRewritePattern<Exp2Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Exp2Op op,
                                PatternRewriter &rewriter) const override {
    Value result =
        op.getFma() ? exp2OnFmaPipe(rewriter, op.getLoc(), op.getX())
                    : callIntrinsic(rewriter, op.getLoc(), op.getType(),
                                    "llvm.nvvm.ex2.approx.ftz.f32", op.getX());
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct Log2Lowering : OpRewritePattern<Log2Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(Log2Op op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, callIntrinsic(rewriter, op.getLoc(), op.getType(),
                                         "llvm.nvvm.lg2.approx.ftz.f",
                                         op.getX()));
    return success();
  }
};

struct TanhLowering : OpRewritePattern<TanhOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TanhOp op,
                                PatternRewriter &rewriter) const override {
    // NVPTX has no tanh intrinsic of its own: LLVM's tanh with approximate
    // functions allowed (afn) is its tanh.approx.f32.
    auto call = LLVM::CallIntrinsicOp::create(
        rewriter, op.getLoc(), TypeRange(op.getType()),
        rewriter.getStringAttr("llvm.tanh.f32"), ValueRange(op.getX()),
        LLVM::FastmathFlagsAttr::get(rewriter.getContext(),
                                     LLVM::FastmathFlags::afn));
    rewriter.replaceOp(op, call.getResults());
    return success();
  }
};

/// Volatile register moves, one asm for all the values: nothing in LLVM
/// sees through them. Pointers move as their 64-bit integer.
struct OpaqueLowering : OpRewritePattern<OpaqueOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OpaqueOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    size_t count = op.getValues().size();
    SmallVector<Value> operands;
    SmallVector<Type> types;
    std::string code, outputs, inputs;
    for (auto [i, value] : llvm::enumerate(op.getValues())) {
      if (isa<LLVM::LLVMPointerType>(value.getType()))
        value = LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI64Type(),
                                         value);
      bool wide = value.getType().isInteger(64);
      code += (wide ? "mov.b64 $" : "mov.b32 $") + std::to_string(i) + ", $" +
              std::to_string(count + i) + ";\n";
      outputs += std::string(i ? "," : "") + (wide ? "=l" : "=r");
      inputs += wide ? ",l" : ",r";
      operands.push_back(value);
      types.push_back(value.getType());
    }
    SmallVector<Value> moved =
        inlinePtx(rewriter, loc, types, operands, code, outputs + inputs);
    for (auto [value, original] : llvm::zip(moved, op.getValues()))
      if (isa<LLVM::LLVMPointerType>(original.getType()))
        value = LLVM::IntToPtrOp::create(rewriter, loc, original.getType(),
                                         value);
    rewriter.replaceOp(op, moved);
    return success();
  }
};

struct ConvertAttnGPUToNVVMPass
    : mlir::attn::impl::ConvertAttnGPUToNVVMBase<ConvertAttnGPUToNVVMPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    mlir::attn::populateAttnGPUToNVVMPatterns(patterns);
    // Every op has a pattern and every pattern applies: one walk rewrites
    // each op in place (test/Conversion/convert-attn-gpu-to-nvvm.mlir
    // lowers each op and checks that no attn_gpu op is left).
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    // Fragment and ring ops have no NVVM pattern: their registers and
    // pointers come first.
    WalkResult leftover = getOperation()->walk([](Operation *op) {
      auto tileValue = llvm::IsaPred<FragmentType, RingType>;
      if (llvm::none_of(op->getOperandTypes(), tileValue) &&
          llvm::none_of(op->getResultTypes(), tileValue))
        return WalkResult::advance();
      op->emitOpError("has attn_gpu fragments or rings: run "
                      "lower-attn-gpu-tiles before "
                      "convert-attn-gpu-to-nvvm");
      return WalkResult::interrupt();
    });
    if (leftover.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

void mlir::attn::populateAttnGPUToNVVMPatterns(RewritePatternSet &patterns) {
  patterns.add<
      // mbarriers: the TMA ring's full/empty slots.
      MBarrierInitLowering, MBarrierInitFenceLowering, MBarrierArriveLowering,
      MBarrierArriveExpectTxLowering, MBarrierWaitLowering,
      // Data movement and CTA-level synchronisation.
      TmaLoadLowering, BulkReduceAddLowering, GlobalReduceAddLowering,
      NamedBarrierSyncLowering, NamedBarrierArriveLowering,
      // Warpgroup MMA.
      WgmmaDescriptorLowering, WgmmaFenceLowering, WgmmaCommitGroupLowering,
      WgmmaWaitGroupLowering, WgmmaSSLowering, WgmmaRSLowering,
      // Softmax math and scheduling aids.
      Exp2Lowering, Log2Lowering, TanhLowering, OpaqueLowering>(
      patterns.getContext());
}
