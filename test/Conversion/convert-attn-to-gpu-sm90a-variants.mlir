// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a" --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="family=auto" --split-input-file | FileCheck %s --check-prefix=AUTO

// The sm90a-wgmma family with the compile-time masks and score_mod
// (docs/variants.md); family=auto takes it for them too.

// Top-left causal: the band's offset d(i) - i is 0 (no Nk - Nq), the key
// loop of both the producer (TMA) and the consumers stops at the band, and
// causal masks run the longest query blocks first.
// CHECK-LABEL: func.func @causal_top_left
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_sm90_d64_bf16_tlinfx0_nolse_m192n128s2_p
// AUTO: attn.kernel = @attn_kernels::@attn_fwd_sm90_d64_bf16_tlinfx0_nolse_m192n128s2_p
// CHECK: llvm.func @attn_fwd_sm90_d64_bf16_tlinfx0_nolse_m192n128s2_p(
func.func @causal_top_left(%q: tensor<1x1x300x64xbf16>, %k: tensor<1x1x500x64xbf16>) -> tensor<1x1x300x64xbf16> {
  %o = attn.attention %q, %k, %k mask <causal_top_left>
      : tensor<1x1x300x64xbf16>, tensor<1x1x500x64xbf16>, tensor<1x1x500x64xbf16> -> tensor<1x1x300x64xbf16>
  return %o : tensor<1x1x300x64xbf16>
}

// -----

// A sliding window (bottom-right, 256 keys back): the kernel is named by
// its band; both key loops (the producer's TMA loads and the consumers')
// start at the window's first block (a computed bound, not 0).
// CHECK-LABEL: func.func @sliding
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_br256x0_m128n128s2
// AUTO: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_br256x0_m128n128s2
// CHECK: llvm.func @attn_fwd_sm90_d128_bf16_br256x0_m128n128s2(
// CHECK: nvvm.setmaxregister  decrease
// CHECK: scf.for %{{.+}} = %{{[0-9]+}} to %{{[0-9]+}} step
// CHECK: nvvm.setmaxregister  increase
// CHECK: scf.for %{{.+}} = %{{[0-9]+}} to %{{[0-9]+}} step
func.func @sliding(%q: tensor<1x2x1000x128xbf16>) -> (tensor<1x2x1000x128xbf16>, tensor<1x2x1000xf32>) {
  %o, %lse = attn.attention %q, %q, %q mask <sliding> window [256, 0]
      : tensor<1x2x1000x128xbf16>, tensor<1x2x1000x128xbf16>, tensor<1x2x1000x128xbf16> -> tensor<1x2x1000x128xbf16>, tensor<1x2x1000xf32>
  return %o, %lse : tensor<1x2x1000x128xbf16>, tensor<1x2x1000xf32>
}

// -----

// softcap (C · tanh(s / C)) is recognised and folded: tanh.approx.f32 of
// s · (scale / C) (1/sqrt(128)/30 = 0.002946...), and C · log2(e) =
// 43.28... as the softmax's constant.
// CHECK-LABEL: func.func @softcap
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_mod{{[0-9a-f]+}}_nolse_m128n128s2
// AUTO: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_mod{{[0-9a-f]+}}_nolse_m128n128s2
// CHECK: llvm.func @attn_fwd_sm90_d128_bf16_causal_mod{{[0-9a-f]+}}_nolse_m128n128s2(
// CHECK-DAG: arith.constant 0.00294627831 : f32
// CHECK-DAG: arith.constant 43.2808495 : f32
// CHECK-DAG: tanh.approx.f32
// CHECK-NOT: tanh.approx.f16x2
func.func @softcap(%q: tensor<1x1x256x128xbf16>) -> tensor<1x1x256x128xbf16> {
  %o = attn.attention %q, %q, %q mask <causal> softcap 30.0
      : tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16> -> tensor<1x1x256x128xbf16>
  return %o : tensor<1x1x256x128xbf16>
}
