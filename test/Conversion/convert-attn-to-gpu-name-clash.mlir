// RUN: attn-opt %s --convert-attn-to-gpu="family=sm80" --split-input-file -verify-diagnostics

// The input's own @attn_kernels function of the generated kernel's name
// would be compiled (and named in the manifest) instead of the kernel:
// refused.
module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @attn_fwd_d64_bf16_nolse_m128n64w4s2() kernel {
      gpu.return
    }
  }
  func.func @forward(%q: tensor<1x1x16x64xbf16>) -> tensor<1x1x16x64xbf16> {
    // expected-error @+1 {{cannot be compiled for the GPU: the input's gpu.module @attn_kernels already holds a symbol named 'attn_fwd_d64_bf16_nolse_m128n64w4s2', the name of the kernel generated for it}}
    %o = attn.attention %q, %q, %q
        : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16> -> tensor<1x1x16x64xbf16>
    return %o : tensor<1x1x16x64xbf16>
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @attn_bwd_d64_bf16_pre() kernel {
      gpu.return
    }
  }
  func.func @backward(%q: tensor<1x1x16x64xbf16>, %lse: tensor<1x1x16xf32>)
      -> tensor<1x1x16x64xbf16> {
    // expected-error @+1 {{cannot be compiled for the GPU: the input's gpu.module @attn_kernels already holds a symbol named 'attn_bwd_d64_bf16_pre', the name of the kernel generated for it}}
    %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
        : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
          tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
          tensor<1x1x16x64xbf16>, tensor<1x1x16xf32>
        -> tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
           tensor<1x1x16x64xbf16>
    return %dq : tensor<1x1x16x64xbf16>
  }
}

// -----

// Other functions of the input's @attn_kernels stay, next to the kernel.
module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @mine() kernel {
      gpu.return
    }
  }
  func.func @forward(%q: tensor<1x1x16x64xbf16>) -> tensor<1x1x16x64xbf16> {
    %o = attn.attention %q, %q, %q
        : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16> -> tensor<1x1x16x64xbf16>
    return %o : tensor<1x1x16x64xbf16>
  }
}
