// RUN: attn-opt %s -split-input-file -verify-diagnostics

// The alibi_slopes operand of attn.attention and attn.attention_grad: f32
// [Hq] or [B, Hq] (varlen: B the number of sequences), and
// attn.online_block's alibi(%slope): an f32.

func.func @alibi_rank3(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x20x32xf32>, %v: tensor<2x2x20x32xf32>, %s: tensor<2x8x1xf32>) {
  // expected-error @+1 {{'attn.attention' op expected alibi_slopes of rank 1 ([Hq]) or 2 ([B, Hq]), got rank 3}}
  %o = attn.attention %q, %k, %v alibi_slopes(%s : tensor<2x8x1xf32>)
      : tensor<2x8x16x32xf32>, tensor<2x2x20x32xf32>, tensor<2x2x20x32xf32> -> tensor<2x8x16x32xf32>
  return
}

// -----

func.func @alibi_rank0(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x20x32xf32>, %v: tensor<2x2x20x32xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'attn.attention' op expected alibi_slopes of rank 1 ([Hq]) or 2 ([B, Hq]), got rank 0}}
  %o = attn.attention %q, %k, %v alibi_slopes(%s : tensor<f32>)
      : tensor<2x8x16x32xf32>, tensor<2x2x20x32xf32>, tensor<2x2x20x32xf32> -> tensor<2x8x16x32xf32>
  return
}

// -----

// One slope per query head, not per key/value head.
func.func @alibi_heads(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x20x32xf32>, %v: tensor<2x2x20x32xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{'attn.attention' op expected alibi_slopes heads (2) to match query heads (8)}}
  %o = attn.attention %q, %k, %v alibi_slopes(%s : tensor<2xf32>)
      : tensor<2x8x16x32xf32>, tensor<2x2x20x32xf32>, tensor<2x2x20x32xf32> -> tensor<2x8x16x32xf32>
  return
}

// -----

func.func @alibi_batch_heads(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x20x32xf32>, %v: tensor<2x2x20x32xf32>, %s: tensor<2x5xf32>) {
  // expected-error @+1 {{'attn.attention' op expected alibi_slopes heads (5) to match query heads (8)}}
  %o = attn.attention %q, %k, %v alibi_slopes(%s : tensor<2x5xf32>) mask <causal>
      : tensor<2x8x16x32xf32>, tensor<2x2x20x32xf32>, tensor<2x2x20x32xf32> -> tensor<2x8x16x32xf32>
  return
}

// -----

func.func @alibi_batch(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x20x32xf32>, %v: tensor<2x2x20x32xf32>, %s: tensor<3x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected alibi_slopes batch (3) to match query batch (2)}}
  %o = attn.attention %q, %k, %v alibi_slopes(%s : tensor<3x8xf32>)
      : tensor<2x8x16x32xf32>, tensor<2x2x20x32xf32>, tensor<2x2x20x32xf32> -> tensor<2x8x16x32xf32>
  return
}

// -----

// A dynamic batch on either side is not a mismatch; the heads still are.
func.func @alibi_dynamic_batch(%q: tensor<?x8x16x32xf32>, %k: tensor<?x2x20x32xf32>, %v: tensor<?x2x20x32xf32>, %s: tensor<3x8xf32>, %t: tensor<?x4xf32>) {
  %o = attn.attention %q, %k, %v alibi_slopes(%s : tensor<3x8xf32>)
      : tensor<?x8x16x32xf32>, tensor<?x2x20x32xf32>, tensor<?x2x20x32xf32> -> tensor<?x8x16x32xf32>
  // expected-error @+1 {{'attn.attention' op expected alibi_slopes heads (4) to match query heads (8)}}
  %o2 = attn.attention %q, %k, %v alibi_slopes(%t : tensor<?x4xf32>)
      : tensor<?x8x16x32xf32>, tensor<?x2x20x32xf32>, tensor<?x2x20x32xf32> -> tensor<?x8x16x32xf32>
  return
}

