// Nq = 24 < Nk = 56: an additive causal mask built from indices, aligned
// bottom-right (j <= i + 32), broadcast over the batch.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bc = affine_map<(d0, d1, d2) -> (d1, d2)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @attention(%q: tensor<2x24x16xf32>, %kt: tensor<2x16x56xf32>, %v: tensor<2x56x16xf32>) -> tensor<2x24x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.25 : f32
  %s_init = tensor.empty() : tensor<2x24x56xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x24x56xf32>) -> tensor<2x24x56xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x24x16xf32>, tensor<2x16x56xf32>) outs(%s_zero : tensor<2x24x56xf32>) -> tensor<2x24x56xf32>
  %m_init = tensor.empty() : tensor<24x56xf32>
  %mask = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%m_init : tensor<24x56xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c32 = arith.constant 32 : index
    %lim = arith.addi %i, %c32 : index
    %future = arith.cmpi sgt, %j, %lim : index
    %r = arith.select %future, %ninf, %zero : f32
    linalg.yield %r : f32
  } -> tensor<24x56xf32>
  %x = linalg.generic {indexing_maps = [#id3, #bc, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x24x56xf32>, tensor<24x56xf32>) outs(%s_init : tensor<2x24x56xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %y = arith.mulf %in, %c : f32
    %r = arith.addf %y, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x24x56xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<2x24x56xf32>) outs(%s_init : tensor<2x24x56xf32>) -> tensor<2x24x56xf32>
  %o_init = tensor.empty() : tensor<2x24x16xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<2x24x16xf32>) -> tensor<2x24x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x24x56xf32>, tensor<2x56x16xf32>) outs(%o_zero : tensor<2x24x16xf32>) -> tensor<2x24x16xf32>
  return %o : tensor<2x24x16xf32>
}
