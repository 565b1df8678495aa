// The scale as a run-time operand: a kernel directory records a default
// scale, so attn-compile asks for the attribute.
func.func @runtime_scale(%q: tensor<1x1x16x64xbf16>, %s: f32) -> tensor<1x1x16x64xbf16> {
  %o = attn.attention %q, %q, %q scale(%s)
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>
      -> tensor<1x1x16x64xbf16>
  return %o : tensor<1x1x16x64xbf16>
}
