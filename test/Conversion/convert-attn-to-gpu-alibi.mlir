// RUN: attn-opt %s --convert-attn-to-gpu="family=sm80" --split-input-file | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a" --split-input-file | FileCheck %s --check-prefix=SM90A

// alibi_slopes: both families take alibi_slopes (an f32 pointer) and
// alibi_slopes_stride_b (i64; 0 for [Hq] slopes) after the other
// parameters and key_start/key_end (sm90a: before the tensor maps), load the
// slope as an f32 (the only f32 global load of a bf16 kernel without LSE)
// and name the kernel _alibi (forward: after the mask,
// before _kr; backward: after _cap<C>).
// SM80-LABEL: func.func @forward
// SM80: attn.kernel = @attn_kernels::@attn_fwd_d64_bf16_causal_alibi_nolse_
// SM80: gpu.func @attn_fwd_d64_bf16_causal_alibi_nolse_{{[a-z0-9]+}}(
// SM80-SAME: %arg23: i64, %arg24: !llvm.ptr<1>, %arg25: i64) kernel
// SM80: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// SM90A-LABEL: func.func @forward
// SM90A: attn.kernel = @attn_kernels::@attn_fwd_sm90_d64_bf16_causal_alibi_nolse_
// SM90A: llvm.func @attn_fwd_sm90_d64_bf16_causal_alibi_nolse_{{[a-z0-9_]+}}(
// SM90A-SAME: %arg23: i64, %arg24: !llvm.ptr<1>, %arg25: i64, %arg26: !llvm.ptr
// SM90A: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
func.func @forward(%q: tensor<2x4x100x64xbf16>, %k: tensor<2x2x300x64xbf16>,
                   %v: tensor<2x2x300x64xbf16>, %s: tensor<2x4xf32>) -> tensor<2x4x100x64xbf16> {
  %o = attn.attention %q, %k, %v alibi_slopes(%s : tensor<2x4xf32>) mask <causal>
      : tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>
        -> tensor<2x4x100x64xbf16>
  return %o : tensor<2x4x100x64xbf16>
}

// -----

// With key_range: the range pair first, then the slopes; _alibi_kr.
// SM80-LABEL: func.func @forward_key_range
// SM80: gpu.func @attn_fwd_d64_bf16_alibi_kr_nolse_{{[a-z0-9]+}}(
// SM80-SAME: %arg23: i64, %arg24: !llvm.ptr<1>, %arg25: !llvm.ptr<1>, %arg26: !llvm.ptr<1>, %arg27: i64) kernel
// SM90A-LABEL: func.func @forward_key_range
// SM90A: llvm.func @attn_fwd_sm90_d64_bf16_alibi_kr_nolse_{{[a-z0-9_]+}}(
// SM90A-SAME: %arg23: i64, %arg24: !llvm.ptr<1>, %arg25: !llvm.ptr<1>, %arg26: !llvm.ptr<1>, %arg27: i64, %arg28: !llvm.ptr
func.func @forward_key_range(%q: tensor<2x4x100x64xbf16>, %k: tensor<2x2x300x64xbf16>,
                             %v: tensor<2x2x300x64xbf16>, %ks: tensor<2xi32>,
                             %ke: tensor<2xi32>, %s: tensor<4xf32>) -> tensor<2x4x100x64xbf16> {
  %o = attn.attention %q, %k, %v key_range(%ks, %ke) : tensor<2xi32>, tensor<2xi32>
      alibi_slopes(%s : tensor<4xf32>)
      : tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>
        -> tensor<2x4x100x64xbf16>
  return %o : tensor<2x4x100x64xbf16>
}

// -----

// The backward with softcap + ALiBi: every kernel of the directory takes the
// pair after the 41 (the PTX loads: test/Compile/ptx-alibi.test).
// SM80-LABEL: func.func @backward
// SM80: gpu.func @attn_bwd_d64_bf16_causal_cap30_alibi_pre(
// SM80-SAME: %arg40: i64, %arg41: !llvm.ptr<1>, %arg42: i64) kernel
// SM80: gpu.func @attn_bwd_d64_bf16_causal_cap30_alibi_dkdv_{{[a-z0-9]+}}(
// SM80-SAME: %arg40: i64, %arg41: !llvm.ptr<1>, %arg42: i64) kernel
// SM80: gpu.func @attn_bwd_d64_bf16_causal_cap30_alibi_dq(
// SM80-SAME: %arg40: i64, %arg41: !llvm.ptr<1>, %arg42: i64) kernel
// SM90A-LABEL: func.func @backward
// SM90A: llvm.func @attn_bwd_sm90_d64_bf16_causal_cap30_alibi_dkdv_{{[a-z0-9_]+}}(
// SM90A-SAME: %arg40: i64, %arg41: !llvm.ptr<1>, %arg42: i64, %arg43: !llvm.ptr
func.func @backward(%q: tensor<2x4x100x64xbf16>, %k: tensor<2x2x300x64xbf16>,
                    %v: tensor<2x2x300x64xbf16>, %o: tensor<2x4x100x64xbf16>,
                    %do: tensor<2x4x100x64xbf16>, %lse: tensor<2x4x100xf32>,
                    %s: tensor<4xf32>)
    -> (tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse
      alibi_slopes(%s : tensor<4xf32>) mask <causal> softcap 30.0
      : tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>,
        tensor<2x4x100x64xbf16>, tensor<2x4x100x64xbf16>, tensor<2x4x100xf32>
      -> tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>
  return %dq, %dk, %dv : tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>
}
