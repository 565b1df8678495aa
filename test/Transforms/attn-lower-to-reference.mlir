// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-lower-to-reference --cse | FileCheck %s

// The reference semantics: S = Q K^T * scale in f32, the mask, a safe
// softmax (max, exp, sum), P V and one normalisation, LSE = max + log(sum).

// CHECK-DAG: #[[SQ:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[SK:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-DAG: #[[SS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[PVV:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d4, d3)>
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Grouped-query heads (4 query heads read 2 kv-heads: h floordiv 2), causal
// with Nq = 10 < Nk = 12, an explicit scale, bf16 in and out, LSE.

// CHECK-LABEL: func.func @causal_gqa_bf16
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x10x16xbf16>, %[[K:[^:]+]]: tensor<2x2x12x16xbf16>, %[[V:[^:]+]]: tensor<2x2x12x8xbf16>)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[S0:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<2x4x10x12xf32>)
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[SQ]], #[[SK]], #[[SS]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : tensor<2x4x10x16xbf16>, tensor<2x2x12x16xbf16>) outs(%[[S0]] : tensor<2x4x10x12xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf

// Scale, then the bottom-right causal mask: key j is visible from row i iff
// j <= i + (Nk - Nq).
// CHECK: %[[SCALE:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[NQ:.+]] = arith.constant 10 : index
// CHECK-DAG: %[[NK:.+]] = arith.constant 12 : index
// CHECK: %[[MASKED:.+]] = linalg.generic {indexing_maps = [#[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[S]] : tensor<2x4x10x12xf32>)
// CHECK: ^bb0(%[[SV:.+]]: f32):
// CHECK: %[[SC:.+]] = arith.mulf %[[SV]], %[[SCALE]] : f32
// CHECK: %[[I:.+]] = linalg.index 2 : index
// CHECK: %[[J:.+]] = linalg.index 3 : index
// CHECK: %[[SHIFT:.+]] = arith.subi %[[NK]], %[[NQ]] : index
// CHECK: %[[LIM:.+]] = arith.addi %[[I]], %[[SHIFT]] : index
// CHECK: %[[VIS:.+]] = arith.cmpi sle, %[[J]], %[[LIM]] : index
// CHECK: %[[SEL:.+]] = arith.select %[[VIS]], %[[SC]], %[[NINF]] : f32
// CHECK: linalg.yield %[[SEL]]

// Row max, P = exp(S - max) with fully masked rows shifted by 0, row sum.
// CHECK: %[[MAX0:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<2x4x10xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[MASKED]] : tensor<2x4x10x12xf32>) outs(%[[MAX0]] : tensor<2x4x10xf32>)
// CHECK: arith.maximumf
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[MAX]] : tensor<2x4x10xf32>) outs(%[[MASKED]] : tensor<2x4x10x12xf32>)
// CHECK: ^bb0(%[[MV:[^:]+]]: f32, %[[PV:[^:]+]]: f32):
// CHECK: %[[ISNINF:.+]] = arith.cmpf oeq, %[[MV]], %[[NINF]] : f32
// CHECK: %[[SAFE:.+]] = arith.select %[[ISNINF]], %[[ZERO]], %[[MV]] : f32
// CHECK: %[[D:.+]] = arith.subf %[[PV]], %[[SAFE]] : f32
// CHECK: math.exp %[[D]] : f32
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[P]] : tensor<2x4x10x12xf32>)
// CHECK: arith.addf

// P V through the same GQA head map, then O = acc / sum (0 where sum = 0).
// CHECK: %[[ACC:.+]] = linalg.generic {indexing_maps = [#[[SQ]], #[[PVV]], #[[SS]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]], %[[V]] : tensor<2x4x10x12xf32>, tensor<2x2x12x8xbf16>) outs(%{{.+}} : tensor<2x4x10x8xf32>)
// CHECK: %[[OINIT:.+]] = tensor.empty() : tensor<2x4x10x8xbf16>
// CHECK: %[[O:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[ROW]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[ACC]], %[[SUM]] : tensor<2x4x10x8xf32>, tensor<2x4x10xf32>) outs(%[[OINIT]] : tensor<2x4x10x8xbf16>)
// CHECK: ^bb0(%[[AV:[^:]+]]: f32, %[[LV:[^:]+]]: f32, %{{.+}}: bf16):
// CHECK: %[[EMPTY:.+]] = arith.cmpf oeq, %[[LV]], %[[ZERO]] : f32
// CHECK: %[[DIV:.+]] = arith.divf %[[AV]], %[[LV]] : f32
// CHECK: %[[OSEL:.+]] = arith.select %[[EMPTY]], %[[ZERO]], %[[DIV]] : f32
// CHECK: arith.truncf %[[OSEL]] : f32 to bf16

