// RUN: attn-opt %s --convert-attn-to-gpu --split-input-file -verify-diagnostics
// RUN: not attn-opt %s --convert-attn-to-gpu="stages=1" --split-input-file 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STAGES

// A ring of one stage cannot overlap loads with compute: rejected up front.
// STAGES: error: convert-attn-to-gpu: stages must be >= 2, got 1

func.func @f32(%q: tensor<1x1x16x64xf32>) -> tensor<1x1x16x64xf32> {
  // expected-error @+1 {{cannot be compiled for the GPU: element type must be f16 or bf16 for the sm80-mma forward kernels, got f32 (f32 runs on the CPU path only) (family auto; and element type must be f16 or bf16 for the sm90a-wgmma forward kernels, got f32 (f32 runs on the CPU path only))}}
  %o = attn.attention %q, %q, %q
      : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32> -> tensor<1x1x16x64xf32>
  return %o : tensor<1x1x16x64xf32>
}

// -----

func.func @odd_head_dim(%q: tensor<1x1x16x84xbf16>) -> tensor<1x1x16x84xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: head dim 84 is not supported by the sm80-mma forward kernels: they take a multiple of 8 in [8, 256] (other than 16, 32, 64, 128 and 256 zero-padded to the next of those) (family auto; and head dim 84 is not supported by the sm90a-wgmma forward kernels: they take a multiple of 8 in [8, 256] (zero-padded to 64, 128 or 256 by TMA))}}
  %o = attn.attention %q, %q, %q
      : tensor<1x1x16x84xbf16>, tensor<1x1x16x84xbf16>, tensor<1x1x16x84xbf16> -> tensor<1x1x16x84xbf16>
  return %o : tensor<1x1x16x84xbf16>
}

