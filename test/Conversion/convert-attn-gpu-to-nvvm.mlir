// RUN: attn-opt %s --convert-attn-gpu-to-nvvm --split-input-file | FileCheck %s --implicit-check-not=attn_gpu

// One pattern per attn_gpu op, each replaced in place by NVVM ops (or an
// NVPTX intrinsic call); inline PTX only for the register-A wgmma, the bulk
// and the global reductions and the opaque moves.

// CHECK-LABEL: llvm.func @mbarriers
// CHECK-SAME: (%[[BAR:.+]]: !llvm.ptr<3>, %[[PAR:.+]]: i32)
llvm.func @mbarriers(%bar: !llvm.ptr<3>, %parity: i32) {
  // CHECK: %[[ONE:.+]] = llvm.mlir.constant(1 : i32) : i32
  // CHECK: nvvm.mbarrier.init %[[BAR]], %[[ONE]] : !llvm.ptr<3>, i32
  attn_gpu.mbarrier_init %bar, count = 1 : !llvm.ptr<3>
  // CHECK: nvvm.fence.mbarrier.init
  // CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  attn_gpu.mbarrier_init_fence
  // CHECK: %[[TX:.+]] = llvm.mlir.constant(16384 : i32) : i32
  // CHECK: nvvm.mbarrier.arrive.expect_tx %[[BAR]], %[[TX]] : !llvm.ptr<3>, i32
  attn_gpu.mbarrier_arrive_expect_tx %bar, bytes = 16384 : !llvm.ptr<3>
  // CHECK: nvvm.mbarrier.arrive %[[BAR]] : !llvm.ptr<3>
  attn_gpu.mbarrier_arrive %bar : !llvm.ptr<3>
  // CHECK: %[[TICKS:.+]] = llvm.mlir.constant(10000000 : i32) : i32
  // CHECK: nvvm.mbarrier.try_wait.parity %[[BAR]], %[[PAR]], %[[TICKS]] : !llvm.ptr<3>, i32, i32
  attn_gpu.mbarrier_wait %bar, %parity : !llvm.ptr<3>
  llvm.return
}

// -----

// CHECK-LABEL: llvm.func @tma_and_barriers
// CHECK-SAME: (%[[DST:.+]]: !llvm.ptr<3>, %[[MAP:.+]]: !llvm.ptr, %[[BAR:.+]]: !llvm.ptr<3>, %[[I:.+]]: i32, %[[G:.+]]: !llvm.ptr)
llvm.func @tma_and_barriers(%dst: !llvm.ptr<3>, %map: !llvm.ptr,
                            %bar: !llvm.ptr<3>, %i: i32, %g: !llvm.ptr) {
  // The CTA's shared memory as a shared::cluster address (PTX 8.1).
  // CHECK: %[[CL:.+]] = llvm.addrspacecast %[[DST]] : !llvm.ptr<3> to !llvm.ptr<7>
  // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[CL]], %[[MAP]], %[[BAR]], box[%[[I]], %[[I]], %[[I]], %[[I]]] : !llvm.ptr<7>, !llvm.ptr
  attn_gpu.tma_load %dst, %map[%i, %i, %i, %i], %bar
      : !llvm.ptr<3>, !llvm.ptr, !llvm.ptr<3>
  // CHECK: %[[SRC:.+]] = llvm.ptrtoint %[[DST]] : !llvm.ptr<3> to i32
  // CHECK: llvm.inline_asm has_side_effects "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [$0], [$1], $2;", "l,r,r" %[[G]], %[[SRC]], %[[I]]
  attn_gpu.bulk_reduce_add %g, %dst, %i : !llvm.ptr, !llvm.ptr<3>
  // CHECK: %[[X:.+]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
  %x = llvm.mlir.constant(1.0 : f32) : f32
  // CHECK: llvm.inline_asm has_side_effects "red.global.add.f32 [$0], $1;", "l,f" %[[G]], %[[X]]
  attn_gpu.global_reduce_add %g, %x : !llvm.ptr, f32
  // CHECK: llvm.inline_asm has_side_effects "red.global.add.f32 [$0], $1;\0Ared.global.add.f32 [$0+4], $2;", "l,f,f" %[[G]], %[[X]], %[[X]]
  attn_gpu.global_reduce_add %g, %x, %x : !llvm.ptr, f32, f32
  // CHECK: llvm.inline_asm has_side_effects "red.global.add.v2.f32 [$0], {$1, $2};", "l,f,f" %[[G]], %[[X]], %[[X]]
  attn_gpu.global_reduce_add %g, %x, %x {width = 2} : !llvm.ptr, f32, f32
  // A column of three rows of 1024 bytes: one pointer, immediate offsets.
  // CHECK: llvm.inline_asm has_side_effects "red.global.add.f32 [$0], $1;\0Ared.global.add.f32 [$0+1024], $2;\0Ared.global.add.f32 [$0+2048], $3;", "l,f,f,f" %[[G]], %[[X]], %[[X]], %[[X]]
  attn_gpu.global_reduce_add %g, %x, %x, %x {stride = 1024} : !llvm.ptr, f32, f32, f32
  // Two groups of four, 4096 bytes apart (the transposed-dkv dQᵀ adds).
  // CHECK: llvm.inline_asm has_side_effects "red.global.add.v4.f32 [$0], {$1, $2, $3, $4};\0Ared.global.add.v4.f32 [$0+4096], {$5, $6, $7, $8};", "l,f,f,f,f,f,f,f,f"
  attn_gpu.global_reduce_add %g, %x, %x, %x, %x, %x, %x, %x, %x {width = 4, stride = 4096} : !llvm.ptr, f32, f32, f32, f32, f32, f32, f32, f32
  // CHECK: %[[N256:.+]] = llvm.mlir.constant(256 : i32) : i32
  // CHECK: nvvm.barrier id = %[[I]] number_of_threads = %[[N256]]
  attn_gpu.named_barrier_sync %i, threads = 256
  // CHECK: %[[N128:.+]] = llvm.mlir.constant(128 : i32) : i32
  // CHECK: llvm.call_intrinsic "llvm.nvvm.barrier.cta.arrive.aligned.count"(%[[I]], %[[N128]]) : (i32, i32) -> ()
  attn_gpu.named_barrier_arrive %i, threads = 128
  llvm.return
}

