// A module with both passes: attn-compile compiles one direction at a time.
func.func @both(%q: tensor<1x1x16x64xbf16>, %do: tensor<1x1x16x64xbf16>)
    -> (tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>) {
  %o, %lse = attn.attention %q, %q, %q
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>
      -> tensor<1x1x16x64xbf16>, tensor<1x1x16xf32>
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %o, %do, %lse
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16xf32>
      -> tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
         tensor<1x1x16x64xbf16>
  return %o, %dq : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>
}
