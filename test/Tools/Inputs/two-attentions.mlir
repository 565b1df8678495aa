// Two attention ops in one module: attn-compile builds one kernel directory
// per attention, so it asks for exactly one.
func.func @two(%q: tensor<1x1x64x64xbf16>) -> (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>) {
  %a = attn.attention %q, %q, %q
      : tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16> -> tensor<1x1x64x64xbf16>
  %b = attn.attention %q, %q, %q mask <causal>
      : tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16> -> tensor<1x1x64x64xbf16>
  return %a, %b : tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>
}
