// The backward with the scale as a run-time operand (see runtime-scale.mlir).
func.func @runtime_scale_grad(%q: tensor<1x1x16x64xbf16>, %lse: tensor<1x1x16xf32>, %s: f32)
    -> tensor<1x1x16x64xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse scale(%s)
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16xf32>
      -> tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>
  return %dq : tensor<1x1x16x64xbf16>
}
