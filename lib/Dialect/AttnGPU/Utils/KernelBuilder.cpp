//===- KernelBuilder.cpp - warp-level building blocks for kernels ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnGPU/Utils/KernelBuilder.h"

#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn::nvvm;

Value KernelBuilder::i32(int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}
Value KernelBuilder::i64(int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}
Value KernelBuilder::f32(double v) {
  return arith::ConstantOp::create(b, loc,
                                   b.getF32FloatAttr(static_cast<float>(v)));
}
Value KernelBuilder::undefF32() {
  return LLVM::UndefOp::create(b, loc, b.getF32Type());
}
Value KernelBuilder::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value KernelBuilder::sub(Value x, Value y) {
  return arith::SubIOp::create(b, loc, x, y);
}
Value KernelBuilder::mul(Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value KernelBuilder::divu(Value x, Value y) {
  return arith::DivUIOp::create(b, loc, x, y);
}
Value KernelBuilder::remu(Value x, Value y) {
  return arith::RemUIOp::create(b, loc, x, y);
}
Value KernelBuilder::shl(Value x, int64_t bits) {
  return arith::ShLIOp::create(b, loc, x, i32(bits));
}
Value KernelBuilder::lshr(Value x, int64_t bits) {
  return arith::ShRUIOp::create(b, loc, x, i32(bits));
}
Value KernelBuilder::andi(Value x, int64_t mask) {
  return arith::AndIOp::create(b, loc, x, i32(mask));
}
Value KernelBuilder::xori(Value x, Value y) {
  return arith::XOrIOp::create(b, loc, x, y);
}
Value KernelBuilder::minsi(Value x, Value y) {
  return arith::MinSIOp::create(b, loc, x, y);
}
Value KernelBuilder::maxsi(Value x, Value y) {
  return arith::MaxSIOp::create(b, loc, x, y);
}
Value KernelBuilder::slt(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
}
Value KernelBuilder::sle(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, x, y);
}
Value KernelBuilder::andb(Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y);
}
Value KernelBuilder::select(Value c, Value x, Value y) {
  return arith::SelectOp::create(b, loc, c, x, y);
}
Value KernelBuilder::zext64(Value x) {
  return arith::ExtUIOp::create(b, loc, b.getI64Type(), x);
}
Value KernelBuilder::sext64(Value x) {
  return arith::ExtSIOp::create(b, loc, b.getI64Type(), x);
}
Value KernelBuilder::fadd(Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y);
}
Value KernelBuilder::fsub(Value x, Value y) {
  return arith::SubFOp::create(b, loc, x, y);
}
Value KernelBuilder::fmul(Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}
Value KernelBuilder::fdiv(Value x, Value y) {
  return arith::DivFOp::create(b, loc, x, y);
}
Value KernelBuilder::fabs(Value x) {
  return LLVM::CallIntrinsicOp::create(b, loc, x.getType(),
                                       b.getStringAttr("llvm.fabs.f32"), x)
      .getResult(0);
}
Value KernelBuilder::fmax(Value x, Value y) {
  // llvm.intr.maxnum, not arith.maxnumf: the GPU lowering would turn the
  // latter into a libdevice call.
  return LLVM::MaxNumOp::create(b, loc, x, y);
}
Value KernelBuilder::feq(Value x, Value y) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, y);
}

Value KernelBuilder::gep(Value ptr, Type elementType, Value offsetElements) {
  return LLVM::GEPOp::create(b, loc, ptr.getType(), elementType, ptr,
                             ValueRange{offsetElements});
}
Value KernelBuilder::gepBytes(Value ptr, Value bytes) {
  return gep(ptr, b.getI8Type(), bytes);
}

Value KernelBuilder::exp2(Value x) {
  return attn_gpu::Exp2Op::create(b, loc, x);
}
Value KernelBuilder::exp2Poly(Value x) {
  return attn_gpu::Exp2Op::create(b, loc, x, /*fma=*/true);
}
Value KernelBuilder::log2(Value x) {
  return attn_gpu::Log2Op::create(b, loc, x);
}

Value KernelBuilder::pin(Value x) { return pin(ValueRange{x}).front(); }

SmallVector<Value> KernelBuilder::pin(ValueRange values) {
  auto op = attn_gpu::OpaqueOp::create(b, loc, values.getTypes(), values);
  return SmallVector<Value>(op.getResults());
}

