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

// softcap (C · tanh(s / C)) is recognised and folded: attn_gpu.tanh of
// s · (scale / C) (the softmax_scale argument times 1/30), and C · log2(e)
// = 43.28... as the softmax's constant.
// CHECK-LABEL: func.func @softcap
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_mod{{[0-9a-f]+}}_nolse_m128n128s2
// AUTO: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_mod{{[0-9a-f]+}}_nolse_m128n128s2
// CHECK: llvm.func @attn_fwd_sm90_d128_bf16_causal_mod{{[0-9a-f]+}}_nolse_m128n128s2(
// CHECK-SAME: %[[SCALE:arg9]]: f32
// CHECK-DAG: %[[INV:.+]] = arith.constant 0.0333333{{[0-9]*}} : f32
// CHECK-DAG: arith.mulf %[[SCALE]], %[[INV]] : f32
// CHECK-DAG: arith.constant 43.2808495 : f32
// CHECK-DAG: attn_gpu.tanh %{{.*}} : f32
func.func @softcap(%q: tensor<1x1x256x128xbf16>) -> tensor<1x1x256x128xbf16> {
  %o = attn.attention %q, %q, %q mask <causal> softcap 30.0
      : tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16> -> tensor<1x1x256x128xbf16>
  return %o : tensor<1x1x256x128xbf16>
}

// -----

// A score_mod the tile emitter keeps per element where position arithmetic
// is not signed and wide (uitofp, i1 flags): it still lowers, and the
// additive form (score + term) keeps plain attention's softmax constant
// scale · log2(e) (the softmax_scale argument times 1.4426...).
// CHECK-LABEL: func.func @relative_bias_flags
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_mod{{[0-9a-f]+}}_nolse_m128n128s2
// CHECK: llvm.func @attn_fwd_sm90_d128_bf16_causal_mod{{[0-9a-f]+}}_nolse_m128n128s2(
// CHECK-SAME: %[[SCALE:arg9]]: f32
// CHECK: arith.uitofp
// CHECK: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK: arith.mulf %[[SCALE]], %[[LOG2E]] : f32
func.func @relative_bias_flags(%q: tensor<1x4x1000x128xbf16>) -> tensor<1x4x1000x128xbf16> {
  %o = attn.attention %q, %q, %q mask <causal>
      : tensor<1x4x1000x128xbf16>, tensor<1x4x1000x128xbf16>, tensor<1x4x1000x128xbf16> -> tensor<1x4x1000x128xbf16>
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %d32 = arith.index_cast %d : index to i32
    %zero = arith.constant 0 : i32
    %far = arith.cmpi sgt, %d32, %zero : i32
    %t = arith.constant true
    %near = arith.xori %far, %t : i1
    %df = arith.uitofp %d32 : i32 to f32
    %k = arith.constant -0.01 : f32
    %bias = arith.mulf %df, %k : f32
    %z = arith.constant 0.0 : f32
    %sel = arith.select %near, %z, %bias : f32
    %y = arith.addf %s, %sel : f32
    attn.yield %y : f32
  }
  return %o : tensor<1x4x1000x128xbf16>
}
