// f16 inputs, f32 scores and softmax, P and O rounded back to f16.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @attention(%q: tensor<2x33x32xf16>, %kt: tensor<2x32x45xf16>, %v: tensor<2x45x32xf16>) -> tensor<2x33x32xf16> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.1767767 : f32
  %s_init = tensor.empty() : tensor<2x33x45xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x33x45xf32>) -> tensor<2x33x45xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x33x32xf16>, tensor<2x32x45xf16>) outs(%s_zero : tensor<2x33x45xf32>) -> tensor<2x33x45xf32>
  %x = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x33x45xf32>) outs(%s_init : tensor<2x33x45xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<2x33x45xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x33x45xf32>) outs(%s_init : tensor<2x33x45xf32>) -> tensor<2x33x45xf32>
  %ph_init = tensor.empty() : tensor<2x33x45xf16>
  %ph = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<2x33x45xf32>) outs(%ph_init : tensor<2x33x45xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x33x45xf16>
  %o_init = tensor.empty() : tensor<2x33x32xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x33x32xf32>) -> tensor<2x33x32xf32>
  %o = linalg.batch_matmul ins(%ph, %v : tensor<2x33x45xf16>, tensor<2x45x32xf16>) outs(%o_zero : tensor<2x33x32xf32>) -> tensor<2x33x32xf32>
  %oh_init = tensor.empty() : tensor<2x33x32xf16>
  %oh = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%o : tensor<2x33x32xf32>) outs(%oh_init : tensor<2x33x32xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x33x32xf16>
  return %oh : tensor<2x33x32xf16>
}
