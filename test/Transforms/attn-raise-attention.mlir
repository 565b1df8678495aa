// RUN: attn-opt %s -split-input-file --attn-raise-attention | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-raise-attention=emit-remarks -verify-diagnostics -o /dev/null
// RUN: attn-opt %s -split-input-file --attn-raise-attention -debug-only=attn-raise-attention -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG

// Raised: the ways front ends write attention in linalg on tensors. Every
// raised attention gets a remark under emit-remarks; every near miss (a
// softmax feeding a contraction that is not raised) a remark saying why.

// torch-style rank 3: Kᵀ through linalg.transpose (looked through), the
// scale as an elementwise multiply, linalg.softmax. [B, N, D] becomes
// [B, 1, N, D] and back.

// CHECK-LABEL: func.func @bmm_transpose_softmax
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x16x8xf32>, %[[K:[^:]+]]: tensor<2x32x8xf32>, %[[V:[^:]+]]: tensor<2x32x4xf32>)
// CHECK-DAG: %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2], [3]] output_shape [2, 1, 16, 8]
// CHECK-DAG: %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[}}[0, 1], [2], [3]] output_shape [2, 1, 32, 8]
// CHECK-DAG: %[[V4:.+]] = tensor.expand_shape %[[V]] {{\[}}[0, 1], [2], [3]] output_shape [2, 1, 32, 4]
// CHECK: %[[O4:.+]] = attn.attention %[[Q4]], %[[K4]], %[[V4]] scale 3.535530e-01 : tensor<2x1x16x8xf32>, tensor<2x1x32x8xf32>, tensor<2x1x32x4xf32> -> tensor<2x1x16x4xf32>
// CHECK: %[[O:.+]] = tensor.collapse_shape %[[O4]] {{\[}}[0, 1], [2], [3]] : tensor<2x1x16x4xf32> into tensor<2x16x4xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[O]]
// DEBUG: [attn-raise-attention] {{.*}}: linalg.batch_matmul skipped: its first operand is not a softmax
// DEBUG: [attn-raise-attention] {{.*}}: raised to attn.attention (rank 3, no mask, scale 0.353553)
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @bmm_transpose_softmax(%q: tensor<2x16x8xf32>, %k: tensor<2x32x8xf32>, %v: tensor<2x32x4xf32>) -> tensor<2x16x4xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.353553 : f32
  %kt_init = tensor.empty() : tensor<2x8x32xf32>
  %kt = linalg.transpose ins(%k : tensor<2x32x8xf32>) outs(%kt_init : tensor<2x8x32xf32>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<2x16x32xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x16x8xf32>, tensor<2x8x32xf32>) outs(%s_zero : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x16x32xf32>) outs(%s_init : tensor<2x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<2x16x32xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x16x32xf32>) outs(%s_init : tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  %o_init = tensor.empty() : tensor<2x16x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x16x4xf32>) -> tensor<2x16x4xf32>
  // expected-remark @+1 {{raised to attn.attention (rank 3, no mask, scale 0.353553)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x16x32xf32>, tensor<2x32x4xf32>) outs(%o_zero : tensor<2x16x4xf32>) -> tensor<2x16x4xf32>
  return %o : tensor<2x16x4xf32>
}

// -----

// Rank 4 in linalg.generic: K transposed by the indexing map, scale (a
// division) and a causal select on linalg.index in one op, and the softmax
// decomposed into max, exp(S - max), sum and division.

