// RUN: attn-opt %s -split-input-file -verify-diagnostics

// The variable-length (cu_seqlens) and bias operands of attn.attention.

func.func @varlen_only_kv(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected cu_seqlens_q with cu_seqlens_kv (both or neither)}}
  %o = "attn.attention"(%q, %k, %v, %cu) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0, 0, 0, 0>, max_seqlen = array<i64: 8, 8>}> ({
  }) : (tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32>, tensor<3xi32>) -> tensor<20x4x16xf32>
  return
}

// -----

func.func @varlen_only_q(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %cu: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected cu_seqlens_kv with cu_seqlens_q (both or neither)}}
  %o = "attn.attention"(%q, %k, %v, %cu) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0, 0, 0, 0>, max_seqlen = array<i64: 8, 8>}> ({
  }) : (tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32>, tensor<3xi32>) -> tensor<20x4x16xf32>
  return
}

// -----

func.func @max_without_varlen(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>) {
  // expected-error @+1 {{'attn.attention' op expected max_seqlen only with cu_seqlens}}
  %o = attn.attention %q, %k, %v max [8, 12]
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32> -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @varlen_rank(%q: tensor<1x20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected query to have rank 3, got rank 4}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32> max [8, 12]
      : tensor<1x20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<1x20x4x16xf32>
  return
}

// -----

func.func @varlen_tokens(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<31x2x16xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected value tokens (31) to match key tokens (30)}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32> max [8, 12]
      : tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<31x2x16xf32> -> tensor<20x4x16xf32>
  return
}

// -----

func.func @varlen_cu_sizes(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %cq: tensor<3xi32>, %ck: tensor<4xi32>) {
  // expected-error @+1 {{'attn.attention' op expected cu_seqlens_q and cu_seqlens_kv to have the same size (batch + 1), got 3 and 4}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<4xi32> max [8, 12]
      : tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<20x4x16xf32>
  return
}

// -----

func.func @varlen_cu_size_one(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %cq: tensor<1xi32>, %ck: tensor<1xi32>) {
  // expected-error @+1 {{'attn.attention' op expected cu_seqlens of size batch + 1 >= 2, got 1}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<1xi32>, tensor<1xi32> max [8, 12]
      : tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<20x4x16xf32>
  return
}

// -----

func.func @varlen_cu_type(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %cq: tensor<3xi64>, %ck: tensor<3xi64>) {
  // expected-error @+1 {{'attn.attention' op operand #3 must be ranked tensor of 32-bit signless integer values, but got 'tensor<3xi64>'}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<3xi64>, tensor<3xi64> max [8, 12]
      : tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<20x4x16xf32>
  return
}

// -----

func.func @varlen_no_max(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected max [max_seqlen_q, max_seqlen_kv] with cu_seqlens}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32>
      : tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<20x4x16xf32>
  return
}

// -----

func.func @varlen_bad_max(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected max to be two positive lengths [max_seqlen_q, max_seqlen_kv]}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32> max [8, 0]
      : tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<20x4x16xf32>
  return
}

// -----

func.func @varlen_bias(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %b: tensor<1x1x8x12xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected no bias with cu_seqlens (a packed batch has no [B, H, Nq, Nk] bias layout)}}
  %o = attn.attention %q, %k, %v bias %b : tensor<1x1x8x12xf32> cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32> max [8, 12]
      : tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<20x4x16xf32>
  return
}

// -----

func.func @varlen_lse(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected lse tokens (4) to match query tokens (20)}}
  %o, %l = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32> max [8, 12]
      : tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<20x4x16xf32>, tensor<4x4xf32>
  return
}

// -----

func.func @bias_elt(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x2x12x16xbf16>, %v: tensor<2x2x12x16xbf16>, %b: tensor<2x4x8x12xf32>) {
  // expected-error @+1 {{'attn.attention' op expected bias element type ('f32') to match query element type ('bf16')}}
  %o = attn.attention %q, %k, %v bias %b : tensor<2x4x8x12xf32>
      : tensor<2x4x8x16xbf16>, tensor<2x2x12x16xbf16>, tensor<2x2x12x16xbf16> -> tensor<2x4x8x16xbf16>
  return
}

// -----

