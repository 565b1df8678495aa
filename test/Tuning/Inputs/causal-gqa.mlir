func.func @causal_gqa(%q: tensor<1x8x200x64xbf16>, %k: tensor<1x2x300x64xbf16>,
                      %v: tensor<1x2x300x64xbf16>)
    -> (tensor<1x8x200x64xbf16>, tensor<1x8x200xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal>
      : tensor<1x8x200x64xbf16>, tensor<1x2x300x64xbf16>,
        tensor<1x2x300x64xbf16> -> tensor<1x8x200x64xbf16>, tensor<1x8x200xf32>
  return %o, %lse : tensor<1x8x200x64xbf16>, tensor<1x8x200xf32>
}
