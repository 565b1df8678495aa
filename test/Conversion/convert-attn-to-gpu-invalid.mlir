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

func.func @odd_head_dim(%q: tensor<1x1x16x84xbf16>) -> tensor<1x1x16x84xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: head dim 84 is not supported: the GPU kernels take multiples of 8 up to 256 (other than 16, 32, 64, 128 and 256 zero-padded to the next of those)}}
  %o = attn.attention %q, %q, %q
      : tensor<1x1x16x84xbf16>, tensor<1x1x16x84xbf16>, tensor<1x1x16x84xbf16> -> tensor<1x1x16x84xbf16>
  return %o : tensor<1x1x16x84xbf16>
}

// -----

// score_mod ops other than arith and the math ops with a PTX form would
// need libdevice: refused, naming the op.
func.func @score_mod_sin(%q: tensor<1x1x16x64xbf16>) -> tensor<1x1x16x64xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: score_mod op 'math.sin' is not supported by the GPU kernels (they take arith ops and math.tanh, math.exp, math.exp2, math.absf)}}
  %o = attn.attention %q, %q, %q
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16> -> tensor<1x1x16x64xbf16>
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %y = math.sin %s : f32
    attn.yield %y : f32
  }
  return %o : tensor<1x1x16x64xbf16>
}
