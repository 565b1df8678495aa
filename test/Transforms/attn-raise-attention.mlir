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

// -----

// Near misses. Each is left alone and, under emit-remarks, says why.

// Softmax over the query dimension.
// CHECK-LABEL: func.func @softmax_wrong_dim
// CHECK-NOT: attn.attention
// DEBUG: [attn-raise-attention] {{.*}}: not raised: the softmax normalises over dimension 0, not the key dimension 1 that P·V contracts
func.func @softmax_wrong_dim(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.softmax dimension(0) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the softmax normalises over dimension 0, not the key dimension 1 that P·V contracts}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// P·V reads P transposed: it contracts over the queries (Pᵀ·V).
// CHECK-LABEL: func.func @pv_contracts_queries
// CHECK-NOT: attn.attention
func.func @pv_contracts_queries(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: P·V contracts over the query dimension of the softmax, not the key dimension}}
  %o = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// P·V writes O transposed, [Dv, Nq].
// CHECK-LABEL: func.func @pv_layout
// CHECK-NOT: attn.attention
func.func @pv_layout(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<8x4xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<8x4xf32>) -> tensor<8x4xf32>
  // expected-remark @+1 {{not raised to attn.attention: P·V does not compute [batch..., Nq, Dv] from P [batch..., Nq, Nk] and V [batch..., Nk, Dv] or its transpose}}
  %o = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>]
      ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}

// -----

// P·V is not a multiply-accumulate (a max-plus product).
// CHECK-LABEL: func.func @pv_not_contraction
// CHECK-NOT: attn.attention
func.func @pv_not_contraction(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: P·V is not a multiply-accumulate contraction on tensors}}
  %o = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %x = arith.addf %a, %b : f32
    %r = arith.maximumf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The P·V accumulator starts at 1.
