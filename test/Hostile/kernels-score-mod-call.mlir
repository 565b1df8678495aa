// Hostile input for kernel generation: a score_mod region that calls a
// function. It passed the verifier and the CPU path; the verifier now
// takes exactly what every back end compiles (isScoreModOp).
// RUN: not attn-compile %s --no-cubin --emit manifest 2>&1 | FileCheck %s
// CHECK: error: 'attn.attention' op expected score_mod to hold only arith ops and math.tanh, math.exp, math.exp2, math.absf on f32, got 'func.call'
// CHECK: note: this op
func.func private @helper(f32) -> f32
func.func @forward(%q: tensor<1x1x16x64xbf16>) -> tensor<1x1x16x64xbf16> {
  %o = attn.attention %q, %q, %q
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16> -> tensor<1x1x16x64xbf16>
      score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %r = func.call @helper(%s) : (f32) -> f32
    attn.yield %r : f32
  }
  return %o : tensor<1x1x16x64xbf16>
}
