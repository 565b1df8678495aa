//===- ScoreModEmitter.cpp - score_mod regions inside GPU kernels ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "ScoreModEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>

using namespace mlir;

namespace {
Value approx(OpBuilder &b, Location loc, StringRef code, Value x) {
  return LLVM::InlineAsmOp::create(b, loc, x.getType(), ValueRange{x}, code,
                                   "=f,f", /*has_side_effects=*/false,
                                   /*is_align_stack=*/false,
                                   LLVM::tailcallkind::TailCallKind::None,
                                   LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}
} // namespace

Value mlir::attn::emitScoreModForElement(OpBuilder &b, Location loc,
                                         Block &scoreMod, Value score,
                                         ArrayRef<Value> positions) {
  IRMapping map;
  map.map(scoreMod.getArgument(0), score);
  for (auto [arg, pos] :
       llvm::zip(scoreMod.getArguments().drop_front(), positions))
    map.map(arg, arith::IndexCastOp::create(b, loc, b.getIndexType(), pos));
  for (Operation &op : scoreMod.without_terminator()) {
    Value x = op.getNumOperands() ? map.lookupOrDefault(op.getOperand(0))
                                  : Value();
    Value fast;
    if (isa<math::TanhOp>(op) && x.getType().isF32())
      fast = approx(b, loc, "tanh.approx.f32 $0, $1;", x);
    else if (isa<math::Exp2Op>(op) && x.getType().isF32())
      fast = approx(b, loc, "ex2.approx.ftz.f32 $0, $1;", x);
    else if (isa<math::ExpOp>(op) && x.getType().isF32())
      fast = approx(b, loc, "ex2.approx.ftz.f32 $0, $1;",
                    arith::MulFOp::create(
                        b, loc, x,
                        arith::ConstantOp::create(
                            b, loc, b.getF32FloatAttr(M_LOG2E))));
    if (fast) {
      map.map(op.getResult(0), fast);
      continue;
    }
    b.clone(op, map);
  }
  return map.lookupOrDefault(scoreMod.getTerminator()->getOperand(0));
}
