//===- KernelBuilder.h - warp-level building blocks for kernels -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Small emitters for the NVVM/LLVM operations the attention kernels are made
// of: integer and float scalars, shared/global addressing, cp.async,
// ldmatrix, mma.sync m16n8k16, warp shuffles and fast exp2/log2.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNGPU_UTILS_KERNELBUILDER_H
#define ATTN_DIALECT_ATTNGPU_UTILS_KERNELBUILDER_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <array>

namespace mlir::attn::nvvm {

/// An OpBuilder bound to one location, with shorthands for the scalar
/// arithmetic the kernels do (i32 indices, i64 offsets, f32 math).
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location location() const { return loc; }

  Value i32(int64_t v);
  Value i64(int64_t v);
  Value f32(double v);
  /// An f32 with no value: the accumulators a wgmma overwrites (accumulate
  /// false) are threaded through its fence as these, so that no register
  /// is written between the fence and the wgmma (a 0.0 would be
  /// materialised there, and ptxas would insert a second fence).
  Value undefF32();
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value divu(Value x, Value y);
  Value remu(Value x, Value y);
  Value shl(Value x, int64_t bits);
  Value lshr(Value x, int64_t bits);
  Value andi(Value x, int64_t mask);
  Value xori(Value x, Value y);
  Value minsi(Value x, Value y);
  Value maxsi(Value x, Value y);
  Value slt(Value x, Value y);
  Value sle(Value x, Value y);
  Value andb(Value x, Value y);
  Value select(Value c, Value x, Value y);
  Value zext64(Value x);
  Value sext64(Value x);
  Value fadd(Value x, Value y);
  Value fsub(Value x, Value y);
  Value fmul(Value x, Value y);
  Value fdiv(Value x, Value y);
  Value fmax(Value x, Value y);
  Value feq(Value x, Value y);
  /// |x| (f32) as abs.f32: a call of the llvm.fabs.f32 intrinsic, which
  /// convert-gpu-to-nvvm leaves alone (math.absf and llvm.intr.fabs become
  /// libdevice calls that the sm90a family's llvm.func kernels leave
  /// unresolved).
  Value fabs(Value x);

  /// ptr + offsetElements * sizeof(elementType), in the pointer's space.
  Value gep(Value ptr, Type elementType, Value offsetElements);
  /// ptr + bytes.
  Value gepBytes(Value ptr, Value bytes);

  /// ex2.approx.ftz.f32 / lg2.approx.ftz.f32 (pure inline PTX: MLIR's GPU
  /// lowering would turn math.exp2 into a libdevice call).
  Value exp2(Value x);
  Value log2(Value x);
  /// 2^x for x <= 0 (and -inf: exactly 0) on the FMA pipe instead of the
  /// MUFU: floor by an add rounding down onto 1.5 · 2^23, a degree-3
  /// minimax polynomial on the fraction (relative error 8.8e-5, below bf16's
  /// rounding of P), the floor added to the exponent bits (FlashAttention-4's
  /// exp2 emulation). Kernels take it for part of a tile when the MUFU is
  /// the bottleneck (one ex2 per score, plus tanh with softcap).
  Value exp2Poly(Value x);

  /// `x` through an opaque register move (attn_gpu.opaque): LLVM can
  /// neither hoist nor re-associate across it. Used on per-iteration base
  /// pointers so that the constant offsets of the many unrolled fragment
  /// loads stay immediates instead of each becoming a hoisted register.
  Value pin(Value x);
  /// The same for several values at once (one attn_gpu.opaque).
  SmallVector<Value> pin(ValueRange values);

  /// Butterfly shuffle of an f32 across the warp.
  Value shuffleXor(Value x, int64_t laneMask);

  /// 16-byte cp.async (cache-global) of `bytes` valid bytes (0 or 16): the
  /// rest of the 16 is zero-filled.
  void cpAsync16(Value sharedDst, Value globalSrc, Value validBytes);
  void cpAsyncCommit();
  void cpAsyncWait(int64_t pendingGroups);
  void barrier();

  /// ldmatrix.x4 (optionally .trans) of four 8x8 b16 matrices: each lane
  /// passes the address of one row; returns the four packed registers.
  std::array<Value, 4> ldmatrixX4(Value sharedRow, bool transpose);

  /// D = A·B + C on mma.sync.m16n8k16 (row, col), f32 accumulate. `a` is
  /// 4 packed i32 registers, `bPair` 2; `elementType` is f16 or bf16.
  std::array<Value, 4> mma16816(Type elementType, ArrayRef<Value> a,
                                ArrayRef<Value> bPair, ArrayRef<Value> c);

  /// Two f32 rounded to `elementType` and packed into one i32 register.
  Value packPair(Type elementType, Value lo, Value hi);

  /// A fragment of `type` from this thread's registers in its layout, and
  /// back (attn_gpu.frag_from_registers / frag_registers): how code that
  /// works register by register meets the fragment ops.
  Value fragment(Type type, ValueRange registers);
  SmallVector<Value> registers(Value fragment);

private:
  OpBuilder &b;
  Location loc;
};

/// Runs `body` under `scf.if cond` (no results).
template <typename Fn> void ifThen(KernelBuilder &kb, Value cond, Fn body) {
  OpBuilder &b = kb.builder();
  auto ifOp = scf::IfOp::create(b, kb.location(), cond, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  body();
}

/// One mask edge of an accumulator fragment under `scf.if needed`, so that
/// blocks clear of the edge skip the compares (attn_gpu.mask_limit):
/// elements with col·c + row·r > limit() become -inf. `limit` is a
/// per-thread value built inside the branch.
Value maskFragment(KernelBuilder &kb, Value fragment, Value needed,
                   llvm::function_ref<Value()> limit, int64_t col,
                   int64_t row);

/// `scf.if cond` with `thenBody` and `elseBody` (no results).
template <typename Fn, typename Gn>
void ifThenElse(KernelBuilder &kb, Value cond, Fn thenBody, Gn elseBody) {
  OpBuilder &b = kb.builder();
  auto ifOp = scf::IfOp::create(b, kb.location(), cond, /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  thenBody();
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  elseBody();
}

} // namespace mlir::attn::nvvm

#endif // ATTN_DIALECT_ATTNGPU_UTILS_KERNELBUILDER_H
