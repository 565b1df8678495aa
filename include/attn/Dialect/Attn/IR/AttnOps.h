//===- AttnOps.h - attn operations ------------------------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

namespace mlir::attn {
/// The band of keys a query row sees (see attn.attention): row i is aligned
/// with key d(i) = i + (Nk - Nq) (bottom-right) or i (top-left) and sees key
/// j iff d(i) - left <= j <= d(i) + right; -1 leaves a side unbounded.
struct MaskBand {
  bool topLeft = false;
  int64_t left = -1;
  int64_t right = -1;

  bool hasLeft() const { return left >= 0; }
  bool hasRight() const { return right >= 0; }
  bool isNone() const { return !hasLeft() && !hasRight(); }
};

/// Window sides from this width on bound nothing where a sequence length
/// is dynamic: sequences are shorter (the GPU kernels' positions are i32,
/// and no key-range computation overflows below it).
inline constexpr int64_t kMaxMaskWindow = int64_t(1) << 30;

/// The band of `kind`; `window` is [left, right] for the sliding kinds. A
/// side of at least Nq + Nk (kMaxMaskWindow where `seqQ` or `seqKv` is
/// dynamic) is unbounded: every key lies within it.
MaskBand getMaskBand(MaskKind kind, std::optional<ArrayRef<int64_t>> window,
                     int64_t seqQ = ShapedType::kDynamic,
                     int64_t seqKv = ShapedType::kDynamic);

/// Whether `op` may appear in a score_mod region: what every back end
/// compiles (the GPU kernels inline it without libdevice: arith ops, and
/// math.tanh, math.exp, math.exp2, math.absf on f32).
bool isScoreModOp(Operation &op);
/// The ops isScoreModOp accepts, for diagnostics.
inline constexpr const char *kScoreModOps =
    "arith ops and math.tanh, math.exp, math.exp2, math.absf on f32";

/// Emits the band's visibility test for absolute query row `row` and key
/// `col` (index values) of an Nq x Nk problem: an i1, or null when every key
/// is visible.
Value buildMaskVisible(OpBuilder &b, Location loc, const MaskBand &band,
                       Value row, Value col, Value seqQ, Value seqKv);

/// ALiBi's term slope · |d(row) − col| (f32; `slope` f32, the positions
/// index values of an Nq x Nk problem), d aligned as `band` (bottom-right
/// unless a top-left kind): what attn.attention's alibi_slopes subtracts.
Value buildAlibiTerm(OpBuilder &b, Location loc, const MaskBand &band,
                     Value slope, Value row, Value col, Value seqQ,
                     Value seqKv);

/// Clones a score_mod block at `b`'s insertion point with its arguments
/// bound to `score` and the four positions `b, h, q_idx, kv_idx`, and returns
/// the yielded score.
Value inlineScoreMod(OpBuilder &b, Block &scoreMod, Value score,
                     ValueRange positions);
} // namespace mlir::attn

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
