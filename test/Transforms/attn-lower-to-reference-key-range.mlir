// RUN: attn-opt %s -split-input-file --attn-lower-to-reference --cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-attention-grad --attn-tile | FileCheck %s --check-prefix=TILED
// RUN: attn-opt %s -split-input-file --attn-tile --attn-fuse-online-softmax | FileCheck %s --check-prefix=FUSED

// key_range in the reference forms: the mask step reads batch entry b's
// [start, end) (maps (b, h, i, j) -> (b)) and keeps key j iff
// start <= j < end, on top of the band.

// CHECK-DAG: #[[BATCH:.+]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @forward
// CHECK: linalg.generic {indexing_maps = [#[[BATCH]], #[[BATCH]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<2xi32>, tensor<2xi32>)
// CHECK: %[[J:.+]] = linalg.index 3 : index
// CHECK: %[[J32:.+]] = arith.index_cast %[[J]] : index to i32
// CHECK: arith.cmpi sge, %[[J32]], %{{.+}} : i32
// CHECK: arith.cmpi slt, %[[J32]], %{{.+}} : i32
// CHECK: arith.andi
// CHECK: arith.select

// Tiled: the batch entry's range (clamped to [0, Nk]) narrows the key loop
// and reaches every online block, which masks the keys outside it.
// TILED-LABEL: func.func @forward
// TILED: scf.forall (%[[B:[a-z0-9]+]], %{{[a-z0-9]+}}, %{{[a-z0-9]+}}) in (2, 4, %{{.+}})
// TILED: tensor.extract %{{.+}}[%[[B]]] : tensor<2xi32>
// TILED: tensor.extract %{{.+}}[%[[B]]] : tensor<2xi32>
// TILED: scf.for
// TILED: attn.online_block {{.+}} keys(%{{.+}}, %{{.+}}) mask <causal>
// FUSED-LABEL: func.func @forward
// FUSED: arith.cmpi sge
// FUSED: arith.cmpi slt
func.func @forward(%q: tensor<2x4x3x16xf32>, %k: tensor<2x2x9x16xf32>,
                   %v: tensor<2x2x9x16xf32>, %s: tensor<2xi32>, %e: tensor<2xi32>)
    -> (tensor<2x4x3x16xf32>, tensor<2x4x3xf32>) {
  %o, %lse = attn.attention %q, %k, %v key_range(%s, %e) : tensor<2xi32>, tensor<2xi32>
      mask <causal>
      : tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>
        -> tensor<2x4x3x16xf32>, tensor<2x4x3xf32>
  return %o, %lse : tensor<2x4x3x16xf32>, tensor<2x4x3xf32>
}

// -----

// The gradient: P is kept where the key lies in the range (and the LSE is
// finite and the band allows it).
// CHECK-LABEL: func.func @grad
// CHECK: linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #[[GB:[a-z0-9]+]], #[[GB]], #{{[a-z0-9]+}}]
// CHECK-SAME: ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<2x4x3xf32>, tensor<2xi32>, tensor<2xi32>)
// CHECK: math.exp
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// TILED-LABEL: func.func @grad
// TILED: tensor.extract %{{.+}}[%{{.+}}] : tensor<2xi32>
// TILED: arith.cmpi sge
// TILED: arith.cmpi slt
func.func @grad(%q: tensor<2x4x3x16xf32>, %k: tensor<2x2x9x16xf32>,
                %v: tensor<2x2x9x16xf32>, %o: tensor<2x4x3x16xf32>,
                %do: tensor<2x4x3x16xf32>, %lse: tensor<2x4x3xf32>,
                %s: tensor<2xi32>, %e: tensor<2xi32>)
    -> (tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      key_range(%s, %e) : tensor<2xi32>, tensor<2xi32>
      : tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>,
        tensor<2x4x3x16xf32>, tensor<2x4x3x16xf32>, tensor<2x4x3xf32>
      -> tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>
  return %dq, %dk, %dv : tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>
}
