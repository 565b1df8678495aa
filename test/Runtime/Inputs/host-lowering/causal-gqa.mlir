// Host code from convert-attn-to-gpu-launch, run by mlir-runner through
// libattn_mgpu.so (host-lowering-fake-driver.test). Q = K = 0, so row i's
// softmax is uniform over the keys it sees (j <= i, causal with Nq = Nk)
// and V[j] = j gives O[i, :] = i / 2 and LSE[i] = log(i + 1): every value
// exact in bf16 and f32, so the sum of O over the two heads is exactly
// 2 * 64 * (0 + 1 + ... + 63) / 2 = 129024.

func.func @attention(%q: tensor<1x2x?x64xbf16>, %k: tensor<1x1x?x64xbf16>,
                     %v: tensor<1x1x?x64xbf16>)
    -> (tensor<1x2x?x64xbf16>, tensor<1x2x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal>
      : tensor<1x2x?x64xbf16>, tensor<1x1x?x64xbf16>, tensor<1x1x?x64xbf16>
      -> tensor<1x2x?x64xbf16>, tensor<1x2x?xf32>
  return %o, %lse : tensor<1x2x?x64xbf16>, tensor<1x2x?xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @inputs() -> (tensor<1x2x?x64xbf16>, tensor<1x1x?x64xbf16>,
                        tensor<1x1x?x64xbf16>) {
  %n = arith.constant 64 : index
  %zero = arith.constant 0.0 : bf16
  %q0 = tensor.empty(%n) : tensor<1x2x?x64xbf16>
  %q = linalg.fill ins(%zero : bf16) outs(%q0 : tensor<1x2x?x64xbf16>) -> tensor<1x2x?x64xbf16>
  %k0 = tensor.empty(%n) : tensor<1x1x?x64xbf16>
  %k = linalg.fill ins(%zero : bf16) outs(%k0 : tensor<1x1x?x64xbf16>) -> tensor<1x1x?x64xbf16>
  %v = linalg.generic {indexing_maps = [affine_map<(b, h, j, d) -> (b, h, j, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%k0 : tensor<1x1x?x64xbf16>) {
  ^bb0(%out: bf16):
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to bf16
    linalg.yield %jf : bf16
  } -> tensor<1x1x?x64xbf16>
  return %q, %k, %v : tensor<1x2x?x64xbf16>, tensor<1x1x?x64xbf16>, tensor<1x1x?x64xbf16>
}

func.func @main() {
  %q, %k, %v = call @inputs() : () -> (tensor<1x2x?x64xbf16>, tensor<1x1x?x64xbf16>, tensor<1x1x?x64xbf16>)
  %o, %lse = call @attention(%q, %k, %v)
      : (tensor<1x2x?x64xbf16>, tensor<1x1x?x64xbf16>, tensor<1x1x?x64xbf16>)
      -> (tensor<1x2x?x64xbf16>, tensor<1x2x?xf32>)
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%o : tensor<1x2x?x64xbf16>) outs(%s1 : tensor<f32>) dimensions = [0, 1, 2, 3]
    (%x: bf16, %acc: f32) {
      %xf = arith.extf %x : bf16 to f32
      %r = arith.addf %xf, %acc : f32
      linalg.yield %r : f32
    }
  %sumu = tensor.cast %sum : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%sumu) : (tensor<*xf32>) -> ()
  %lseu = tensor.cast %lse : tensor<1x2x?xf32> to tensor<*xf32>
  call @printMemrefF32(%lseu) : (tensor<*xf32>) -> ()
  return
}

// No driver: the kernel module does not load, the launch is skipped, and
// nothing crashes (the outputs, never allocated, are not read).
func.func @main_no_driver() {
  %q, %k, %v = call @inputs() : () -> (tensor<1x2x?x64xbf16>, tensor<1x1x?x64xbf16>, tensor<1x1x?x64xbf16>)
  %o, %lse = call @attention(%q, %k, %v)
      : (tensor<1x2x?x64xbf16>, tensor<1x1x?x64xbf16>, tensor<1x1x?x64xbf16>)
      -> (tensor<1x2x?x64xbf16>, tensor<1x2x?xf32>)
  return
}