// LSE = max + log(sum).
// CHECK: %[[LSE:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[MAX]], %[[SUM]] : tensor<2x4x10xf32>, tensor<2x4x10xf32>)
// CHECK: ^bb0(%[[M2:[^:]+]]: f32, %[[L2:[^:]+]]: f32, %{{.+}}: f32):
// CHECK: %[[LOG:.+]] = math.log %[[L2]] : f32
// CHECK: arith.addf %[[M2]], %[[LOG]] : f32
// CHECK: return %[[O]], %[[LSE]]
func.func @causal_gqa_bf16(%q: tensor<2x4x10x16xbf16>, %k: tensor<2x2x12x16xbf16>, %v: tensor<2x2x12x8xbf16>)
    -> (tensor<2x4x10x8xbf16>, tensor<2x4x10xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal> scale 0.5
      : tensor<2x4x10x16xbf16>, tensor<2x2x12x16xbf16>, tensor<2x2x12x8xbf16>
        -> tensor<2x4x10x8xbf16>, tensor<2x4x10xf32>
  return %o, %lse : tensor<2x4x10x8xbf16>, tensor<2x4x10xf32>
}

// -----

// No mask: the mask generic only scales; the default scale is 1/sqrt(D) =
// 1/sqrt(64) = 0.125. Hq = Hkv: the kv-head map is the identity
// (h floordiv 1 folds to h). f32 needs no extension or truncation; no LSE.

// CHECK-LABEL: func.func @no_mask_default_scale_f32
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x3x5x64xf32>, tensor<1x3x7x64xf32>)
// CHECK-NOT: arith.extf
// CHECK: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[SV:.+]]: f32):
// CHECK-NEXT: %[[SC:.+]] = arith.mulf %[[SV]], %[[SCALE]] : f32
// CHECK-NEXT: linalg.yield %[[SC]] : f32
// CHECK: math.exp
// CHECK-NOT: arith.truncf
// CHECK-NOT: math.log
// CHECK: return %{{.+}} : tensor<1x3x5x32xf32>
func.func @no_mask_default_scale_f32(%q: tensor<1x3x5x64xf32>, %k: tensor<1x3x7x64xf32>,
                                     %v: tensor<1x3x7x32xf32>) -> tensor<1x3x5x32xf32> {
  %o = attn.attention %q, %k, %v
      : tensor<1x3x5x64xf32>, tensor<1x3x7x64xf32>, tensor<1x3x7x32xf32> -> tensor<1x3x5x32xf32>
  return %o : tensor<1x3x5x32xf32>
}

// -----

// Dynamic batch and sequence lengths: sizes and the causal shift come from
// tensor.dim.

// CHECK-LABEL: func.func @dynamic_causal_f16
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x2x?x32xf16>, %[[K:[^:]+]]: tensor<?x2x?x32xf16>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[Q]], %[[C0]] : tensor<?x2x?x32xf16>
// CHECK-DAG: %[[NQ:.+]] = tensor.dim %[[Q]], %[[C2]] : tensor<?x2x?x32xf16>
// CHECK-DAG: %[[NK:.+]] = tensor.dim %[[K]], %[[C2]] : tensor<?x2x?x32xf16>
// CHECK: tensor.empty(%[[B]], %[[NQ]], %[[NK]]) : tensor<?x2x?x?xf32>
// CHECK: %[[SHIFT:.+]] = arith.subi %[[NK]], %[[NQ]] : index
// CHECK: arith.cmpi sle
// CHECK: tensor.empty(%[[B]], %[[NQ]]) : tensor<?x2x?x32xf16>
// CHECK: return %{{.+}} : tensor<?x2x?x32xf16>
func.func @dynamic_causal_f16(%q: tensor<?x2x?x32xf16>, %k: tensor<?x2x?x32xf16>,
                              %v: tensor<?x2x?x32xf16>) -> tensor<?x2x?x32xf16> {
  %o = attn.attention %q, %k, %v mask <causal>
      : tensor<?x2x?x32xf16>, tensor<?x2x?x32xf16>, tensor<?x2x?x32xf16> -> tensor<?x2x?x32xf16>
  return %o : tensor<?x2x?x32xf16>
}

