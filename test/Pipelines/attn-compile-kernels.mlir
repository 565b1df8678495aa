// RUN: not attn-opt %s --convert-attn-to-gpu --attn-compile-kernels="format=ptx" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: attn-opt %s --attn-compile-kernels | FileCheck %s --check-prefix=NOKERNELS

// FORMAT: error: attn-compile-kernels: format must be isa, llvm, bin, fatbin or none (got 'ptx')

// Without @attn_kernels (convert-attn-to-gpu did not run) there is nothing
// to do, and the attention is left as it is.
// NOKERNELS-NOT: gpu.
// NOKERNELS: attn.attention
// NOKERNELS-NOT: gpu.
func.func @attention(%q: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = attn.attention %q, %q, %q
      : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}
