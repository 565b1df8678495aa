// Hostile input for kernel generation: the input already holds
// @attn_kernels with a function of the generated kernel's name. It used to
// be compiled in (and named by the manifest) instead of the kernel.
// RUN: not attn-compile %s --family sm80 --chip sm_80 --no-cubin --emit manifest 2>&1 | FileCheck %s
// CHECK: error: 'attn.attention' op cannot be compiled for the GPU: the input's gpu.module @attn_kernels already holds a symbol named 'attn_fwd_d64_bf16_nolse_m128n64w4s2', the name of the kernel generated for it
module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @attn_fwd_d64_bf16_nolse_m128n64w4s2() kernel {
      gpu.return
    }
  }
  func.func @forward(%q: tensor<1x1x16x64xbf16>) -> tensor<1x1x16x64xbf16> {
    %o = attn.attention %q, %q, %q
        : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16> -> tensor<1x1x16x64xbf16>
    return %o : tensor<1x1x16x64xbf16>
  }
}
