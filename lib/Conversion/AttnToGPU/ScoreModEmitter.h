//===- ScoreModEmitter.h - score_mod regions inside GPU kernels -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREMODEMITTER_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREMODEMITTER_H

#include "mlir/IR/Builders.h"

#include <array>
#include <optional>
#include <string>

namespace mlir::attn {

/// Clones attn.attention's score_mod block at `b`'s insertion point for one
/// score element: `score` (f32) and the positions batch, query head, query
/// row, key (i32) bind its arguments; returns the yielded score. math.tanh,
/// math.exp and math.exp2 become the PTX approximations (tanh.approx.f32,
/// ex2.approx) and math.absf abs.f32, so the kernel needs no libdevice; the
/// caller checked that nothing else but arith is in the block.
Value emitScoreModForElement(OpBuilder &b, Location loc, Block &scoreMod,
                             Value score, ArrayRef<Value> positions);

/// The same for two score elements at once (each with its own positions).
/// With packTanhPairs() every math.tanh of the pair is one
/// tanh.approx.f16x2 (half the MUFU ops of two tanh.approx.f32, about twice
/// their error); otherwise this is emitScoreModForElement twice.
std::array<Value, 2>
emitScoreModForPair(OpBuilder &b, Location loc, Block &scoreMod,
                    std::array<Value, 2> scores,
                    std::array<ArrayRef<Value>, 2> positions);

/// Whether emitScoreModForPair packs tanh: only with the experiment switch
/// ATTN_TANH_F16X2=1 (kernel names then carry "_tanhf16x2"). On the H200
/// the packed form was slower (softcap 30, D = 128, N = 4096: 1.117 vs
/// 1.066 ms on sm90a, 1.757 vs 1.702 ms on sm80; docs/variants.md; not
/// profiled: presumably the f16 conversions around it).
bool packTanhPairs();

/// softcap's region, C · tanh(s · k) with constants k and C > 0, as {k, C};
/// nullopt for any other region.
std::optional<std::pair<double, double>> matchSoftcap(Block &scoreMod);

/// tanh.approx.f32 of x.
Value emitTanhApprox(OpBuilder &b, Location loc, Value x);

/// The name of the first op of a score_mod block that the GPU kernels cannot
/// emit ("" when there is none): they take arith ops and the math ops with a
/// PTX form (tanh, exp, exp2, absf); anything else would need libdevice.
std::string unsupportedGpuScoreModOp(Block &scoreMod);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREMODEMITTER_H
