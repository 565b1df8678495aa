// RUN: attn-opt %s --convert-attn-to-gpu --split-input-file -verify-diagnostics
// RUN: not attn-opt %s --convert-attn-to-gpu="stages=1" --split-input-file 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STAGES

// A ring of one stage cannot overlap loads with compute: rejected up front.
// STAGES: error: convert-attn-to-gpu: stages must be >= 2, got 1

func.func @f32(%q: tensor<1x1x16x64xf32>) -> tensor<1x1x16x64xf32> {
  // expected-error @+1 {{cannot be compiled for the GPU: element type must be f16 or bf16 for the GPU kernels (f32 runs on the CPU path only)}}
  %o = attn.attention %q, %q, %q
      : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32> -> tensor<1x1x16x64xf32>
  return %o : tensor<1x1x16x64xf32>
}

// -----

func.func @odd_head_dim(%q: tensor<1x1x16x80xbf16>) -> tensor<1x1x16x80xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: head dim 80 is not supported: the GPU kernels take 16, 32, 64, 128 or 256}}
  %o = attn.attention %q, %q, %q
      : tensor<1x1x16x80xbf16>, tensor<1x1x16x80xbf16>, tensor<1x1x16x80xbf16> -> tensor<1x1x16x80xbf16>
  return %o : tensor<1x1x16x80xbf16>
}
