//===- ScoreModEmitter.h - score_mod regions inside GPU kernels -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREMODEMITTER_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREMODEMITTER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>
#include <string>

namespace mlir::attn {

/// Emits attn.attention's score_mod block for the score elements one thread
/// holds of one tile: element (row slot r, key offset k) is query row
/// rows[r] and key keyBase + k, with k a compile-time constant. Each op of
/// the block is emitted once for what it depends on:
///  * ops of the batch, head and query row (ALiBi's slope, its diagonal)
///    once per row slot, not per element;
///  * integer and integer-valued float arithmetic on positions (index
///    casts, add/sub, multiplication by a constant, sitofp, addf/subf of
///    such values) is kept as "per-row base + compile-time offset", so
///    sitofp(d(q) - k) costs one f32 add per element instead of an I2F,
///    which runs at the rate of the MUFU ops the softmax already saturates;
///    exact while positions stay below 2^24 (the f32 region itself rounds
///    positions from there);
///  * everything that reads the score, per element.
/// math.tanh/exp/exp2 on f32 become their PTX approximations and math.absf
/// abs.f32, so the kernel needs no libdevice; the verifier
/// (isScoreModOp) admits nothing else but arith ops.
class ScoreModTileEmitter {
public:
  /// Positions are i32; `rows` are the thread's query rows of the tile.
  /// `roots` are the block values to emit (default: the yielded score;
  /// e.g. the factors of an additive term of matchAdditiveScoreMod, which
  /// do not read the score); ops they do not depend on are not emitted.
  ScoreModTileEmitter(OpBuilder &b, Location loc, Block &scoreMod,
                      Value batch, Value head, ArrayRef<Value> rows,
                      Value keyBase, ArrayRef<Value> roots = {});

  /// `target` (default: the first root) for `score` (f32, scale applied;
  /// null when the target does not read it) at row slot `rowSlot` and key
  /// keyBase + keyOffset.
  Value emit(Value score, unsigned rowSlot, int64_t keyOffset,
             Value target = Value());

  /// A root that reads neither the score nor the key (the same for the
  /// whole row), emitted once for row slot `rowSlot`.
  Value rowValue(unsigned rowSlot, Value target);


private:
  /// value = base + alpha * keyOffset + beta, in integers; a float when
  /// isFloat (then sitofp of that integer). A null base is 0.
  struct Affine {
    Value base;
    int64_t alpha = 0, beta = 0;
    bool isFloat = false;
  };
  std::optional<Affine> affineOf(Operation &op, unsigned rowSlot);
  std::optional<Affine> lookupAffine(Value v, unsigned rowSlot) const;
  Value materialize(const Affine &a, Type type, unsigned rowSlot,
                    int64_t keyOffset);
  Value operandFor(Value v, unsigned rowSlot, int64_t keyOffset,
                   IRMapping &element);
  Value combineBases(Value x, Value y, bool subtract);
  void emitRowLevel(unsigned rowSlot);

  OpBuilder &b;
  Location loc;
  Block &scoreMod;
  Value batch, head, keyBase;
  SmallVector<Value> roots;
  /// The ops the roots depend on.
  llvm::SmallPtrSet<Operation *, 16> needed;
  SmallVector<Value> rows;
  /// Whether a block value depends on the score / on the key.
  DenseMap<Value, bool> readsScore, readsKey;
  struct RowState {
    bool emitted = false;
    IRMapping values; // row-level values, materialized
    DenseMap<Value, Affine> affine;
    DenseMap<Value, Value> floatBase; // sitofp(base) per affine value
  };
  SmallVector<RowState> rowStates;
};

/// softcap's region, C · tanh(s · k) with constants k and C > 0, as {k, C};
/// nullopt for any other region.
std::optional<std::pair<double, double>> matchSoftcap(Block &scoreMod);

/// A region that adds a term to the score: score + X, X + score or
/// score − X, with X independent of the score (ALiBi, relative position
/// biases). Kernels then add ±X / scale to the raw score and keep plain
/// attention's softmax constant (scale · log2 e), one multiply per score
/// fewer than the region as written; when X = r · y with r the same for a
/// whole query row (ALiBi's slope), ±r / scale is one per-row constant and
/// each score costs y and one FMA.
struct AdditiveScoreMod {
  Value perKey;    // y (X when there is no row factor)
  Value rowFactor; // r, or null
  double sign;     // +1 or -1
};
std::optional<AdditiveScoreMod> matchAdditiveScoreMod(Block &scoreMod);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_SCOREMODEMITTER_H
