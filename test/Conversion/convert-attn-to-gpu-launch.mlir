// RUN: attn-opt %s --convert-attn-to-gpu="family=sm80" --convert-attn-to-gpu-launch --split-input-file | FileCheck %s

// Dynamic batch and sequence lengths: the grid is computed from the
// buffers' sizes at run time, the arguments follow the kernel ABI (q, k, v,
// o, lse; seq_q, seq_kv, heads_q, heads_kv; softmax_scale, the op's scale
// (1/sqrt(64) here) as a launch argument; the strides).
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[Q:.+]]: tensor<?x8x?x64xbf16>, %[[K:.+]]: tensor<?x2x?x64xbf16>, %[[V:.+]]: tensor<?x2x?x64xbf16>)
// CHECK-NOT: attn.attention
// CHECK: %[[QB:.+]] = bufferization.to_buffer %[[Q]] read_only : tensor<?x8x?x64xbf16> to memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: %{{.*}}, %[[QOFF:.+]], %[[QSIZE:.+]]:4, %[[QSTRIDE:.+]]:4 = memref.extract_strided_metadata %[[QB]]
// CHECK: %[[QPTR:.+]] = memref.extract_aligned_pointer_as_index %[[QB]]
// CHECK: bufferization.to_buffer %[[K]] read_only
// CHECK: %{{.*}}, %{{.*}}, %[[KSIZE:.+]]:4, %{{.*}}:4 = memref.extract_strided_metadata
// CHECK: bufferization.to_buffer %[[V]] read_only
// O [B, Hq, Nq, Dv] and LSE [B, Hq, Nq], on the device, sized like Q,
// allocated on the launch's stream.
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK: %[[O:.+]], %[[T1:.+]] = gpu.alloc async [%[[T0]]] (%[[QSIZE]]#0, %[[QSIZE]]#2) : memref<?x8x?x64xbf16>
// CHECK: %[[LSE:.+]], %[[T2:.+]] = gpu.alloc async [%[[T1]]] (%[[QSIZE]]#0, %[[QSIZE]]#2) : memref<?x8x?xf32>
// CHECK: %[[QI:.+]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[QP:.+]] = llvm.inttoptr %[[QI]] : i64 to !llvm.ptr<1>
// CHECK: %[[SEQQ:.+]] = arith.index_cast %[[QSIZE]]#2 : index to i32
// CHECK: %[[SEQKV:.+]] = arith.index_cast %[[KSIZE]]#2 : index to i32
// CHECK: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK: %[[QSB:.+]] = arith.index_cast %[[QSTRIDE]]#0 : index to i64
// The grid: (ceil(seq_q / 128), batch * heads_q).
// CHECK: %[[C128:.+]] = arith.constant 128 : index
// CHECK: %[[GX:.+]] = arith.ceildivui %[[QSIZE]]#2, %[[C128]] : index
// CHECK: %[[GY:.+]] = arith.muli %[[QSIZE]]#0, %[[QSIZE]]#1 : index
// CHECK: %[[GZ:.+]] = arith.constant 1 : index
// CHECK: %[[ONE:.+]] = arith.constant 1 : index
// CHECK: %[[SMEM:.+]] = arith.constant 49152 : i32
// CHECK: %[[THREADS:.+]] = arith.constant 128 : index
// CHECK: %[[T3:.+]] = gpu.launch_func async [%[[T2]]] @attn_kernels::@attn_fwd_d64_bf16_causal_m128n64w4s2 blocks in (%[[GX]], %[[GY]], %[[GZ]]) threads in (%[[THREADS]], %[[ONE]], %[[ONE]]) dynamic_shared_memory_size %[[SMEM]] args(%[[QP]] : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %[[SEQQ]] : i32, %[[SEQKV]] : i32, %{{.*}} : i32, %{{.*}} : i32, %[[SCALE]] : f32, %[[QSB]] : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i64)
// The function returns once the kernel is done.
// CHECK: gpu.wait [%[[T3]]]
// CHECK: %[[OT:.+]] = bufferization.to_tensor %[[O]] restrict : memref<?x8x?x64xbf16> to tensor<?x8x?x64xbf16>
// CHECK: %[[LSET:.+]] = bufferization.to_tensor %[[LSE]] restrict : memref<?x8x?xf32> to tensor<?x8x?xf32>
// CHECK: return %[[OT]], %[[LSET]]
// CHECK: gpu.module @attn_kernels
func.func @dynamic(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
                   %v: tensor<?x2x?x64xbf16>)
    -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal>
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
      -> tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
}

// -----