Value KernelBuilder::shuffleXor(Value x, int64_t laneMask) {
  return NVVM::ShflOp::create(b, loc, x.getType(), i32(-1), x, i32(laneMask),
                              i32(31), NVVM::ShflKind::bfly, UnitAttr());
}

void KernelBuilder::cpAsync16(Value sharedDst, Value globalSrc,
                              Value validBytes) {
  NVVM::CpAsyncOp::create(b, loc, sharedDst, globalSrc, 16,
                          NVVM::LoadCacheModifierKind::CG, validBytes);
}
void KernelBuilder::cpAsyncCommit() { NVVM::CpAsyncCommitGroupOp::create(b, loc); }
void KernelBuilder::cpAsyncWait(int64_t pendingGroups) {
  NVVM::CpAsyncWaitGroupOp::create(b, loc, pendingGroups);
}
void KernelBuilder::barrier() { NVVM::Barrier0Op::create(b, loc); }

std::array<Value, 4> KernelBuilder::ldmatrixX4(Value sharedRow,
                                               bool transpose) {
  Type i32Ty = b.getI32Type();
  auto structTy = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {i32Ty, i32Ty, i32Ty, i32Ty});
  Value res = NVVM::LdMatrixOp::create(
      b, loc, structTy, sharedRow, 4,
      transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  std::array<Value, 4> regs;
  for (int i = 0; i < 4; ++i)
    regs[i] = LLVM::ExtractValueOp::create(b, loc, res, i);
  return regs;
}

std::array<Value, 4> KernelBuilder::mma16816(Type elementType,
                                             ArrayRef<Value> a,
                                             ArrayRef<Value> bPair,
                                             ArrayRef<Value> c) {
  Type f32Ty = b.getF32Type();
  auto structTy = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32Ty, f32Ty, f32Ty, f32Ty});
  bool isBf16 = elementType.isBF16();
  // bf16 operands travel as i32; f16 operands as vector<2xf16>.
  auto operand = [&](Value r) -> Value {
    if (isBf16)
      return r;
    return LLVM::BitcastOp::create(
        b, loc, VectorType::get({2}, b.getF16Type()), r);
  };
  SmallVector<Value> av, bv;
  for (Value r : a)
    av.push_back(operand(r));
  for (Value r : bPair)
    bv.push_back(operand(r));
  NVVM::MMATypes t = isBf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  Value res = NVVM::MmaOp::create(
      b, loc, structTy, av, bv, c, ArrayRef<int64_t>{16, 8, 16}, std::nullopt,
      std::nullopt, std::array<NVVM::MMATypes, 2>{t, t},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  std::array<Value, 4> d;
  for (int i = 0; i < 4; ++i)
    d[i] = LLVM::ExtractValueOp::create(b, loc, res, i);
  return d;
}

Value KernelBuilder::packPair(Type elementType, Value lo, Value hi) {
  auto vecTy = VectorType::get({2}, elementType);
  Value v = LLVM::PoisonOp::create(b, loc, vecTy);
  Value l = arith::TruncFOp::create(b, loc, elementType, lo);
  Value h = arith::TruncFOp::create(b, loc, elementType, hi);
  v = LLVM::InsertElementOp::create(b, loc, v, l, i32(0));
  v = LLVM::InsertElementOp::create(b, loc, v, h, i32(1));
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
}

Value KernelBuilder::fragment(Type type, ValueRange registers) {
  return attn_gpu::FragFromRegistersOp::create(b, loc, type, registers);
}

SmallVector<Value> KernelBuilder::registers(Value fragment) {
  auto type = cast<attn_gpu::FragmentType>(fragment.getType());
  auto op = attn_gpu::FragRegistersOp::create(
      b, loc,
      SmallVector<Type>(type.getRegisterCount(), type.getRegisterType()),
      fragment);
  return SmallVector<Value>(op.getResults());
}

Value mlir::attn::nvvm::maskFragment(KernelBuilder &kb, Value fragment,
                                     Value needed,
                                     llvm::function_ref<Value()> limit,
                                     int64_t col, int64_t row) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  auto ifOp = scf::IfOp::create(b, loc, fragment.getType(), needed,
                                /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value masked =
      attn_gpu::MaskLimitOp::create(b, loc, fragment, limit(), col, row);
  scf::YieldOp::create(b, loc, masked);
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(b, loc, fragment);
  return ifOp.getResult(0);
}
