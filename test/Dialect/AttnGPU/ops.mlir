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
  // CHECK: attn_gpu.global_reduce_add %[[G]], %{{.+}}, %{{.+}}, %{{.+}} {stride = 512 : i64} : !llvm.ptr, f32, f32, f32
  attn_gpu.global_reduce_add %g, %x, %x, %x {stride = 512} : !llvm.ptr, f32, f32, f32
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

// The fragment type in its three layouts and the ops on fragments.

// CHECK-LABEL: llvm.func @fragments
// CHECK-SAME: (%[[X:[[:alnum:]_]+]]: f32, %[[I:[[:alnum:]_]+]]: i32, %[[R0:[[:alnum:]_]+]]: f32, %[[R1:[[:alnum:]_]+]]: f32, %[[R2:[[:alnum:]_]+]]: f32, %[[R3:[[:alnum:]_]+]]: f32, %[[P0:[[:alnum:]_]+]]: i32, %[[P1:[[:alnum:]_]+]]: i32, %[[P2:[[:alnum:]_]+]]: i32, %[[P3:[[:alnum:]_]+]]: i32, %[[P4:[[:alnum:]_]+]]: i32, %[[P5:[[:alnum:]_]+]]: i32, %[[P6:[[:alnum:]_]+]]: i32, %[[P7:[[:alnum:]_]+]]: i32, %[[DA:[[:alnum:]_]+]]: i64, %[[DB:[[:alnum:]_]+]]: i64)
llvm.func @fragments(%x: f32, %i: i32, %r0: f32, %r1: f32, %r2: f32,
                     %r3: f32, %p0: i32, %p1: i32, %p2: i32, %p3: i32,
                     %p4: i32, %p5: i32, %p6: i32, %p7: i32, %da: i64,
                     %db: i64) {
  // CHECK: %[[U:.+]] = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  %u = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // CHECK: %[[Z:.+]] = attn_gpu.frag_splat %[[X]] : f32 -> !attn_gpu.frag<16x64xf32, acc>
  %z = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x64xf32, acc>
  // CHECK: %[[M0:.+]] = attn_gpu.frag_splat %[[X]] : f32 -> !attn_gpu.frag<16x1xf32, rows>
  %m0 = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x1xf32, rows>
  // CHECK: %[[F:.+]] = attn_gpu.frag_from_registers %[[R0]], %[[R1]], %[[R2]], %[[R3]] : f32, f32, f32, f32 -> !attn_gpu.frag<16x8xf32, acc>
  %f = attn_gpu.frag_from_registers %r0, %r1, %r2, %r3 : f32, f32, f32, f32
      -> !attn_gpu.frag<16x8xf32, acc>
  // CHECK: %{{.+}}:4 = attn_gpu.frag_registers %[[F]] : !attn_gpu.frag<16x8xf32, acc> -> f32, f32, f32, f32
  %g:4 = attn_gpu.frag_registers %f : !attn_gpu.frag<16x8xf32, acc>
      -> f32, f32, f32, f32
  // CHECK: %[[A:.+]] = attn_gpu.frag_from_registers %[[P0]], %[[P1]], %[[P2]], %[[P3]], %[[P4]], %[[P5]], %[[P6]], %[[P7]] : i32, i32, i32, i32, i32, i32, i32, i32 -> !attn_gpu.frag<16x32xbf16, a>
  %a = attn_gpu.frag_from_registers %p0, %p1, %p2, %p3, %p4, %p5, %p6, %p7
      : i32, i32, i32, i32, i32, i32, i32, i32 -> !attn_gpu.frag<16x32xbf16, a>
  // CHECK: %{{.+}}:8 = attn_gpu.frag_registers %[[A]] : !attn_gpu.frag<16x32xbf16, a> -> i32, i32, i32, i32, i32, i32, i32, i32
  %ar:8 = attn_gpu.frag_registers %a : !attn_gpu.frag<16x32xbf16, a>
      -> i32, i32, i32, i32, i32, i32, i32, i32
  // CHECK: %[[L0:.+]] = attn_gpu.frag_from_registers %[[R0]], %[[R1]] : f32, f32 -> !attn_gpu.frag<16x1xf32, rows>
  %l0 = attn_gpu.frag_from_registers %r0, %r1 : f32, f32
      -> !attn_gpu.frag<16x1xf32, rows>
  // CHECK: %{{.+}}:2 = attn_gpu.frag_registers %[[L0]] : !attn_gpu.frag<16x1xf32, rows> -> f32, f32
  %lr:2 = attn_gpu.frag_registers %l0 : !attn_gpu.frag<16x1xf32, rows>
      -> f32, f32
  // CHECK: %[[FE:.+]]:2 = attn_gpu.wgmma_fence %[[U]], %[[A]] : !attn_gpu.frag<16x64xf32, acc>, !attn_gpu.frag<16x32xbf16, a>
  %fe:2 = attn_gpu.wgmma_fence %u, %a
      : !attn_gpu.frag<16x64xf32, acc>, !attn_gpu.frag<16x32xbf16, a>
  // CHECK: %[[S:.+]] = attn_gpu.warpgroup_mma %[[DA]], %[[DB]], %[[FE]]#0 {accumulate = false, element_type = bf16, transpose_a, transpose_b} : i64, !attn_gpu.frag<16x64xf32, acc>
  %s = attn_gpu.warpgroup_mma %da, %db, %fe#0
      {element_type = bf16, accumulate = false, transpose_a, transpose_b}
      : i64, !attn_gpu.frag<16x64xf32, acc>
  // CHECK: %[[O:.+]] = attn_gpu.warpgroup_mma %[[FE]]#1, %[[DB]], %[[Z]] {a_k_step = 1 : i64, accumulate = true} : !attn_gpu.frag<16x32xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
  %o = attn_gpu.warpgroup_mma %fe#1, %db, %z {accumulate = true, a_k_step = 1 : i64}
      : !attn_gpu.frag<16x32xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
  // CHECK: attn_gpu.wgmma_commit_group
  attn_gpu.wgmma_commit_group
  // CHECK: %[[W:.+]]:2 = attn_gpu.wgmma_wait_group 0, %[[S]], %[[O]] : !attn_gpu.frag<16x64xf32, acc>, !attn_gpu.frag<16x64xf32, acc>
  %w:2 = attn_gpu.wgmma_wait_group 0, %s, %o
      : !attn_gpu.frag<16x64xf32, acc>, !attn_gpu.frag<16x64xf32, acc>
  // CHECK: %[[K0:.+]] = attn_gpu.mask_scores %[[W]]#0 keys_left %[[I]] : !attn_gpu.frag<16x64xf32, acc>
  %k0 = attn_gpu.mask_scores %w#0 keys_left %i : !attn_gpu.frag<16x64xf32, acc>
  // CHECK: %[[K1:.+]]:2 = attn_gpu.mask_scores %[[K0]], %[[W]]#1 keys_left %[[I]] row_minus_key %[[I]] keys_before %[[I]] {window_left = 3 : i64, window_right = 0 : i64} : !attn_gpu.frag<16x64xf32, acc>, !attn_gpu.frag<16x64xf32, acc>
  %k1:2 = attn_gpu.mask_scores %k0, %w#1 keys_left %i row_minus_key %i
      keys_before %i {window_left = 3 : i64, window_right = 0 : i64}
      : !attn_gpu.frag<16x64xf32, acc>, !attn_gpu.frag<16x64xf32, acc>
  // CHECK: %{{.+}} = attn_gpu.mask_scores %[[K0]] keys_left %[[I]] keys_before %[[I]] : !attn_gpu.frag<16x64xf32, acc>
  %k2 = attn_gpu.mask_scores %k0 keys_left %i keys_before %i
      : !attn_gpu.frag<16x64xf32, acc>
  // CHECK: %[[SP:[[:alnum:]_]+]], %[[M1:[[:alnum:]_]+]], %[[L1:[[:alnum:]_]+]], %[[AL:[[:alnum:]_]+]] = attn_gpu.online_softmax %[[K1]]#0, %[[M0]], %[[L0]], %[[X]] : !attn_gpu.frag<16x64xf32, acc>
  %p, %m1, %l1, %alpha = attn_gpu.online_softmax %k1#0, %m0, %l0, %x
      : !attn_gpu.frag<16x64xf32, acc>
  // CHECK: attn_gpu.online_softmax %[[K1]]#1, %[[M1]], %[[L1]], %[[X]] {exp2_fma_tiles = 2 : i64} : !attn_gpu.frag<16x64xf32, acc>
  %q:4 = attn_gpu.online_softmax %k1#1, %m1, %l1, %x {exp2_fma_tiles = 2 : i64}
      : !attn_gpu.frag<16x64xf32, acc>
  // CHECK: attn_gpu.scale_rows %[[Z]], %[[AL]] : !attn_gpu.frag<16x64xf32, acc>
  %sc = attn_gpu.scale_rows %z, %alpha : !attn_gpu.frag<16x64xf32, acc>
  // CHECK: attn_gpu.to_operand %[[SP]] : !attn_gpu.frag<16x64xf32, acc> -> !attn_gpu.frag<16x64xf16, a>
  %op = attn_gpu.to_operand %p : !attn_gpu.frag<16x64xf32, acc>
      -> !attn_gpu.frag<16x64xf16, a>
  llvm.return
}