// Static sizes: the same IR (sizes fold later); without an LSE result the
// kernel's lse pointer is null and its strides 0.
// CHECK-LABEL: func.func @static_nolse
// CHECK: %[[O:.+]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<2x4x256x128xf16>
// CHECK: %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr<1>
// CHECK: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK: gpu.launch_func async [%{{.*}}] @attn_kernels::@{{.*}} args(%{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, {{.*}}, %[[ZERO]] : i64, %[[ZERO2:.+]] : i64)
// CHECK: bufferization.to_tensor %[[O]] restrict : memref<2x4x256x128xf16> to tensor<2x4x256x128xf16>
func.func @static_nolse(%q: tensor<2x4x256x128xf16>, %k: tensor<2x4x512x128xf16>,
                        %v: tensor<2x4x512x128xf16>) -> tensor<2x4x256x128xf16> {
  %o = attn.attention %q, %k, %v
      : tensor<2x4x256x128xf16>, tensor<2x4x512x128xf16>, tensor<2x4x512x128xf16>
      -> tensor<2x4x256x128xf16>
  return %o : tensor<2x4x256x128xf16>
}

// -----

// Destination-passing style: a result stored into a caller's buffer is
// written there by the kernel (no allocation, no copy); that buffer, like
// the inputs, is device memory.
// CHECK-LABEL: func.func @destination
// CHECK-SAME: %[[O:[^:]+]]: memref<1x2x128x64xbf16>, %[[LSE:[^:]+]]: memref<1x2x128xf32>)
// CHECK-NOT: gpu.alloc
// CHECK: memref.extract_strided_metadata %[[O]]
// CHECK: memref.extract_strided_metadata %[[LSE]]
// CHECK: gpu.launch_func
// CHECK-NOT: materialize_in_destination
// CHECK: return
func.func @destination(%q: memref<1x2x128x64xbf16>, %k: memref<1x2x128x64xbf16>,
                       %v: memref<1x2x128x64xbf16>, %o: memref<1x2x128x64xbf16>,
                       %lse: memref<1x2x128xf32>) {
  %qt = bufferization.to_tensor %q restrict : memref<1x2x128x64xbf16> to tensor<1x2x128x64xbf16>
  %kt = bufferization.to_tensor %k restrict : memref<1x2x128x64xbf16> to tensor<1x2x128x64xbf16>
  %vt = bufferization.to_tensor %v restrict : memref<1x2x128x64xbf16> to tensor<1x2x128x64xbf16>
  %r, %l = attn.attention %qt, %kt, %vt
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
      -> tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>
  bufferization.materialize_in_destination %r in writable %o
      : (tensor<1x2x128x64xbf16>, memref<1x2x128x64xbf16>) -> ()
  bufferization.materialize_in_destination %l in writable %lse
      : (tensor<1x2x128xf32>, memref<1x2x128xf32>) -> ()
  return
}

// -----

// A run-time scale operand is the launch's softmax_scale as it is; the
// kernel does not depend on the scale: an op with the attribute and one
// with the operand launch the same kernel, and only one is generated.
// CHECK-LABEL: func.func @runtime_scale
// CHECK-SAME: %[[S:[^:]+]]: f32)
// CHECK: %[[C:.+]] = arith.constant 3.000000e-01 : f32
// CHECK: gpu.launch_func async [%{{.*}}] @attn_kernels::@[[KERNEL:[a-z0-9_]+]] {{.*}} args(%{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %[[C]] : f32,
// CHECK-NOT: arith.constant {{.*}} : f32
// CHECK: gpu.launch_func async [%{{.*}}] @attn_kernels::@[[KERNEL]] {{.*}} args(%{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %[[S]] : f32,
// CHECK: gpu.module @attn_kernels
// CHECK: gpu.func @[[KERNEL]](
// CHECK-NOT: gpu.func @
func.func @runtime_scale(%q: tensor<1x2x128x64xbf16>, %s: f32)
    -> (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  %o1, %l1 = attn.attention %q, %q, %q mask <causal> scale 0.3
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
      -> tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>
  %o2, %l2 = attn.attention %q, %q, %q mask <causal> scale(%s)
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
      -> tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>
  return %o1, %o2 : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
}

// -----

// key_range: the two i32 [B] buffers are the kernel's key_start/key_end.
// CHECK-LABEL: func.func @key_range
// CHECK-SAME: %[[S:[^:]+]]: tensor<2xi32>, %[[E:[^:]+]]: tensor<2xi32>
// CHECK-DAG: %[[SB:.+]] = bufferization.to_buffer %[[S]]
// CHECK-DAG: %[[EB:.+]] = bufferization.to_buffer %[[E]]
// CHECK: gpu.launch_func
func.func @key_range(%q: tensor<2x4x100x64xbf16>, %k: tensor<2x2x300x64xbf16>,
                     %v: tensor<2x2x300x64xbf16>, %s: tensor<2xi32>,
                     %e: tensor<2xi32>) -> tensor<2x4x100x64xbf16> {
  %o = attn.attention %q, %k, %v key_range(%s, %e) : tensor<2xi32>, tensor<2xi32>
      mask <causal>
      : tensor<2x4x100x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>
        -> tensor<2x4x100x64xbf16>
  return %o : tensor<2x4x100x64xbf16>
}