// CHECK-LABEL: func.func @pv_init_not_zero
// CHECK-NOT: attn.attention
func.func @pv_init_not_zero(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_one = linalg.fill ins(%one : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the P·V accumulator is not zero-initialised}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_one : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Rank 5: more batch dims than attn.attention has.
// CHECK-LABEL: func.func @rank5
// CHECK-NOT: attn.attention
func.func @rank5(%s: tensor<1x1x2x4x4xf32>, %v: tensor<1x1x2x4x8xf32>) -> tensor<1x1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<1x1x2x4x4xf32>
  %p = linalg.softmax dimension(4) ins(%s : tensor<1x1x2x4x4xf32>) outs(%s_init : tensor<1x1x2x4x4xf32>) -> tensor<1x1x2x4x4xf32>
  %o_init = tensor.empty() : tensor<1x1x2x4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<1x1x2x4x8xf32>) -> tensor<1x1x2x4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the attention has rank 5; attn.attention covers ranks 2 to 4}}
  %o = linalg.generic {indexing_maps = [affine_map<(a, b, c, m, e, n) -> (a, b, c, m, n)>, affine_map<(a, b, c, m, e, n) -> (a, b, c, n, e)>, affine_map<(a, b, c, m, e, n) -> (a, b, c, m, e)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x1x2x4x4xf32>, tensor<1x1x2x4x8xf32>) outs(%o_zero : tensor<1x1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %x = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<1x1x2x4x8xf32>
  return %o : tensor<1x1x2x4x8xf32>
}

// -----

// The softmax of a function argument: no Q·Kᵀ.
// CHECK-LABEL: func.func @scores_argument
// CHECK-NOT: attn.attention
func.func @scores_argument(%s: tensor<4x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scores come from a block argument, not from elementwise ops on a contraction Q·Kᵀ}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The scores are a slice of something else.
// CHECK-LABEL: func.func @scores_slice
// CHECK-NOT: attn.attention
func.func @scores_slice(%big: tensor<8x8xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s = tensor.extract_slice %big[0, 0] [4, 4] [1, 1] : tensor<8x8xf32> to tensor<4x4xf32>
  %s_init = tensor.empty() : tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scores come from 'tensor.extract_slice', not from elementwise ops on a contraction Q·Kᵀ}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The scores come from a reduction that is not a product (an L1 distance).
// CHECK-LABEL: func.func @qk_not_contraction
// CHECK-NOT: attn.attention
func.func @qk_not_contraction(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<4x8xf32>, tensor<4x8xf32>) outs(%s_zero : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %r = arith.addf %acc, %d : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: Q·Kᵀ is not a multiply-accumulate contraction on tensors}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Q·Kᵀ contracts over two dims (heads and head dim): different reduction
// dims than attention's.
// CHECK-LABEL: func.func @qk_two_reductions
// CHECK-NOT: attn.attention
func.func @qk_two_reductions(%q: tensor<4x2x8xf32>, %k: tensor<4x2x8xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(m, n, h, k) -> (m, h, k)>, affine_map<(m, n, h, k) -> (n, h, k)>, affine_map<(m, n, h, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%q, %k : tensor<4x2x8xf32>, tensor<4x2x8xf32>) outs(%s_zero : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %x = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: Q·Kᵀ contracts over 2 dimensions, not one}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Q·Kᵀ has a second row dimension that K does not have.
// CHECK-LABEL: func.func @qk_two_row_dims
// CHECK-NOT: attn.attention
func.func @qk_two_row_dims(%q: tensor<2x4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<2x4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(a, m, n, k) -> (a, m, k)>, affine_map<(a, m, n, k) -> (n, k)>, affine_map<(a, m, n, k) -> (a, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x8xf32>, tensor<4x8xf32>) outs(%s_zero : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %x = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x4x4xf32>) outs(%s_init : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o_init = tensor.empty() : tensor<2x4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: Q·Kᵀ has more than one row or column dimension}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%o_zero : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Q read as [D, N]: Q·Kᵀ contracts over the sequence.
// CHECK-LABEL: func.func @q_transposed
// CHECK-NOT: attn.attention
func.func @q_transposed(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%q, %k : tensor<8x4xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: Q is read as [batch..., head dim, query]: Q·Kᵀ contracts over the sequence, not the head dim}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Q·Kᵀ writes its result transposed, [Nk, Nq].
// CHECK-LABEL: func.func @qk_layout
// CHECK-NOT: attn.attention
func.func @qk_layout(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>]
      ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: Q·Kᵀ does not compute [batch..., Nq, Nk] from Q [batch..., Nq, D] and K [batch..., Nk, D] or its transpose}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The Q·Kᵀ accumulator starts at 1.
// CHECK-LABEL: func.func @qk_init_not_zero
// CHECK-NOT: attn.attention
func.func @qk_init_not_zero(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_one = linalg.fill ins(%one : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_one : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the Q·Kᵀ accumulator is not zero-initialised}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Element types: f64 inputs.
// CHECK-LABEL: func.func @f64_inputs
// CHECK-NOT: attn.attention
func.func @f64_inputs(%q: tensor<4x8xf64>, %k: tensor<8x4xf64>, %v: tensor<4x8xf64>) -> tensor<4x8xf64> {
  %zero = arith.constant 0.0 : f64
  %s_init = tensor.empty() : tensor<4x4xf64>
  %s_zero = linalg.fill ins(%zero : f64) outs(%s_init : tensor<4x4xf64>) -> tensor<4x4xf64>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf64>, tensor<8x4xf64>) outs(%s_zero : tensor<4x4xf64>) -> tensor<4x4xf64>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf64>) outs(%s_init : tensor<4x4xf64>) -> tensor<4x4xf64>
  %o_init = tensor.empty() : tensor<4x8xf64>
  %o_zero = linalg.fill ins(%zero : f64) outs(%o_init : tensor<4x8xf64>) -> tensor<4x8xf64>
  // expected-remark @+1 {{not raised to attn.attention: Q has element type f64; attn.attention takes f16, bf16 or f32}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf64>, tensor<4x8xf64>) outs(%o_zero : tensor<4x8xf64>) -> tensor<4x8xf64>
  return %o : tensor<4x8xf64>
}

// -----

// Element types: Q in f16, K and V in f32.
// CHECK-LABEL: func.func @mixed_inputs
// CHECK-NOT: attn.attention
func.func @mixed_inputs(%q: tensor<4x8xf16>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf16>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: Q, K and V have different element types}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Element types: f32 inputs, scores and softmax in f64.
// CHECK-LABEL: func.func @f64_scores
// CHECK-NOT: attn.attention
func.func @f64_scores(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f64
  %s_init = tensor.empty() : tensor<4x4xf64>
  %s_zero = linalg.fill ins(%zero : f64) outs(%s_init : tensor<4x4xf64>) -> tensor<4x4xf64>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf64>) -> tensor<4x4xf64>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf64>) outs(%s_init : tensor<4x4xf64>) -> tensor<4x4xf64>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %zf = arith.constant 0.0 : f32
  %o_zero = linalg.fill ins(%zf : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scores are computed in f64, more precisely than attn.attention's f32}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf64>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Element types: f16 inputs, O left in f32.
// CHECK-LABEL: func.func @f32_output_of_f16
// CHECK-NOT: attn.attention
func.func @f32_output_of_f16(%q: tensor<4x8xf16>, %k: tensor<8x4xf16>, %v: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf16>, tensor<8x4xf16>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: P·V produces f32 but Q, K and V are f16, which attn.attention returns}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf16>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The scores are multiplied by a run-time scalar.
// CHECK-LABEL: func.func @scale_not_constant
// CHECK-NOT: attn.attention
func.func @scale_not_constant(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>, %c: f32) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scores are multiplied by a value that is not a constant}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The scores are divided by a run-time scalar.
// CHECK-LABEL: func.func @divide_not_constant
// CHECK-NOT: attn.attention
func.func @divide_not_constant(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>, %c: f32) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scores are divided by a value that is not a non-zero constant}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A negative scale.
// CHECK-LABEL: func.func @negative_scale
// CHECK-NOT: attn.attention
func.func @negative_scale(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant -0.5 : f32
    %r = arith.mulf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scale -0.5 is not positive and finite}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The elementwise op ignores the scores.
