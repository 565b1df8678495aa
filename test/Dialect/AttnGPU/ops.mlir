// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round-trips of every attn_gpu op, in the pretty and the generic form.

// CHECK-LABEL: llvm.func @mbarriers
// CHECK-SAME: (%[[BAR:.+]]: !llvm.ptr<3>, %[[PAR:.+]]: i32)
llvm.func @mbarriers(%bar: !llvm.ptr<3>, %parity: i32) {
  // CHECK: attn_gpu.mbarrier_init %[[BAR]], count = 1 : !llvm.ptr<3>
  attn_gpu.mbarrier_init %bar, count = 1 : !llvm.ptr<3>
  // CHECK: attn_gpu.mbarrier_init_fence
  attn_gpu.mbarrier_init_fence
  // CHECK: attn_gpu.mbarrier_arrive_expect_tx %[[BAR]], bytes = 16384 : !llvm.ptr<3>
  attn_gpu.mbarrier_arrive_expect_tx %bar, bytes = 16384 : !llvm.ptr<3>
  // CHECK: attn_gpu.mbarrier_arrive %[[BAR]] : !llvm.ptr<3>
  attn_gpu.mbarrier_arrive %bar : !llvm.ptr<3>
  // CHECK: attn_gpu.mbarrier_wait %[[BAR]], %[[PAR]] : !llvm.ptr<3>
  attn_gpu.mbarrier_wait %bar, %parity : !llvm.ptr<3>
  llvm.return
}

// CHECK-LABEL: llvm.func @tma_and_barriers
// CHECK-SAME: (%[[DST:.+]]: !llvm.ptr<3>, %[[MAP:.+]]: !llvm.ptr, %[[BAR:.+]]: !llvm.ptr<3>, %[[I:.+]]: i32, %[[G:.+]]: !llvm.ptr)
llvm.func @tma_and_barriers(%dst: !llvm.ptr<3>, %map: !llvm.ptr,
                            %bar: !llvm.ptr<3>, %i: i32, %g: !llvm.ptr) {
  // CHECK: attn_gpu.tma_load %[[DST]], %[[MAP]][%[[I]], %[[I]], %[[I]], %[[I]]], %[[BAR]] : !llvm.ptr<3>, !llvm.ptr, !llvm.ptr<3>
  attn_gpu.tma_load %dst, %map[%i, %i, %i, %i], %bar
      : !llvm.ptr<3>, !llvm.ptr, !llvm.ptr<3>
  // CHECK: attn_gpu.bulk_reduce_add %[[G]], %[[DST]], %[[I]] : !llvm.ptr, !llvm.ptr<3>
  attn_gpu.bulk_reduce_add %g, %dst, %i : !llvm.ptr, !llvm.ptr<3>
  // CHECK: attn_gpu.global_reduce_add %[[G]], %{{.+}}, %{{.+}} {vector} : !llvm.ptr, f32, f32
  %x = llvm.mlir.constant(1.0 : f32) : f32
  attn_gpu.global_reduce_add %g, %x, %x {vector} : !llvm.ptr, f32, f32
  // CHECK: attn_gpu.named_barrier_sync %[[I]], threads = 256
  attn_gpu.named_barrier_sync %i, threads = 256
  // CHECK: attn_gpu.named_barrier_arrive %[[I]], threads = 128
  attn_gpu.named_barrier_arrive %i, threads = 128
  llvm.return
}

// CHECK-LABEL: llvm.func @wgmma
// CHECK-SAME: (%[[TILE:.+]]: !llvm.ptr<3>, %[[A:.+]]: i32, %[[C0:.+]]: f32, %[[C1:.+]]: f32, %[[C2:.+]]: f32, %[[C3:.+]]: f32)
llvm.func @wgmma(%tile: !llvm.ptr<3>, %a: i32, %c0: f32, %c1: f32, %c2: f32,
                 %c3: f32) {
  // CHECK: %[[D:.+]] = attn_gpu.wgmma_descriptor %[[TILE]], leading_bytes = 16, stride_bytes = 1024 : !llvm.ptr<3>
  %d = attn_gpu.wgmma_descriptor %tile, leading_bytes = 16, stride_bytes = 1024
      : !llvm.ptr<3>
  // CHECK: %[[F:.+]]:5 = attn_gpu.wgmma_fence %[[C0]], %[[C1]], %[[C2]], %[[C3]], %[[A]] : f32, f32, f32, f32, i32
  %f:5 = attn_gpu.wgmma_fence %c0, %c1, %c2, %c3, %a : f32, f32, f32, f32, i32
  // CHECK: %[[S:.+]]:4 = attn_gpu.wgmma_ss %[[D]], %[[D]], %[[F]]#0, %[[F]]#1, %[[F]]#2, %[[F]]#3 {accumulate = false, element_type = bf16, n = 8 : i64, transpose_b} : f32, f32, f32, f32
  %s:4 = attn_gpu.wgmma_ss %d, %d, %f#0, %f#1, %f#2, %f#3
      {n = 8 : i64, element_type = bf16, accumulate = false, transpose_b}
      : f32, f32, f32, f32
  // CHECK: %[[R:.+]]:4 = attn_gpu.wgmma_rs %[[F]]#4, %[[F]]#4, %[[F]]#4, %[[F]]#4, %[[D]], %[[S]]#0, %[[S]]#1, %[[S]]#2, %[[S]]#3 {accumulate = true, element_type = f16, n = 8 : i64} : f32, f32, f32, f32
  %r:4 = attn_gpu.wgmma_rs %f#4, %f#4, %f#4, %f#4, %d, %s#0, %s#1, %s#2, %s#3
      {n = 8 : i64, element_type = f16, accumulate = true}
      : f32, f32, f32, f32
  // CHECK: attn_gpu.wgmma_commit_group
  attn_gpu.wgmma_commit_group
  // CHECK: %{{.+}}:4 = attn_gpu.wgmma_wait_group 0, %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3 : f32, f32, f32, f32
  %w:4 = attn_gpu.wgmma_wait_group 0, %r#0, %r#1, %r#2, %r#3 : f32, f32, f32, f32
  // CHECK: attn_gpu.wgmma_wait_group 1
  attn_gpu.wgmma_wait_group 1
  llvm.return
}

// CHECK-LABEL: llvm.func @softmax_math
// CHECK-SAME: (%[[X:.+]]: f32, %[[P:.+]]: !llvm.ptr<3>, %[[I:.+]]: i32)
llvm.func @softmax_math(%x: f32, %p: !llvm.ptr<3>, %i: i32) {
  // CHECK: attn_gpu.exp2 %[[X]] : f32
  %e = attn_gpu.exp2 %x : f32
  // CHECK: attn_gpu.exp2 %[[X]] {fma} : f32
  %f = attn_gpu.exp2 %x {fma} : f32
  // CHECK: attn_gpu.log2 %[[X]] : f32
  %l = attn_gpu.log2 %x : f32
  // CHECK: attn_gpu.tanh %[[X]] : f32
  %t = attn_gpu.tanh %x : f32
  // CHECK: attn_gpu.opaque %[[P]], %[[I]] : !llvm.ptr<3>, i32
  %o:2 = attn_gpu.opaque %p, %i : !llvm.ptr<3>, i32
  llvm.return
}
