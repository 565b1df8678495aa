// RUN: attn-opt %s --convert-attn-to-gpu="family=sm80" --split-input-file | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a" --split-input-file | FileCheck %s --check-prefix=SM90A

// key_range: both families take key_start and key_end (i32 [B] pointers)
// after the other parameters (sm90a: before the tensor maps), load the
// batch entry's range once and name the kernel _kr.
// SM80-LABEL: func.func @forward
// SM80: attn.kernel = @attn_kernels::@attn_fwd_d64_bf16_causal_kr_nolse_
// SM80: gpu.func @attn_fwd_d64_bf16_causal_kr_nolse_{{[a-z0-9]+}}(
// SM80-SAME: %arg23: i64, %arg24: !llvm.ptr<1>, %arg25: !llvm.ptr<1>) kernel
// SM80-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// SM90A-LABEL: func.func @forward
// SM90A: attn.kernel = @attn_kernels::@attn_fwd_sm90_d64_bf16_causal_kr_nolse_
// SM90A: llvm.func @attn_fwd_sm90_d64_bf16_causal_kr_nolse_{{[a-z0-9_]+}}(
// SM90A-SAME: %arg23: i64, %arg24: !llvm.ptr<1>, %arg25: !llvm.ptr<1>, %arg26: !llvm.ptr
// SM90A-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
func.func @forward(%q: tensor<2x4x100x64xbf16>, %k: tensor<2x2x300x64xbf16>,
                   %v: tensor<2x2x300x64xbf16>, %s: tensor<2xi32>,
                   %e: tensor<2xi32>) -> tensor<2x4x100x64xbf16> {
  %o = attn.attention %q, %k, %v key_range(%s, %e) : tensor<2xi32>, tensor<2xi32>
      mask <causal>
      : tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>
        -> tensor<2x4x100x64xbf16>
  return %o : tensor<2x4x100x64xbf16>
}

// -----

// The backward: every kernel of the directory takes the pair after the 41.
// SM80-LABEL: func.func @backward
// SM80: gpu.func @attn_bwd_d64_bf16_causal_kr_dkdv_{{[a-z0-9]+}}(
// SM80-SAME: %arg40: i64, %arg41: !llvm.ptr<1>, %arg42: !llvm.ptr<1>) kernel
// SM90A-LABEL: func.func @backward
// SM90A: llvm.func @attn_bwd_sm90_d64_bf16_causal_kr_dkdv_{{[a-z0-9_]+}}(
// SM90A-SAME: %arg40: i64, %arg41: !llvm.ptr<1>, %arg42: !llvm.ptr<1>, %arg43: !llvm.ptr
func.func @backward(%q: tensor<2x4x100x64xbf16>, %k: tensor<2x2x300x64xbf16>,
                    %v: tensor<2x2x300x64xbf16>, %o: tensor<2x4x100x64xbf16>,
                    %do: tensor<2x4x100x64xbf16>, %lse: tensor<2x4x100xf32>,
                    %s: tensor<2xi32>, %e: tensor<2xi32>)
    -> (tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      key_range(%s, %e) : tensor<2xi32>, tensor<2xi32> mask <causal>
      : tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>,
        tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>, tensor<2x4x100xf32>
      -> tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>
  return %dq, %dk, %dv : tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>
}
