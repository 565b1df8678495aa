// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per verifier diagnostic of attn.attention, attn.online_block and
// attn.online_finalize, then type-constraint and parse errors.

//===----------------------------------------------------------------------===//
// attn.attention: ranks
//===----------------------------------------------------------------------===//

func.func @query_rank(%q: tensor<4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                      %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{'attn.attention' op expected query to have rank 4, got rank 3 ('tensor<4x128x64xf32>')}}
  %o = attn.attention %q, %k, %v
      : tensor<4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @key_rank(%q: tensor<1x4x128x64xf32>, %k: tensor<1x1x4x128x64xf32>,
                    %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected key to have rank 4, got rank 5}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf32>, tensor<1x1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @value_rank(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                      %v: tensor<128x64xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected value to have rank 4, got rank 2}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @output_rank(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                       %v: tensor<1x4x128x64xf32>) -> tensor<4x128x64xf32> {
  // expected-error @+1 {{expected output to have rank 4, got rank 3}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<4x128x64xf32>
  return %o : tensor<4x128x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: element types
//===----------------------------------------------------------------------===//

func.func @key_element_type(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x4x128x64xf16>,
                            %v: tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16> {
  // expected-error @+1 {{expected key element type ('f16') to match query element type ('bf16')}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xbf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xbf16> -> tensor<1x4x128x64xbf16>
  return %o : tensor<1x4x128x64xbf16>
}

// -----

func.func @value_element_type(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                              %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf16> {
  // expected-error @+1 {{expected value element type ('f32') to match query element type ('f16')}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf16>
  return %o : tensor<1x4x128x64xf16>
}

// -----

func.func @output_element_type(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x4x128x64xbf16>,
                               %v: tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected output element type ('f32') to match query element type ('bf16')}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @unsupported_element_type(%q: tensor<1x4x128x64xf64>, %k: tensor<1x4x128x64xf64>,
                                    %v: tensor<1x4x128x64xf64>) -> tensor<1x4x128x64xf64> {
  // expected-error @+1 {{'attn.attention' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x4x128x64xf64>'}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf64>, tensor<1x4x128x64xf64>, tensor<1x4x128x64xf64> -> tensor<1x4x128x64xf64>
  return %o : tensor<1x4x128x64xf64>
}

// -----

func.func @integer_element_type(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xi16>,
                                %v: tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16> {
  // expected-error @+1 {{operand #1 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x4x128x64xi16>'}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf16>, tensor<1x4x128x64xi16>, tensor<1x4x128x64xf16> -> tensor<1x4x128x64xf16>
  return %o : tensor<1x4x128x64xf16>
}

// -----

func.func @unranked(%q: tensor<*xf16>, %k: tensor<1x4x128x64xf16>,
                    %v: tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16> {
  // expected-error @+2 {{custom op 'attn.attention' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf16>'}}
  %o = attn.attention %q, %k, %v
      : tensor<*xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16> -> tensor<1x4x128x64xf16>
  return %o : tensor<1x4x128x64xf16>
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: batch
//===----------------------------------------------------------------------===//

func.func @key_batch(%q: tensor<2x4x128x64xf32>, %k: tensor<3x4x128x64xf32>,
                     %v: tensor<2x4x128x64xf32>) -> tensor<2x4x128x64xf32> {
  // expected-error @+1 {{expected key batch (3) to match query batch (2)}}
  %o = attn.attention %q, %k, %v
      : tensor<2x4x128x64xf32>, tensor<3x4x128x64xf32>, tensor<2x4x128x64xf32> -> tensor<2x4x128x64xf32>
  return %o : tensor<2x4x128x64xf32>
}

// -----

func.func @value_batch(%q: tensor<2x4x128x64xf32>, %k: tensor<?x4x128x64xf32>,
                       %v: tensor<1x4x128x64xf32>) -> tensor<2x4x128x64xf32> {
  // expected-error @+1 {{expected value batch (1) to match query batch (2)}}
  %o = attn.attention %q, %k, %v
      : tensor<2x4x128x64xf32>, tensor<?x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<2x4x128x64xf32>
  return %o : tensor<2x4x128x64xf32>
}

// -----

func.func @output_batch(%q: tensor<2x4x128x64xf32>, %k: tensor<2x4x128x64xf32>,
                        %v: tensor<2x4x128x64xf32>) -> tensor<4x4x128x64xf32> {
  // expected-error @+1 {{expected output batch (4) to match query batch (2)}}
  %o = attn.attention %q, %k, %v
      : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32> -> tensor<4x4x128x64xf32>
  return %o : tensor<4x4x128x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: heads
//===----------------------------------------------------------------------===//

func.func @value_heads(%q: tensor<1x8x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                       %v: tensor<1x4x128x64xf32>) -> tensor<1x8x128x64xf32> {
  // expected-error @+1 {{expected value heads (4) to match key heads (2)}}
  %o = attn.attention %q, %k, %v
      : tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}

// -----

func.func @output_heads(%q: tensor<1x8x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                        %v: tensor<1x2x128x64xf32>) -> tensor<1x2x128x64xf32> {
  // expected-error @+1 {{expected output heads (2) to match query heads (8)}}
  %o = attn.attention %q, %k, %v
      : tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>
  return %o : tensor<1x2x128x64xf32>
}

// -----

func.func @zero_key_heads(%q: tensor<1x8x128x64xf32>, %k: tensor<1x0x128x64xf32>,
                          %v: tensor<1x0x128x64xf32>) -> tensor<1x8x128x64xf32> {
  // expected-error @+1 {{expected key heads to be positive, got 0}}
  %o = attn.attention %q, %k, %v
      : tensor<1x8x128x64xf32>, tensor<1x0x128x64xf32>, tensor<1x0x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}

// -----

func.func @heads_not_multiple(%q: tensor<1x6x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                              %v: tensor<1x4x128x64xf32>) -> tensor<1x6x128x64xf32> {
  // expected-error @+1 {{expected query heads (6) to be a multiple of key heads (4)}}
  %o = attn.attention %q, %k, %v
      : tensor<1x6x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x6x128x64xf32>
  return %o : tensor<1x6x128x64xf32>
}

// -----

func.func @fewer_query_heads(%q: tensor<1x2x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                             %v: tensor<1x4x128x64xf32>) -> tensor<1x2x128x64xf32> {
  // expected-error @+1 {{expected query heads (2) to be a multiple of key heads (4)}}
  %o = attn.attention %q, %k, %v
      : tensor<1x2x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x2x128x64xf32>
  return %o : tensor<1x2x128x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: sequence lengths
//===----------------------------------------------------------------------===//

func.func @value_seq(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x256x64xf32>,
                     %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected value sequence length (128) to match key sequence length (256)}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf32>, tensor<1x4x256x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @output_seq(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x256x64xf32>,
                      %v: tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32> {
  // expected-error @+1 {{expected output sequence length (256) to match query sequence length (128)}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf32>, tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32> -> tensor<1x4x256x64xf32>
  return %o : tensor<1x4x256x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: head dims
//===----------------------------------------------------------------------===//

func.func @dynamic_query_head_dim(%q: tensor<1x4x128x?xf32>, %k: tensor<1x4x128x64xf32>,
                                  %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected a static head dim in query ('tensor<1x4x128x?xf32>')}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x?xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @dynamic_key_head_dim(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x?xf32>,
                                %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected a static head dim in key ('tensor<1x4x128x?xf32>')}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf32>, tensor<1x4x128x?xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @dynamic_value_head_dim(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                                  %v: tensor<1x4x128x?xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected a static head dim in value ('tensor<1x4x128x?xf32>')}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x?xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @dynamic_output_head_dim(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                                   %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x?xf32> {
  // expected-error @+1 {{expected a static head dim in output ('tensor<1x4x128x?xf32>')}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x?xf32>
  return %o : tensor<1x4x128x?xf32>
}

// -----

func.func @key_head_dim(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x128xf32>,
                        %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected key head dim (128) to match query head dim (64)}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @output_head_dim(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                           %v: tensor<1x4x128x32xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected output head dim (64) to match value head dim (32)}}
  %o = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x32xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: LSE
//===----------------------------------------------------------------------===//

func.func @lse_rank(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                    %v: tensor<1x4x128x64xf32>) -> tensor<4x128xf32> {
  // expected-error @+1 {{expected lse to have rank 3, got rank 2 ('tensor<4x128xf32>')}}
  %o, %lse = attn.attention %q, %k, %v
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>
        -> tensor<1x4x128x64xf32>, tensor<4x128xf32>
  return %lse : tensor<4x128xf32>
}

// -----

func.func @lse_batch(%q: tensor<2x4x128x64xbf16>, %k: tensor<2x4x128x64xbf16>,
                     %v: tensor<2x4x128x64xbf16>) -> tensor<1x4x128xf32> {
  // expected-error @+1 {{expected lse batch (1) to match query batch (2)}}
  %o, %lse = attn.attention %q, %k, %v
      : tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>
        -> tensor<2x4x128x64xbf16>, tensor<1x4x128xf32>
  return %lse : tensor<1x4x128xf32>
}

// -----

func.func @lse_heads(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x2x128x64xbf16>,
                     %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128xf32> {
  // expected-error @+1 {{expected lse heads (2) to match query heads (8)}}
  %o, %lse = attn.attention %q, %k, %v
      : tensor<1x8x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
        -> tensor<1x8x128x64xbf16>, tensor<1x2x128xf32>
  return %lse : tensor<1x2x128xf32>
}

// -----

func.func @lse_seq(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x4x256x64xbf16>,
                   %v: tensor<1x4x256x64xbf16>) -> tensor<1x4x256xf32> {
  // expected-error @+1 {{expected lse sequence length (256) to match query sequence length (128)}}
  %o, %lse = attn.attention %q, %k, %v
      : tensor<1x4x128x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>
        -> tensor<1x4x128x64xbf16>, tensor<1x4x256xf32>
  return %lse : tensor<1x4x256xf32>
}

// -----

func.func @lse_element_type(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x4x128x64xbf16>,
                            %v: tensor<1x4x128x64xbf16>) -> tensor<1x4x128xbf16> {
  // expected-error @+1 {{result #1 must be ranked tensor of 32-bit float values, but got 'tensor<1x4x128xbf16>'}}
  %o, %lse = attn.attention %q, %k, %v
      : tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>
        -> tensor<1x4x128x64xbf16>, tensor<1x4x128xbf16>
  return %lse : tensor<1x4x128xbf16>
}

// -----

//===----------------------------------------------------------------------===//
// The run-time scale operand: never with the attribute
//===----------------------------------------------------------------------===//

func.func @runtime_scale_and_attribute(%q: tensor<1x4x128x64xf32>, %s: f32) {
  // expected-error @+1 {{'attn.attention' op expected either the scale attribute or the run-time scale operand, not both}}
  %o = attn.attention %q, %q, %q scale(%s) scale 0.5
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>
        -> tensor<1x4x128x64xf32>
  return
}

// -----

func.func @grad_runtime_scale_and_attribute(%q: tensor<1x1x16x8xf32>, %lse: tensor<1x1x16xf32>, %s: f32) {
  // expected-error @+1 {{'attn.attention_grad' op expected either the scale attribute or the run-time scale operand, not both}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse scale(%s) scale 0.5
      : tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>,
        tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16xf32>
      -> tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>
  return
}

// -----

func.func @block_runtime_scale_and_attribute(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>,
                                             %acc: tensor<16x64xf32>, %m: tensor<16xf32>,
                                             %i: index, %s: f32) {
  // expected-error @+1 {{'attn.online_block' op expected either the scale attribute or the run-time scale operand, not both}}
  %a, %mx, %l = attn.online_block %q, %k, %k into %acc, %m, %m at (%i, %i) of (%i, %i) scale(%s) scale 1.0
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

// The operand is an f32.
func.func @runtime_scale_f16(%q: tensor<1x4x128x64xf32>, %s: f16) {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%s' expects different type than prior uses: 'f32' vs 'f16'}}
  %o = attn.attention %q, %q, %q scale(%s)
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>
        -> tensor<1x4x128x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.attention: scale
//===----------------------------------------------------------------------===//

func.func @zero_scale(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                      %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected a positive scale, got 0.000000e+00}}
  %o = attn.attention %q, %k, %v scale 0.0
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @negative_scale(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                          %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected a positive scale, got -5.000000e-01}}
  %o = attn.attention %q, %k, %v scale -0.5
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @infinite_scale(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                          %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected a finite scale, got INF}}
  %o = attn.attention %q, %k, %v scale 0x7F800000
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

func.func @nan_scale(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                     %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  // expected-error @+1 {{expected a finite scale, got nan}}
  %o = attn.attention %q, %k, %v scale 0x7FC00000
      : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// attn.online_block
//===----------------------------------------------------------------------===//

func.func @block_query_rank(%q: tensor<1x16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                            %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{'attn.online_block' op expected query to have rank 2, got rank 3}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<1x16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_key_rank(%q: tensor<16x64xf32>, %k: tensor<32xf32>, %v: tensor<32x64xf32>,
                          %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected key to have rank 2, got rank 1}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf32>, tensor<32xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_value_rank(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<1x32x64xf32>,
                            %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected value to have rank 2, got rank 3}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<1x32x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_acc_rank(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                          %acc: tensor<1024xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected acc to have rank 2, got rank 1}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<1024xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_max_rank(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                          %acc: tensor<16x64xf32>, %m: tensor<16x1xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected max to have rank 1, got rank 2}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16x1xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_sum_rank(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                          %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16x1xf32>, %i: index) {
  // expected-error @+1 {{expected sum to have rank 1, got rank 2}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16x1xf32>
  return
}

// -----

func.func @block_element_types(%q: tensor<16x64xbf16>, %k: tensor<32x64xf16>, %v: tensor<32x64xbf16>,
                               %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected query, key and value to share one element type}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xbf16>, tensor<32x64xf16>, tensor<32x64xbf16>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_key_head_dim(%q: tensor<16x64xf32>, %k: tensor<32x32xf32>, %v: tensor<32x64xf32>,
                              %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected key head dim (32) to match query head dim (64)}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf32>, tensor<32x32xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_value_rows(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<16x64xf32>,
                            %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected value rows (16) to match key rows (32)}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_acc_rows(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                          %acc: tensor<32x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected acc rows (32) to match query rows (16)}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_acc_head_dim(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x32xf32>,
                              %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected acc head dim (64) to match value head dim (32)}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x32xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_max_rows(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                          %acc: tensor<16x64xf32>, %m: tensor<32xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected max rows (32) to match query rows (16)}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<32xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_sum_rows(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                          %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<8xf32>, %i: index) {
  // expected-error @+1 {{expected sum rows (8) to match query rows (16)}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<8xf32>
  return
}

// -----

func.func @block_scale(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                       %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected a positive scale, got -1.000000e+00}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale -1.0
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_nonfinite_scale(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                                 %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{expected a finite scale, got -INF}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 0xFF800000
      : tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @block_state_type(%q: tensor<16x64xf16>, %k: tensor<32x64xf16>, %v: tensor<32x64xf16>,
                            %acc: tensor<16x64xf16>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit float values, but got 'tensor<16x64xf16>'}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x64xf16>, tensor<32x64xf16>, tensor<32x64xf16>, tensor<16x64xf16>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

// The generic form can spell result types that differ from the state's.
func.func @block_result_type(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                             %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{'attn.online_block' op failed to verify that all of {acc, new_acc} have same type}}
  %r:3 = "attn.online_block"(%q, %k, %v, %acc, %m, %l, %i, %i, %i, %i) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, scale = 1.0 : f32}> ({})
      : (tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>, index, index, index, index)
      -> (tensor<16x32xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

func.func @block_missing_scale(%q: tensor<16x64xf32>, %k: tensor<32x64xf32>, %v: tensor<32x64xf32>,
                               %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{'attn.online_block' op expected a scale: the attribute or the run-time scale operand}}
  %r:3 = "attn.online_block"(%q, %k, %v, %acc, %m, %l, %i, %i, %i, %i) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>}> ({})
      : (tensor<16x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>, index, index, index, index)
      -> (tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn.online_finalize
//===----------------------------------------------------------------------===//

func.func @finalize_acc_rank(%acc: tensor<1024xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>) {
  // expected-error @+1 {{'attn.online_finalize' op expected acc to have rank 2, got rank 1}}
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<1024xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @finalize_max_rank(%acc: tensor<16x64xf32>, %m: tensor<f32>, %l: tensor<16xf32>) {
  // expected-error @+1 {{expected max to have rank 1, got rank 0}}
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x64xf32>, tensor<f32>, tensor<16xf32> -> tensor<16x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @finalize_sum_rank(%acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<1x16xf32>) {
  // expected-error @+1 {{expected sum to have rank 1, got rank 2}}
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x64xf32>, tensor<16xf32>, tensor<1x16xf32> -> tensor<16x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @finalize_output_rank(%acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>) {
  // expected-error @+1 {{expected output to have rank 2, got rank 3}}
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<1x16x64xbf16>, tensor<16xf32>
  return
}

// -----

func.func @finalize_lse_rank(%acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>) {
  // expected-error @+1 {{expected lse to have rank 1, got rank 2}}
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16x64xbf16>, tensor<16x1xf32>
  return
}

// -----

func.func @finalize_output_shape(%acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>) {
  // expected-error @+1 {{expected output shape to match acc shape}}
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16x32xbf16>, tensor<16xf32>
  return
}

// -----

func.func @finalize_max_rows(%acc: tensor<16x64xf32>, %m: tensor<32xf32>, %l: tensor<16xf32>) {
  // expected-error @+1 {{expected max rows (32) to match acc rows (16)}}
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x64xf32>, tensor<32xf32>, tensor<16xf32> -> tensor<16x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @finalize_sum_rows(%acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<32xf32>) {
  // expected-error @+1 {{expected sum rows (32) to match acc rows (16)}}
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x64xf32>, tensor<16xf32>, tensor<32xf32> -> tensor<16x64xf32>, tensor<16xf32>
  return
}

// -----

func.func @finalize_lse_rows(%acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>) {
  // expected-error @+1 {{expected lse rows (8) to match acc rows (16)}}
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16x64xf32>, tensor<8xf32>
  return
}

// -----

func.func @finalize_output_type(%acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<16x64xi8>'}}
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16x64xi8>, tensor<16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Masks: the window goes with the sliding kinds, and only with them
//===----------------------------------------------------------------------===//

func.func @sliding_without_window(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected window [left, right] with mask <sliding>}}
  %o = attn.attention %q, %q, %q mask <sliding> : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @window_without_sliding(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected no window with mask <causal_top_left>: window [left, right] goes with <sliding> or <sliding_top_left>}}
  %o = attn.attention %q, %q, %q mask <causal_top_left> window [2, 0] : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @window_arity(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected window to have 2 entries [left, right], got 3}}
  %o = attn.attention %q, %q, %q mask <sliding_top_left> window [1, 2, 3] : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @window_negative(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected window left to be >= 0 (or -1 for unbounded), got -2}}
  %o = attn.attention %q, %q, %q mask <sliding> window [-2, 0] : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @grad_window_without_sliding(%q: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected no window with mask <none>}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse window [1, 1]
      : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>,
        tensor<1x1x4x8xf32>, tensor<1x1x4xf32> -> tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
  return
}

// -----

func.func @grad_softcap_not_positive(%q: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected a positive finite softcap, got -2}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse softcap -2.0
      : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>,
        tensor<1x1x4x8xf32>, tensor<1x1x4xf32> -> tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// Score modification: softcap sugar and the score_mod region
//===----------------------------------------------------------------------===//

func.func @softcap_not_positive(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected a positive finite softcap, got -3}}
  %o = attn.attention %q, %q, %q softcap -3.0 : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @softcap_and_region(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected either softcap or a score_mod region, not both}}
  %o = attn.attention %q, %q, %q softcap 30.0 : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    attn.yield %s : f32
  }
  return
}

// -----

func.func @score_mod_arity(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected score_mod arguments (score: f32, b: index, h: index, q_idx: index, kv_idx: index), got ('f32', 'index')}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index):
    attn.yield %s : f32
  }
  return
}

// -----

func.func @score_mod_types(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected score_mod arguments (score: f32, b: index, h: index, q_idx: index, kv_idx: index), got ('f16', 'index', 'index', 'index', 'index')}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f16, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 0.0 : f32
    attn.yield %c : f32
  }
  return
}

// -----

func.func @score_mod_no_yield(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected score_mod to end in attn.yield}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    llvm.unreachable
  }
  return
}

// -----

func.func @score_mod_yields_f16(%q: tensor<1x1x4x8xf32>) {
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = arith.truncf %s : f32 to f16
    // expected-error @+1 {{'attn.yield' op operand #0 must be 32-bit float, but got 'f16'}}
    attn.yield %t : f16
  }
  return
}

// -----

func.func @score_mod_captures(%q: tensor<1x1x4x8xf32>, %bias: f32) {
  // expected-note @+1 {{required by region isolation constraints}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{using value defined outside the region}}
    %y = arith.addf %s, %bias : f32
    attn.yield %y : f32
  }
  return
}

