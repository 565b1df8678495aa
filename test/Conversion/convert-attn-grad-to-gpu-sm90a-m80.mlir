// The sm90a backward with query blocks of 80 rows (block-m 80,
// FlashAttention-3's at D = 128): Q and dO come in 80-row boxes, Sᵀ and
// dPᵀ are m64n80, and dQ = dS·K, which would be m80, is computed
// transposed: dS goes to shared memory as [query][key] rows
// (stmatrix.trans of the dSᵀ A fragments), and each consumer multiplies
// its 64-column panel of K, read MN-major, by it: dQᵀ = Kᵀ·dSᵀ, m64n80.
// One f32 dQ tile (no room for a second).
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a block-m=80" | FileCheck %s
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a block-m=80 deterministic=true" 2>&1 | FileCheck %s --check-prefix=DET

// CHECK: attn.kernel = @attn_kernels::@attn_bwd_sm90_d96_bf16_dkdv_n128m80s2
// CHECK-SAME: block_m = 80, block_n = 128, threads = 384, dynamic_shared_memory = 221424,
// CHECK-SAME: box_rows = 80>
// CHECK: attn_gpu.ring_view {{.*}} -> !attn_gpu.ring<2x80x128xbf16>
// CHECK: attn_gpu.ring_view {{.*}} -> !attn_gpu.ring<2x80x128xbf16>
// dS [query][key]: 80 rows of 128 keys.
// CHECK: attn_gpu.ring_view {{.*}} -> !attn_gpu.ring<2x80x128xbf16>
// One dQ warp: the bulk reduction of the tile's rows.
// CHECK: attn_gpu.bulk_reduce_add
// Sᵀ = K·Qᵀ, 6 k-steps over D = 96.
// CHECK: attn_gpu.warpgroup_mma {{.*}} {accumulate = false, element_type = bf16} : i64, !attn_gpu.frag<16x80xf32, acc>
// CHECK-COUNT-5: attn_gpu.warpgroup_mma {{.*}} {accumulate = true, element_type = bf16} : i64, !attn_gpu.frag<16x80xf32, acc>
// CHECK-COUNT-5: nvvm.stmatrix {{.*}} layout = #nvvm.mma_layout<col>
// dQᵀ = Kᵀ·dSᵀ: 8 k-steps of 16 keys, A (K) transposed.
// CHECK: attn_gpu.warpgroup_mma {{.*}} {accumulate = false, element_type = bf16, transpose_a} : i64, !attn_gpu.frag<16x80xf32, acc>
// CHECK-COUNT-7: attn_gpu.warpgroup_mma {{.*}} {accumulate = true, element_type = bf16, transpose_a} : i64, !attn_gpu.frag<16x80xf32, acc>
// dV += Pᵀ·dO: 5 k-steps of 16 query rows.
// CHECK-COUNT-5: attn_gpu.warpgroup_mma {{.*}} : !attn_gpu.frag<16x80xbf16, a>, !attn_gpu.frag<16x128xf32, acc>
// DET: block-m 80 of the sm90a backward kernel is not deterministic (it holds one dQ tile; --deterministic takes block-m 64)

func.func @d96(%q: tensor<1x2x100x96xbf16>, %lse: tensor<1x2x100xf32>)
    -> tensor<1x2x100x96xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      : tensor<1x2x100x96xbf16>, tensor<1x2x100x96xbf16>,
        tensor<1x2x100x96xbf16>, tensor<1x2x100x96xbf16>,
        tensor<1x2x100x96xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x96xbf16>, tensor<1x2x100x96xbf16>,
         tensor<1x2x100x96xbf16>
  return %dq : tensor<1x2x100x96xbf16>
}
