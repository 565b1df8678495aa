// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round-trips of attn.attention and of the tile-level ops, in the pretty and
// the generic form.

// CHECK-LABEL: func.func @attention_default
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x128x64xf16>, %[[K:.+]]: tensor<2x4x128x64xf16>, %[[V:.+]]: tensor<2x4x128x64xf16>)
// CHECK: %[[O:[^ ]+]] = attn.attention %[[Q]], %[[K]], %[[V]] :
// CHECK-SAME: tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16> -> tensor<2x4x128x64xf16>
// CHECK: return %[[O]]
// GENERIC-LABEL: sym_name = "attention_default"
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{mask = #attn.mask<none>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>}>
func.func @attention_default(%q: tensor<2x4x128x64xf16>, %k: tensor<2x4x128x64xf16>,
                             %v: tensor<2x4x128x64xf16>) -> tensor<2x4x128x64xf16> {
  %o = attn.attention %q, %k, %v
      : tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>
        -> tensor<2x4x128x64xf16>
  return %o : tensor<2x4x128x64xf16>
}

// CHECK-LABEL: func.func @attention_causal_lse_bf16
// CHECK: %[[O:[^,]+]], %[[LSE:[^ ]+]] = attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask <causal> scale 1.250000e-01 :
// CHECK-SAME: -> tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>
// CHECK: return %[[O]], %[[LSE]]
// GENERIC-LABEL: sym_name = "attention_causal_lse_bf16"
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{mask = #attn.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, scale = 1.250000e-01 : f32}>
// GENERIC: -> (tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>)
func.func @attention_causal_lse_bf16(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x256x64xbf16>,
                                     %v: tensor<2x2x256x64xbf16>)
    -> (tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal> scale 0.125
      : tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>
        -> tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>
  return %o, %lse : tensor<2x8x128x64xbf16>, tensor<2x8x128xf32>
}

// An explicit `mask <none>` is the default and is not printed back.
// CHECK-LABEL: func.func @attention_mask_none_f32
// CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} scale 2.500000e-01 : tensor<1x1x7x16xf32>
// GENERIC-LABEL: sym_name = "attention_mask_none_f32"
// GENERIC: <{mask = #attn.mask<none>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, scale = 2.500000e-01 : f32}>
func.func @attention_mask_none_f32(%q: tensor<1x1x7x16xf32>, %k: tensor<1x1x9x16xf32>,
                                   %v: tensor<1x1x9x16xf32>) -> tensor<1x1x7x16xf32> {
  %o = attn.attention %q, %k, %v mask <none> scale 0.25
      : tensor<1x1x7x16xf32>, tensor<1x1x9x16xf32>, tensor<1x1x9x16xf32>
        -> tensor<1x1x7x16xf32>
  return %o : tensor<1x1x7x16xf32>
}

// Multi-query attention (Hkv = 1) with a value head dim that differs from
// the query/key head dim.
// CHECK-LABEL: func.func @attention_mqa_dv
// CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask <causal> :
// CHECK-SAME: tensor<1x8x32x128xf32>, tensor<1x1x48x128xf32>, tensor<1x1x48x32xf32> -> tensor<1x8x32x32xf32>, tensor<1x8x32xf32>
func.func @attention_mqa_dv(%q: tensor<1x8x32x128xf32>, %k: tensor<1x1x48x128xf32>,
                            %v: tensor<1x1x48x32xf32>)
    -> (tensor<1x8x32x32xf32>, tensor<1x8x32xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal>
      : tensor<1x8x32x128xf32>, tensor<1x1x48x128xf32>, tensor<1x1x48x32xf32>
        -> tensor<1x8x32x32xf32>, tensor<1x8x32xf32>
  return %o, %lse : tensor<1x8x32x32xf32>, tensor<1x8x32xf32>
}

// Dynamic batch and sequence lengths; head counts and head dims static.
// CHECK-LABEL: func.func @attention_dynamic
// CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask <causal> :
// CHECK-SAME: tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>
// GENERIC-LABEL: sym_name = "attention_dynamic"
// GENERIC: (tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>) -> (tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>)
func.func @attention_dynamic(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
                             %v: tensor<?x2x?x64xbf16>)
    -> (tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal>
      : tensor<?x4x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
        -> tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>
  return %o, %lse : tensor<?x4x?x64xbf16>, tensor<?x4x?xf32>
}

// Mixed static and dynamic sequence lengths are compatible.
// CHECK-LABEL: func.func @attention_mixed_static_dynamic
// CHECK: attn.attention {{.*}} : tensor<1x2x?x32xf16>, tensor<1x2x40x32xf16>, tensor<1x2x?x32xf16> -> tensor<1x2x10x32xf16>
func.func @attention_mixed_static_dynamic(%q: tensor<1x2x?x32xf16>, %k: tensor<1x2x40x32xf16>,
                                          %v: tensor<1x2x?x32xf16>) -> tensor<1x2x10x32xf16> {
  %o = attn.attention %q, %k, %v
      : tensor<1x2x?x32xf16>, tensor<1x2x40x32xf16>, tensor<1x2x?x32xf16>
        -> tensor<1x2x10x32xf16>
  return %o : tensor<1x2x10x32xf16>
}

// CHECK-LABEL: func.func @online_block
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<16x64xbf16>, %[[K:[^:]+]]: tensor<32x64xbf16>, %[[V:[^:]+]]: tensor<32x64xbf16>, %[[ACC:[^:]+]]: tensor<16x64xf32>, %[[M:[^:]+]]: tensor<16xf32>, %[[L:[^:]+]]: tensor<16xf32>, %[[Q0:[^:]+]]: index, %[[KV0:[^:]+]]: index, %[[NQ:[^:]+]]: index, %[[NK:[^:]+]]: index)
// CHECK: %[[A:[^,]+]], %[[MX:[^,]+]], %[[S:[^ ]+]] = attn.online_block %[[Q]], %[[K]], %[[V]] into %[[ACC]], %[[M]], %[[L]] at(%[[Q0]], %[[KV0]]) of(%[[NQ]], %[[NK]]) mask <causal> scale 1.250000e-01 :
// CHECK-SAME: tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
// CHECK: return %[[A]], %[[MX]], %[[S]]
// GENERIC-LABEL: sym_name = "online_block"
// GENERIC: "attn.online_block"({{.*}}) <{mask = #attn.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, scale = 1.250000e-01 : f32}>
// GENERIC: -> (tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>)
func.func @online_block(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>,
                        %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>,
                        %q0: index, %kv0: index, %nq: index, %nk: index)
    -> (tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>) {
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%q0, %kv0) of (%nq, %nk)
      mask <causal> scale 0.125
      : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x64xf32>,
        tensor<16xf32>, tensor<16xf32>
  return %a, %mx, %s : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
}

