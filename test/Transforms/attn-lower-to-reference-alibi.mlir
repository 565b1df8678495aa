// RUN: attn-opt %s -split-input-file --attn-lower-to-reference --cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-attention-grad --attn-tile | FileCheck %s --check-prefix=TILED
// RUN: attn-opt %s -split-input-file --attn-tile --attn-fuse-online-softmax | FileCheck %s --check-prefix=FUSED

// alibi_slopes in the reference forms: the scaling step reads the slope of
// (b, h) (or of h, for [Hq]) and subtracts slope * |d(i) - j| after the
// score_mod and before the mask, d aligned as the mask (bottom-right:
// i + Nk - Nq; top-left: i; varlen: per sequence).

// [B, Hq], bottom-right causal, Nq = 3, Nk = 9.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[S:[^:]+]]: tensor<2x4xf32>
// CHECK: %[[SCALED:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: %[[B:.+]] = linalg.index 0 : index
// CHECK: %[[H:.+]] = linalg.index 1 : index
// CHECK: %[[I:.+]] = linalg.index 2 : index
// CHECK: %[[J:.+]] = linalg.index 3 : index
// CHECK: %[[SLOPE:.+]] = tensor.extract %[[S]][%[[B]], %[[H]]] : tensor<2x4xf32>
// CHECK: %[[OFF:.+]] = arith.subi %c9, %c3 : index
// CHECK: %[[D:.+]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK: %[[DIST:.+]] = arith.subi %[[D]], %[[J]] : index
// CHECK: %[[DI:.+]] = arith.index_cast %[[DIST]] : index to i64
// CHECK: %[[DF:.+]] = arith.sitofp %[[DI]] : i64 to f32
// CHECK: %[[ABS:.+]] = math.absf %[[DF]] : f32
// CHECK: %[[TERM:.+]] = arith.mulf %[[SLOPE]], %[[ABS]] : f32
// CHECK: %[[SUB:.+]] = arith.subf %[[SCALED]], %[[TERM]] : f32
// CHECK: %[[KEEP:.+]] = arith.cmpi sle, %[[J]], %[[D]] : index
// CHECK: arith.select %[[KEEP]], %[[SUB]], %{{.+}} : f32

// Tiled: each (b, h) program reads its slope once and hands it to every
// online block; the fused form subtracts the term in the natural domain,
// before the change to base 2.
// TILED-LABEL: func.func @forward
// TILED: scf.forall (%[[TB:[a-z0-9]+]], %[[TH:[a-z0-9]+]], %{{[a-z0-9]+}}) in (2, 4, %{{.+}})
// TILED: %[[TS:.+]] = tensor.extract %{{.+}}[%[[TB]], %[[TH]]] : tensor<2x4xf32>
// TILED: scf.for
// TILED: attn.online_block {{.+}} alibi(%[[TS]]) mask <causal>
// FUSED-LABEL: func.func @forward
// FUSED: %[[FS:.+]] = tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<2x4xf32>
// FUSED: math.absf
// FUSED: %[[FT:.+]] = arith.mulf %[[FS]], %{{.+}} : f32
// FUSED: %[[FSUB:.+]] = arith.subf %{{.+}}, %[[FT]] : f32
// FUSED: arith.mulf %[[FSUB]], %{{.+}} : f32
// FUSED: math.exp2
func.func @forward(%q: tensor<2x4x3x16xf32>, %k: tensor<2x2x9x16xf32>,
                   %v: tensor<2x2x9x16xf32>, %s: tensor<2x4xf32>)
    -> (tensor<2x4x3x16xf32>, tensor<2x4x3xf32>) {
  %o, %lse = attn.attention %q, %k, %v alibi_slopes(%s : tensor<2x4xf32>)
      mask <causal>
      : tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>
        -> tensor<2x4x3x16xf32>, tensor<2x4x3xf32>
  return %o, %lse : tensor<2x4x3x16xf32>, tensor<2x4x3xf32>
}

// -----

