// RUN: attn-opt %s --convert-attn-to-gpu="family=auto" | FileCheck %s

// family=auto on sm_90a: the sm90a-wgmma kernel where the spec allows it
// (head dim 32 too, padded to a 64-column panel), the sm80 one otherwise
// (the bias operand).
// CHECK-LABEL: func.func @two_families
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_sm90_d64_bf16_nolse_m192n128s2
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_sm90_d32_bf16_nolse_m
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_d32_bf16_bias
func.func @two_families(%q: tensor<1x1x64x64xbf16>, %p: tensor<1x1x64x32xbf16>,
                        %b: tensor<1x1x64x64xbf16>)
    -> (tensor<1x1x64x64xbf16>, tensor<1x1x64x32xbf16>,
        tensor<1x1x64x32xbf16>) {
  %o = attn.attention %q, %q, %q
      : tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16> -> tensor<1x1x64x64xbf16>
  %o2 = attn.attention %p, %p, %p
      : tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16> -> tensor<1x1x64x32xbf16>
  %o3 = attn.attention %p, %p, %p bias %b : tensor<1x1x64x64xbf16>
      : tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16> -> tensor<1x1x64x32xbf16>
  return %o, %o2, %o3 : tensor<1x1x64x64xbf16>, tensor<1x1x64x32xbf16>,
                        tensor<1x1x64x32xbf16>
}
