//===- LinalgHelpers.h - small builders shared by the lowerings -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The handful of builders every tensor-level lowering of attn ops uses:
// f32 constants, widening to f32, and one-result linalg.generic ops whose
// body is a lambda.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_LINALGHELPERS_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_LINALGHELPERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::attn::detail {

using utils::IteratorType;
inline constexpr IteratorType kPar = IteratorType::parallel;
inline constexpr IteratorType kRed = IteratorType::reduction;

inline Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc,
                                   b.getF32FloatAttr(static_cast<float>(v)));
}

/// `v` as f32 (f16/bf16 are widened; f32 passes through).
inline Value extToF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

/// One linalg.generic with a single result; `body` gets the block arguments
/// and returns the value to yield.
inline Value generic(OpBuilder &b, Location loc, ValueRange ins, Value init,
                     ArrayRef<AffineMap> maps,
                     ArrayRef<IteratorType> iterators,
                     function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  return linalg::GenericOp::create(
             b, loc, init.getType(), ins, init, maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, ValueRange{body(nb, l, args)});
             })
      .getResult(0);
}

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_LINALGHELPERS_H
