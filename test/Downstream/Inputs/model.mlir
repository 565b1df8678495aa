// A downstream compiler's module: two attentions written in linalg the way
// front ends emit them, next to code that has nothing to do with attention
// (arith on tensors, a projection matmul, the compiler's own GPU kernel).
// The embedded pipeline raises the attentions, compiles them to PTX and
// leaves everything else as it was. Checked by test/Downstream/CMakeLists.txt.

// MYOPT: // passes: {{.*}}(attn-raise-attention{{.*}}convert-attn-to-gpu{{.*}}attn-compile-kernels{{.*}}chip=sm_80
// MYOPT: func.func @embedding_scale(%[[X:.+]]: tensor<8x64xf32>, %[[S:.+]]: tensor<8x64xf32>) -> tensor<8x64xf32> {
// MYOPT-NEXT: %[[M:.+]] = arith.mulf %[[X]], %[[S]] : tensor<8x64xf32>
// MYOPT-NEXT: %[[A:.+]] = arith.addf %[[M]], %[[X]] : tensor<8x64xf32>
// MYOPT-NEXT: return %[[A]] : tensor<8x64xf32>
// MYOPT: func.func @projection
// MYOPT: linalg.matmul
// MYOPT: func.func @self_attention
// MYOPT-NOT: linalg.generic
// MYOPT: attn.attention %{{.+}}, %{{.+}}, %{{.+}} mask <causal> scale 1.250000e-01 {attn.kernel = @attn_kernels::@attn_fwd_d64_bf16_causal
// MYOPT: func.func @cross_attention
// MYOPT-NOT: linalg.softmax
// MYOPT: attn.attention %{{.+}}, %{{.+}}, %{{.+}} scale 1.250000e-01 {attn.kernel = @attn_kernels::@attn_fwd_d128_f16
// MYOPT: gpu.module @my_kernels {
// MYOPT-NEXT: gpu.func @relu(%{{.+}}: memref<?xf32>) kernel {
// MYOPT: arith.maximumf
// MYOPT: gpu.binary @attn_kernels ({{[0-9]+}} bytes of PTX)

// PTX: .target sm_80
// PTX-DAG: .entry attn_fwd_d64_bf16_causal
// PTX-DAG: .entry attn_fwd_d128_f16

// TEXTUAL: // passes: {{.*}}(attn-raise-attention{{.*}}convert-attn-to-gpu{{.*}}chip=sm_90a{{.*}}attn-compile-kernels{{.*}}chip=sm_90a
// TEXTUAL: func.func @embedding_scale
// TEXTUAL-NEXT: arith.mulf
// TEXTUAL: attn.attention {{.*}} mask <causal>
// TEXTUAL: attn.attention
// TEXTUAL: gpu.module @my_kernels
// TEXTUAL: gpu.binary @attn_kernels

// With --host, each attention is host code that launches its kernel: Q, K,
// V as buffers, O allocated on the device, the grid computed from the
// sizes, the launch and a wait (convert-attn-to-gpu-launch).
// HOST: // passes: {{.*}}attn-compile-kernels{{.*}}convert-attn-to-gpu-launch
// HOST: func.func @embedding_scale(%[[X:.+]]: tensor<8x64xf32>, %[[S:.+]]: tensor<8x64xf32>) -> tensor<8x64xf32> {
// HOST-NEXT: %[[M:.+]] = arith.mulf %[[X]], %[[S]] : tensor<8x64xf32>
// HOST: func.func @self_attention
// HOST-NOT: attn.attention
// HOST: bufferization.to_buffer %{{.+}} read_only : tensor<1x4x128x64xbf16> to memref<1x4x128x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
// HOST: %[[T0:.+]] = gpu.wait async
// HOST: %[[O:.+]], %[[T1:.+]] = gpu.alloc async [%[[T0]]] () : memref<1x4x128x64xbf16>
// HOST: %[[GX:.+]] = arith.ceildivui
// HOST: %[[T2:.+]] = gpu.launch_func async [%[[T1]]] @attn_kernels::@attn_fwd_d64_bf16_causal{{.*}} blocks in (%[[GX]],
// HOST: gpu.wait [%[[T2]]]
// HOST: bufferization.to_tensor %[[O]] restrict
// HOST: func.func @cross_attention
// HOST-NOT: attn.attention
// HOST: gpu.launch_func async [%{{.+}}] @attn_kernels::@attn_fwd_d128_f16
// HOST: gpu.module @my_kernels {
// HOST-NEXT: gpu.func @relu
// HOST: gpu.binary @attn_kernels ({{[0-9]+}} bytes of PTX)