// -----

func.func @yield_outside(%s: f32) {
  // expected-error @+1 {{'attn.yield' op expects parent op to be one of 'attn.attention, attn.online_block'}}
  attn.yield %s : f32
}

// -----

func.func @online_block_score_mod_without_head(%q: tensor<16x8xf32>, %acc: tensor<16x8xf32>, %m: tensor<16xf32>, %i: index) {
  // expected-error @+1 {{'attn.online_block' op expected head (batch, head) indices with a score_mod region}}
  %a, %mx, %s = attn.online_block %q, %q, %q into %acc, %m, %m at (%i, %i) of (%i, %i) scale 1.0
      : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32> score_mod {
  ^bb0(%sc: f32, %b: index, %h: index, %qi: index, %kj: index):
    attn.yield %sc : f32
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// Parse errors
//===----------------------------------------------------------------------===//

func.func @missing_value(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{expected ','}}
  %o = attn.attention %q, %q : tensor<1x1x4x8xf32>
  return
}

// -----

func.func @unknown_mask(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+2 {{expected ::mlir::attn::MaskKind to be one of: none, causal, causal_top_left, sliding, sliding_top_left}}
  // expected-error @+1 {{failed to parse Attn_MaskKindAttr parameter 'value' which is to be a `::mlir::attn::MaskKind`}}
  %o = attn.attention %q, %q, %q mask <window> : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @non_float_scale(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{custom op 'attn.attention' invalid kind of attribute specified}}
  %o = attn.attention %q, %q, %q scale "half" : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @missing_result_type(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{expected '->'}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
  return
}

// -----

// expected-note @+1 {{prior use here}}
func.func @operand_type_mismatch(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{use of value '%q' expects different type than prior uses: 'tensor<1x1x4x8xf16>' vs 'tensor<1x1x4x8xf32>'}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf16>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @result_count(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{operation defines 1 results but was provided 2 to bind}}
  %o, %lse = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// attn.attention_grad
//===----------------------------------------------------------------------===//

// -----

func.func @grad_output_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected output to have rank 4, got rank 3 ('tensor<4x8x16xf32>')}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_output_seq(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x9x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected output sequence length (9) to match query sequence length (8)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x9x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_value_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xbf16>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected value element type ('bf16') to match query element type ('f32')}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xbf16>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xbf16>
  return
}

// -----

func.func @grad_value_seq(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x13x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected value sequence length (13) to match key sequence length (12)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x13x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x13x16xf32>
  return
}

// -----

func.func @grad_group(%q: tensor<1x4x8x16xf32>, %k: tensor<1x3x12x16xf32>, %v: tensor<1x3x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected query heads (4) to be a multiple of key heads (3)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x3x12x16xf32>, tensor<1x3x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x3x12x16xf32>, tensor<1x3x12x16xf32>
  return
}

// -----

func.func @grad_grad_output_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf16>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_output element type ('f16') to match output element type ('f32')}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf16>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_grad_output_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_output to have rank 4, got rank 3 ('tensor<4x8x16xf32>')}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_grad_output_batch(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_output batch (2) to match output batch (1)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_grad_output_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x2x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_output heads (2) to match output heads (4)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_grad_output_seq(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x7x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_output sequence length (7) to match output sequence length (8)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x7x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_grad_output_head_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x32xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_output head dim (32) to match output head dim (16)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x32xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_lse_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8x1xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected lse to have rank 3, got rank 4 ('tensor<1x4x8x1xf32>')}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x1xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_lse_batch(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<3x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected lse batch (3) to match query batch (1)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<3x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_lse_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected lse heads (2) to match query heads (4)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x2x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_lse_seq(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x12xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected lse sequence length (12) to match query sequence length (8)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x12xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_grad_query_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_query element type ('bf16') to match query element type ('f32')}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xbf16>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_grad_query_seq(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_query sequence length (12) to match query sequence length (8)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_grad_key_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_key to have rank 4, got rank 3 ('tensor<2x12x16xf32>')}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_grad_key_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_key heads (4) to match key heads (2)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x4x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_grad_key_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_key element type ('f16') to match key element type ('f32')}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf16>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_grad_value_head_dim(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_value head dim (8) to match value head dim (16)}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x8xf32>
  return
}

