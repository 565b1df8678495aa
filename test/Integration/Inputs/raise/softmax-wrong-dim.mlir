// A near miss: softmax over the queries. Nothing to raise.
func.func @attention(%q: tensor<4x8xf32>, %k: tensor<8x4xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %s_init = tensor.empty() : tensor<4x4xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x8xf32>, tensor<8x4xf32>) outs(%s_zero : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.softmax dimension(0) ins(%s : tensor<4x4xf32>) outs(%s_init : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o_init = tensor.empty() : tensor<4x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x4xf32>, tensor<4x8xf32>) outs(%o_zero : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
