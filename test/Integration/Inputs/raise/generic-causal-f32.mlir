// Rank 4 in linalg.generic, causal select on linalg.index, the softmax as
// max / exp(S - max) / sum / division, f32.
#qk_q = affine_map<(b, h, m, n, k) -> (b, h, m, k)>
#qk_k = affine_map<(b, h, m, n, k) -> (b, h, n, k)>
#qk_s = affine_map<(b, h, m, n, k) -> (b, h, m, n)>
#pv_p = affine_map<(b, h, m, e, n) -> (b, h, m, n)>
#pv_v = affine_map<(b, h, m, e, n) -> (b, h, n, e)>
#pv_o = affine_map<(b, h, m, e, n) -> (b, h, m, e)>
#id4 = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row4 = affine_map<(b, h, m, n) -> (b, h, m)>
func.func @attention(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x8xf32>) -> tensor<1x2x40x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %four = arith.constant 4.0 : f32
  %s_init = tensor.empty() : tensor<1x2x40x40xf32>
  %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<1x2x40x40xf32>) -> tensor<1x2x40x40xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>) outs(%s_zero : tensor<1x2x40x40xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x2x40x40xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x2x40x40xf32>) outs(%s_init : tensor<1x2x40x40xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %keep = arith.cmpi sle, %j, %i : index
    %d = arith.divf %in, %four : f32
    %r = arith.select %keep, %d, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<1x2x40x40xf32>
  %r_init = tensor.empty() : tensor<1x2x40xf32>
  %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<1x2x40xf32>) -> tensor<1x2x40xf32>
  %max = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%masked : tensor<1x2x40x40xf32>) outs(%max_init : tensor<1x2x40xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x2x40xf32>
  %e = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%masked, %max : tensor<1x2x40x40xf32>, tensor<1x2x40xf32>) outs(%s_init : tensor<1x2x40x40xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<1x2x40x40xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<1x2x40xf32>) -> tensor<1x2x40xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e : tensor<1x2x40x40xf32>) outs(%sum_init : tensor<1x2x40xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x2x40xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %sum : tensor<1x2x40x40xf32>, tensor<1x2x40xf32>) outs(%s_init : tensor<1x2x40x40xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %r = arith.divf %in, %l : f32
    linalg.yield %r : f32
  } -> tensor<1x2x40x40xf32>
  %o_init = tensor.empty() : tensor<1x2x40x8xf32>
  %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<1x2x40x8xf32>) -> tensor<1x2x40x8xf32>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x2x40x40xf32>, tensor<1x2x40x8xf32>) outs(%o_zero : tensor<1x2x40x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<1x2x40x8xf32>
  return %o : tensor<1x2x40x8xf32>
}
