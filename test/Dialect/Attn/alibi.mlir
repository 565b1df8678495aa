// RUN: attn-opt %s -split-input-file | attn-opt -split-input-file | FileCheck %s
// RUN: attn-opt %s -split-input-file --mlir-print-op-generic | attn-opt -split-input-file | FileCheck %s
// RUN: attn-opt %s -split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// ALiBi's run-time slopes: the alibi_slopes operand of attn.attention and
// attn.attention_grad ([Hq] or [B, Hq], after key_range) and
// attn.online_block's alibi(%slope), in the pretty and the generic form.

// [Hq]: one row of slopes for every batch entry, with softcap and a mask.
// CHECK-LABEL: func.func @alibi_heads
// CHECK-SAME: %[[S:[^:]+]]: tensor<8xf32>
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%[[S]] : tensor<8xf32>) mask <causal> scale 1.250000e-01 softcap 3.000000e+01 :
// CHECK-SAME: tensor<2x8x64x64xbf16>, tensor<2x2x96x64xbf16>, tensor<2x2x96x64xbf16> -> tensor<2x8x64x64xbf16>, tensor<2x8x64xf32>
// CHECK: attn.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%[[S]] : tensor<8xf32>) mask <causal> scale 1.250000e-01 softcap 3.000000e+01 :
// GENERIC-LABEL: sym_name = "alibi_heads"
// GENERIC: "attn.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{mask = #attn.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 0>, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32}>
// GENERIC-NEXT: }) : (tensor<2x8x64x64xbf16>, tensor<2x2x96x64xbf16>, tensor<2x2x96x64xbf16>, tensor<8xf32>)
// GENERIC: "attn.attention_grad"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{mask = #attn.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 1, 0>, scale = 1.250000e-01 : f32, softcap = 3.000000e+01 : f32}>
// GENERIC-SAME: tensor<2x8x64xf32>, tensor<8xf32>)
func.func @alibi_heads(%q: tensor<2x8x64x64xbf16>, %k: tensor<2x2x96x64xbf16>,
                       %v: tensor<2x2x96x64xbf16>, %s: tensor<8xf32>,
                       %do: tensor<2x8x64x64xbf16>)
    -> (tensor<2x8x64x64xbf16>, tensor<2x8x64x64xbf16>, tensor<2x2x96x64xbf16>, tensor<2x2x96x64xbf16>) {
  %o, %lse = attn.attention %q, %k, %v alibi_slopes(%s : tensor<8xf32>)
      mask <causal> scale 0.125 softcap 30.0
      : tensor<2x8x64x64xbf16>, tensor<2x2x96x64xbf16>, tensor<2x2x96x64xbf16>
        -> tensor<2x8x64x64xbf16>, tensor<2x8x64xf32>
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      alibi_slopes(%s : tensor<8xf32>) mask <causal> scale 0.125 softcap 30.0
      : tensor<2x8x64x64xbf16>, tensor<2x2x96x64xbf16>, tensor<2x2x96x64xbf16>,
        tensor<2x8x64x64xbf16>, tensor<2x8x64x64xbf16>, tensor<2x8x64xf32>
      -> tensor<2x8x64x64xbf16>, tensor<2x2x96x64xbf16>, tensor<2x2x96x64xbf16>
  return %o, %dq, %dk, %dv : tensor<2x8x64x64xbf16>, tensor<2x8x64x64xbf16>, tensor<2x2x96x64xbf16>, tensor<2x2x96x64xbf16>
}

// -----

// [B, Hq] after key_range, a top-left window and a run-time scale; dynamic
// batch.
// CHECK-LABEL: func.func @alibi_batch_key_range
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} key_range(%[[KS:[^ ,]+]], %[[KE:[^ ,]+]]) : tensor<?xi32>, tensor<?xi32> alibi_slopes(%[[S:[^ ]+]] : tensor<?x4xf32>) mask <sliding_top_left> window [16, 4] scale(%[[C:[^)]+]]) :
// CHECK: attn.attention_grad {{.*}} key_range(%[[KS]], %[[KE]]) : tensor<?xi32>, tensor<?xi32> alibi_slopes(%[[S]] : tensor<?x4xf32>) mask <sliding_top_left> window [16, 4] scale(%[[C]]) :
// GENERIC-LABEL: sym_name = "alibi_batch_key_range"
// GENERIC: "attn.attention"({{.*}}) <{mask = #attn.mask<sliding_top_left>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 1, 1, 1>, window = array<i64: 16, 4>}>
// GENERIC-NEXT: }) : ({{.*}}, tensor<?xi32>, tensor<?xi32>, tensor<?x4xf32>, f32)
// GENERIC: "attn.attention_grad"({{.*}}) <{mask = #attn.mask<sliding_top_left>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1>, window = array<i64: 16, 4>}>
// GENERIC-SAME: tensor<?xi32>, tensor<?xi32>, tensor<?x4xf32>, f32)
func.func @alibi_batch_key_range(%q: tensor<?x4x33x32xf32>, %k: tensor<?x4x50x32xf32>,
                                 %v: tensor<?x4x50x32xf32>, %ks: tensor<?xi32>,
                                 %ke: tensor<?xi32>, %s: tensor<?x4xf32>, %c: f32)
    -> (tensor<?x4x33x32xf32>, tensor<?x4x33x32xf32>) {
  %o, %lse = attn.attention %q, %k, %v key_range(%ks, %ke) : tensor<?xi32>, tensor<?xi32>
      alibi_slopes(%s : tensor<?x4xf32>) mask <sliding_top_left> window [16, 4] scale(%c)
      : tensor<?x4x33x32xf32>, tensor<?x4x50x32xf32>, tensor<?x4x50x32xf32>
        -> tensor<?x4x33x32xf32>, tensor<?x4x33xf32>
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %o, %lse
      key_range(%ks, %ke) : tensor<?xi32>, tensor<?xi32>
      alibi_slopes(%s : tensor<?x4xf32>) mask <sliding_top_left> window [16, 4] scale(%c)
      : tensor<?x4x33x32xf32>, tensor<?x4x50x32xf32>, tensor<?x4x50x32xf32>,
        tensor<?x4x33x32xf32>, tensor<?x4x33x32xf32>, tensor<?x4x33xf32>
      -> tensor<?x4x33x32xf32>, tensor<?x4x50x32xf32>, tensor<?x4x50x32xf32>
  return %o, %dq : tensor<?x4x33x32xf32>, tensor<?x4x33x32xf32>
}