// CHECK-LABEL: func.func @generic_rank4_decomposed_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x4xf32>)
// CHECK-NEXT: %[[O:.+]] = attn.attention %[[Q]], %[[K]], %[[V]] mask <causal> scale 2.500000e-01 : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
// CHECK-NEXT: return %[[O]]
#qk_q = affine_map<(b, h, m, n, k) -> (b, h, m, k)>
#qk_k = affine_map<(b, h, m, n, k) -> (b, h, n, k)>
#qk_s = affine_map<(b, h, m, n, k) -> (b, h, m, n)>
#pv_p = affine_map<(b, h, m, e, n) -> (b, h, m, n)>
#pv_v = affine_map<(b, h, m, e, n) -> (b, h, n, e)>
#pv_o = affine_map<(b, h, m, e, n) -> (b, h, m, e)>
#id4 = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row4 = affine_map<(b, h, m, n) -> (b, h, m)>
func.func @generic_rank4_decomposed_causal(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %four = arith.constant 4.0 : f32
  %s_init = tensor.empty() : tensor<1x2x8x8xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) outs(%s_zero : tensor<1x2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x2x8x8xf32>) outs(%s_init : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %keep = arith.cmpi sle, %j, %i : index
    %d = arith.divf %in, %four : f32
    %r = arith.select %keep, %d, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %r_init = tensor.empty() : tensor<1x2x8xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%masked : tensor<1x2x8x8xf32>) outs(%max_init : tensor<1x2x8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8xf32>
  %e = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%masked, %max : tensor<1x2x8x8xf32>, tensor<1x2x8xf32>) outs(%s_init : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<1x2x8x8xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e : tensor<1x2x8x8xf32>) outs(%sum_init : tensor<1x2x8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %sum : tensor<1x2x8x8xf32>, tensor<1x2x8xf32>) outs(%s_init : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.divf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %o_init = tensor.empty() : tensor<1x2x8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  // expected-remark @+1 {{raised to attn.attention (rank 4, causal, scale 0.25)}}
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) outs(%o_zero : tensor<1x2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

// Rank 2: linalg.matmul with indexing maps that read K as [N, D], V read
// transposed ([Dv, N] by the map: a linalg.transpose is emitted), and an
// additive constant causal mask of 0 and a large negative number.

// CHECK-LABEL: func.func @matmul_maps_constant_mask
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<4x8xf32>, %[[K:[^:]+]]: tensor<4x8xf32>, %[[V:[^:]+]]: tensor<6x4xf32>)
// CHECK: %[[VT:.+]] = linalg.transpose ins(%[[V]] : tensor<6x4xf32>) outs(%{{.+}} : tensor<4x6xf32>) permutation = [1, 0]
// CHECK-DAG: %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 4, 8]
// CHECK-DAG: %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 4, 8]
// CHECK-DAG: %[[V4:.+]] = tensor.expand_shape %[[VT]] {{\[}}[0, 1, 2], [3]] output_shape [1, 1, 4, 6]
// CHECK: %[[O4:.+]] = attn.attention %[[Q4]], %[[K4]], %[[V4]] mask <causal> scale 1.000000e+00
// CHECK: %[[O:.+]] = tensor.collapse_shape %[[O4]] {{\[}}[0, 1, 2], [3]] : tensor<1x1x4x6xf32> into tensor<4x6xf32>
// CHECK-NOT: arith.constant dense
// CHECK: return %[[O]]
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
func.func @matmul_maps_constant_mask(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<6x4xf32>) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %mask = arith.constant dense<[[0.0, -1.0e9, -1.0e9, -1.0e9],
                                [0.0, 0.0, -1.0e9, -1.0e9],
                                [0.0, 0.0, 0.0, -1.0e9],
                                [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%q, %k : tensor<4x8xf32>, tensor<4x8xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mask : tensor<4x4xf32>, tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.addf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%masked : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x6xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x6xf32>) -> tensor<4x6xf32>
  // expected-remark @+1 {{raised to attn.attention (rank 2, causal, scale 1)}}
  %o = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%p, %v : tensor<4x4xf32>, tensor<6x4xf32>) outs(%o_zero : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %o : tensor<4x6xf32>
}

// -----

// f16 inputs with f32 accumulation, the way mixed-precision front ends
// write it: Kᵀ given as a tensor (transposed back), P truncated to f16
// before P·V, O truncated to f16 at the end.