// CAPI: func.func @embedding_scale(%arg0: tensor<8x64xf32>, %arg1: tensor<8x64xf32>) -> tensor<8x64xf32> {
// CAPI-NEXT: %0 = arith.mulf %arg0, %arg1 : tensor<8x64xf32>
// CAPI: attn.attention {{.*}} mask <causal>
// CAPI: attn.attention
// CAPI: gpu.module @my_kernels
// CAPI: gpu.binary: 2 kernel entries

#qk_q = affine_map<(b, h, m, n, k) -> (b, h, m, k)>
#qk_k = affine_map<(b, h, m, n, k) -> (b, h, n, k)>
#qk_s = affine_map<(b, h, m, n, k) -> (b, h, m, n)>
#pv_p = affine_map<(b, h, m, e, n) -> (b, h, m, n)>
#pv_v = affine_map<(b, h, m, e, n) -> (b, h, n, e)>
#pv_o = affine_map<(b, h, m, e, n) -> (b, h, m, e)>
#id4 = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row4 = affine_map<(b, h, m, n) -> (b, h, m)>
#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>
module {
  func.func @embedding_scale(%x: tensor<8x64xf32>, %s: tensor<8x64xf32>) -> tensor<8x64xf32> {
    %0 = arith.mulf %x, %s : tensor<8x64xf32>
    %1 = arith.addf %0, %x : tensor<8x64xf32>
    return %1 : tensor<8x64xf32>
  }

  func.func @projection(%x: tensor<128x64xf32>, %w: tensor<64x64xf32>) -> tensor<128x64xf32> {
    %zero = arith.constant 0.0 : f32
    %init = tensor.empty() : tensor<128x64xf32>
    %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<128x64xf32>) -> tensor<128x64xf32>
    %y = linalg.matmul ins(%x, %w : tensor<128x64xf32>, tensor<64x64xf32>) outs(%fill : tensor<128x64xf32>) -> tensor<128x64xf32>
    return %y : tensor<128x64xf32>
  }

  // Causal self-attention, bf16 in, f32 softmax written out as max, exp,
  // sum and division, [B, H, N, D] in linalg.generic.
  func.func @self_attention(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x4x128x64xbf16>, %v: tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16> {
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %scale = arith.constant 0.125 : f32
    %s_init = tensor.empty() : tensor<1x4x128x128xf32>
    %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<1x4x128x128xf32>) -> tensor<1x4x128x128xf32>
    %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
        ins(%q, %k : tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>) outs(%s_zero : tensor<1x4x128x128xf32>) {
    ^bb0(%a: bf16, %b: bf16, %acc: f32):
      %af = arith.extf %a : bf16 to f32
      %bf = arith.extf %b : bf16 to f32
      %p = arith.mulf %af, %bf : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
    } -> tensor<1x4x128x128xf32>
    %masked = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%s : tensor<1x4x128x128xf32>) outs(%s_init : tensor<1x4x128x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %i = linalg.index 2 : index
      %j = linalg.index 3 : index
      %future = arith.cmpi sgt, %j, %i : index
      %x = arith.mulf %in, %scale : f32
      %r = arith.select %future, %ninf, %x : f32
      linalg.yield %r : f32
    } -> tensor<1x4x128x128xf32>
    %r_init = tensor.empty() : tensor<1x4x128xf32>
    %max_init = linalg.fill ins(%ninf : f32) outs(%r_init : tensor<1x4x128xf32>) -> tensor<1x4x128xf32>
    %max = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%masked : tensor<1x4x128x128xf32>) outs(%max_init : tensor<1x4x128xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<1x4x128xf32>
    %e = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%masked, %max : tensor<1x4x128x128xf32>, tensor<1x4x128xf32>) outs(%s_init : tensor<1x4x128x128xf32>) {
    ^bb0(%in: f32, %mx: f32, %out: f32):
      %d = arith.subf %in, %mx : f32
      %x = math.exp %d : f32
      linalg.yield %x : f32
    } -> tensor<1x4x128x128xf32>
    %sum_init = linalg.fill ins(%zero : f32) outs(%r_init : tensor<1x4x128xf32>) -> tensor<1x4x128xf32>
    %sum = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%e : tensor<1x4x128x128xf32>) outs(%sum_init : tensor<1x4x128xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<1x4x128xf32>
    %p_init = tensor.empty() : tensor<1x4x128x128xbf16>
    %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%e, %sum : tensor<1x4x128x128xf32>, tensor<1x4x128xf32>) outs(%p_init : tensor<1x4x128x128xbf16>) {
    ^bb0(%in: f32, %l: f32, %out: bf16):
      %r = arith.divf %in, %l : f32
      %t = arith.truncf %r : f32 to bf16
      linalg.yield %t : bf16
    } -> tensor<1x4x128x128xbf16>
    %o_init = tensor.empty() : tensor<1x4x128x64xf32>
    %o_zero = linalg.fill ins(%zero : f32) outs(%o_init : tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32>
    %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
        ins(%p, %v : tensor<1x4x128x128xbf16>, tensor<1x4x128x64xbf16>) outs(%o_zero : tensor<1x4x128x64xf32>) {
    ^bb0(%a: bf16, %b: bf16, %acc: f32):
      %af = arith.extf %a : bf16 to f32
      %bf = arith.extf %b : bf16 to f32
      %pr = arith.mulf %af, %bf : f32
      %r = arith.addf %acc, %pr : f32
      linalg.yield %r : f32
    } -> tensor<1x4x128x64xf32>
    %ob_init = tensor.empty() : tensor<1x4x128x64xbf16>
    %ob = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%o : tensor<1x4x128x64xf32>) outs(%ob_init : tensor<1x4x128x64xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %t = arith.truncf %in : f32 to bf16
      linalg.yield %t : bf16
    } -> tensor<1x4x128x64xbf16>
    return %ob : tensor<1x4x128x64xbf16>
  }

  // Cross-attention of 64 queries over 256 keys, f16, rank 2: K read as
  // [N, D] through the matmul's indexing maps, linalg.softmax.
  func.func @cross_attention(%q: tensor<64x128xf16>, %k: tensor<256x128xf16>, %v: tensor<256x128xf16>) -> tensor<64x128xf16> {
    %zero = arith.constant 0.0 : f32
    %zh = arith.constant 0.0 : f16
    %c = arith.constant 8.0 : f32
    %s_init = tensor.empty() : tensor<64x256xf32>
    %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<64x256xf32>) -> tensor<64x256xf32>
    %s = linalg.matmul indexing_maps = [#mk, #nk, #mn]
        ins(%q, %k : tensor<64x128xf16>, tensor<256x128xf16>) outs(%s_zero : tensor<64x256xf32>) -> tensor<64x256xf32>
    %x = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%s : tensor<64x256xf32>) outs(%s_init : tensor<64x256xf32>) {
    ^bb0(%in: f32, %out: f32):
      %d = arith.divf %in, %c : f32
      linalg.yield %d : f32
    } -> tensor<64x256xf32>
    %p = linalg.softmax dimension(1) ins(%x : tensor<64x256xf32>) outs(%s_init : tensor<64x256xf32>) -> tensor<64x256xf32>
    %ph_init = tensor.empty() : tensor<64x256xf16>
    %ph = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%p : tensor<64x256xf32>) outs(%ph_init : tensor<64x256xf16>) {
    ^bb0(%in: f32, %out: f16):
      %t = arith.truncf %in : f32 to f16
      linalg.yield %t : f16
    } -> tensor<64x256xf16>
    %o_init = tensor.empty() : tensor<64x128xf16>
    %o_zero = linalg.fill ins(%zh : f16) outs(%o_init : tensor<64x128xf16>) -> tensor<64x128xf16>
    %o = linalg.matmul ins(%ph, %v : tensor<64x256xf16>, tensor<256x128xf16>) outs(%o_zero : tensor<64x128xf16>) -> tensor<64x128xf16>
    return %o : tensor<64x128xf16>
  }

  // The downstream compiler's own kernel: not attn's to touch.
  gpu.module @my_kernels {
    gpu.func @relu(%buf: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %x = memref.load %buf[%tid] : memref<?xf32>
      %zero = arith.constant 0.0 : f32
      %y = arith.maximumf %x, %zero : f32
      memref.store %y, %buf[%tid] : memref<?xf32>
      gpu.return
    }
  }
}
