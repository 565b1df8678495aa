// RUN: attn-opt %s --convert-attn-to-gpu --split-input-file -verify-diagnostics

// dK and dV of a warp's keys stay in registers: wide heads do not fit.
func.func @head_dim_256(%q: tensor<1x1x16x256xbf16>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x256xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: head dims must be 32, 64 or 128 for the GPU backward kernels (got 256/256)}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      : tensor<1x1x16x256xbf16>, tensor<1x1x16x256xbf16>,
        tensor<1x1x16x256xbf16>, tensor<1x1x16x256xbf16>,
        tensor<1x1x16x256xbf16>, tensor<1x1x16xf32>
      -> tensor<1x1x16x256xbf16>, tensor<1x1x16x256xbf16>,
         tensor<1x1x16x256xbf16>
  return %dq : tensor<1x1x16x256xbf16>
}

// -----

func.func @f32(%q: tensor<1x1x16x64xf32>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x64xf32> {
  // expected-error @+1 {{cannot be compiled for the GPU: the GPU backward kernels take f16 or bf16 tensors}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>,
        tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>,
        tensor<1x1x16x64xf32>, tensor<1x1x16xf32>
      -> tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>,
         tensor<1x1x16x64xf32>
  return %dq : tensor<1x1x16x64xf32>
}

// -----

// The backward kernels mask bottom-right causal only.
func.func @top_left(%q: tensor<1x1x16x64xbf16>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x64xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: the backward kernels take no mask or a bottom-right causal mask}}
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

func.func @window(%q: tensor<1x1x16x64xbf16>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x64xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: the backward kernels take no mask or a bottom-right causal mask, not a window}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      mask <sliding> window [4, 0]
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16xf32>
      -> tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
         tensor<1x1x16x64xbf16>
  return %dq : tensor<1x1x16x64xbf16>
}