// CHECK-LABEL: func.func @f16_mixed_precision
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x16x8xf16>, %[[KT:[^:]+]]: tensor<2x8x16xf16>, %[[V:[^:]+]]: tensor<2x16x8xf16>)
// CHECK: %[[K:.+]] = linalg.transpose ins(%[[KT]] : tensor<2x8x16xf16>) outs(%{{.+}} : tensor<2x16x8xf16>) permutation = [0, 2, 1]
// CHECK: %[[O4:.+]] = attn.attention %{{.+}}, %{{.+}}, %{{.+}} scale 1.250000e-01 : tensor<2x1x16x8xf16>, tensor<2x1x16x8xf16>, tensor<2x1x16x8xf16> -> tensor<2x1x16x8xf16>
// CHECK: %[[O:.+]] = tensor.collapse_shape %[[O4]]
// CHECK-NOT: linalg.batch_matmul
// CHECK: return %[[O]] : tensor<2x16x8xf16>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @f16_mixed_precision(%q: tensor<2x16x8xf16>, %kt: tensor<2x8x16xf16>, %v: tensor<2x16x8xf16>) -> tensor<2x16x8xf16> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 8.0 : f32
  %s_init = tensor.empty() : tensor<2x16x16xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x16x8xf16>, tensor<2x8x16xf16>) outs(%s_zero : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %scaled = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x16x16xf32>) outs(%s_init : tensor<2x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %c : f32
    linalg.yield %d : f32
  } -> tensor<2x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<2x16x16xf32>) outs(%s_init : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %ph_init = tensor.empty() : tensor<2x16x16xf16>
  %ph = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<2x16x16xf32>) outs(%ph_init : tensor<2x16x16xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x16x16xf16>
  %o_init = tensor.empty() : tensor<2x16x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  // expected-remark @+1 {{raised to attn.attention (rank 3, no mask, scale 0.125)}}
  %o = linalg.batch_matmul ins(%ph, %v : tensor<2x16x16xf16>, tensor<2x16x8xf16>) outs(%o_zero : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %oh_init = tensor.empty() : tensor<2x16x8xf16>
  %oh = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%o : tensor<2x16x8xf32>) outs(%oh_init : tensor<2x16x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x16x8xf16>
  return %oh : tensor<2x16x8xf16>
}

// -----

// An additive causal mask built from index comparisons as a [Nq, Nk] tensor
// and broadcast over the batch; Nq = 4 < Nk = 8, aligned bottom-right
// (j <= i + 4); Kᵀ through a transposing linalg.generic.

// CHECK-LABEL: func.func @index_mask_broadcast_bottom_right
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x16xf32>, %[[K:[^:]+]]: tensor<2x8x16xf32>, %[[V:[^:]+]]: tensor<2x8x16xf32>)
// CHECK-DAG: %[[K4:.+]] = tensor.expand_shape %[[K]]
// CHECK: attn.attention %{{.+}}, %[[K4]], %{{.+}} mask <causal> scale 2.500000e-01 : tensor<2x1x4x16xf32>, tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32> -> tensor<2x1x4x16xf32>
// CHECK-NOT: linalg.
// CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tr3 = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#bc = affine_map<(d0, d1, d2) -> (d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @index_mask_broadcast_bottom_right(%q: tensor<2x4x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %kt_init = tensor.empty() : tensor<2x16x8xf32>
  %kt = linalg.generic {indexing_maps = [#tr3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x8x16xf32>) outs(%kt_init : tensor<2x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x16x8xf32>
  %s_init = tensor.empty() : tensor<2x4x8xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x16xf32>, tensor<2x16x8xf32>) outs(%s_zero : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %m_init = tensor.empty() : tensor<4x8xf32>
  %mask = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%m_init : tensor<4x8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c4 = arith.constant 4 : index
    %lim = arith.addi %i, %c4 : index
    %keep = arith.cmpi ule, %j, %lim : index
    %r = arith.select %keep, %zero, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %masked = linalg.generic {indexing_maps = [#id3, #bc, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x8xf32>, tensor<4x8xf32>) outs(%s_init : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %x = arith.mulf %in, %c : f32
    %r = arith.addf %x, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %p = linalg.softmax dimension(2) ins(%masked : tensor<2x4x8xf32>) outs(%s_init : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o_init = tensor.empty() : tensor<2x4x16xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  // expected-remark @+1 {{raised to attn.attention (rank 3, causal, scale 0.25)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%o_zero : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %o : tensor<2x4x16xf32>
}

// -----

// The softmax decomposed with named ops (linalg.reduce, linalg.broadcast,
// linalg.sub, linalg.exp, linalg.div), and a causal mask given as a boolean
// tensor that a select reads.

// CHECK-LABEL: func.func @named_ops_boolean_mask
// CHECK: attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask <causal> scale 1.000000e+00 : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
// CHECK-NOT: linalg.
// CHECK: return
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
func.func @named_ops_boolean_mask(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%q, %k : tensor<4x8xf32>, tensor<4x8xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %b_init = tensor.empty() : tensor<4x4xi1>
  %keep = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%b_init : tensor<4x4xi1>) {
  ^bb0(%out: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %gt = arith.cmpi sgt, %j, %i : index
    %true = arith.constant true
    %le = arith.xori %gt, %true : i1
    linalg.yield %le : i1
  } -> tensor<4x4xi1>
  %masked = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %keep : tensor<4x4xf32>, tensor<4x4xi1>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %b: i1, %out: f32):
    %r = arith.select %b, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %r_init = tensor.empty() : tensor<4xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.reduce ins(%masked : tensor<4x4xf32>) outs(%max_init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %x = arith.maximumf %in, %acc : f32
      linalg.yield %x : f32
    }
  %maxb = linalg.broadcast ins(%max : tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) dimensions = [1]
  %d = linalg.sub ins(%masked, %maxb : tensor<4x4xf32>, tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = linalg.exp ins(%d : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%e : tensor<4x4xf32>) outs(%sum_init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %x = arith.addf %in, %acc : f32
      linalg.yield %x : f32
    }
  %sumb = linalg.broadcast ins(%sum : tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) dimensions = [1]
  %p = linalg.div ins(%e, %sumb : tensor<4x4xf32>, tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{raised to attn.attention (rank 2, causal, scale 1)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Not attention, and left exactly as it is: a contraction that no softmax
// feeds, a softmax that feeds no contraction, arith on tensors.

// CHECK-LABEL: func.func @unrelated
// CHECK-NOT: attn.attention
// CHECK: linalg.matmul
// CHECK: linalg.softmax
// CHECK: arith.addf %{{.+}}, %{{.+}} : tensor<4x4xf32>
// DEBUG: [attn-raise-attention] {{.*}}: linalg.matmul skipped: its first operand is not a softmax
func.func @unrelated(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>) outs(%fill : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sm = linalg.softmax dimension(1) ins(%mm : tensor<4x4xf32>) outs(%init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sum = arith.addf %sm, %mm : tensor<4x4xf32>
  return %mm, %sum : tensor<4x4xf32>, tensor<4x4xf32>
}