// CHECK-LABEL: func.func @online_block_no_mask
// CHECK: attn.online_block {{.*}} of(%{{[^,]+}}, %{{[^)]+}}) scale 2.000000e+00 : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>
// GENERIC-LABEL: sym_name = "online_block_no_mask"
// GENERIC: <{mask = #attn.mask<none>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, scale = 2.000000e+00 : f32}>
func.func @online_block_no_mask(%q: tensor<16x32xf32>, %k: tensor<16x32xf32>, %v: tensor<16x8xf32>,
                                %acc: tensor<16x8xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>,
                                %i: index) -> tensor<16x8xf32> {
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 2.0
      : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x8xf32>, tensor<16x8xf32>,
        tensor<16xf32>, tensor<16xf32>
  return %a : tensor<16x8xf32>
}

// CHECK-LABEL: func.func @online_finalize
// CHECK-SAME: (%[[ACC:[^:]+]]: tensor<16x64xf32>, %[[M:[^:]+]]: tensor<16xf32>, %[[L:[^:]+]]: tensor<16xf32>)
// CHECK: %[[O:[^,]+]], %[[LSE:[^ ]+]] = attn.online_finalize %[[ACC]], %[[M]], %[[L]] : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16x64xf16>, tensor<16xf32>
// CHECK: return %[[O]], %[[LSE]]
// GENERIC-LABEL: sym_name = "online_finalize"
// GENERIC: "attn.online_finalize"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16x64xf16>, tensor<16xf32>)
func.func @online_finalize(%acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>)
    -> (tensor<16x64xf16>, tensor<16xf32>) {
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16x64xf16>, tensor<16xf32>
  return %o, %lse : tensor<16x64xf16>, tensor<16xf32>
}

