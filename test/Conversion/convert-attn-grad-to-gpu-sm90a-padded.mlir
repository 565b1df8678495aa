// The sm90a backward at head dims that are not 64, 128 or 256: the tiles
// and products span D rounded up to 128 or 256 (tileHeadDim), TMA
// zero-fills the columns past D (the tensor maps carry the real width), and
// the f32 dQ tile keeps D columns so that one bulk reduction adds it. D = 96
// is the D = 128 schedule (dq-pipelined), D = 192 transposed-dkv (80 keys
// per block; with Dv != D the head-dim split).
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="family=auto" | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="family=sm90a deterministic=true" | FileCheck %s --check-prefix=DET

// CHECK-LABEL: func.func @d96
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_sm90_d96_bf16_causal_dkdv_n128m64s2,
// 64 KiB of K and V, 64 KiB of Q/dO stages at width 128, two dSᵀ tiles,
// two 64 x 96 f32 dQ tiles, LSE/Δ, barriers and the 1 KiB alignment.
// CHECK-SAME: family = "sm90a-wgmma", block_m = 64, block_n = 128, threads = 384, dynamic_shared_memory = 215024,
// CHECK-SAME: box_cols = 64, box_rows = 64>
// CHECK-SAME: schedule = "dq-pipelined"
// The deterministic kernels order their dQ adds at both (padded to 128 and
// 256).
// DET: attn_bwd_sm90_d96_bf16_causal_dkdv_n128m64s2_det
// DET: attn_bwd_sm90_d192_bf16_dkdv_n80m64s2_tdkv_det

func.func @d96(%q: tensor<1x2x100x96xbf16>, %lse: tensor<1x2x100xf32>)
    -> tensor<1x2x100x96xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      {mask = #attn.mask<causal>}
      : tensor<1x2x100x96xbf16>, tensor<1x2x100x96xbf16>,
        tensor<1x2x100x96xbf16>, tensor<1x2x100x96xbf16>,
        tensor<1x2x100x96xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x96xbf16>, tensor<1x2x100x96xbf16>,
         tensor<1x2x100x96xbf16>
  return %dq : tensor<1x2x100x96xbf16>
}

// -----

// CHECK-LABEL: func.func @d192
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_sm90_d192_bf16_dkdv_n80m64s2_tdkv
// CHECK-SAME: family = "sm90a-wgmma", block_m = 64, block_n = 80, threads = 384, dynamic_shared_memory = 223216,
// CHECK-SAME: schedule = "transposed-dkv"
func.func @d192(%q: tensor<1x2x100x192xbf16>, %lse: tensor<1x2x100xf32>)
    -> tensor<1x2x100x192xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      : tensor<1x2x100x192xbf16>, tensor<1x2x100x192xbf16>,
        tensor<1x2x100x192xbf16>, tensor<1x2x100x192xbf16>,
        tensor<1x2x100x192xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x192xbf16>, tensor<1x2x100x192xbf16>,
         tensor<1x2x100x192xbf16>
  return %dq : tensor<1x2x100x192xbf16>
}

// -----

// D != Dv (192/128): the kernel computes at the wider (256, the head-dim
// split); V and dO arrive zero-filled past 128 columns, dPᵀ runs 128 deep
// (8 k-steps) where Sᵀ runs 192 (12), and the names carry both head dims
// (the preprocess kernel's Δ runs over Dv).
// CHECK-LABEL: func.func @d192v128
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_sm90_d192v128_bf16_dkdv_n64m64s2_hsplit
// CHECK-SAME: entry = "attn_bwd_d192v128_bf16_pre"
// CHECK-SAME: entry = "attn_bwd_sm90_d192v128_bf16_dkdv_n64m64s2_hsplit"
// CHECK-SAME: entry = "attn_bwd_d192v128_bf16_dq"
// CHECK: llvm.func @attn_bwd_sm90_d192v128_bf16_dkdv_n64m64s2_hsplit
// CHECK-COUNT-12: attn_gpu.warpgroup_mma
// CHECK-NOT: attn_gpu.warpgroup_mma
// CHECK: attn_gpu.wgmma_commit_group
// CHECK-COUNT-8: attn_gpu.warpgroup_mma
// CHECK-NOT: attn_gpu.warpgroup_mma
// CHECK: attn_gpu.wgmma_commit_group
func.func @d192v128(%q: tensor<1x2x100x192xbf16>,
                    %v: tensor<1x2x100x128xbf16>,
                    %lse: tensor<1x2x100xf32>)
    -> tensor<1x2x100x128xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %v, %v, %v, %lse
      : tensor<1x2x100x192xbf16>, tensor<1x2x100x192xbf16>,
        tensor<1x2x100x128xbf16>, tensor<1x2x100x128xbf16>,
        tensor<1x2x100x128xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x192xbf16>, tensor<1x2x100x192xbf16>,
         tensor<1x2x100x128xbf16>
  return %dv : tensor<1x2x100x128xbf16>
}
