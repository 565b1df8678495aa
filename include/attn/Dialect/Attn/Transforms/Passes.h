//===- Passes.h - attn transformation passes --------------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"

/// Block sizes chosen for one attention, and where they came from.
struct TileConfig {
  int64_t blockM = 0;
  int64_t blockN = 0;
  std::string source; // "option", "heuristic" or "tuning-db"
};

/// FlashAttention's SRAM-fit rule for a target with `sharedMemoryBytes` per
/// block and element size `elementBytes`: Bc = ceil(M / 4d), Br = min(Bc, d),
/// both rounded down to the tensor-core granule (16) and kept in [16, 128].
TileConfig chooseTileConfigHeuristic(int64_t headDim, int64_t elementBytes,
                                     int64_t sharedMemoryBytes);

class AttentionOp;

/// Rewrites one attn.attention into the tiled form (see attn-tile) with the
/// given block sizes. Emits a diagnostic and fails when it cannot.
LogicalResult tileAttention(RewriterBase &rewriter, AttentionOp op,
                            const TileConfig &config);

/// Patterns expanding attn.online_block / attn.online_finalize into fused
/// tile arithmetic (see attn-fuse-online-softmax).
void populateFuseOnlineSoftmaxPatterns(RewritePatternSet &patterns);

/// The pattern lowering attn.attention to plain linalg (see
/// attn-lower-to-reference).
void populateLowerToReferencePatterns(RewritePatternSet &patterns);

/// The pattern raising softmax(Q·Kᵀ·s)·V written in linalg on tensors to
/// attn.attention (see attn-raise-attention). It is rooted on the P·V
/// contraction; a match failure says why the candidate is not attention.
/// The attn, linalg and tensor dialects must be loaded.
void populateRaiseAttentionPatterns(RewritePatternSet &patterns);

/// Raises every attention under `root` (what attn-raise-attention does) and
/// returns how many were raised. With `emitRemarks`, each raised attention
/// and each near miss gets a remark saying what was found or why not.
int64_t raiseAttention(RewriterBase &rewriter, Operation *root,
                       bool emitRemarks = false);

#define GEN_PASS_REGISTRATION
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_H
