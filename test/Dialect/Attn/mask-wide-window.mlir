// RUN: attn-opt %s --attn-lower-to-reference --split-input-file | FileCheck %s

// getMaskBand: a window side at least as wide as both sequences bounds
// nothing (the CPU path computed d(i) + INT64_MAX, which overflowed and
// masked every key of the row). Only the left bound of 2 is left.
// CHECK-LABEL: func.func @right_int64_max
// CHECK: arith.constant -2 : index
// CHECK: arith.cmpi sge
// CHECK-NOT: arith.cmpi sle
// CHECK-NOT: 9223372036854775807
func.func @right_int64_max(%q: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
  %o = attn.attention %q, %q, %q mask <sliding> window [2, 9223372036854775807]
      : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x1x8x16xf32>
  return %o : tensor<1x1x8x16xf32>
}

// -----

// Dynamic lengths: from 2^30 (kMaxMaskWindow) on.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: arith.cmpi sge
// CHECK: arith.constant 5 : index
// CHECK: arith.cmpi sle
// CHECK-NOT: arith.cmpi sge
func.func @dynamic(%q: tensor<1x1x?x16xf32>) -> tensor<1x1x?x16xf32> {
  %o = attn.attention %q, %q, %q mask <sliding> window [1073741824, 5]
      : tensor<1x1x?x16xf32>, tensor<1x1x?x16xf32>, tensor<1x1x?x16xf32> -> tensor<1x1x?x16xf32>
  return %o : tensor<1x1x?x16xf32>
}