// -----

// The descriptor: (address >> 4) & 0x3fff | (16 >> 4) << 16 | (1024 >> 4) << 32
// | 1 << 62 (128-byte swizzle) = 4611686293305360384 + address bits.
// CHECK-LABEL: llvm.func @descriptor
// CHECK-SAME: (%[[TILE:.+]]: !llvm.ptr<3>)
llvm.func @descriptor(%tile: !llvm.ptr<3>) -> i64 {
  // CHECK: %[[ADDR:.+]] = llvm.ptrtoint %[[TILE]] : !llvm.ptr<3> to i32
  // CHECK: %[[SH:.+]] = arith.shrui %[[ADDR]], %{{.+}} : i32
  // CHECK: %[[LOW:.+]] = arith.andi %[[SH]], %{{.+}} : i32
  // CHECK: %[[WIDE:.+]] = arith.extui %[[LOW]] : i32 to i64
  // CHECK: %[[FIXED:.+]] = arith.constant 4611686293305360384 : i64
  // CHECK: %[[D:.+]] = arith.ori %[[WIDE]], %[[FIXED]] : i64
  // CHECK: llvm.return %[[D]]
  %d = attn_gpu.wgmma_descriptor %tile, leading_bytes = 16, stride_bytes = 1024
      : !llvm.ptr<3>
  llvm.return %d : i64
}

// -----

// Fence and wait pass their values through; the shared-memory wgmma is
// NVVM's, K-major A as "row" and MN-major (transposed) B as "row".
// CHECK-LABEL: llvm.func @wgmma_ss
// CHECK-SAME: (%[[D:.+]]: i64, %[[C0:.+]]: f32, %[[C1:.+]]: f32, %[[C2:.+]]: f32, %[[C3:.+]]: f32)
llvm.func @wgmma_ss(%d: i64, %c0: f32, %c1: f32, %c2: f32, %c3: f32) -> f32 {
  // CHECK: nvvm.wgmma.fence.aligned
  %f:4 = attn_gpu.wgmma_fence %c0, %c1, %c2, %c3 : f32, f32, f32, f32
  // CHECK: %[[U:.+]] = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32)>
  // CHECK: %[[S0:.+]] = llvm.insertvalue %[[C0]], %[[U]][0]
  // CHECK: %[[S3:.+]] = llvm.insertvalue %[[C3]], %{{.+}}[3]
  // CHECK: %[[R:.+]] = nvvm.wgmma.mma_async %[[D]], %[[D]], %[[S3]], <m = 64, n = 8, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
  %s:4 = attn_gpu.wgmma_ss %d, %d, %f#0, %f#1, %f#2, %f#3
      {n = 8 : i64, element_type = bf16, accumulate = false, transpose_b}
      : f32, f32, f32, f32
  // CHECK: %[[E0:.+]] = llvm.extractvalue %[[R]][0]
  // CHECK: nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>], A[<f16>, <one>, <col>], B[<f16>, <one>, <col>]
  %t:4 = attn_gpu.wgmma_ss %d, %d, %s#0, %s#1, %s#2, %s#3
      {n = 8 : i64, element_type = f16, accumulate = true, transpose_a}
      : f32, f32, f32, f32
  // CHECK: nvvm.wgmma.commit.group.sync.aligned
  attn_gpu.wgmma_commit_group
  // CHECK: nvvm.wgmma.wait.group.sync.aligned 0
  %w:4 = attn_gpu.wgmma_wait_group 0, %t#0, %t#1, %t#2, %t#3
      : f32, f32, f32, f32
  llvm.return %w#0 : f32
}