// CHECK-LABEL: func.func @yield_not_scores
// CHECK-NOT: attn.attention
func.func @yield_not_scores(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 1.0 : f32
    linalg.yield %c : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: an elementwise op on the scores yields a value that does not depend on them}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A tanh soft-cap on the scores.
// CHECK-LABEL: func.func @softcap
// CHECK-NOT: attn.attention
func.func @softcap(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scores go through 'math.tanh'; only a constant scale and a causal mask can be expressed}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A select whose other value is 0, not -inf.
// CHECK-LABEL: func.func @select_not_mask
// CHECK-NOT: attn.attention
func.func @select_not_mask(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi sle, %j, %i : index
    %r = arith.select %keep, %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scores go through a select that is not a mask (the other value is not -inf or a large negative constant)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A non-zero constant added to the scores.
// CHECK-LABEL: func.func @add_constant
// CHECK-NOT: attn.attention
func.func @add_constant(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 1.0 : f32
    %r = arith.addf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: a non-zero constant is added to the scores}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A non-zero constant tensor added to the scores.
// CHECK-LABEL: func.func @add_constant_tensor
// CHECK-NOT: attn.attention
func.func @add_constant_tensor(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %bias = arith.constant dense<2.0> : tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %bias : tensor<4x4xf32>, tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %r = arith.addf %in, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: a non-zero constant is added to the scores}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The scores added to the op's own output operand.
// CHECK-LABEL: func.func @add_accumulator
// CHECK-NOT: attn.attention
func.func @add_accumulator(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scores are added to a value that is not a mask}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The scores added to themselves.
// CHECK-LABEL: func.func @add_scores_twice
// CHECK-NOT: attn.attention
func.func @add_scores_twice(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scores are added to a value that is not a mask}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A run-time additive mask per batch entry (a padding mask).
// CHECK-LABEL: func.func @mask_per_batch
// CHECK-NOT: attn.attention
func.func @mask_per_batch(%q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<2x4x4xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<2x4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %k : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%s_zero : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%s_init : tensor<2x4x4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.addf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x4xf32>) outs(%s_init : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o_init = tensor.empty() : tensor<2x4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the additive mask is a run-time tensor that varies over batch or heads; attn.attention can only express a causal mask}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%o_zero : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}
// -----

// A run-time additive mask, broadcast over the batch.
// CHECK-LABEL: func.func @mask_runtime
// CHECK-NOT: attn.attention
func.func @mask_runtime(%q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<2x4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %k : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%s_zero : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x4xf32>, tensor<4x4xf32>) outs(%s_init : tensor<2x4x4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.addf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x4xf32>) outs(%s_init : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o_init = tensor.empty() : tensor<2x4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the additive mask is a run-time tensor; attn.attention can only express a causal mask}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%o_zero : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}
// -----

