// f32 attention: raised, but the GPU kernels take f16/bf16 only; the C API
// hands back the diagnostic and my-c-compile fails.
// CHECK: error: 'attn.attention' op cannot be compiled for the GPU: element type must be f16 or bf16
// CHECK: my-c-compile: compiling {{.*}}f32-attention.mlir failed
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @attention(%q: tensor<2x64x64xf32>, %kt: tensor<2x64x64xf32>, %v: tensor<2x64x64xf32>) -> tensor<2x64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<2x64x64xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x64x64xf32>, tensor<2x64x64xf32>) outs(%s_zero : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x64x64xf32>) outs(%s_init : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x64x64xf32>, tensor<2x64x64xf32>) outs(%s_zero : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  return %o : tensor<2x64x64xf32>
}
