//===- Passes.td - attn transformation passes --------------*- tablegen -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnRaiseAttention : Pass<"attn-raise-attention"> {
  let summary = "Find softmax(Q·Kᵀ·s)·V in linalg on tensors and raise it to "
                "attn.attention";
  let description = [{
    Recognises attention the way front ends write it in linalg on tensors
    and replaces it with one `attn.attention`:

      * S = Q·Kᵀ: a contraction (`linalg.matmul`, `linalg.batch_matmul`, a
        `linalg.generic`) over the head dim, with K transposed by the
        indexing maps or given as Kᵀ (through a `linalg.transpose`, looked
        through, or any [.., D, N] tensor, transposed back);
      * an optional scale: elementwise multiply or divide by a constant;
      * an optional causal mask: `arith.select` on a comparison of
        `linalg.index` values, or an additive mask (a constant, or built from
        index comparisons) of 0 and -inf / a large negative number. It must
        be broadcast over batch and heads and aligned like attn's causal
        mask (bottom-right: key j is visible from query i iff
        j <= i + Nk - Nq);
      * softmax over the key dimension: `linalg.softmax`, or its
        decomposition into a max reduction, exp(S - max), a sum reduction
        and a division;
      * O = P·V: a contraction over the key dimension with zero-initialised
        accumulators, in f32 or the element type of Q, K and V; f16/bf16
        inputs may be extended to f32 and P and O truncated back.

    Rank-4 operands [B, H, N, D] map onto the op directly; rank-3 [B, N, D]
    and rank-2 [N, D] ones are expanded with `tensor.expand_shape` (one
    head, one batch) and the output is collapsed back. Every op of the
    pattern that is left without uses is erased; nothing else is touched.

    Near misses (softmax over another dimension, P·V contracting over the
    query dimension, a mask that varies over batch or heads or is not
    causal, a bias instead of a mask, ...) are left alone, and the reason is
    printed under `-debug-only=attn-raise-attention` and, with
    `emit-remarks`, emitted as a remark on the P·V contraction.
  }];
  let options = [
    Option<"emitRemarks", "emit-remarks", "bool", "false",
           "Emit a remark for every attention raised and for every softmax "
           "feeding a contraction that is not raised, saying why">,
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnLowerToReference : Pass<"attn-lower-to-reference"> {
  let summary = "Lower attn.attention to plain linalg: the reference semantics";
  let description = [{
    Rewrites every `attn.attention` into `linalg.generic` ops on whole
    tensors: S = Q·Kᵀ·scale in f32, the mask, a numerically safe softmax
    (max, exp, sum), P·V, one normalisation, and LSE = max + log(sum).
    `attn.attention_grad` becomes P = exp(S − LSE) (0 where masked or
    LSE = −inf), dV = Pᵀ·dO, dP = dO·Vᵀ, Δ = rowsum(dO ∘ O),
    dS = P ∘ (dP − Δ), dQ = dS·K·scale and dK = dSᵀ·Q·scale, with dK and
    dV summed over the query heads of each key/value head. This
    is the definition that every other lowering is tested against; it stores
    the whole N×N score matrix and is not meant to be fast.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnTile : Pass<"attn-tile"> {
  let summary = "Tile attn.attention into FlashAttention's block loops";
  let description = [{
    Rewrites every `attn.attention` into an `scf.forall` over (batch, query
    head, block of Br query rows) holding an `scf.for` over blocks of Bc
    keys/values. The loop carries the online-softmax state (accumulator,
    running max, running sum) through `attn.online_block`, and
    `attn.online_finalize` normalises it once after the loop.

    Block sizes come from `block-m` / `block-n`, or, when those are 0, from
    the SRAM-fit heuristic for the target's shared memory per block
    (FlashAttention's Bc = ceil(M / 4d), Br = min(Bc, d), rounded to the
    tensor-core granule of 16 and capped at 128). The choice is recorded on
    the loop as `attn.tile = {block_m, block_n, source}`.

    Causal masks: key blocks entirely above the diagonal are never visited
    (the kv loop's upper bound stops at the diagonal). Sequence tails are
    handled by zero-padding the tiles and masking the padded keys.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "0",
           "Query rows per block (Br); 0 = heuristic">,
    Option<"blockN", "block-n", "int64_t", "0",
           "Key/value rows per block (Bc); 0 = heuristic">,
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t",
           "232448",
           "Shared memory per thread block of the target (default: sm_90, "
           "227 KiB), used by the heuristic">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnFuseOnlineSoftmax : Pass<"attn-fuse-online-softmax"> {
  let summary = "Expand the online-softmax block ops into fused tile arithmetic";
  let description = [{
    Rewrites `attn.online_block` into tile-level `linalg.generic` ops: the
    scores S = Q·Kᵀ in f32, one multiply by scale·log2(e), the padding and
    causal mask, the new row max, the rescale factor exp2(m_old − m_new),
    P = exp2(S − m_new) (rounded to the input element type before P·V, as
    the tensor cores see it), the new row sum and the rescaled accumulator.
    `attn.online_finalize` becomes one division per row and
    LSE = (m + log2(l))·ln 2; rows with l = 0 give 0 and −inf, never NaN.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnTileAttentionGrad : Pass<"attn-tile-attention-grad"> {
  let summary = "Tile attn.attention_grad into FlashAttention's backward loops";
  let description = [{
    Rewrites every `attn.attention_grad` into FlashAttention-2's backward
    on tiles, with the tile arithmetic (f32 `linalg.generic`s) in place:

      * preprocess Δ = rowsum(dO ∘ O) once on whole tensors;
      * for each (batch, key/value head) and block of Bc keys, a loop over
        the query heads of the group and their blocks of Br rows that
        recomputes P = exp2(S·scale·log2e − LSE·log2e) from the saved LSE
        (0 for padding, above the bottom-right causal diagonal and in rows
        with LSE = −inf), and accumulates dV += Pᵀ·dO and, with
        dS = P ∘ (dO·Vᵀ − Δ), dK += dSᵀ·Q in the loop carry (scaled once);
      * dQ: by default dQ += dS·K·scale is added in place into one f32
        accumulator carried through every key/value block (what atomic adds
        do on a GPU); with `deterministic=true` a second loop nest over
        (batch, query head, query block) runs its own key/value loop and
        writes each dQ tile once.

    Causal masks skip whole blocks: the query loop of a key block starts at
    the first block that sees one of its keys, and the deterministic dQ
    loop stops at the last visible key block.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "32", "Query rows per block (Br)">,
    Option<"blockN", "block-n", "int64_t", "32",
           "Key/value rows per block (Bc)">,
    Option<"deterministic", "deterministic", "bool", "false",
           "Compute dQ in a separate pass over query blocks instead of "
           "accumulating it across key/value blocks">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