// A constant bias (ALiBi-like), not a mask.
// CHECK-LABEL: func.func @mask_bias
// CHECK-NOT: attn.attention
func.func @mask_bias(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %bias = arith.constant dense<[[0.0, -1.0, -2.0, -3.0], [1.0, 0.0, -1.0, -2.0], [2.0, 1.0, 0.0, -1.0], [3.0, 2.0, 1.0, 0.0]]> : tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %bias : tensor<4x4xf32>, tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.addf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the additive mask holds values other than 0 and -inf (or a large negative number): a bias, not a mask}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A constant mask that hides the past, not the future.
// CHECK-LABEL: func.func @mask_constant_anticausal
// CHECK-NOT: attn.attention
func.func @mask_constant_anticausal(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mask = arith.constant dense<[[0.0, 0.0, 0.0, 0.0], [0xFF800000, 0.0, 0.0, 0.0], [0xFF800000, 0xFF800000, 0.0, 0.0], [0xFF800000, 0xFF800000, 0xFF800000, 0.0]]> : tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mask : tensor<4x4xf32>, tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.addf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the mask is not causal: it does not keep the keys j <= i + c of query row i}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A mask tensor of 1 and -inf.
// CHECK-LABEL: func.func @mask_select_values
// CHECK-NOT: attn.attention
func.func @mask_select_values(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m_init = tensor.empty() : tensor<4x4xf32>
  %mask = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} outs(%m_init : tensor<4x4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi sle, %j, %i : index
    %one = arith.constant 1.0 : f32
    %r = arith.select %keep, %one, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mask : tensor<4x4xf32>, tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.addf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the additive mask selects between values other than 0 and -inf (or a large negative number)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A mask tensor computed from the indices as floats.
// CHECK-LABEL: func.func @mask_computed_otherwise
// CHECK-NOT: attn.attention
func.func @mask_computed_otherwise(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m_init = tensor.empty() : tensor<4x4xf32>
  %mask = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} outs(%m_init : tensor<4x4xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %r = arith.sitofp %ji : i32 to f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mask : tensor<4x4xf32>, tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.addf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the additive mask is computed by a 'linalg.generic' this pass does not understand}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The mask condition is a run-time boolean tensor.
// CHECK-LABEL: func.func @condition_runtime
// CHECK-NOT: attn.attention
func.func @condition_runtime(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>, %keep: tensor<4x4xi1>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %keep : tensor<4x4xf32>, tensor<4x4xi1>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %b: i1, %out: f32):
    %r = arith.select %b, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the mask condition is a run-time tensor; attn.attention can only express a causal mask}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The mask condition is a run-time scalar.
// CHECK-LABEL: func.func @condition_scalar
// CHECK-NOT: attn.attention
func.func @condition_scalar(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>, %b: i1) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.select %b, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the mask condition is not an index comparison}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// An unsigned comparison with i - 1, which wraps at i = 0.
// CHECK-LABEL: func.func @condition_unsigned_negative
// CHECK-NOT: attn.attention
func.func @condition_unsigned_negative(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c1 = arith.constant 1 : index
    %lim = arith.subi %i, %c1 : index
    %keep = arith.cmpi ule, %j, %lim : index
    %r = arith.select %keep, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the mask compares possibly negative indices unsigned}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A diagonal mask (j == i).
// CHECK-LABEL: func.func @condition_equality
// CHECK-NOT: attn.attention
func.func @condition_equality(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi eq, %j, %i : index
    %r = arith.select %keep, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the mask compares indices for (in)equality; only a causal mask (key <= query + c) can be expressed}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A mask that keeps j >= i.
// CHECK-LABEL: func.func @condition_anticausal
// CHECK-NOT: attn.attention
func.func @condition_anticausal(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi sge, %j, %i : index
    %r = arith.select %keep, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the mask is not causal: it does not keep the keys j <= i + c of query row i}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A mask that depends on the batch index.
// CHECK-LABEL: func.func @condition_batch_index
// CHECK-NOT: attn.attention
func.func @condition_batch_index(%q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<2x4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %k : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%s_zero : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x4xf32>) outs(%s_init : tensor<2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %b = linalg.index 0 : index
    %j = linalg.index 2 : index
    %keep = arith.cmpi sle, %j, %b : index
    %r = arith.select %keep, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x4x4xf32>) outs(%s_init : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o_init = tensor.empty() : tensor<2x4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the mask depends on a batch or head index}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%o_zero : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}
// -----

