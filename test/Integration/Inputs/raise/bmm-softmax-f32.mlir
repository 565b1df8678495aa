// torch-style rank 3, f32: Kᵀ through linalg.transpose, a scale, linalg.softmax.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @attention(%q: tensor<2x37x16xf32>, %k: tensor<2x53x16xf32>, %v: tensor<2x53x8xf32>) -> tensor<2x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.25 : f32
  %kt_init = tensor.empty() : tensor<2x16x53xf32>
  %kt = linalg.transpose ins(%k : tensor<2x53x16xf32>) outs(%kt_init : tensor<2x16x53xf32>) permutation = [0, 2, 1]
  %s_init = tensor.empty() : tensor<2x37x53xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x37x53xf32>) -> tensor<2x37x53xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x37x16xf32>, tensor<2x16x53xf32>) outs(%s_zero : tensor<2x37x53xf32>) -> tensor<2x37x53xf32>
  %x = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x37x53xf32>) outs(%s_init : tensor<2x37x53xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<2x37x53xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x37x53xf32>) outs(%s_init : tensor<2x37x53xf32>) -> tensor<2x37x53xf32>
  %o_init = tensor.empty() : tensor<2x37x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x37x8xf32>) -> tensor<2x37x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x37x53xf32>, tensor<2x53x8xf32>) outs(%o_zero : tensor<2x37x8xf32>) -> tensor<2x37x8xf32>
  return %o : tensor<2x37x8xf32>
}