// [Hq] (one row for every batch entry) with the softcap and a top-left mask:
// the term follows the softcap's tanh, and d(i) = i.
// CHECK-LABEL: func.func @heads_softcap_top_left
// CHECK-SAME: %[[S:[^:]+]]: tensor<4xf32>
// CHECK: %[[H:.+]] = linalg.index 1 : index
// CHECK: %[[I:.+]] = linalg.index 2 : index
// CHECK: %[[J:.+]] = linalg.index 3 : index
// CHECK: math.tanh
// CHECK: %[[CAPPED:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: %[[SLOPE:.+]] = tensor.extract %[[S]][%[[H]]] : tensor<4xf32>
// CHECK: %[[DIST:.+]] = arith.subi %[[I]], %[[J]] : index
// CHECK: math.absf
// CHECK: %[[TERM:.+]] = arith.mulf %[[SLOPE]], %{{.+}} : f32
// CHECK: arith.subf %[[CAPPED]], %[[TERM]] : f32
// CHECK: arith.cmpi sle, %[[J]], %[[I]] : index
// TILED-LABEL: func.func @heads_softcap_top_left
// TILED: scf.forall (%{{[a-z0-9]+}}, %[[TH:[a-z0-9]+]], %{{[a-z0-9]+}}) in (2, 4, %{{.+}})
// TILED: %[[TS:.+]] = tensor.extract %{{.+}}[%[[TH]]] : tensor<4xf32>
// TILED: attn.online_block {{.+}} alibi(%[[TS]]) mask <causal_top_left>
// FUSED-LABEL: func.func @heads_softcap_top_left
// FUSED: math.tanh
// FUSED: math.absf
// FUSED: arith.subf
// FUSED: math.exp2
func.func @heads_softcap_top_left(%q: tensor<2x4x3x16xf32>, %k: tensor<2x2x9x16xf32>,
                                  %v: tensor<2x2x9x16xf32>, %s: tensor<4xf32>)
    -> tensor<2x4x3x16xf32> {
  %o = attn.attention %q, %k, %v alibi_slopes(%s : tensor<4xf32>)
      mask <causal_top_left> softcap 30.0
      : tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>
        -> tensor<2x4x3x16xf32>
  return %o : tensor<2x4x3x16xf32>
}

// -----

// The gradient: P is recomputed with the same term (ALiBi has no gradient of
// its own), the slope of (b, h) read in the P step.
// CHECK-LABEL: func.func @grad
// CHECK-SAME: %[[S:[^:]+]]: tensor<2x4xf32>) ->
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}} : tensor<2x4x3xf32>)
// CHECK: %[[B:.+]] = linalg.index 0 : index
// CHECK: %[[H:.+]] = linalg.index 1 : index
// CHECK: %[[SLOPE:.+]] = tensor.extract %[[S]][%[[B]], %[[H]]] : tensor<2x4xf32>
// CHECK: math.absf
// CHECK: %[[TERM:.+]] = arith.mulf %[[SLOPE]], %{{.+}} : f32
// CHECK: %[[SUB:.+]] = arith.subf %{{.+}}, %[[TERM]] : f32
// CHECK: %[[SHIFT:.+]] = arith.subf %[[SUB]], %{{.+}} : f32
// CHECK: math.exp %[[SHIFT]] : f32
// TILED-LABEL: func.func @grad
// TILED: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<2x4xf32>
// TILED: math.absf
// TILED: arith.subf
func.func @grad(%q: tensor<2x4x3x16xf32>, %k: tensor<2x2x9x16xf32>,
                %v: tensor<2x2x9x16xf32>, %o: tensor<2x4x3x16xf32>,
                %do: tensor<2x4x3x16xf32>, %lse: tensor<2x4x3xf32>,
                %s: tensor<2x4xf32>)
    -> (tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      alibi_slopes(%s : tensor<2x4xf32>) mask <causal>
      : tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>,
        tensor<2x4x3x16xf32>, tensor<2x4x3x16xf32>, tensor<2x4x3xf32>
      -> tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>
  return %dq, %dk, %dv : tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>
}

// -----

// Varlen: the slope row is the query token's sequence s, and the distance
// is taken within the sequence: (i - cu_q[s]) + (Lk - Lq) - (j - cu_k[s]).
// CHECK-LABEL: func.func @varlen
// CHECK-SAME: %[[CQ:[^:]+]]: tensor<3xi32>, %[[CK:[^:]+]]: tensor<3xi32>, %[[S:[^:]+]]: tensor<2x4xf32>)
// CHECK: linalg.generic
// CHECK: ^bb0(%[[SEQ:[^:]+]]: i32, %{{[^:]+}}: i32, %{{[^:]+}}: f32):
// CHECK: %[[H:.+]] = linalg.index 1 : index
// CHECK: %[[SIDX:.+]] = arith.index_cast %[[SEQ]] : i32 to index
// CHECK: tensor.extract %[[CQ]][%[[SIDX]]] : tensor<3xi32>
// CHECK: tensor.extract %[[CK]][%[[SIDX]]] : tensor<3xi32>
// CHECK: %[[SLOPE:.+]] = tensor.extract %[[S]][%[[SIDX]], %[[H]]] : tensor<2x4xf32>
// CHECK: math.absf
// CHECK: %[[TERM:.+]] = arith.mulf %[[SLOPE]], %{{.+}} : f32
// CHECK: arith.subf %{{.+}}, %[[TERM]] : f32
func.func @varlen(%q: tensor<12x4x16xf32>, %k: tensor<20x2x16xf32>, %v: tensor<20x2x16xf32>,
                  %cq: tensor<3xi32>, %ck: tensor<3xi32>, %s: tensor<2x4xf32>) -> tensor<12x4x16xf32> {
  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32>
      alibi_slopes(%s : tensor<2x4xf32>) max [8, 12] mask <causal>
      : tensor<12x4x16xf32>, tensor<20x2x16xf32>, tensor<20x2x16xf32> -> tensor<12x4x16xf32>
  return %o : tensor<12x4x16xf32>
}
