// RUN: attn-opt %s --convert-attn-to-gpu --split-input-file -verify-diagnostics

// dK and dV of a warp's keys stay in registers: wide heads do not fit.
func.func @head_dim_256(%q: tensor<1x1x16x256xbf16>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x256xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: head dim 256 is not supported by the sm80-mma backward kernels: they take a multiple of 8 in [8, 128] (zero-padded to 32, 64 or 128; dK and dV of a warp's 16 keys stay in registers) (family auto; and head dim 256 is not supported by the sm90a-wgmma backward kernels: they take 64 or 128 (whole 128-byte swizzle panels, dK and dV in registers))}}
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
  // expected-error @+1 {{cannot be compiled for the GPU: element type must be f16 or bf16 for the sm80-mma backward kernels, got f32 (f32 runs on the CPU path only)}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>,
        tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>,
        tensor<1x1x16x64xf32>, tensor<1x1x16xf32>
      -> tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>,
         tensor<1x1x16x64xf32>
  return %dq : tensor<1x1x16x64xf32>
}