// The ring type and the ops on rings: a stage's tile (whole, or one 64-column
// panel) and its wgmma descriptor (K-major, or MN-major).

// CHECK-LABEL: llvm.func @rings
// CHECK-SAME: (%[[BASE:[[:alnum:]_]+]]: !llvm.ptr<3>, %[[S:[[:alnum:]_]+]]: i32)
llvm.func @rings(%base: !llvm.ptr<3>, %stage: i32) {
  // CHECK: %[[KV:.+]] = attn_gpu.ring_view %[[BASE]] : !llvm.ptr<3> -> !attn_gpu.ring<2x128x128xbf16>
  %kv = attn_gpu.ring_view %base : !llvm.ptr<3> -> !attn_gpu.ring<2x128x128xbf16>
  // CHECK: %[[Q:.+]] = attn_gpu.ring_view %[[BASE]] : !llvm.ptr<3> -> !attn_gpu.ring<1x64x192xf16>
  %q = attn_gpu.ring_view %base : !llvm.ptr<3> -> !attn_gpu.ring<1x64x192xf16>
  // CHECK: attn_gpu.ring_tile %[[KV]][%[[S]]] : !attn_gpu.ring<2x128x128xbf16>
  %t = attn_gpu.ring_tile %kv[%stage] : !attn_gpu.ring<2x128x128xbf16>
  // CHECK: attn_gpu.ring_tile %[[KV]][%[[S]]] {panel = 1 : i64} : !attn_gpu.ring<2x128x128xbf16>
  %p = attn_gpu.ring_tile %kv[%stage] {panel = 1 : i64}
      : !attn_gpu.ring<2x128x128xbf16>
  // CHECK: attn_gpu.ring_tile %[[Q]][%[[S]]] {panel = 2 : i64} : !attn_gpu.ring<1x64x192xf16>
  %qp = attn_gpu.ring_tile %q[%stage] {panel = 2 : i64}
      : !attn_gpu.ring<1x64x192xf16>
  // CHECK: attn_gpu.ring_descriptor %[[KV]][%[[S]]] : !attn_gpu.ring<2x128x128xbf16>
  %d = attn_gpu.ring_descriptor %kv[%stage] : !attn_gpu.ring<2x128x128xbf16>
  // CHECK: attn_gpu.ring_descriptor %[[KV]][%[[S]]] {mn_major} : !attn_gpu.ring<2x128x128xbf16>
  %m = attn_gpu.ring_descriptor %kv[%stage] {mn_major}
      : !attn_gpu.ring<2x128x128xbf16>
  llvm.return
}

