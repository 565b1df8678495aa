// RUN: attn-opt %s --convert-attn-to-gpu --split-input-file -verify-diagnostics

// Head dims past the forward's 256 have no backward either.
func.func @head_dim_264(%q: tensor<1x1x16x264xbf16>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x264xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: head dim 264 is not supported by the sm80-mma backward kernels: they take a multiple of 8 in [8, 256] (zero-padded to 32, 64, 128 or 256; above 128, dK and dV are accumulated 128 columns at a time) (family auto; and head dim 264 is not supported by the sm90a-wgmma backward kernels: they take a multiple of 8 in [8, 256] (zero-padded to 64, 128 or 256 by TMA; dK and dV in registers, split over the head dim above 128))}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      : tensor<1x1x16x264xbf16>, tensor<1x1x16x264xbf16>,
        tensor<1x1x16x264xbf16>, tensor<1x1x16x264xbf16>,
        tensor<1x1x16x264xbf16>, tensor<1x1x16xf32>
      -> tensor<1x1x16x264xbf16>, tensor<1x1x16x264xbf16>,
         tensor<1x1x16x264xbf16>
  return %dq : tensor<1x1x16x264xbf16>
}

// -----

func.func @f32(%q: tensor<1x1x16x64xf32>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x64xf32> {
  // expected-error @+1 {{cannot be compiled for the GPU: element type must be f16 or bf16 for the sm80-mma backward kernels, got f32 (f32 runs on the CPU path only)}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>,
        tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>,
        tensor<1x1x16x64xf32>, tensor<1x1x16xf32>
      -> tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>,
         tensor<1x1x16x64xf32>
  return %dq : tensor<1x1x16x64xf32>
}