func.func @bias_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x12x16xf32>, %v: tensor<2x2x12x16xf32>, %b: tensor<2x2x8x12xf32>) {
  // expected-error @+1 {{'attn.attention' op expected bias heads (2) to be 1 (broadcast) or query heads (4)}}
  %o = attn.attention %q, %k, %v bias %b : tensor<2x2x8x12xf32>
      : tensor<2x4x8x16xf32>, tensor<2x2x12x16xf32>, tensor<2x2x12x16xf32> -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @bias_keys(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x12x16xf32>, %v: tensor<2x2x12x16xf32>, %b: tensor<1x1x8x13xf32>) {
  // expected-error @+1 {{'attn.attention' op expected bias sequence length (13) to match key sequence length (12)}}
  %o = attn.attention %q, %k, %v bias %b : tensor<1x1x8x13xf32>
      : tensor<2x4x8x16xf32>, tensor<2x2x12x16xf32>, tensor<2x2x12x16xf32> -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @bias_rank(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x12x16xf32>, %v: tensor<2x2x12x16xf32>, %b: tensor<8x12xf32>) {
  // expected-error @+1 {{'attn.attention' op expected bias to have rank 4, got rank 2}}
  %o = attn.attention %q, %k, %v bias %b : tensor<8x12xf32>
      : tensor<2x4x8x16xf32>, tensor<2x2x12x16xf32>, tensor<2x2x12x16xf32> -> tensor<2x4x8x16xf32>
  return
}

// -----

// A sequence is no longer than the packed tokens.
func.func @varlen_max_q_over_tokens(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected max_seqlen_q (21) to be at most the packed tokens (20)}}
  %o = attn.attention %q, %k, %k cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32> max [21, 12]
      : tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<20x4x16xf32>
  return
}

// -----

func.func @varlen_max_kv_huge(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected max_seqlen_kv (4611686018427387904) to be at most the packed tokens (30)}}
  %o = attn.attention %q, %k, %k cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32> max [8, 4611686018427387904]
      : tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<20x4x16xf32>
  return
}

// -----

// With dynamic token counts the i32 cu_seqlens still bound every length.
func.func @varlen_max_dynamic_huge(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected max_seqlen_q (4611686018427387904) to fit the i32 cu_seqlens}}
  %o = attn.attention %q, %k, %k cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32> max [4611686018427387904, 8]
      : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32> -> tensor<?x4x16xf32>
  return
}

// -----

func.func @varlen_zero_query_heads(%q: tensor<20x0x16xf32>, %k: tensor<30x2x16xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected query heads to be positive, got 0}}
  %o = attn.attention %q, %k, %k cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32> max [8, 12]
      : tensor<20x0x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<20x0x16xf32>
  return
}

// -----

func.func @key_range_batch(%q: tensor<2x4x16x32xf32>, %k: tensor<2x2x20x32xf32>, %v: tensor<2x2x20x32xf32>, %s: tensor<3xi32>) {
  // expected-error @+1 {{'attn.attention' op expected key_start batch (3) to match query batch (2)}}
  %o = attn.attention %q, %k, %v key_range(%s, %s) : tensor<3xi32>, tensor<3xi32>
      : tensor<2x4x16x32xf32>, tensor<2x2x20x32xf32>, tensor<2x2x20x32xf32> -> tensor<2x4x16x32xf32>
  return
}

// -----

func.func @key_range_rank(%q: tensor<2x4x16x32xf32>, %k: tensor<2x2x20x32xf32>, %v: tensor<2x2x20x32xf32>, %s: tensor<2x1xi32>) {
  // expected-error @+1 {{'attn.attention' op expected key_start to have rank 1}}
  %o = attn.attention %q, %k, %v key_range(%s, %s) : tensor<2x1xi32>, tensor<2x1xi32>
      : tensor<2x4x16x32xf32>, tensor<2x2x20x32xf32>, tensor<2x2x20x32xf32> -> tensor<2x4x16x32xf32>
  return
}

// -----

func.func @key_range_only_start(%q: tensor<2x4x16x32xf32>, %k: tensor<2x2x20x32xf32>, %v: tensor<2x2x20x32xf32>, %s: tensor<2xi32>) {
  // expected-error @+1 {{'attn.attention' op expected key_start with key_end (both or neither)}}
  %o = "attn.attention"(%q, %k, %v, %s) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>}> ({
  }) : (tensor<2x4x16x32xf32>, tensor<2x2x20x32xf32>, tensor<2x2x20x32xf32>, tensor<2xi32>) -> tensor<2x4x16x32xf32>
  return
}

// -----

func.func @key_range_varlen(%q: tensor<20x4x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %cu: tensor<3xi32>, %s: tensor<2xi32>) {
  // expected-error @+1 {{'attn.attention' op expected no key_range with cu_seqlens (each packed sequence has its own keys already)}}
  %o = attn.attention %q, %k, %v cu_seqlens(%cu, %cu) : tensor<3xi32>, tensor<3xi32> key_range(%s, %s) : tensor<2xi32>, tensor<2xi32> max [8, 8]
      : tensor<20x4x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32> -> tensor<20x4x16xf32>
  return
}

// -----

func.func @grad_key_range_batch(%q: tensor<2x4x16x32xf32>, %k: tensor<2x2x20x32xf32>, %v: tensor<2x2x20x32xf32>, %lse: tensor<2x4x16xf32>, %s: tensor<1xi32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected key_start batch (1) to match query batch (2)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %q, %q, %lse key_range(%s, %s) : tensor<1xi32>, tensor<1xi32>
      : tensor<2x4x16x32xf32>, tensor<2x2x20x32xf32>, tensor<2x2x20x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16xf32>
      -> tensor<2x4x16x32xf32>, tensor<2x2x20x32xf32>, tensor<2x2x20x32xf32>
  return
}