// CHECK-LABEL: func.func @attention_grad_gqa_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x128x64xbf16>, %[[K:[^:]+]]: tensor<2x2x256x64xbf16>, %[[V:[^:]+]]: tensor<2x2x256x32xbf16>, %[[O:[^:]+]]: tensor<2x8x128x32xbf16>, %[[DO:[^:]+]]: tensor<2x8x128x32xbf16>, %[[LSE:[^:]+]]: tensor<2x8x128xf32>)
// CHECK: %[[DQ:[^ ,]+]], %[[DK:[^ ,]+]], %[[DV:[^ ,]+]] = attn.attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[DO]], %[[LSE]] mask <causal> scale 1.250000e-01 :
// CHECK-SAME: tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128xf32>
// CHECK-SAME: -> tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x32xbf16>
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
// GENERIC-LABEL: sym_name = "attention_grad_gqa_causal"
// GENERIC: "attn.attention_grad"(%{{.*}}) <{mask = #attn.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>, scale = 1.250000e-01 : f32}>
func.func @attention_grad_gqa_causal(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x256x64xbf16>,
    %v: tensor<2x2x256x32xbf16>, %o: tensor<2x8x128x32xbf16>, %do: tensor<2x8x128x32xbf16>,
    %lse: tensor<2x8x128xf32>)
    -> (tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x32xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mask <causal> scale 0.125
      : tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x32xbf16>,
        tensor<2x8x128x32xbf16>, tensor<2x8x128x32xbf16>, tensor<2x8x128xf32>
      -> tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x32xbf16>
  return %dq, %dk, %dv : tensor<2x8x128x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x32xbf16>
}

// The softcap's gradient.
// CHECK-LABEL: func.func @attention_grad_softcap
// CHECK: attn.attention_grad %{{.*}} mask <sliding> window [64, 0] scale 1.250000e-01 softcap 3.000000e+01 :
// GENERIC-LABEL: sym_name = "attention_grad_softcap"
// GENERIC: "attn.attention_grad"(%{{.*}}) <{mask = #attn.mask<sliding>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0>, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32, window = array<i64: 64, 0>}>
func.func @attention_grad_softcap(%q: tensor<1x2x16x64xbf16>, %lse: tensor<1x2x16xf32>)
    -> tensor<1x2x16x64xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      mask <sliding> window [64, 0] scale 0.125 softcap 30.0
      : tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>,
        tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16xf32>
      -> tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x64xbf16>
  return %dq : tensor<1x2x16x64xbf16>
}

// CHECK-LABEL: func.func @attention_grad_dynamic
// CHECK: attn.attention_grad %{{.*}} : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?xf32> -> tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>
func.func @attention_grad_dynamic(%q: tensor<?x4x?x16xf32>, %k: tensor<?x1x?x16xf32>,
    %v: tensor<?x1x?x16xf32>, %o: tensor<?x4x?x16xf32>, %do: tensor<?x4x?x16xf32>,
    %lse: tensor<?x4x?xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      : tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>,
        tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?xf32>
      -> tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>
  return
}

// Mask kinds, windows and score modification.
// CHECK-LABEL: func.func @attention_masks
// CHECK: attn.attention %{{.+}} mask <causal_top_left> :
// CHECK: attn.attention %{{.+}} mask <sliding> window [128, 0] :
// CHECK: attn.attention %{{.+}} mask <sliding_top_left> window [-1, 16] softcap 3.000000e+01 :
// GENERIC-LABEL: sym_name = "attention_masks"
// GENERIC: <{mask = #attn.mask<causal_top_left>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>}>
// GENERIC: <{mask = #attn.mask<sliding>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, window = array<i64: 128, 0>}>
// GENERIC: <{mask = #attn.mask<sliding_top_left>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, softcap = 3.000000e+01 : f32, window = array<i64: -1, 16>}>
func.func @attention_masks(%q: tensor<1x2x64x32xbf16>) {
  %a = attn.attention %q, %q, %q mask <causal_top_left>
      : tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16> -> tensor<1x2x64x32xbf16>
  %b = attn.attention %q, %q, %q mask <sliding> window [128, 0]
      : tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16> -> tensor<1x2x64x32xbf16>
  %c = attn.attention %q, %q, %q mask <sliding_top_left> window [-1, 16] softcap 30.0
      : tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16> -> tensor<1x2x64x32xbf16>
  return
}

