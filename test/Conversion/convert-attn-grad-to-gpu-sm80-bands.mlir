// RUN: attn-opt %s --convert-attn-to-gpu="family=sm80" --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm80 deterministic=true" --split-input-file | FileCheck %s --check-prefix=DET

// The sm80 backward takes every mask band, named by the band.
// CHECK-LABEL: func.func @window
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_d64_bf16_br4x0_dkdv_n128m64
// A key block walks only the query blocks whose rows see it: both ends of
// the walk are clamped (the left side bounds its last block).
// CHECK: gpu.func @attn_bwd_d64_bf16_br4x0_dkdv_n128m64
// CHECK-COUNT-2: arith.maxsi
// CHECK: scf.for
// DET-LABEL: func.func @window
// DET: #attn.kernel_launch<role = "dq", entry = "attn_bwd_d64_bf16_br4x0_dq_det_m64n64"
// The deterministic dq kernel's key loop starts at the window's first block
// (a computed value, not the constant 0).
// DET: gpu.func @attn_bwd_d64_bf16_br4x0_dq_det_m64n64
// DET: scf.for %{{.*}} = %{{[0-9]+}} to %{{[0-9]+}} step
func.func @window(%q: tensor<1x2x100x64xbf16>, %lse: tensor<1x2x100xf32>)
    -> tensor<1x2x100x64xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      mask <sliding> window [4, 0]
      : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
         tensor<1x2x100x64xbf16>
  return %dq : tensor<1x2x100x64xbf16>
}

// -----

// CHECK-LABEL: func.func @top_left
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_d64_bf16_tlinfx0_dkdv_n128m64
func.func @top_left(%q: tensor<1x1x16x64xbf16>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x64xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      mask <causal_top_left>
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16xf32>
      -> tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
         tensor<1x1x16x64xbf16>
  return %dq : tensor<1x1x16x64xbf16>
}

// -----

// Head dim 80: tiles 128 wide (16 chunks a row, so the preprocess and
// convert kernels take 128 / 16 = 8 rows a block), the products 80 deep.
// CHECK-LABEL: func.func @head_dim_80
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_d80_bf16_causal_dkdv_n128m64
// CHECK-SAME: #attn.kernel_launch<role = "preprocess", entry = "attn_bwd_d80_bf16_causal_pre", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 8>>
// CHECK-SAME: #attn.kernel_launch<role = "dkdv", entry = "attn_bwd_d80_bf16_causal_dkdv_n128m64", threads = 256, dynamic_shared_memory = 148480,
func.func @head_dim_80(%q: tensor<1x1x16x80xbf16>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x80xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      mask <causal>
      : tensor<1x1x16x80xbf16>, tensor<1x1x16x80xbf16>,
        tensor<1x1x16x80xbf16>, tensor<1x1x16x80xbf16>,
        tensor<1x1x16x80xbf16>, tensor<1x1x16xf32>
      -> tensor<1x1x16x80xbf16>, tensor<1x1x16x80xbf16>,
         tensor<1x1x16x80xbf16>
  return %dq : tensor<1x1x16x80xbf16>
}

// -----

// The softcap: each raw score becomes tanh(s · scale / C) before the mask
// (the softmax constant C·log2e), and dS takes 1 − tanh².
// CHECK-LABEL: func.func @softcap
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_d64_bf16_causal_cap30_dkdv_n128m64
// CHECK: gpu.func @attn_bwd_d64_bf16_causal_cap30_dkdv_n128m64
// CHECK-COUNT-32: attn_gpu.tanh
// CHECK-NOT: attn_gpu.tanh
// CHECK: gpu.return
func.func @softcap(%q: tensor<1x1x16x64xbf16>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x64xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      mask <causal> softcap 30.0
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16xf32>
      -> tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
         tensor<1x1x16x64xbf16>
  return %dq : tensor<1x1x16x64xbf16>
}