// -----

func.func @dynamic_heads(%q: tensor<1x?x16x64xf32>, %k: tensor<1x?x16x64xf32>,
                         %v: tensor<1x?x16x64xf32>) -> tensor<1x?x16x64xf32> {
  // expected-error @+1 {{'attn.attention' op could not be lowered to the reference form (dynamic head counts are not supported)}}
  %o = attn.attention %q, %k, %v
      : tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32> -> tensor<1x?x16x64xf32>
  return %o : tensor<1x?x16x64xf32>
}

// -----

// attn.attention_grad: P from the LSE (0 where masked or LSE = -inf), dP,
// Δ, dS, per-query-head dV and dK summed over the group (expand Hq into
// Hkv x G, reduce G), dQ; dQ and dK scaled once at the end.

// CHECK-LABEL: func.func @grad_gqa_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x20x16xf32>, %[[K:[^:]+]]: tensor<1x1x24x16xf32>, %[[V:[^:]+]]: tensor<1x1x24x16xf32>, %[[O:[^:]+]]: tensor<1x2x20x16xf32>, %[[DO:[^:]+]]: tensor<1x2x20x16xf32>, %[[LSE:[^:]+]]: tensor<1x2x20xf32>)
// CHECK: %[[S:.+]] = linalg.generic {{.*}} ins(%[[Q]], %[[K]] : {{.*}}) outs(%{{.+}} : tensor<1x2x20x24xf32>)
// CHECK: %[[P:.+]] = linalg.generic {{.*}} ins(%[[LSE]] : tensor<1x2x20xf32>) outs(%[[S]] : tensor<1x2x20x24xf32>)
// CHECK: math.exp
// CHECK: arith.cmpf one
// CHECK: arith.cmpi sle
// CHECK: arith.select
// CHECK: %[[DP:.+]] = linalg.generic {{.*}} ins(%[[DO]], %[[V]] : {{.*}}) outs(%{{.+}} : tensor<1x2x20x24xf32>)
// CHECK: %[[DELTA:.+]] = linalg.generic {{.*}} ins(%[[DO]], %[[O]] : {{.*}}) outs(%{{.+}} : tensor<1x2x20xf32>)
// CHECK: %[[DS:.+]] = linalg.generic {{.*}} ins(%[[P]], %[[DELTA]] : {{.*}}) outs(%[[DP]] : tensor<1x2x20x24xf32>)
// CHECK: %[[DVH:.+]] = linalg.generic {{.*}} ins(%[[P]], %[[DO]] : {{.*}}) outs(%{{.+}} : tensor<1x2x24x16xf32>)
// CHECK: %[[DVE:.+]] = tensor.expand_shape %[[DVH]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 1, 2, 24, 16]
// CHECK: %[[DV:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[DVE]] : tensor<1x1x2x24x16xf32>) outs(%{{.+}} : tensor<1x1x24x16xf32>)
// CHECK: %[[DKH:.+]] = linalg.generic {{.*}} ins(%[[DS]], %[[Q]] : {{.*}}) outs(%{{.+}} : tensor<1x2x24x16xf32>)
// CHECK: %[[DKE:.+]] = tensor.expand_shape %[[DKH]]
// CHECK: %[[DK:.+]] = linalg.generic {{.*}} ins(%[[DKE]] : tensor<1x1x2x24x16xf32>)
// CHECK: %[[DQ:.+]] = linalg.generic {{.*}} ins(%[[DS]], %[[K]] : {{.*}}) outs(%{{.+}} : tensor<1x2x20x16xf32>)
// CHECK: %[[DQS:.+]] = linalg.generic {{.*}} ins(%[[DQ]] : tensor<1x2x20x16xf32>)
// CHECK: arith.mulf
// CHECK: %[[DKS:.+]] = linalg.generic {{.*}} ins(%[[DK]] : tensor<1x1x24x16xf32>)
// CHECK: arith.mulf
// CHECK: %[[DVS:.+]] = linalg.generic {{.*}} ins(%[[DV]] : tensor<1x1x24x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.yield
// CHECK: return %[[DQS]], %[[DKS]], %[[DVS]]
func.func @grad_gqa_causal(%q: tensor<1x2x20x16xf32>, %k: tensor<1x1x24x16xf32>, %v: tensor<1x1x24x16xf32>,
                           %o: tensor<1x2x20x16xf32>, %do: tensor<1x2x20x16xf32>, %lse: tensor<1x2x20xf32>)
    -> (tensor<1x2x20x16xf32>, tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mask <causal> scale 0.25
      : tensor<1x2x20x16xf32>, tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32>,
        tensor<1x2x20x16xf32>, tensor<1x2x20x16xf32>, tensor<1x2x20xf32>
      -> tensor<1x2x20x16xf32>, tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32>
  return %dq, %dk, %dv : tensor<1x2x20x16xf32>, tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32>
}

