// Hostile input for kernel generation: cu_seqlens with a max_seqlen far
// beyond the packed tokens (2^62). It was accepted.
// RUN: not attn-compile %s --family sm80 --no-cubin --emit manifest 2>&1 | FileCheck %s
// CHECK: error: 'attn.attention' op expected max_seqlen_q (4611686018427387904) to be at most the packed tokens (64)
func.func @forward(%q: tensor<64x2x64xbf16>, %cu: tensor<3xi32>) -> tensor<64x2x64xbf16> {
  %o = attn.attention %q, %q, %q cu_seqlens(%cu, %cu) : tensor<3xi32>, tensor<3xi32> max [4611686018427387904, 32]
      : tensor<64x2x64xbf16>, tensor<64x2x64xbf16>, tensor<64x2x64xbf16> -> tensor<64x2x64xbf16>
  return %o : tensor<64x2x64xbf16>
}