// CHECK-LABEL: func.func @attention_score_mod
// CHECK: attn.attention %{{.+}} mask <causal> : tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16> -> tensor<1x2x64x32xf16> score_mod {
// CHECK-NEXT: ^bb0(%[[S:[^:]+]]: f32, %{{[^:]+}}: index, %[[H:[^:]+]]: index, %[[I:[^:]+]]: index, %[[J:[^:]+]]: index):
// CHECK: attn.yield %{{.+}} : f32
// GENERIC-LABEL: sym_name = "attention_score_mod"
// GENERIC: "attn.yield"(%{{.+}}) : (f32) -> ()
func.func @attention_score_mod(%q: tensor<1x2x64x32xf16>) -> tensor<1x2x64x32xf16> {
  %o = attn.attention %q, %q, %q mask <causal>
      : tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16> -> tensor<1x2x64x32xf16>
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // A relative-position bias: s + 0.01 * (j - i).
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %d = arith.subi %jj, %ii : i64
    %df = arith.sitofp %d : i64 to f32
    %c = arith.constant 0.01 : f32
    %bias = arith.mulf %df, %c : f32
    %y = arith.addf %s, %bias : f32
    attn.yield %y : f32
  }
  return %o : tensor<1x2x64x32xf16>
}

// CHECK-LABEL: func.func @attention_grad_sliding
// CHECK: attn.attention_grad %{{.+}} mask <sliding_top_left> window [8, 8] :
func.func @attention_grad_sliding(%q: tensor<1x1x16x8xf32>, %lse: tensor<1x1x16xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse mask <sliding_top_left> window [8, 8]
      : tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>,
        tensor<1x1x16x8xf32>, tensor<1x1x16xf32> -> tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>
  return
}

// CHECK-LABEL: func.func @online_block_score_mod
// CHECK: attn.online_block %{{.+}} at(%{{.+}}, %{{.+}}) of(%{{.+}}, %{{.+}}) head(%{{.+}}, %{{.+}}) mask <sliding> window [4, 0] scale 1.000000e+00 : {{.+}} score_mod {
func.func @online_block_score_mod(%q: tensor<16x8xf32>, %acc: tensor<16x8xf32>, %m: tensor<16xf32>, %i: index) {
  %a, %mx, %s = attn.online_block %q, %q, %q into %acc, %m, %m at (%i, %i) of (%i, %i) head (%i, %i)
      mask <sliding> window [4, 0] scale 1.0
      : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32> score_mod {
  ^bb0(%sc: f32, %b: index, %h: index, %qi: index, %kj: index):
    attn.yield %sc : f32
  }
  return
}

// CHECK-LABEL: func.func @attention_varlen
// CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} cu_seqlens(%{{.+}}, %{{.+}}) : tensor<4xi32>, tensor<4xi32> max [16, 24] mask <causal> :
// CHECK-SAME: tensor<40x8x64xbf16>, tensor<50x2x64xbf16>, tensor<50x2x64xbf16> -> tensor<40x8x64xbf16>, tensor<8x40xf32>
// GENERIC-LABEL: sym_name = "attention_varlen"
// GENERIC: max_seqlen = array<i64: 16, 24>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 0, 0, 0, 0>
func.func @attention_varlen(%q: tensor<40x8x64xbf16>, %k: tensor<50x2x64xbf16>,
                            %v: tensor<50x2x64xbf16>, %cq: tensor<4xi32>,
                            %ck: tensor<4xi32>) -> (tensor<40x8x64xbf16>, tensor<8x40xf32>) {
  %o, %lse = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<4xi32>, tensor<4xi32>
      max [16, 24] mask <causal>
      : tensor<40x8x64xbf16>, tensor<50x2x64xbf16>, tensor<50x2x64xbf16>
        -> tensor<40x8x64xbf16>, tensor<8x40xf32>
  return %o, %lse : tensor<40x8x64xbf16>, tensor<8x40xf32>
}