// -----

func.func @grad_grad_value_elt(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected grad_value element type ('bf16') to match value element type ('f32')}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xbf16>
  return
}

// -----

func.func @grad_scale(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op expected a positive scale, got -1.000000e+00}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse scale -1.0
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

func.func @grad_lse_f32(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x12x16xf32>, %v: tensor<1x2x12x16xf32>, %o: tensor<1x4x8x16xf32>, %do: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf16>) {
  // expected-error @+1 {{'attn.attention_grad' op operand #5 must be ranked tensor of 32-bit float values, but got 'tensor<1x4x8xf16>'}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf16>
      -> tensor<1x4x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>
  return
}

// -----

// score_mod holds what every back end compiles (isScoreModOp): arith, and
// math.tanh/exp/exp2/absf on f32. Calls, loops, memory, printf and the
// other math ops are refused here, not by one back end later.
func.func private @helper(f32) -> f32

func.func @score_mod_call(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected score_mod to hold only arith ops and math.tanh, math.exp, math.exp2, math.absf on f32, got 'func.call'}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-note @+1 {{this op}}
    %r = func.call @helper(%s) : (f32) -> f32
    attn.yield %r : f32
  }
  return
}

// -----

func.func @score_mod_while(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected score_mod to hold only arith ops and math.tanh, math.exp, math.exp2, math.absf on f32, got 'scf.while'}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-note @+1 {{this op}}
    %r = scf.while (%x = %s) : (f32) -> f32 {
      %c = arith.cmpf olt, %x, %x : f32
      scf.condition(%c) %x : f32
    } do {
    ^bb0(%y: f32):
      scf.yield %y : f32
    }
    attn.yield %r : f32
  }
  return
}

