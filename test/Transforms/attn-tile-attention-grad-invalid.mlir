// RUN: attn-opt %s --attn-tile-attention-grad --split-input-file -verify-diagnostics
// RUN: not attn-opt %s --attn-lower-to-reference --split-input-file 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REF

// attn.attention_grad with dynamic head counts: the GQA group (Hq / Hkv)
// must be known to tile or to lower the backward, so both passes reject it
// with an error on the op rather than guessing.

// REF: error: 'attn.attention_grad' op could not be lowered to the reference form (dynamic head counts are not supported)
// REF: error: 'attn.attention_grad' op could not be lowered to the reference form (dynamic head counts are not supported)

func.func @grad_dynamic_heads(%q: tensor<1x?x16x64xf32>, %k: tensor<1x?x16x64xf32>,
    %v: tensor<1x?x16x64xf32>, %o: tensor<1x?x16x64xf32>, %do: tensor<1x?x16x64xf32>,
    %lse: tensor<1x?x16xf32>)
    -> (tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op could not be tiled: dynamic head counts are not supported}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse :
      tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>,
      tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>, tensor<1x?x16xf32>
      -> tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>
  return %dq, %dk, %dv : tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>
}

// -----

// Only the query heads dynamic.
func.func @grad_dynamic_query_heads(%q: tensor<1x?x16x64xf32>, %k: tensor<1x2x16x64xf32>,
    %v: tensor<1x2x16x64xf32>, %o: tensor<1x?x16x64xf32>, %do: tensor<1x?x16x64xf32>,
    %lse: tensor<1x?x16xf32>)
    -> (tensor<1x?x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op could not be tiled: dynamic head counts are not supported}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse :
      tensor<1x?x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>,
      tensor<1x?x16x64xf32>, tensor<1x?x16x64xf32>, tensor<1x?x16xf32>
      -> tensor<1x?x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>
  return %dq, %dk, %dv : tensor<1x?x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>
}

