// RUN: attn-opt %s -split-input-file --attn-lower-to-reference --cse | FileCheck %s
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-tile-attention-grad --attn-tile -o /dev/null

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
func.func @forward(%q: tensor<2x4x3x16xf32>, %k: tensor<2x2x9x16xf32>,
                   %v: tensor<2x2x9x16xf32>, %s: tensor<2xi32>, %e: tensor<2xi32>)
    -> (tensor<2x4x3x16xf32>, tensor<2x4x3xf32>) {
  // expected-error @+1 {{'attn.attention' op could not be tiled: key_range is not supported by the tiled lowering yet}}
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
func.func @grad(%q: tensor<2x4x3x16xf32>, %k: tensor<2x2x9x16xf32>,
                %v: tensor<2x2x9x16xf32>, %o: tensor<2x4x3x16xf32>,
                %do: tensor<2x4x3x16xf32>, %lse: tensor<2x4x3xf32>,
                %s: tensor<2xi32>, %e: tensor<2xi32>)
    -> (tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op could not be tiled: key_range is not supported by the tiled lowering yet}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      key_range(%s, %e) : tensor<2xi32>, tensor<2xi32>
      : tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>,
        tensor<2x4x3x16xf32>, tensor<2x4x3x16xf32>, tensor<2x4x3xf32>
      -> tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>
  return %dq, %dk, %dv : tensor<2x4x3x16xf32>, tensor<2x2x9x16xf32>, tensor<2x2x9x16xf32>
}