// A mask on 2·i (a strided pattern).
// CHECK-LABEL: func.func @condition_scaled_index
// CHECK-NOT: attn.attention
func.func @condition_scaled_index(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %i2 = arith.muli %i, %c2 : index
    %keep = arith.cmpi sle, %j, %i2 : index
    %r = arith.select %keep, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the mask compares values other than linalg.index and constants}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// Top-left causal (j <= i) with Nq = 4 < Nk = 8.
// CHECK-LABEL: func.func @causal_top_left
// CHECK-NOT: attn.attention
func.func @causal_top_left(%q: tensor<4x8xf32>, %k: tensor<8x8xf32>, %v: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x8xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x8xf32>) outs(%s_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%s_init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi sle, %j, %i : index
    %r = arith.select %keep, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%s_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the causal mask is aligned top-left (key j <= query i); attn.attention's is aligned bottom-right (j <= i + 4)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x8xf32>, tensor<8x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// A band offset that matches neither alignment (j <= i + 2, Nq = Nk).
// CHECK-LABEL: func.func @causal_offset
// CHECK-NOT: attn.attention
func.func @causal_offset(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %lim = arith.addi %i, %c2 : index
    %keep = arith.cmpi sle, %j, %lim : index
    %r = arith.select %keep, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the mask keeps keys j <= i + 2, not the causal j <= i + 0}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// Causal with Nq = 8 > Nk = 4: rows without keys.
// CHECK-LABEL: func.func @causal_more_queries
// CHECK-NOT: attn.attention
func.func @causal_more_queries(%q: tensor<8x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<8x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<8x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<8x4xf32>) -> tensor<8x4xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<8x4xf32>) outs(%s_init : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c4 = arith.constant 4 : index
    %lim = arith.subi %i, %c4 : index
    %keep = arith.cmpi sle, %j, %lim : index
    %r = arith.select %keep, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<8x4xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<8x4xf32>) outs(%s_init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %o_init = tensor.empty() : tensor<8x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the causal mask leaves query rows without keys (Nq = 8 > Nk = 4)}}
  %o = linalg.matmul ins(%p, %v : tensor<8x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}

// -----

// The decomposed softmax normalises by column sums.
// CHECK-LABEL: func.func @decomposed_sum_over_queries
// CHECK-NOT: attn.attention
func.func @decomposed_sum_over_queries(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r_init = tensor.empty() : tensor<4xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x4xf32>) outs(%max_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>], iterator_types = ["reduction", "parallel"]}
      ins(%e : tensor<4x4xf32>) outs(%sum_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.divf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the softmax normalises over dimension 0, not the key dimension 1 that P·V contracts}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The decomposed softmax divides by the sum of S, not of exp(S - max).
// CHECK-LABEL: func.func @decomposed_sum_of_scores
// CHECK-NOT: attn.attention
func.func @decomposed_sum_of_scores(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r_init = tensor.empty() : tensor<4xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x4xf32>) outs(%max_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x4xf32>) outs(%sum_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.divf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the softmax divides by something other than the row sum of its numerator}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The sum starts at 1.
// CHECK-LABEL: func.func @decomposed_sum_init
// CHECK-NOT: attn.attention
func.func @decomposed_sum_init(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r_init = tensor.empty() : tensor<4xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x4xf32>) outs(%max_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %sum_init = linalg.fill ins(%one : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x4xf32>) outs(%sum_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.divf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the softmax sum does not start at 0}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The 'sum' is a max.
// CHECK-LABEL: func.func @decomposed_sum_is_max
// CHECK-NOT: attn.attention
func.func @decomposed_sum_is_max(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r_init = tensor.empty() : tensor<4xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x4xf32>) outs(%max_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x4xf32>) outs(%sum_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.divf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the softmax sum is not a sum reduction of S over the key dimension}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The 'max' is a min.
// CHECK-LABEL: func.func @decomposed_max_is_min
// CHECK-NOT: attn.attention
func.func @decomposed_max_is_min(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r_init = tensor.empty() : tensor<4xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x4xf32>) outs(%max_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.minimumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x4xf32>) outs(%sum_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.divf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the softmax max is not a max reduction of S over the key dimension}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The max reads S transposed (a column max, broadcast as if per row).
// CHECK-LABEL: func.func @decomposed_max_transposed
// CHECK-NOT: attn.attention
func.func @decomposed_max_transposed(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r_init = tensor.empty() : tensor<4xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(m, n) -> (n, m)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x4xf32>) outs(%max_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x4xf32>) outs(%sum_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.divf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the softmax max is not a max reduction of S over the key dimension}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The max is over the queries.
// CHECK-LABEL: func.func @decomposed_max_over_queries
// CHECK-NOT: attn.attention
func.func @decomposed_max_over_queries(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r_init = tensor.empty() : tensor<4xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>], iterator_types = ["reduction", "parallel"]}
      ins(%s : tensor<4x4xf32>) outs(%max_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x4xf32>) outs(%sum_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.divf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the softmax subtracts something other than the row maximum of S over the key dimension}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// The max of another tensor (a function of K only).
