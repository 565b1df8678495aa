//===- ScoreModEmitter.h - score_mod regions inside GPU kernels -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREMODEMITTER_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREMODEMITTER_H

#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// Clones attn.attention's score_mod block at `b`'s insertion point for one
/// score element: `score` (f32) and the positions batch, query head, query
/// row, key (i32) bind its arguments; returns the yielded score. math.tanh,
/// math.exp and math.exp2 become the PTX approximations (tanh.approx.f32,
/// ex2.approx) so the kernel needs no libdevice; the caller checked that
/// nothing else but arith and math.absf is in the block.
Value emitScoreModForElement(OpBuilder &b, Location loc, Block &scoreMod,
                             Value score, ArrayRef<Value> positions);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREMODEMITTER_H