// -----

func.func @alibi_f16(%q: tensor<2x8x16x32xf16>, %k: tensor<2x2x20x32xf16>, %v: tensor<2x2x20x32xf16>, %s: tensor<8xf16>) {
  // expected-error @+1 {{'attn.attention' op operand #3 must be ranked tensor of 32-bit float values, but got 'tensor<8xf16>'}}
  %o = attn.attention %q, %k, %v alibi_slopes(%s : tensor<8xf16>)
      : tensor<2x8x16x32xf16>, tensor<2x2x20x32xf16>, tensor<2x2x20x32xf16> -> tensor<2x8x16x32xf16>
  return
}

// -----

// Varlen: the batch of [B, Hq] is the number of sequences, the size of
// cu_seqlens minus one (here 3, not 4).
func.func @alibi_varlen_sequences(%q: tensor<40x4x16xf32>, %k: tensor<60x2x16xf32>, %v: tensor<60x2x16xf32>, %cq: tensor<4xi32>, %ck: tensor<4xi32>, %s: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.attention' op expected alibi_slopes batch (4) to match query batch (3)}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<4xi32>, tensor<4xi32>
      alibi_slopes(%s : tensor<4x4xf32>) max [16, 24]
      : tensor<40x4x16xf32>, tensor<60x2x16xf32>, tensor<60x2x16xf32> -> tensor<40x4x16xf32>
  return
}

// -----

// Varlen [Tq, Hq, D]: the heads are dimension 1 of the packed query.
func.func @alibi_varlen_heads(%q: tensor<40x4x16xf32>, %k: tensor<60x2x16xf32>, %v: tensor<60x2x16xf32>, %cq: tensor<4xi32>, %ck: tensor<4xi32>, %s: tensor<40xf32>) {
  // expected-error @+1 {{'attn.attention' op expected alibi_slopes heads (40) to match query heads (4)}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<4xi32>, tensor<4xi32>
      alibi_slopes(%s : tensor<40xf32>) max [16, 24]
      : tensor<40x4x16xf32>, tensor<60x2x16xf32>, tensor<60x2x16xf32> -> tensor<40x4x16xf32>
  return
}

// -----

func.func @grad_alibi_rank3(%q: tensor<1x2x16x64xbf16>, %lse: tensor<1x2x16xf32>, %s: tensor<1x2x1xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected alibi_slopes of rank 1 ([Hq]) or 2 ([B, Hq]), got rank 3}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse alibi_slopes(%s : tensor<1x2x1xf32>)
      : tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>,
        tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16xf32>
      -> tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>
  return
}

// -----

func.func @grad_alibi_heads(%q: tensor<1x2x16x64xbf16>, %lse: tensor<1x2x16xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected alibi_slopes heads (3) to match query heads (2)}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse alibi_slopes(%s : tensor<3xf32>) mask <causal>
      : tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>,
        tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16xf32>
      -> tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>
  return
}

// -----

func.func @grad_alibi_batch(%q: tensor<1x2x16x64xbf16>, %lse: tensor<1x2x16xf32>, %s: tensor<2x2xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected alibi_slopes batch (2) to match query batch (1)}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse alibi_slopes(%s : tensor<2x2xf32>)
      : tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>,
        tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16xf32>
      -> tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>
  return
}

// -----

// online_block's slope is one f32 scalar (the entry of this tile's batch and
// head), not a tensor and not an f16.
func.func @online_block_alibi_f16(%t: tensor<16x8xf32>, %m: tensor<16xf32>, %i: index, %s: f16) {
  // expected-error @+1 {{'attn.online_block' op operand #10 must be 32-bit float, but got 'f16'}}
  %a, %mx, %l = "attn.online_block"(%t, %t, %t, %t, %m, %m, %i, %i, %i, %i, %s) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1>, scale = 1.0 : f32}> ({})
      : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>, index, index, index, index, f16)
      -> (tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}