// -----

// Variable length: the sequence of every token (a reduction over
// cu_seqlens[1:]), the packed tensors as one [1, H, T, D] batch entry, keys
// of another sequence masked out and positions taken within the sequence;
// O back to [T, H, Dv], LSE to [H, T].
// CHECK-LABEL: func.func @reference_varlen
// CHECK: arith.cmpi sle, %{{.+}}, %{{.+}} : i32
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] output_shape [1, 40, 4, 32] : tensor<40x4x32xf32> into tensor<1x40x4x32xf32>
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x40x4x32xf32>) outs(%{{.+}} : tensor<1x4x40x32xf32>) permutation = [0, 2, 1, 3]
// CHECK: arith.cmpi eq, %{{.+}}, %{{.+}} : i32
// CHECK: tensor.extract %{{.+}}[%{{.+}}] : tensor<4xi32>
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x4x40x32xf32>) outs(%{{.+}} : tensor<1x40x4x32xf32>) permutation = [0, 2, 1, 3]
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] : tensor<1x40x4x32xf32> into tensor<40x4x32xf32>
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : tensor<1x4x40xf32> into tensor<4x40xf32>
func.func @reference_varlen(%q: tensor<40x4x32xf32>, %k: tensor<50x2x32xf32>, %v: tensor<50x2x32xf32>, %cq: tensor<4xi32>, %ck: tensor<4xi32>) -> (tensor<40x4x32xf32>, tensor<4x40xf32>) {
  %o, %l = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<4xi32>, tensor<4xi32> max [20, 30] mask <causal>
      : tensor<40x4x32xf32>, tensor<50x2x32xf32>, tensor<50x2x32xf32> -> tensor<40x4x32xf32>, tensor<4x40xf32>
  return %o, %l : tensor<40x4x32xf32>, tensor<4x40xf32>
}

// -----

// Bias: one more input of the scale/mask generic, read at index 0 along the
// broadcast batch dim, added after the scale.
// CHECK-LABEL: func.func @reference_bias
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : tensor<1x4x40x50xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @reference_bias(%q: tensor<2x4x40x32xf32>, %k: tensor<2x2x50x32xf32>, %v: tensor<2x2x50x32xf32>, %b: tensor<1x4x40x50xf32>) -> tensor<2x4x40x32xf32> {
  %o = attn.attention %q, %k, %v bias %b : tensor<1x4x40x50xf32>
      : tensor<2x4x40x32xf32>, tensor<2x2x50x32xf32>, tensor<2x2x50x32xf32> -> tensor<2x4x40x32xf32>
  return %o : tensor<2x4x40x32xf32>
}

// -----

// The run-time scale operand is what multiplies the scores (no constant):
// forward and gradient, the gradient's dQ and dK too.

// CHECK-LABEL: func.func @runtime_scale
// CHECK-SAME: %[[S:[^:]+]]: f32)
// CHECK-NOT: arith.constant 2.500000e-01
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[SV:.+]]: f32):
// CHECK-NEXT: arith.mulf %[[SV]], %[[S]] : f32
// CHECK: return
func.func @runtime_scale(%q: tensor<1x1x5x16xf32>, %s: f32) -> tensor<1x1x5x16xf32> {
  %o = attn.attention %q, %q, %q scale(%s)
      : tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32> -> tensor<1x1x5x16xf32>
  return %o : tensor<1x1x5x16xf32>
}

// -----

// CHECK-LABEL: func.func @grad_runtime_scale
// CHECK-SAME: %[[S:[^:]+]]: f32)
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: arith.mulf %{{.+}}, %[[S]] : f32
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : tensor<1x1x5x16xf32>)
// CHECK: arith.mulf %{{.+}}, %[[S]] : f32
// CHECK: return
func.func @grad_runtime_scale(%q: tensor<1x1x5x16xf32>, %lse: tensor<1x1x5xf32>, %s: f32)
    -> (tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse scale(%s)
      : tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>,
        tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5xf32>
      -> tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>
  return %dq, %dk, %dv : tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>, tensor<1x1x5x16xf32>
}
