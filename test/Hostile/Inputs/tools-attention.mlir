// One bf16 attention, for the hostile-input tests of the tools.
func.func @attn(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>,
                %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %o = attn.attention %q, %k, %v : tensor<1x2x128x64xbf16>,
      tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16> -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}