// CHECK-LABEL: func.func @attention_bias
// CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} bias %{{.+}} : tensor<1x8x128x256xf16> mask <causal> :
// GENERIC-LABEL: sym_name = "attention_bias"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0>
func.func @attention_bias(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x256x64xf16>,
                          %v: tensor<2x2x256x64xf16>, %b: tensor<1x8x128x256xf16>)
    -> tensor<2x8x128x64xf16> {
  %o = attn.attention %q, %k, %v bias %b : tensor<1x8x128x256xf16> mask <causal>
      : tensor<2x8x128x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf16>
        -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// The scale as a run-time f32 operand (one compiled module for every
// scale): attn.attention, attn.attention_grad and attn.online_block.
// CHECK-LABEL: func.func @runtime_scale
// CHECK-SAME: %[[S:[^:]+]]: f32
// CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask <causal> scale(%[[S]]) :
// CHECK: attn.attention_grad %{{.+}} mask <causal> scale(%[[S]]) :
// CHECK: attn.online_block %{{.+}} of(%{{[^,]+}}, %{{[^)]+}}) scale(%[[S]]) :
// GENERIC-LABEL: sym_name = "runtime_scale"
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{mask = #attn.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 1>}>
// GENERIC: "attn.attention_grad"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{mask = #attn.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 1>}>
// GENERIC: "attn.online_block"({{.*}}) <{mask = #attn.mask<none>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>}>
func.func @runtime_scale(%q: tensor<1x2x16x8xf32>, %do: tensor<1x2x16x8xf32>, %s: f32,
                         %t: tensor<16x8xf32>, %m: tensor<16xf32>, %i: index) {
  %o, %lse = attn.attention %q, %q, %q mask <causal> scale(%s)
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
        -> tensor<1x2x16x8xf32>, tensor<1x2x16xf32>
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %o, %do, %lse mask <causal> scale(%s)
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>,
        tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16xf32>
      -> tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
  %a, %mx, %l = attn.online_block %t, %t, %t into %t, %m, %m at (%i, %i) of (%i, %i) scale(%s)
      : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

// key_range: per-batch key padding, on the forward and its gradient.
// CHECK-LABEL: func.func @key_range
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} key_range(%[[S:[^ ,]+]], %[[E:[^ ,]+]]) : tensor<2xi32>, tensor<2xi32> mask <causal>
// CHECK: attn.attention_grad %{{.*}} key_range(%[[S]], %[[E]]) : tensor<2xi32>, tensor<2xi32> mask <causal>
// GENERIC-LABEL: sym_name = "key_range"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 0, 0>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 0, 0>
func.func @key_range(%q: tensor<2x4x1x64xbf16>, %k: tensor<2x2x77x64xbf16>,
                     %v: tensor<2x2x77x64xbf16>, %s: tensor<2xi32>,
                     %e: tensor<2xi32>, %do: tensor<2x4x1x64xbf16>)
    -> (tensor<2x4x1x64xbf16>, tensor<2x4x1x64xbf16>, tensor<2x2x77x64xbf16>, tensor<2x2x77x64xbf16>) {
  %o, %lse = attn.attention %q, %k, %v key_range(%s, %e) : tensor<2xi32>, tensor<2xi32>
      mask <causal>
      : tensor<2x4x1x64xbf16>, tensor<2x2x77x64xbf16>, tensor<2x2x77x64xbf16>
        -> tensor<2x4x1x64xbf16>, tensor<2x4x1xf32>
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      key_range(%s, %e) : tensor<2xi32>, tensor<2xi32> mask <causal>
      : tensor<2x4x1x64xbf16>, tensor<2x2x77x64xbf16>, tensor<2x2x77x64xbf16>,
        tensor<2x4x1x64xbf16>, tensor<2x4x1x64xbf16>, tensor<2x4x1xf32>
      -> tensor<2x4x1x64xbf16>, tensor<2x2x77x64xbf16>, tensor<2x2x77x64xbf16>
  return %o, %dq, %dk, %dv : tensor<2x4x1x64xbf16>, tensor<2x4x1x64xbf16>, tensor<2x2x77x64xbf16>, tensor<2x2x77x64xbf16>
}
