// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a stages=3" | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="family=auto stages=3" | FileCheck %s
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a stages=99" 2>&1 | FileCheck %s --check-prefix=S99
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm80 stages=3" 2>&1 | FileCheck %s --check-prefix=S80

// stages is the sm90a forward's K/V ring depth without block sizes too
// (it used to need block-m/block-n to be read at all).
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_sm90_d64_bf16_nolse_m192n128s3
// CHECK-SAME: attn.launch = #attn.launch<family = "sm90a-wgmma", block_m = 192, block_n = 128, stages = 3,
// CHECK-SAME: source = "option">
// S99: error: 'attn.attention' op cannot be compiled for the GPU: stages 99 is not supported by the sm90a-wgmma forward kernels: they take 2 to 8
// S80: error: 'attn.attention' op cannot be compiled for the GPU: stages 3 is not supported by the sm80-mma forward kernels: they take 2

func.func @d64(%q: tensor<1x1x16x64xbf16>) -> tensor<1x1x16x64xbf16> {
  %o = attn.attention %q, %q, %q
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16> -> tensor<1x1x16x64xbf16>
  return %o : tensor<1x1x16x64xbf16>
}