// mma.sync on fragments: one 8-column tile of the accumulator, A from a
// k-step of an A fragment.

// CHECK-LABEL: func.func @warp_mma
func.func @warp_mma(%a: !attn_gpu.frag<16x32xbf16, a>, %b0: i32, %b1: i32,
                    %c: !attn_gpu.frag<16x64xf32, acc>) {
  // CHECK: attn_gpu.warp_mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {n_tile = 3 : i64} : !attn_gpu.frag<16x32xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
  %d = attn_gpu.warp_mma %a, %b0, %b1, %c {n_tile = 3 : i64}
      : !attn_gpu.frag<16x32xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
  // CHECK: attn_gpu.warp_mma %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {a_k_step = 1 : i64, n_tile = 7 : i64}
  %e = attn_gpu.warp_mma %a, %b0, %b1, %d {n_tile = 7 : i64, a_k_step = 1 : i64}
      : !attn_gpu.frag<16x32xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
  return
}

// One mask edge as the backward kernels test it: col·c + row·r <= limit.

// CHECK-LABEL: func.func @mask_limit
func.func @mask_limit(%s: !attn_gpu.frag<16x64xf32, acc>, %lim: i32) {
  // CHECK: attn_gpu.mask_limit %{{.*}}, %{{.*}} {col = -1 : i64, row = 1 : i64} : !attn_gpu.frag<16x64xf32, acc>
  %m = attn_gpu.mask_limit %s, %lim {col = -1 : i64, row = 1 : i64}
      : !attn_gpu.frag<16x64xf32, acc>
  return
}
