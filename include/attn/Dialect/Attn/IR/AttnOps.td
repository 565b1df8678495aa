//===- AttnOps.td - attn operations ------------------------*- tablegen -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Attn_ElementType : AnyTypeOf<[F16, BF16, F32]>;
def Attn_Tensor : RankedTensorOf<[F16, BF16, F32]>;

def Attn_AttentionOp : Attn_Op<"attention", [Pure, IsolatedFromAbove,
    AttrSizedOperandSegments]> {
  let summary = "Exact scaled dot-product attention on whole tensors";
  let description = [{
    Computes `O = softmax(mask(Q · Kᵀ · scale)) · V` per batch and query head,
    and optionally the log-sum-exp of each row of scaled, masked scores.

    Shapes: `query` [B, Hq, Nq, D], `key` [B, Hkv, Nk, D], `value`
    [B, Hkv, Nk, Dv], `output` [B, Hq, Nq, Dv], optional `lse` [B, Hq, Nq]
    (f32). Hq must be a multiple of Hkv: query head h reads key/value head
    h / (Hq / Hkv) (grouped-query and multi-query attention). Query, key,
    value and output share one element type (f16, bf16 or f32); the softmax
    is always computed in f32.

    `scale` defaults to 1/sqrt(D). It is either a compile-time attribute
    (`scale 0.125`) or a run-time `f32` operand (`scale(%s)`), never both:
    with the operand one compiled module serves every scale (the CPU path
    passes it per call; the GPU launch passes it as the kernel's
    `softmax_scale`). `mask` is a band of keys around a
    diagonal: row i is aligned with key d(i) = i + (Nk - Nq) (bottom-right:
    `causal`, `sliding`; FlashAttention's convention) or d(i) = i (top-left:
    `causal_top_left`, `sliding_top_left`; PyTorch's `is_causal`), and sees
    key j iff d(i) - left <= j <= d(i) + right. Causal masks have left
    unbounded and right 0; sliding masks take `window [left, right]`, where
    -1 leaves a side unbounded. Rows that see no key produce 0 and an LSE of
    -inf.

    `score_mod`, when present, rewrites every scaled score before the mask:
    its block takes `(score: f32, b, h, q_idx, kv_idx: index)` (absolute
    positions; h is the query head) and yields the new f32 score with
    `attn.yield` (FlexAttention's score_mod). It may only use its arguments
    and values it defines, and only arith ops and math.tanh, math.exp,
    math.exp2 and math.absf on f32 (what every back end compiles: no calls,
    loops or memory). `softcap = c` is sugar for the region
    `c * tanh(score / c)` (Gemma 2, Grok).

    `bias`, when present, is an additive tensor [B|1, Hq|1, Nq, Nk] of the
    query's element type, broadcast over the dims of size 1 (SDPA's
    attn_mask as a float): score = score_mod(q · kᵀ · scale) + bias, then
    the mask. A bias entry of -inf masks that key.

    Variable length (FlashAttention's varlen API): with
    `cu_seqlens (%cu_q, %cu_k) max (Mq, Mk)` the batch is packed along the
    tokens: `query` [Tq, Hq, D], `key` [Tk, Hkv, D], `value` [Tk, Hkv, Dv],
    `output` [Tq, Hq, Dv], `lse` [Hq, Tq]. `cu_q`/`cu_k` (i32 [B + 1],
    non-decreasing, starting at 0) give sequence b the query tokens
    [cu_q[b], cu_q[b + 1]) and the keys [cu_k[b], cu_k[b + 1]); `Mq`/`Mk`
    bound every length. Each sequence is its own attention: masks align
    per sequence, score_mod sees (b, h, position in the sequence), and a
    sequence of length 0 is allowed. Not combined with `bias`.

    Key padding: with `key_range (%start, %end)` (i32 [B] each) batch entry
    b sees only the keys j with start[b] <= j < end[b] (bounds clamped to
    [0, Nk]), on top of `mask`: the padding of a padded batch (left
    padding: start = the pad; right padding: end = the length), as
    FlashAttention's `cache_leftpad` and `seqused_k`. The mask's diagonal
    still aligns with the whole Nq and Nk. A row left with no key gives 0
    and an LSE of -inf. Not combined with `cu_seqlens`.

    ALiBi (FlashAttention's `alibi_slopes`): with
    `alibi_slopes(%s : tensor<Hqxf32>)` or `tensor<BxHqxf32>` the score of
    query head h, row i, key j becomes
    `score_mod(q · kᵀ · scale) − slope[b, h] · |d(i) − j|` (then the bias
    and the mask), with d the mask's alignment (bottom-right unless the
    mask is a top-left kind; varlen: per sequence). The slopes are read at
    run time: one compiled kernel serves every set of slopes.

    Example:

    ```mlir
    %o, %lse = attn.attention %q, %k, %v mask <causal> scale 0.125
        : tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>,
          tensor<2x2x256x64xbf16> -> tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>

    // The scale as a run-time value: one compiled module for every scale.
    %o1 = attn.attention %q, %k, %v mask <causal> scale(%s)
        : tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>,
          tensor<2x2x256x64xbf16> -> tensor<2x8x128x64xbf16>

    %o2 = attn.attention %q, %k, %v mask <sliding_top_left> window [256, 0]
        : tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>,
          tensor<2x2x256x64xbf16> -> tensor<2x8x128x64xbf16>
        score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 3.000000e+01 : f32
        %x = arith.divf %s, %c : f32
        %t = math.tanh %x : f32
        %y = arith.mulf %t, %c : f32
        attn.yield %y : f32
    }
    ```
  }];

  let arguments = (ins Attn_Tensor:$query, Attn_Tensor:$key,
                       Attn_Tensor:$value, Optional<Attn_Tensor>:$bias,
                       Optional<RankedTensorOf<[I32]>>:$cu_seqlens_q,
                       Optional<RankedTensorOf<[I32]>>:$cu_seqlens_kv,
                       Optional<RankedTensorOf<[I32]>>:$key_start,
                       Optional<RankedTensorOf<[I32]>>:$key_end,
                       Optional<RankedTensorOf<[F32]>>:$alibi_slopes,
                       Optional<F32>:$runtime_scale,
                       DefaultValuedAttr<Attn_MaskKindAttr,
                                         "::mlir::attn::MaskKind::none">:$mask,
                       OptionalAttr<DenseI64ArrayAttr>:$window,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<F32Attr>:$softcap,
                       OptionalAttr<DenseI64ArrayAttr>:$max_seqlen);
  let results = (outs Attn_Tensor:$output,
                      Optional<RankedTensorOf<[F32]>>:$lse);
  let regions = (region MaxSizedRegion<1>:$score_mod);

  let assemblyFormat = [{
    $query `,` $key `,` $value (`bias` $bias^ `:` type($bias))?
    (`cu_seqlens` `(` $cu_seqlens_q^ `,` $cu_seqlens_kv `)`
     `:` type($cu_seqlens_q) `,` type($cu_seqlens_kv))?
    (`key_range` `(` $key_start^ `,` $key_end `)`
     `:` type($key_start) `,` type($key_end))?
    (`alibi_slopes` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    (`max` $max_seqlen^)?
    (`mask` $mask^)? (`window` $window^)?
    custom<Scale>($runtime_scale, $scale) (`softcap` $softcap^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `->` type($output)
    (`,` type($lse)^)? (`score_mod` $score_mod^)?
  }];

  let builders = [
    OpBuilder<(ins "TypeRange":$results, "Value":$query, "Value":$key,
                   "Value":$value, "MaskKind":$mask, "FloatAttr":$scale), [{
      build($_builder, $_state, results, query, key, value, /*bias=*/Value(),
            /*cu_seqlens_q=*/Value(), /*cu_seqlens_kv=*/Value(),
            /*key_start=*/Value(), /*key_end=*/Value(),
            /*alibi_slopes=*/Value(), /*runtime_scale=*/Value(),
            MaskKindAttr::get($_builder.getContext(), mask),
            /*window=*/nullptr, scale, /*softcap=*/nullptr,
            /*max_seqlen=*/nullptr);
    }]>
  ];

  let extraClassDeclaration = [{
    /// The compile-time scale applied to Q·Kᵀ (the attribute, or
    /// 1/sqrt(D)); std::nullopt when it is the run-time operand.
    std::optional<double> getStaticScale();
    /// The scale as an f32 value where `b` inserts: the run-time operand,
    /// or a constant of getStaticScale().
    Value buildScale(OpBuilder &b, Location loc);
    /// The band of keys each query row sees (windows as wide as the
    /// sequences unbounded).
    MaskBand getMaskBand() {
      return ::mlir::attn::getMaskBand(getMask(), getWindow(),
                                       getMaxSeqlenQ(), getMaxSeqlenKv());
    }
    /// The score_mod block, or null when scores are not modified (a
    /// `softcap` not yet expanded by expandScoreModSugar counts as none).
    Block *getScoreModBlock() {
      return getScoreMod().empty() ? nullptr : &getScoreMod().front();
    }
    /// Replaces `softcap` by the score_mod region it stands for.
    void expandScoreModSugar();
    bool isCausal() { return getMask() == ::mlir::attn::MaskKind::causal; }
    RankedTensorType getQueryType() { return getQuery().getType(); }
    RankedTensorType getKeyType() { return getKey().getType(); }
    RankedTensorType getValueType() { return getValue().getType(); }
    RankedTensorType getOutputType() { return getOutput().getType(); }
    int64_t getHeadDim() {
      return getQueryType().getDimSize(getQueryType().getRank() - 1);
    }
    int64_t getValueHeadDim() {
      return getValueType().getDimSize(getValueType().getRank() - 1);
    }
    /// Packed variable-length batch (cu_seqlens): rank-3 Q/K/V/O.
    bool isVarlen() { return static_cast<bool>(getCuSeqlensQ()); }
    /// The bound on query lengths (varlen), else the static Nq (or dynamic).
    int64_t getMaxSeqlenQ() {
      return isVarlen() ? (*getMaxSeqlen())[0] : getQueryType().getDimSize(2);
    }
    int64_t getMaxSeqlenKv() {
      return isVarlen() ? (*getMaxSeqlen())[1] : getKeyType().getDimSize(2);
    }
  }];

  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["AttentionOp", "OnlineBlockOp"]>]> {
  let summary = "Yields the modified score of a score_mod region";
  let arguments = (ins F32:$score);
  let assemblyFormat = "$score attr-dict `:` type($score)";
}

def Attn_AttentionGradOp : Attn_Op<"attention_grad", [Pure,
    AttrSizedOperandSegments]> {
  let summary = "Gradients of exact attention, recomputed from the saved LSE";
  let description = [{
    The backward pass of `attn.attention`: given the forward's inputs, its
    output `O`, the gradient of the loss with respect to it (`grad_output`,
    dO) and the forward's log-sum-exp, produces dQ, dK and dV. The
    probabilities are recomputed from the LSE, `P = exp(S - LSE)` with
    `S = mask(Q · Kᵀ · scale)`, never stored by the forward:

    ```
    dV = Pᵀ · dO          dP = dO · Vᵀ          Δ = rowsum(dO ∘ O)
    dS = P ∘ (dP − Δ)     dQ = dS · K · scale   dK = dSᵀ · Q · scale
    ```

    With `softcap c` the scores are `S = mask(c · tanh(Q · Kᵀ · scale / c))`,
    as `attn.attention`'s softcap, and `dS` takes the derivative of the cap:
    `dS = P ∘ (dP − Δ) ∘ (1 − tanh²)`. `alibi_slopes` is the forward's
    ALiBi term, `S − slope[b, h] · |d(i) − j|` (after the softcap); it does
    not depend on Q or K, so dS is unchanged (the slopes get no gradient).
    No other score modification has a gradient here.

    Shapes and attributes are those of `attn.attention`: `query`
    [B, Hq, Nq, D], `key` [B, Hkv, Nk, D], `value` [B, Hkv, Nk, Dv],
    `output` and `grad_output` [B, Hq, Nq, Dv], `lse` [B, Hq, Nq] (f32).
    The results have the types of `query`, `key` and `value`. The scale is
    the attribute (`scale 0.125`), the run-time `f32` operand
    (`scale(%s)`) or, with neither, 1/sqrt(D). With
    grouped-query heads, dK and dV of a key/value head are summed over the
    Hq / Hkv query heads that read it. Rows that see no key (LSE = -inf)
    contribute nothing. The arithmetic is f32 whatever the element type.
    `key_range (%start, %end)` is the forward's key padding: masked keys
    get dK = dV = 0.

    Example:

    ```mlir
    %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
        mask <causal> scale 0.125
        : tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>,
          tensor<2x2x256x64xbf16>, tensor<2x8x128x64xbf16>,
          tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>
        -> tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>,
           tensor<2x2x256x64xbf16>
    ```
  }];

  let arguments = (ins Attn_Tensor:$query, Attn_Tensor:$key,
                       Attn_Tensor:$value, Attn_Tensor:$output,
                       Attn_Tensor:$grad_output, RankedTensorOf<[F32]>:$lse,
                       Optional<RankedTensorOf<[I32]>>:$key_start,
                       Optional<RankedTensorOf<[I32]>>:$key_end,
                       Optional<RankedTensorOf<[F32]>>:$alibi_slopes,
                       Optional<F32>:$runtime_scale,
                       DefaultValuedAttr<Attn_MaskKindAttr,
                                         "::mlir::attn::MaskKind::none">:$mask,
                       OptionalAttr<DenseI64ArrayAttr>:$window,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<F32Attr>:$softcap);
  let results = (outs Attn_Tensor:$grad_query, Attn_Tensor:$grad_key,
                      Attn_Tensor:$grad_value);

  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $grad_output `,` $lse
    (`key_range` `(` $key_start^ `,` $key_end `)`
     `:` type($key_start) `,` type($key_end))?
    (`alibi_slopes` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    (`mask` $mask^)? (`window` $window^)?
    custom<Scale>($runtime_scale, $scale) (`softcap` $softcap^)? attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($output) `,`
        type($grad_output) `,` type($lse)
    `->` type($grad_query) `,` type($grad_key) `,` type($grad_value)
  }];

  let builders = [
    OpBuilder<(ins "TypeRange":$results, "Value":$query, "Value":$key,
                   "Value":$value, "Value":$output, "Value":$grad_output,
                   "Value":$lse, "MaskKind":$mask, "FloatAttr":$scale), [{
      build($_builder, $_state, results, query, key, value, output,
            grad_output, lse, /*key_start=*/Value(), /*key_end=*/Value(),
            /*alibi_slopes=*/Value(), /*runtime_scale=*/Value(),
            MaskKindAttr::get($_builder.getContext(), mask),
            /*window=*/nullptr, scale, /*softcap=*/nullptr);
    }]>
  ];

  let extraClassDeclaration = [{
    /// The compile-time scale applied to Q·Kᵀ (the attribute, or
    /// 1/sqrt(D)); std::nullopt when it is the run-time operand.
    std::optional<double> getStaticScale();
    /// The scale as an f32 value where `b` inserts: the run-time operand,
    /// or a constant of getStaticScale().
    Value buildScale(OpBuilder &b, Location loc);
    /// The band of keys each query row sees (windows as wide as the
    /// sequences unbounded).
    MaskBand getMaskBand() {
      return ::mlir::attn::getMaskBand(getMask(), getWindow(),
                                       getQueryType().getDimSize(2),
                                       getKeyType().getDimSize(2));
    }
    bool isCausal() { return getMask() == ::mlir::attn::MaskKind::causal; }
    RankedTensorType getQueryType() { return getQuery().getType(); }
    RankedTensorType getKeyType() { return getKey().getType(); }
    RankedTensorType getValueType() { return getValue().getType(); }
    RankedTensorType getOutputType() { return getOutput().getType(); }
    int64_t getHeadDim() { return getQueryType().getDimSize(3); }
    int64_t getValueHeadDim() { return getValueType().getDimSize(3); }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tile-level operations produced by attn-tile and consumed by
// attn-fuse-online-softmax.
//===----------------------------------------------------------------------===//

def Attn_OnlineBlockOp : Attn_Op<"online_block", [Pure, IsolatedFromAbove,
    AttrSizedOperandSegments, AllTypesMatch<["acc", "new_acc"]>, AllTypesMatch<["max", "new_max"]>,
    AllTypesMatch<["sum", "new_sum"]>]> {
  let summary = "One key/value block of FlashAttention's online softmax";
  let description = [{
    Folds one block of Bc keys/values into the running state of Br query
    rows: the running row maximum `max` [Br] and row sum `sum` [Br] of
    exp2-domain scores and the unnormalised accumulator `acc` [Br, Dv], all
    f32. `query` [Br, D], `key` [Bc, D] and `value` [Bc, Dv] are tiles
    padded to the block size. `q_start` and `kv_start` are the positions of
    the tiles' first rows in the whole sequences, `seq_q` and `seq_kv` the
    whole lengths: together they mask the padding and the keys outside the
    mask's band (see attn.attention). `score_mod` is attn.attention's region,
    applied to the natural-domain scaled score before the mask; it needs the
    tile's `batch` and (query) `head` indices. `bias` [Br, Bc], when
    present, is added after the score_mod (the tile of attn.attention's
    bias, zero-padded). `keys (%start, %end)`, when present, hides the keys
    outside [start, end) (attn.attention's key_range of this tile's batch
    entry, clamped to [0, seq_kv]). `alibi(%slope)` subtracts
    `slope · |d(i) − j|` after the score_mod (attn.attention's alibi_slopes
    entry of this tile's batch and head; d aligned as the mask).

    Scores are taken in the exp2 domain: `s = (q · kᵀ) * scale * log2(e)`,
    so a single multiply folds scale and the change of base. The scale is
    the attribute (`scale 0.125`) or the run-time `f32` operand
    (`scale(%s)`, attn.attention's), exactly one of them.
  }];
  let arguments = (ins RankedTensorOf<[F16, BF16, F32]>:$query,
                       RankedTensorOf<[F16, BF16, F32]>:$key,
                       RankedTensorOf<[F16, BF16, F32]>:$value,
                       RankedTensorOf<[F32]>:$acc, RankedTensorOf<[F32]>:$max,
                       RankedTensorOf<[F32]>:$sum,
                       Index:$q_start, Index:$kv_start, Index:$seq_q,
                       Index:$seq_kv, Optional<Index>:$batch,
                       Optional<Index>:$head,
                       Optional<RankedTensorOf<[F16, BF16, F32]>>:$bias,
                       Optional<F32>:$runtime_scale,
                       Optional<Index>:$key_start, Optional<Index>:$key_end,
                       Optional<F32>:$alibi_slope,
                       DefaultValuedAttr<Attn_MaskKindAttr,
                                         "::mlir::attn::MaskKind::none">:$mask,
                       OptionalAttr<DenseI64ArrayAttr>:$window,
                       OptionalAttr<F32Attr>:$scale);
  let results = (outs RankedTensorOf<[F32]>:$new_acc,
                      RankedTensorOf<[F32]>:$new_max,
                      RankedTensorOf<[F32]>:$new_sum);
  let regions = (region MaxSizedRegion<1>:$score_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value `into` $acc `,` $max `,` $sum
    `at` `(` $q_start `,` $kv_start `)` `of` `(` $seq_q `,` $seq_kv `)`
    (`head` `(` $batch^ `,` $head `)`)?
    (`bias` $bias^ `:` type($bias))?
    (`keys` `(` $key_start^ `,` $key_end `)`)?
    (`alibi` `(` $alibi_slope^ `)`)?
    (`mask` $mask^)? (`window` $window^)?
    custom<Scale>($runtime_scale, $scale) attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($acc) `,`
        type($max) `,` type($sum) (`score_mod` $score_mod^)?
  }];
  let extraClassDeclaration = [{
    MaskBand getMaskBand() {
      return ::mlir::attn::getMaskBand(getMask(), getWindow());
    }
    Block *getScoreModBlock() {
      return getScoreMod().empty() ? nullptr : &getScoreMod().front();
    }
    /// The scale as an f32 value where `b` inserts: the run-time operand,
    /// or a constant of the attribute.
    Value buildScale(OpBuilder &b, Location loc);
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Attn_OnlineFinalizeOp : Attn_Op<"online_finalize", [Pure]> {
  let summary = "Normalise FlashAttention's running state into O and LSE";
  let description = [{
    Divides the accumulator [Br, Dv] by the running sum once, after the last
    key/value block, and produces the natural-log LSE [Br] from the exp2-domain
    running max and sum: `lse = (max + log2(sum)) * ln(2)`. Rows whose sum is
    0 (every key masked) give output 0 and LSE -inf, never NaN.
  }];
  let arguments = (ins RankedTensorOf<[F32]>:$acc, RankedTensorOf<[F32]>:$max,
                       RankedTensorOf<[F32]>:$sum);
  let results = (outs RankedTensorOf<[F16, BF16, F32]>:$output,
                      RankedTensorOf<[F32]>:$lse);
  let assemblyFormat = [{
    $acc `,` $max `,` $sum attr-dict `:` type($acc) `,` type($max) `,`
    type($sum) `->` type($output) `,` type($lse)
  }];
  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