// -----

func.func @score_mod_alloc(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected score_mod to hold only arith ops and math.tanh, math.exp, math.exp2, math.absf on f32, got 'memref.alloca'}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-note @+1 {{this op}}
    %m = memref.alloca() : memref<1xf32>
    attn.yield %s : f32
  }
  return
}

// -----

func.func @score_mod_printf(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected score_mod to hold only arith ops and math.tanh, math.exp, math.exp2, math.absf on f32, got 'gpu.printf'}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-note @+1 {{this op}}
    gpu.printf "%f", %s : f32
    attn.yield %s : f32
  }
  return
}

// -----

// A math op without a PTX form (the GPU kernels would need libdevice).
func.func @score_mod_sin(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected score_mod to hold only arith ops and math.tanh, math.exp, math.exp2, math.absf on f32, got 'math.sin'}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-note @+1 {{this op}}
    %r = math.sin %s : f32
    attn.yield %r : f32
  }
  return
}

// -----

func.func @score_mod_tanh_f64(%q: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.attention' op expected score_mod to hold only arith ops and math.tanh, math.exp, math.exp2, math.absf on f32, got 'math.tanh'}}
  %o = attn.attention %q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.extf %s : f32 to f64
    // expected-note @+1 {{this op}}
    %t = math.tanh %d : f64
    %r = arith.truncf %t : f64 to f32
    attn.yield %r : f32
  }
  return
}

// -----

func.func @zero_query_heads(%q: tensor<1x0x8x16xf32>, %k: tensor<1x2x12x16xf32>) {
  // expected-error @+1 {{'attn.attention' op expected query heads to be positive, got 0}}
  %o = attn.attention %q, %k, %k
      : tensor<1x0x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32> -> tensor<1x0x8x16xf32>
  return
}