// CHECK-LABEL: func.func @decomposed_max_of_other
// CHECK-NOT: attn.attention
func.func @decomposed_max_of_other(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r_init = tensor.empty() : tensor<4xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%s_zero : tensor<4x4xf32>) outs(%max_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x4xf32>) outs(%sum_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.divf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the softmax subtracts something other than the row maximum of S over the key dimension}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
// -----

// exp2 instead of exp (the scale would be off by ln 2).
// CHECK-LABEL: func.func @decomposed_not_exp
// CHECK-NOT: attn.attention
func.func @decomposed_not_exp(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r_init = tensor.empty() : tensor<4xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x4xf32>) outs(%max_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp2 %d : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x4xf32>) outs(%sum_init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4x4xf32>, tensor<4xf32>) outs(%s_init : tensor<4x4xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.divf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the softmax numerator is not exp(S - max)}}
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Causal on dynamic sequence lengths: whether j <= i is bottom-right
// aligned depends on Nq = Nk, which cannot be checked.
// CHECK-LABEL: func.func @causal_dynamic
// CHECK-NOT: attn.attention
func.func @causal_dynamic(%q: tensor<?x8xf32>, %k: tensor<8x?xf32>, %v: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %nq = tensor.dim %q, %c0 : tensor<?x8xf32>
  %nk = tensor.dim %k, %c1 : tensor<8x?xf32>
  %s_init = tensor.empty(%nq, %nk) : tensor<?x?xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.matmul ins(%q, %k : tensor<?x8xf32>, tensor<8x?xf32>) outs(%s_zero : tensor<?x?xf32>) -> tensor<?x?xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<?x?xf32>) outs(%s_init : tensor<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi sle, %j, %i : index
    %r = arith.select %keep, %in, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<?x?xf32>) outs(%s_init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %o_init = tensor.empty(%nq) : tensor<?x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{not raised to attn.attention: the causal mask is on dynamic sequence lengths: its alignment cannot be checked}}
  %o = linalg.matmul ins(%p, %v : tensor<?x?xf32>, tensor<?x8xf32>) outs(%o_zero : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// Without a mask, dynamic batch and sequence lengths are fine.
// CHECK-LABEL: func.func @dynamic_no_mask
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x?x8xf32>, %[[KT:[^:]+]]: tensor<?x8x?xf32>
// CHECK: %[[K:.+]] = linalg.transpose ins(%[[KT]] : tensor<?x8x?xf32>)
// CHECK: %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2], [3]] output_shape [%{{.+}}, 1, %{{.+}}, 8] : tensor<?x?x8xf32> into tensor<?x1x?x8xf32>
// CHECK: attn.attention %[[Q4]], %{{.+}}, %{{.+}} scale 1.000000e+00 : tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32> -> tensor<?x1x?x8xf32>
func.func @dynamic_no_mask(%q: tensor<?x?x8xf32>, %kt: tensor<?x8x?xf32>, %v: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x8xf32>
  %nq = tensor.dim %q, %c1 : tensor<?x?x8xf32>
  %nk = tensor.dim %kt, %c2 : tensor<?x8x?xf32>
  %s_init = tensor.empty(%b, %nq, %nk) : tensor<?x?x?xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<?x?x8xf32>, tensor<?x8x?xf32>) outs(%s_zero : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<?x?x?xf32>) outs(%s_init : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %o_init = tensor.empty(%b, %nq) : tensor<?x?x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  // expected-remark @+1 {{raised to attn.attention (rank 3, no mask, scale 1)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<?x?x?xf32>, tensor<?x?x8xf32>) outs(%o_zero : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %o : tensor<?x?x8xf32>
}