// -----

// Varlen: [B, Hq] with B the number of sequences (cu_seqlens' size - 1),
// printed before `max`; and the [Hq] form with a score_mod region.
// CHECK-LABEL: func.func @alibi_varlen
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} cu_seqlens(%{{[^ ,]+}}, %{{[^ )]+}}) : tensor<4xi32>, tensor<4xi32> alibi_slopes(%{{[^ ]+}} : tensor<3x4xf32>) max [16, 24] mask <causal> :
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%{{[^ ]+}} : tensor<4xf32>) :
// CHECK-SAME: score_mod
// CHECK: math.tanh
// GENERIC-LABEL: sym_name = "alibi_varlen"
// GENERIC: max_seqlen = array<i64: 16, 24>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 0, 0, 1, 0>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 0>
func.func @alibi_varlen(%q: tensor<40x4x16xf32>, %k: tensor<60x2x16xf32>,
                        %v: tensor<60x2x16xf32>, %cq: tensor<4xi32>,
                        %ck: tensor<4xi32>, %s: tensor<3x4xf32>,
                        %q4: tensor<1x4x8x16xf32>, %k4: tensor<1x2x8x16xf32>,
                        %h: tensor<4xf32>)
    -> (tensor<40x4x16xf32>, tensor<1x4x8x16xf32>) {
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<4xi32>, tensor<4xi32>
      alibi_slopes(%s : tensor<3x4xf32>) max [16, 24] mask <causal>
      : tensor<40x4x16xf32>, tensor<60x2x16xf32>, tensor<60x2x16xf32> -> tensor<40x4x16xf32>
  %o4 = attn.attention %q4, %k4, %k4 alibi_slopes(%h : tensor<4xf32>)
      : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x8x16xf32>
      score_mod {
    ^bb0(%x: f32, %b: index, %hd: index, %i: index, %j: index):
      %t = math.tanh %x : f32
      attn.yield %t : f32
  }
  return %o, %o4 : tensor<40x4x16xf32>, tensor<1x4x8x16xf32>
}

// -----

// attn.online_block's alibi(%slope) (f32), after keys(...), with the tile's
// (batch, head).
// CHECK-LABEL: func.func @online_block_alibi
// CHECK-SAME: %[[SL:[^:]+]]: f32
// CHECK: attn.online_block %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}}, %{{.*}} at(%{{[^ ,]+}}, %{{[^ )]+}}) of(%{{[^ ,]+}}, %{{[^ )]+}}) head(%{{[^ ,]+}}, %{{[^ )]+}}) keys(%{{[^ ,]+}}, %{{[^ )]+}}) alibi(%[[SL]]) mask <causal> scale 1.250000e-01 :
// CHECK: attn.online_block {{.*}} of(%{{[^ ,]+}}, %{{[^ )]+}}) alibi(%[[SL]]) scale 2.000000e+00 : tensor<16x8xf32>
// GENERIC-LABEL: sym_name = "online_block_alibi"
// GENERIC: "attn.online_block"({{.*}}) <{mask = #attn.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1>, scale = 1.250000e-01 : f32}>
// GENERIC: "attn.online_block"({{.*}}) <{mask = #attn.mask<none>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1>, scale = 2.000000e+00 : f32}>
func.func @online_block_alibi(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>,
                              %v: tensor<32x64xbf16>, %acc: tensor<16x64xf32>,
                              %m: tensor<16xf32>, %l: tensor<16xf32>,
                              %i: index, %slope: f32, %t: tensor<16x8xf32>)
    -> (tensor<16x64xf32>, tensor<16x8xf32>) {
  %a, %mx, %sm = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i)
      head(%i, %i) keys(%i, %i) alibi(%slope) mask <causal> scale 0.125
      : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>,
        tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  %a2, %mx2, %sm2 = attn.online_block %t, %t, %t into %t, %m, %l at (%i, %i) of (%i, %i)
      alibi(%slope) scale 2.0
      : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>
  return %a, %a2 : tensor<16x64xf32>, tensor<16x8xf32>
}
