// RUN: attn-opt %s --convert-attn-to-gpu --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="family=auto" --split-input-file | FileCheck %s
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a" --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM90A

// Variable length: the kernel takes cu_seqlens_q/kv after the 24 plain
// parameters, reads the sequence's bounds from them, and skips the query
// blocks past the sequence's end. `auto` keeps the sm80 family (the sm90a
// family does not implement it).
// CHECK-LABEL: func.func @varlen
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_d64_bf16_causal_varlen_m128n64w4s2
// CHECK: gpu.func @attn_fwd_d64_bf16_causal_varlen_m128n64w4s2(
// CHECK-SAME: %arg23: i64, %arg24: !llvm.ptr<1>, %arg25: !llvm.ptr<1>) kernel
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: scf.if
// CHECK: scf.for
// SM90A: cannot be compiled for the GPU: variable length (cu_seqlens) is not supported by the sm90a-wgmma forward kernels: their TMA tensor maps address dense [B, N, H, D] tensors
func.func @varlen(%q: tensor<400x8x64xbf16>, %k: tensor<500x2x64xbf16>,
                  %v: tensor<500x2x64xbf16>, %cq: tensor<4xi32>,
                  %ck: tensor<4xi32>) -> (tensor<400x8x64xbf16>, tensor<8x400xf32>) {
  %o, %lse = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<4xi32>, tensor<4xi32>
      max [200, 300] mask <causal>
      : tensor<400x8x64xbf16>, tensor<500x2x64xbf16>, tensor<500x2x64xbf16>
        -> tensor<400x8x64xbf16>, tensor<8x400xf32>
  return %o, %lse : tensor<400x8x64xbf16>, tensor<8x400xf32>
}

// -----

// Bias: a pointer and three strides after the plain parameters; each score
// element loads its bias (converted to f32) and adds it after scaling.
// CHECK-LABEL: func.func @bias
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_d64_f16_bias_nolse_m128n64w4s2
// CHECK: gpu.func @attn_fwd_d64_f16_bias_nolse_m128n64w4s2(
// CHECK-SAME: %arg23: i64, %arg24: !llvm.ptr<1>, %arg25: i64, %arg26: i64, %arg27: i64) kernel
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f16
// CHECK: llvm.fpext %{{.*}} : f16 to f32
// SM90A: cannot be compiled for the GPU: the bias operand is not supported by the sm90a-wgmma forward kernels
func.func @bias(%q: tensor<2x4x256x64xf16>, %k: tensor<2x4x256x64xf16>,
                %v: tensor<2x4x256x64xf16>, %b: tensor<1x4x256x256xf16>)
    -> tensor<2x4x256x64xf16> {
  %o = attn.attention %q, %k, %v bias %b : tensor<1x4x256x256xf16>
      : tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16>
        -> tensor<2x4x256x64xf16>
  return %o : tensor<2x4x256x64xf16>
}