// -----

// NVVM's wgmma has no register-A form: inline PTX, accumulators tied.
// CHECK-LABEL: llvm.func @wgmma_rs
// CHECK-SAME: (%[[A:.+]]: i32, %[[D:.+]]: i64, %[[C0:.+]]: f32, %[[C1:.+]]: f32, %[[C2:.+]]: f32, %[[C3:.+]]: f32)
llvm.func @wgmma_rs(%a: i32, %d: i64, %c0: f32, %c1: f32, %c2: f32,
                    %c3: f32) -> f32 {
  // CHECK: %[[R:.+]] = llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, {$8, $9, $10, $11}, $12, p, 1, 1, 1;\0A}", "=f,=f,=f,=f,0,1,2,3,r,r,r,r,l" %[[C0]], %[[C1]], %[[C2]], %[[C3]], %[[A]], %[[A]], %[[A]], %[[A]], %[[D]]
  %r:4 = attn_gpu.wgmma_rs %a, %a, %a, %a, %d, %c0, %c1, %c2, %c3
      {n = 8 : i64, element_type = bf16, accumulate = true, transpose_b}
      : f32, f32, f32, f32
  // CHECK: %[[E:.+]] = llvm.extractvalue %[[R]][0]
  // CHECK: llvm.return %[[E]]
  llvm.return %r#0 : f32
}

// -----

// CHECK-LABEL: llvm.func @softmax_math
// CHECK-SAME: (%[[X:.+]]: f32)
llvm.func @softmax_math(%x: f32) -> f32 {
  // CHECK: %[[E:.+]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[X]]) : (f32) -> f32
  %e = attn_gpu.exp2 %x : f32
  // On the FMA pipe: clamp, floor by a round-down add, a cubic, exponent bits.
  // CHECK: %[[MAGIC:.+]] = llvm.mlir.constant(0x4B400000 : f32) : f32
  // CHECK: %[[XC:.+]] = llvm.call_intrinsic "llvm.nvvm.fmax.ftz.f"(%[[X]], %{{.+}})
  // CHECK: %[[R:.+]] = llvm.call_intrinsic "llvm.nvvm.add.rm.ftz.f"(%[[XC]], %[[MAGIC]])
  // CHECK-COUNT-3: llvm.call_intrinsic "llvm.nvvm.fma.rn.ftz.f"
  // CHECK: %[[RB:.+]] = llvm.bitcast %[[R]] : f32 to i32
  // CHECK: llvm.shl %[[RB]]
  // CHECK: %[[F:.+]] = llvm.bitcast %{{.+}} : i32 to f32
  %f = attn_gpu.exp2 %x {fma} : f32
  // CHECK: %[[L:.+]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"(%[[X]]) : (f32) -> f32
  %l = attn_gpu.log2 %x : f32
  // CHECK: %[[T:.+]] = llvm.call_intrinsic "llvm.tanh.f32"(%[[X]]) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
  %t = attn_gpu.tanh %x : f32
  %s0 = llvm.fadd %e, %f : f32
  %s1 = llvm.fadd %l, %t : f32
  %s = llvm.fadd %s0, %s1 : f32
  llvm.return %s : f32
}

// -----

// One asm moves every value; pointers as their 64-bit integer.
// CHECK-LABEL: llvm.func @opaque
// CHECK-SAME: (%[[P:.+]]: !llvm.ptr<3>, %[[I:.+]]: i32)
llvm.func @opaque(%p: !llvm.ptr<3>, %i: i32) -> i32 {
  // CHECK: %[[PI:.+]] = llvm.ptrtoint %[[P]] : !llvm.ptr<3> to i64
  // CHECK: %[[M:.+]] = llvm.inline_asm has_side_effects "mov.b64 $0, $2;\0Amov.b32 $1, $3;\0A", "=l,=r,l,r" %[[PI]], %[[I]] : (i64, i32) -> !llvm.struct<(i64, i32)>
  // CHECK: %[[MI:.+]] = llvm.extractvalue %[[M]][1]
  // CHECK: llvm.return %[[MI]]
  %o:2 = attn_gpu.opaque %p, %i : !llvm.ptr<3>, i32
  llvm.return %o#1 : i32
}
