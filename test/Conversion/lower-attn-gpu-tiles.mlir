// RUN: attn-opt %s --lower-attn-gpu-tiles --split-input-file | FileCheck %s --implicit-check-not=attn_gpu.frag --implicit-check-not=attn_gpu.warpgroup_mma --implicit-check-not=attn_gpu.mask_scores --implicit-check-not=attn_gpu.online_softmax --implicit-check-not=attn_gpu.scale_rows --implicit-check-not=attn_gpu.to_operand --implicit-check-not=attn_gpu.ring --implicit-check-not=attn_gpu.warp_mma --implicit-check-not=attn_gpu.mask_limit
// RUN: attn-opt %s --lower-attn-gpu-tiles --split-input-file | attn-opt --convert-attn-gpu-to-nvvm --split-input-file | FileCheck %s --check-prefix=NVVM --implicit-check-not=attn_gpu

// Each fragment becomes its registers in the layout of AttnGPUTypes.td (acc:
// register 4j + e is row g + 8(e / 2), column 8j + 2t + e % 2; a: register
// 4k + r is row g + 8(r % 2), columns 16k + 8(r / 2) + 2t and the next;
// rows: rows g and g + 8), and each op on fragments the instruction-level
// ops on those registers. The second RUN line shows that the result is what
// convert-attn-gpu-to-nvvm takes.

// frag_from_registers then frag_registers: the same registers, in order.

// CHECK-LABEL: func.func @registers
// CHECK-SAME: (%[[R0:[[:alnum:]_]+]]: f32, %[[R1:[[:alnum:]_]+]]: f32, %[[R2:[[:alnum:]_]+]]: f32, %[[R3:[[:alnum:]_]+]]: f32, %[[P0:[[:alnum:]_]+]]: i32, %[[P1:[[:alnum:]_]+]]: i32, %[[P2:[[:alnum:]_]+]]: i32, %[[P3:[[:alnum:]_]+]]: i32)
// CHECK-NEXT: return %[[R3]], %[[R2]], %[[R1]], %[[R0]], %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[P0]], %[[P1]], %[[P2]], %[[P3]], %[[R1]], %[[R0]] : f32, f32, f32, f32, f32, f32, f32, f32, i32, i32, i32, i32, f32, f32
// NVVM-LABEL: func.func @registers
func.func @registers(%r0: f32, %r1: f32, %r2: f32, %r3: f32, %p0: i32,
                     %p1: i32, %p2: i32, %p3: i32)
    -> (f32, f32, f32, f32, f32, f32, f32, f32, i32, i32, i32, i32, f32, f32) {
  %f = attn_gpu.frag_from_registers %r3, %r2, %r1, %r0
      : f32, f32, f32, f32 -> !attn_gpu.frag<16x8xf32, acc>
  %g = attn_gpu.frag_from_registers %r0, %r1, %r2, %r3
      : f32, f32, f32, f32 -> !attn_gpu.frag<16x8xf32, acc>
  %a = attn_gpu.frag_from_registers %p0, %p1, %p2, %p3
      : i32, i32, i32, i32 -> !attn_gpu.frag<16x16xbf16, a>
  %m = attn_gpu.frag_from_registers %r1, %r0
      : f32, f32 -> !attn_gpu.frag<16x1xf32, rows>
  %x:4 = attn_gpu.frag_registers %f : !attn_gpu.frag<16x8xf32, acc>
      -> f32, f32, f32, f32
  %y:4 = attn_gpu.frag_registers %g : !attn_gpu.frag<16x8xf32, acc>
      -> f32, f32, f32, f32
  %z:4 = attn_gpu.frag_registers %a : !attn_gpu.frag<16x16xbf16, a>
      -> i32, i32, i32, i32
  %w:2 = attn_gpu.frag_registers %m : !attn_gpu.frag<16x1xf32, rows>
      -> f32, f32
  return %x#0, %x#1, %x#2, %x#3, %y#0, %y#1, %y#2, %y#3, %z#0, %z#1, %z#2,
      %z#3, %w#0, %w#1
      : f32, f32, f32, f32, f32, f32, f32, f32, i32, i32, i32, i32, f32, f32
}

// -----

// frag_undef: one undef register for all of them; frag_splat: the value in
// every register (f32 registers: an a fragment cannot be splat).

// CHECK-LABEL: func.func @undef_and_splat
// CHECK-SAME: (%[[X:[[:alnum:]_]+]]: f32)
// CHECK-NEXT: %[[U:.+]] = llvm.mlir.undef : f32
// CHECK-NEXT: %[[UA:.+]] = llvm.mlir.undef : i32
// CHECK-NEXT: return %[[U]], %[[U]], %[[U]], %[[U]], %[[UA]], %[[UA]], %[[UA]], %[[UA]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]] : f32, f32, f32, f32, i32, i32, i32, i32, f32, f32, f32, f32, f32, f32
func.func @undef_and_splat(%x: f32)
    -> (f32, f32, f32, f32, i32, i32, i32, i32, f32, f32, f32, f32, f32, f32) {
  %u = attn_gpu.frag_undef : !attn_gpu.frag<16x8xf32, acc>
  %ua = attn_gpu.frag_undef : !attn_gpu.frag<16x16xf16, a>
  %s = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x8xf32, acc>
  %m = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x1xf32, rows>
  %a:4 = attn_gpu.frag_registers %u : !attn_gpu.frag<16x8xf32, acc>
      -> f32, f32, f32, f32
  %b:4 = attn_gpu.frag_registers %ua : !attn_gpu.frag<16x16xf16, a>
      -> i32, i32, i32, i32
  %c:4 = attn_gpu.frag_registers %s : !attn_gpu.frag<16x8xf32, acc>
      -> f32, f32, f32, f32
  %d:2 = attn_gpu.frag_registers %m : !attn_gpu.frag<16x1xf32, rows>
      -> f32, f32
  return %a#0, %a#1, %a#2, %a#3, %b#0, %b#1, %b#2, %b#3, %c#0, %c#1, %c#2,
      %c#3, %d#0, %d#1
      : f32, f32, f32, f32, i32, i32, i32, i32, f32, f32, f32, f32, f32, f32
}

// -----

// wgmma_fence and wgmma_wait_group thread the registers of the fragments
// (and plain registers) they are given, the results regrouped in order.

// CHECK-LABEL: func.func @threading
// CHECK-SAME: (%[[C0:[[:alnum:]_]+]]: f32, %[[C1:[[:alnum:]_]+]]: f32, %[[C2:[[:alnum:]_]+]]: f32, %[[C3:[[:alnum:]_]+]]: f32, %[[A0:[[:alnum:]_]+]]: i32, %[[A1:[[:alnum:]_]+]]: i32, %[[A2:[[:alnum:]_]+]]: i32, %[[A3:[[:alnum:]_]+]]: i32, %[[X:[[:alnum:]_]+]]: f32)
// CHECK-NEXT: %[[F:.+]]:9 = attn_gpu.wgmma_fence %[[X]], %[[C0]], %[[C1]], %[[C2]], %[[C3]], %[[A0]], %[[A1]], %[[A2]], %[[A3]] : f32, f32, f32, f32, f32, i32, i32, i32, i32
// CHECK-NEXT: %[[W:.+]]:5 = attn_gpu.wgmma_wait_group 1, %[[F]]#1, %[[F]]#2, %[[F]]#3, %[[F]]#4, %[[F]]#0 : f32, f32, f32, f32, f32
// CHECK-NEXT: return %[[W]]#0, %[[W]]#1, %[[W]]#2, %[[W]]#3, %[[W]]#4, %[[F]]#5, %[[F]]#6, %[[F]]#7, %[[F]]#8 : f32, f32, f32, f32, f32, i32, i32, i32, i32
// NVVM-LABEL: func.func @threading
// NVVM: nvvm.wgmma.fence.aligned
// NVVM: nvvm.wgmma.wait.group.sync.aligned 1
func.func @threading(%c0: f32, %c1: f32, %c2: f32, %c3: f32, %a0: i32,
                     %a1: i32, %a2: i32, %a3: i32, %x: f32)
    -> (f32, f32, f32, f32, f32, i32, i32, i32, i32) {
  %c = attn_gpu.frag_from_registers %c0, %c1, %c2, %c3
      : f32, f32, f32, f32 -> !attn_gpu.frag<16x8xf32, acc>
  %a = attn_gpu.frag_from_registers %a0, %a1, %a2, %a3
      : i32, i32, i32, i32 -> !attn_gpu.frag<16x16xbf16, a>
  %f:3 = attn_gpu.wgmma_fence %x, %c, %a
      : f32, !attn_gpu.frag<16x8xf32, acc>, !attn_gpu.frag<16x16xbf16, a>
  %w:2 = attn_gpu.wgmma_wait_group 1, %f#1, %f#0
      : !attn_gpu.frag<16x8xf32, acc>, f32
  %r:4 = attn_gpu.frag_registers %w#0 : !attn_gpu.frag<16x8xf32, acc>
      -> f32, f32, f32, f32
  %p:4 = attn_gpu.frag_registers %f#2 : !attn_gpu.frag<16x16xbf16, a>
      -> i32, i32, i32, i32
  return %r#0, %r#1, %r#2, %r#3, %w#1, %p#0, %p#1, %p#2, %p#3
      : f32, f32, f32, f32, f32, i32, i32, i32, i32
}

// -----

// warpgroup_mma: a descriptor A is a wgmma_ss with n = the accumulator's
// columns on its registers; a fragment A a wgmma_rs on the four registers
// 4k..4k + 3 of k-step k = a_k_step, element_type the fragment's.

// CHECK-LABEL: func.func @warpgroup_mma
// CHECK-SAME: (%[[DA:[[:alnum:]_]+]]: i64, %[[DB:[[:alnum:]_]+]]: i64, %[[C0:[[:alnum:]_]+]]: f32, %[[C1:[[:alnum:]_]+]]: f32, %[[C2:[[:alnum:]_]+]]: f32, %[[C3:[[:alnum:]_]+]]: f32, %[[C4:[[:alnum:]_]+]]: f32, %[[C5:[[:alnum:]_]+]]: f32, %[[C6:[[:alnum:]_]+]]: f32, %[[C7:[[:alnum:]_]+]]: f32, %[[A0:[[:alnum:]_]+]]: i32, %[[A1:[[:alnum:]_]+]]: i32, %[[A2:[[:alnum:]_]+]]: i32, %[[A3:[[:alnum:]_]+]]: i32, %[[A4:[[:alnum:]_]+]]: i32, %[[A5:[[:alnum:]_]+]]: i32, %[[A6:[[:alnum:]_]+]]: i32, %[[A7:[[:alnum:]_]+]]: i32, %[[A8:[[:alnum:]_]+]]: i32, %[[A9:[[:alnum:]_]+]]: i32, %[[A10:[[:alnum:]_]+]]: i32, %[[A11:[[:alnum:]_]+]]: i32)
// CHECK-NEXT: %[[S:.+]]:8 = attn_gpu.wgmma_ss %[[DA]], %[[DB]], %[[C0]], %[[C1]], %[[C2]], %[[C3]], %[[C4]], %[[C5]], %[[C6]], %[[C7]] {accumulate = false, element_type = bf16, n = 16 : i64, transpose_a, transpose_b} : f32, f32, f32, f32, f32, f32, f32, f32
// CHECK-NEXT: %[[R:.+]]:8 = attn_gpu.wgmma_rs %[[A8]], %[[A9]], %[[A10]], %[[A11]], %[[DB]], %[[S]]#0, %[[S]]#1, %[[S]]#2, %[[S]]#3, %[[S]]#4, %[[S]]#5, %[[S]]#6, %[[S]]#7 {accumulate = true, element_type = f16, n = 16 : i64} : f32, f32, f32, f32, f32, f32, f32, f32
// CHECK-NEXT: %[[T:.+]]:8 = attn_gpu.wgmma_rs %[[A0]], %[[A1]], %[[A2]], %[[A3]], %[[DB]], %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3, %[[R]]#4, %[[R]]#5, %[[R]]#6, %[[R]]#7 {accumulate = true, element_type = f16, n = 16 : i64, transpose_b} : f32, f32, f32, f32, f32, f32, f32, f32
// CHECK-NEXT: %[[U:.+]]:8 = attn_gpu.wgmma_ss %[[DA]], %[[DB]], %[[T]]#0, %[[T]]#1, %[[T]]#2, %[[T]]#3, %[[T]]#4, %[[T]]#5, %[[T]]#6, %[[T]]#7 {accumulate = true, element_type = f16, n = 16 : i64} : f32, f32, f32, f32, f32, f32, f32, f32
// CHECK-NEXT: return %[[U]]#0, %[[U]]#1, %[[U]]#2, %[[U]]#3, %[[U]]#4, %[[U]]#5, %[[U]]#6, %[[U]]#7 : f32, f32, f32, f32, f32, f32, f32, f32
// NVVM-LABEL: func.func @warpgroup_mma
// NVVM-SAME: (%[[NDA:[[:alnum:]_]+]]: i64, %[[NDB:[[:alnum:]_]+]]: i64, %{{[[:alnum:]_]+}}: f32, %{{[[:alnum:]_]+}}: f32, %{{[[:alnum:]_]+}}: f32, %{{[[:alnum:]_]+}}: f32, %{{[[:alnum:]_]+}}: f32, %{{[[:alnum:]_]+}}: f32, %{{[[:alnum:]_]+}}: f32, %{{[[:alnum:]_]+}}: f32, %[[NA0:[[:alnum:]_]+]]: i32, %[[NA1:[[:alnum:]_]+]]: i32, %[[NA2:[[:alnum:]_]+]]: i32, %[[NA3:[[:alnum:]_]+]]: i32, %{{[[:alnum:]_]+}}: i32, %{{[[:alnum:]_]+}}: i32, %{{[[:alnum:]_]+}}: i32, %{{[[:alnum:]_]+}}: i32, %[[NA8:[[:alnum:]_]+]]: i32, %[[NA9:[[:alnum:]_]+]]: i32, %[[NA10:[[:alnum:]_]+]]: i32, %[[NA11:[[:alnum:]_]+]]: i32)
// NVVM: nvvm.wgmma.mma_async %[[NDA]], %[[NDB]], %{{.+}}, <m = 64, n = 16, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// NVVM: llvm.inline_asm has_side_effects "{{.*}}wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7}, {$16, $17, $18, $19}, $20, p, 1, 1, 0;{{.*}}" %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[NA8]], %[[NA9]], %[[NA10]], %[[NA11]], %[[NDB]] :
// NVVM: llvm.inline_asm has_side_effects "{{.*}}wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7}, {$16, $17, $18, $19}, $20, p, 1, 1, 1;{{.*}}" %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[NA0]], %[[NA1]], %[[NA2]], %[[NA3]], %[[NDB]] :
// NVVM: nvvm.wgmma.mma_async %[[NDA]], %[[NDB]], %{{.+}}, <m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
func.func @warpgroup_mma(%da: i64, %db: i64, %c0: f32, %c1: f32, %c2: f32,
                         %c3: f32, %c4: f32, %c5: f32, %c6: f32, %c7: f32,
                         %a0: i32, %a1: i32, %a2: i32, %a3: i32, %a4: i32,
                         %a5: i32, %a6: i32, %a7: i32, %a8: i32, %a9: i32,
                         %a10: i32, %a11: i32)
    -> (f32, f32, f32, f32, f32, f32, f32, f32) {
  %acc = attn_gpu.frag_from_registers %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7
      : f32, f32, f32, f32, f32, f32, f32, f32 -> !attn_gpu.frag<16x16xf32, acc>
  %a = attn_gpu.frag_from_registers %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7,
      %a8, %a9, %a10, %a11
      : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32
      -> !attn_gpu.frag<16x48xf16, a>
  %s = attn_gpu.warpgroup_mma %da, %db, %acc
      {element_type = bf16, accumulate = false, transpose_a, transpose_b}
      : i64, !attn_gpu.frag<16x16xf32, acc>
  %r = attn_gpu.warpgroup_mma %a, %db, %s {accumulate = true, a_k_step = 2 : i64}
      : !attn_gpu.frag<16x48xf16, a>, !attn_gpu.frag<16x16xf32, acc>
  %t = attn_gpu.warpgroup_mma %a, %db, %r
      {element_type = f16, accumulate = true, transpose_b}
      : !attn_gpu.frag<16x48xf16, a>, !attn_gpu.frag<16x16xf32, acc>
  %u = attn_gpu.warpgroup_mma %da, %db, %t {element_type = f16, accumulate = true}
      : i64, !attn_gpu.frag<16x16xf32, acc>
  %x:8 = attn_gpu.frag_registers %u : !attn_gpu.frag<16x16xf32, acc>
      -> f32, f32, f32, f32, f32, f32, f32, f32
  return %x#0, %x#1, %x#2, %x#3, %x#4, %x#5, %x#6, %x#7
      : f32, f32, f32, f32, f32, f32, f32, f32
}

// -----

// mask_scores, keys_left only: register 4j + e compares column 8j + e % 2
// with keys_left. (The lowering also makes the column - row constant that
// only the band tests use: hence CHECK, not CHECK-NEXT, before each select.)

// CHECK-LABEL: func.func @mask_keys_left
// CHECK-SAME: (%[[S0:[[:alnum:]_]+]]: f32, %[[S1:[[:alnum:]_]+]]: f32, %[[S2:[[:alnum:]_]+]]: f32, %[[S3:[[:alnum:]_]+]]: f32, %[[S4:[[:alnum:]_]+]]: f32, %[[S5:[[:alnum:]_]+]]: f32, %[[S6:[[:alnum:]_]+]]: f32, %[[S7:[[:alnum:]_]+]]: f32, %[[KL:[[:alnum:]_]+]]: i32)
// CHECK: %[[NEG:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[K0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[V0:.+]] = arith.cmpi slt, %[[K0]], %[[KL]] : i32
// CHECK:      %[[M0:.+]] = arith.select %[[V0]], %[[S0]], %[[NEG]] : f32
// CHECK-NEXT: %[[K1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[V1:.+]] = arith.cmpi slt, %[[K1]], %[[KL]] : i32
// CHECK:      %[[M1:.+]] = arith.select %[[V1]], %[[S1]], %[[NEG]] : f32
// CHECK-NEXT: %[[K2:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[V2:.+]] = arith.cmpi slt, %[[K2]], %[[KL]] : i32
// CHECK:      %[[M2:.+]] = arith.select %[[V2]], %[[S2]], %[[NEG]] : f32
// CHECK-NEXT: %[[K3:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[V3:.+]] = arith.cmpi slt, %[[K3]], %[[KL]] : i32
// CHECK:      %[[M3:.+]] = arith.select %[[V3]], %[[S3]], %[[NEG]] : f32
// CHECK-NEXT: %[[K4:.+]] = arith.constant 8 : i32
// CHECK-NEXT: %[[V4:.+]] = arith.cmpi slt, %[[K4]], %[[KL]] : i32
// CHECK:      %[[M4:.+]] = arith.select %[[V4]], %[[S4]], %[[NEG]] : f32
// CHECK-NEXT: %[[K5:.+]] = arith.constant 9 : i32
// CHECK-NEXT: %[[V5:.+]] = arith.cmpi slt, %[[K5]], %[[KL]] : i32
// CHECK:      %[[M5:.+]] = arith.select %[[V5]], %[[S5]], %[[NEG]] : f32
// CHECK-NEXT: %[[K6:.+]] = arith.constant 8 : i32
// CHECK-NEXT: %[[V6:.+]] = arith.cmpi slt, %[[K6]], %[[KL]] : i32
// CHECK:      %[[M6:.+]] = arith.select %[[V6]], %[[S6]], %[[NEG]] : f32
// CHECK-NEXT: %[[K7:.+]] = arith.constant 9 : i32
// CHECK-NEXT: %[[V7:.+]] = arith.cmpi slt, %[[K7]], %[[KL]] : i32
// CHECK:      %[[M7:.+]] = arith.select %[[V7]], %[[S7]], %[[NEG]] : f32
// CHECK-NEXT: return %[[M0]], %[[M1]], %[[M2]], %[[M3]], %[[M4]], %[[M5]], %[[M6]], %[[M7]] :
func.func @mask_keys_left(%s0: f32, %s1: f32, %s2: f32, %s3: f32, %s4: f32,
                          %s5: f32, %s6: f32, %s7: f32, %kl: i32)
    -> (f32, f32, f32, f32, f32, f32, f32, f32) {
  %s = attn_gpu.frag_from_registers %s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7
      : f32, f32, f32, f32, f32, f32, f32, f32 -> !attn_gpu.frag<16x16xf32, acc>
  %m = attn_gpu.mask_scores %s keys_left %kl : !attn_gpu.frag<16x16xf32, acc>
  %r:8 = attn_gpu.frag_registers %m : !attn_gpu.frag<16x16xf32, acc>
      -> f32, f32, f32, f32, f32, f32, f32, f32
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7
      : f32, f32, f32, f32, f32, f32, f32, f32
}

// -----

// mask_scores with both window sides, keys_before and two fragments: the
// band tests compare column - row, register 4j + e of fragment i at column
// 8j + e % 2 and row 16i + 8(e / 2), with row_minus_key + window_right and
// row_minus_key - window_left.

// CHECK-LABEL: func.func @mask_band
// CHECK-SAME: (%[[S0:[[:alnum:]_]+]]: f32, %[[S1:[[:alnum:]_]+]]: f32, %[[S2:[[:alnum:]_]+]]: f32, %[[S3:[[:alnum:]_]+]]: f32, %[[T0:[[:alnum:]_]+]]: f32, %[[T1:[[:alnum:]_]+]]: f32, %[[T2:[[:alnum:]_]+]]: f32, %[[T3:[[:alnum:]_]+]]: f32, %[[KL:[[:alnum:]_]+]]: i32, %[[RK:[[:alnum:]_]+]]: i32, %[[KB:[[:alnum:]_]+]]: i32)
// CHECK-NEXT: %[[WR:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[RL:.+]] = arith.addi %[[RK]], %[[WR]] : i32
// CHECK-NEXT: %[[WL:.+]] = arith.constant 5 : i32
// CHECK-NEXT: %[[LL:.+]] = arith.subi %[[RK]], %[[WL]] : i32
// CHECK-NEXT: %[[NEG:.+]] = arith.constant 0xFF800000 : f32
//
// Fragment 0, register 0: column 0, row 0.
// CHECK-NEXT: %[[C:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[LL]], %[[D]] : i32
// CHECK-NEXT: %[[V3:.+]] = arith.andi %[[V2]], %[[B]] : i1
// CHECK-NEXT: %[[C2:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[KB]], %[[C2]] : i32
// CHECK-NEXT: %[[V4:.+]] = arith.andi %[[V3]], %[[B]] : i1
// CHECK-NEXT: %[[M0:.+]] = arith.select %[[V4]], %[[S0]], %[[NEG]] : f32
//
// Register 1: column 1, row 0.
// CHECK-NEXT: %[[C:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[LL]], %[[D]] : i32
// CHECK-NEXT: %[[V3:.+]] = arith.andi %[[V2]], %[[B]] : i1
// CHECK-NEXT: %[[C2:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[KB]], %[[C2]] : i32
// CHECK-NEXT: %[[V4:.+]] = arith.andi %[[V3]], %[[B]] : i1
// CHECK-NEXT: %[[M1:.+]] = arith.select %[[V4]], %[[S1]], %[[NEG]] : f32
//
// Register 2: column 0, row 8.
// CHECK-NEXT: %[[C:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant -8 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[LL]], %[[D]] : i32
// CHECK-NEXT: %[[V3:.+]] = arith.andi %[[V2]], %[[B]] : i1
// CHECK-NEXT: %[[C2:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[KB]], %[[C2]] : i32
// CHECK-NEXT: %[[V4:.+]] = arith.andi %[[V3]], %[[B]] : i1
// CHECK-NEXT: %[[M2:.+]] = arith.select %[[V4]], %[[S2]], %[[NEG]] : f32
//
// Register 3: column 1, row 8.
// CHECK-NEXT: %[[C:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant -7 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[LL]], %[[D]] : i32
// CHECK-NEXT: %[[V3:.+]] = arith.andi %[[V2]], %[[B]] : i1
// CHECK-NEXT: %[[C2:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[KB]], %[[C2]] : i32
// CHECK-NEXT: %[[V4:.+]] = arith.andi %[[V3]], %[[B]] : i1
// CHECK-NEXT: %[[M3:.+]] = arith.select %[[V4]], %[[S3]], %[[NEG]] : f32
//
// Fragment 1 (rows 16 on), register 0: column 0, row 16.
// CHECK-NEXT: %[[C:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant -16 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[LL]], %[[D]] : i32
// CHECK-NEXT: %[[V3:.+]] = arith.andi %[[V2]], %[[B]] : i1
// CHECK-NEXT: %[[C2:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[KB]], %[[C2]] : i32
// CHECK-NEXT: %[[V4:.+]] = arith.andi %[[V3]], %[[B]] : i1
// CHECK-NEXT: %[[N0:.+]] = arith.select %[[V4]], %[[T0]], %[[NEG]] : f32
//
// Register 1: column 1, row 16.
// CHECK-NEXT: %[[C:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant -15 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[LL]], %[[D]] : i32
// CHECK-NEXT: %[[V3:.+]] = arith.andi %[[V2]], %[[B]] : i1
// CHECK-NEXT: %[[C2:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[KB]], %[[C2]] : i32
// CHECK-NEXT: %[[V4:.+]] = arith.andi %[[V3]], %[[B]] : i1
// CHECK-NEXT: %[[N1:.+]] = arith.select %[[V4]], %[[T1]], %[[NEG]] : f32
//
// Register 2: column 0, row 24.
// CHECK-NEXT: %[[C:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant -24 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[LL]], %[[D]] : i32
// CHECK-NEXT: %[[V3:.+]] = arith.andi %[[V2]], %[[B]] : i1
// CHECK-NEXT: %[[C2:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[KB]], %[[C2]] : i32
// CHECK-NEXT: %[[V4:.+]] = arith.andi %[[V3]], %[[B]] : i1
// CHECK-NEXT: %[[N2:.+]] = arith.select %[[V4]], %[[T2]], %[[NEG]] : f32
//
// Register 3: column 1, row 24.
// CHECK-NEXT: %[[C:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant -23 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[LL]], %[[D]] : i32
// CHECK-NEXT: %[[V3:.+]] = arith.andi %[[V2]], %[[B]] : i1
// CHECK-NEXT: %[[C2:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[KB]], %[[C2]] : i32
// CHECK-NEXT: %[[V4:.+]] = arith.andi %[[V3]], %[[B]] : i1
// CHECK-NEXT: %[[N3:.+]] = arith.select %[[V4]], %[[T3]], %[[NEG]] : f32
// CHECK-NEXT: return %[[M0]], %[[M1]], %[[M2]], %[[M3]], %[[N0]], %[[N1]], %[[N2]], %[[N3]] :
func.func @mask_band(%s0: f32, %s1: f32, %s2: f32, %s3: f32, %t0: f32,
                     %t1: f32, %t2: f32, %t3: f32, %kl: i32, %rk: i32,
                     %kb: i32) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
  %s = attn_gpu.frag_from_registers %s0, %s1, %s2, %s3
      : f32, f32, f32, f32 -> !attn_gpu.frag<16x8xf32, acc>
  %t = attn_gpu.frag_from_registers %t0, %t1, %t2, %t3
      : f32, f32, f32, f32 -> !attn_gpu.frag<16x8xf32, acc>
  %m:2 = attn_gpu.mask_scores %s, %t keys_left %kl row_minus_key %rk
      keys_before %kb {window_left = 5 : i64, window_right = 2 : i64}
      : !attn_gpu.frag<16x8xf32, acc>, !attn_gpu.frag<16x8xf32, acc>
  %x:4 = attn_gpu.frag_registers %m#0 : !attn_gpu.frag<16x8xf32, acc>
      -> f32, f32, f32, f32
  %y:4 = attn_gpu.frag_registers %m#1 : !attn_gpu.frag<16x8xf32, acc>
      -> f32, f32, f32, f32
  return %x#0, %x#1, %x#2, %x#3, %y#0, %y#1, %y#2, %y#3
      : f32, f32, f32, f32, f32, f32, f32, f32
}

// -----

// mask_scores with only the right side (causal): no left-side or keys_before
// test.

// CHECK-LABEL: func.func @mask_causal
// CHECK-SAME: (%[[S0:[[:alnum:]_]+]]: f32, %[[S1:[[:alnum:]_]+]]: f32, %[[S2:[[:alnum:]_]+]]: f32, %[[S3:[[:alnum:]_]+]]: f32, %[[KL:[[:alnum:]_]+]]: i32, %[[RK:[[:alnum:]_]+]]: i32)
// CHECK-NEXT: %[[WR:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[RL:.+]] = arith.addi %[[RK]], %[[WR]] : i32
// CHECK-NEXT: %[[NEG:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[C:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[M0:.+]] = arith.select %[[V2]], %[[S0]], %[[NEG]] : f32
// CHECK-NEXT: %[[C:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[M1:.+]] = arith.select %[[V2]], %[[S1]], %[[NEG]] : f32
// CHECK-NEXT: %[[C:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant -8 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[M2:.+]] = arith.select %[[V2]], %[[S2]], %[[NEG]] : f32
// CHECK-NEXT: %[[C:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[V:.+]] = arith.cmpi slt, %[[C]], %[[KL]] : i32
// CHECK-NEXT: %[[D:.+]] = arith.constant -7 : i32
// CHECK-NEXT: %[[B:.+]] = arith.cmpi sle, %[[D]], %[[RL]] : i32
// CHECK-NEXT: %[[V2:.+]] = arith.andi %[[V]], %[[B]] : i1
// CHECK-NEXT: %[[M3:.+]] = arith.select %[[V2]], %[[S3]], %[[NEG]] : f32
// CHECK-NEXT: return %[[M0]], %[[M1]], %[[M2]], %[[M3]] :
func.func @mask_causal(%s0: f32, %s1: f32, %s2: f32, %s3: f32, %kl: i32,
                       %rk: i32) -> (f32, f32, f32, f32) {
  %s = attn_gpu.frag_from_registers %s0, %s1, %s2, %s3
      : f32, f32, f32, f32 -> !attn_gpu.frag<16x8xf32, acc>
  %m = attn_gpu.mask_scores %s keys_left %kl row_minus_key %rk
      {window_right = 0 : i64} : !attn_gpu.frag<16x8xf32, acc>
  %x:4 = attn_gpu.frag_registers %m : !attn_gpu.frag<16x8xf32, acc>
      -> f32, f32, f32, f32
  return %x#0, %x#1, %x#2, %x#3 : f32, f32, f32, f32
}

// -----

// online_softmax on two column tiles: per row h (registers 4j + 2h and
// 4j + 2h + 1), the max over the thread's columns, then over the quad
// (butterfly shuffles 1 and 2), m' = max(m, c·max), the shift (0 for a row
// still at -inf), alpha = 2^(m - shift), p = 2^(fma(s, c, -shift)) with the
// first exp2_fma_tiles = 1 tile on the FMA pipe, l' = l·alpha + sum(p).

// CHECK-LABEL: func.func @online_softmax
// CHECK-SAME: (%[[S0:[[:alnum:]_]+]]: f32, %[[S1:[[:alnum:]_]+]]: f32, %[[S2:[[:alnum:]_]+]]: f32, %[[S3:[[:alnum:]_]+]]: f32, %[[S4:[[:alnum:]_]+]]: f32, %[[S5:[[:alnum:]_]+]]: f32, %[[S6:[[:alnum:]_]+]]: f32, %[[S7:[[:alnum:]_]+]]: f32, %[[M0:[[:alnum:]_]+]]: f32, %[[M1:[[:alnum:]_]+]]: f32, %[[L0:[[:alnum:]_]+]]: f32, %[[L1:[[:alnum:]_]+]]: f32, %[[C:[[:alnum:]_]+]]: f32)
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[NEG:.+]] = arith.constant 0xFF800000 : f32
//
// Row g: registers 0, 1 of tile 0 and 4, 5 of tile 1.
// CHECK-NEXT: %[[X:.+]] = llvm.intr.maxnum(%[[S0]], %[[S1]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[Y:.+]] = llvm.intr.maxnum(%[[NEG]], %[[X]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[X:.+]] = llvm.intr.maxnum(%[[S4]], %[[S5]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[MX:.+]] = llvm.intr.maxnum(%[[Y]], %[[X]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[CLAMP:.+]] = arith.constant 31 : i32
// CHECK-NEXT: %[[OFF:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[ALL:.+]] = arith.constant -1 : i32
// CHECK-NEXT: %[[SH:.+]] = nvvm.shfl.sync bfly %[[ALL]], %[[MX]], %[[OFF]], %[[CLAMP]] : f32 -> f32
// CHECK-NEXT: %[[MX1:.+]] = llvm.intr.maxnum(%[[MX]], %[[SH]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[CLAMP:.+]] = arith.constant 31 : i32
// CHECK-NEXT: %[[OFF:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[ALL:.+]] = arith.constant -1 : i32
// CHECK-NEXT: %[[SH:.+]] = nvvm.shfl.sync bfly %[[ALL]], %[[MX1]], %[[OFF]], %[[CLAMP]] : f32 -> f32
// CHECK-NEXT: %[[MX2:.+]] = llvm.intr.maxnum(%[[MX1]], %[[SH]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[CMX:.+]] = arith.mulf %[[MX2]], %[[C]] : f32
// CHECK-NEXT: %[[NM0:.+]] = llvm.intr.maxnum(%[[M0]], %[[CMX]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[EMPTY:.+]] = arith.cmpf oeq, %[[NM0]], %[[NEG]] : f32
// CHECK-NEXT: %[[SHIFT:.+]] = arith.select %[[EMPTY]], %[[ZERO]], %[[NM0]] : f32
// CHECK-NEXT: %[[NSHIFT:.+]] = arith.negf %[[SHIFT]] : f32
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[M0]], %[[SHIFT]] : f32
// CHECK-NEXT: %[[AL0:.+]] = attn_gpu.exp2 %[[D]] : f32
// CHECK-NEXT: %[[X:.+]] = llvm.intr.fma(%[[S0]], %[[C]], %[[NSHIFT]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: %[[P0:.+]] = attn_gpu.exp2 %[[X]] {fma} : f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ZERO]], %[[P0]] : f32
// CHECK-NEXT: %[[X:.+]] = llvm.intr.fma(%[[S1]], %[[C]], %[[NSHIFT]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: %[[P1:.+]] = attn_gpu.exp2 %[[X]] {fma} : f32
// CHECK-NEXT: %[[SUM1:.+]] = arith.addf %[[SUM]], %[[P1]] : f32
// CHECK-NEXT: %[[X:.+]] = llvm.intr.fma(%[[S4]], %[[C]], %[[NSHIFT]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: %[[P4:.+]] = attn_gpu.exp2 %[[X]] : f32
// CHECK-NEXT: %[[SUM2:.+]] = arith.addf %[[SUM1]], %[[P4]] : f32
// CHECK-NEXT: %[[X:.+]] = llvm.intr.fma(%[[S5]], %[[C]], %[[NSHIFT]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: %[[P5:.+]] = attn_gpu.exp2 %[[X]] : f32
// CHECK-NEXT: %[[SUM3:.+]] = arith.addf %[[SUM2]], %[[P5]] : f32
// CHECK-NEXT: %[[X:.+]] = arith.mulf %[[L0]], %[[AL0]] : f32
// CHECK-NEXT: %[[NL0:.+]] = arith.addf %[[X]], %[[SUM3]] : f32
//
// Row g + 8: registers 2, 3 and 6, 7.
// CHECK-NEXT: %[[X:.+]] = llvm.intr.maxnum(%[[S2]], %[[S3]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[Y:.+]] = llvm.intr.maxnum(%[[NEG]], %[[X]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[X:.+]] = llvm.intr.maxnum(%[[S6]], %[[S7]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[MX:.+]] = llvm.intr.maxnum(%[[Y]], %[[X]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[CLAMP:.+]] = arith.constant 31 : i32
// CHECK-NEXT: %[[OFF:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[ALL:.+]] = arith.constant -1 : i32
// CHECK-NEXT: %[[SH:.+]] = nvvm.shfl.sync bfly %[[ALL]], %[[MX]], %[[OFF]], %[[CLAMP]] : f32 -> f32
// CHECK-NEXT: %[[MX1:.+]] = llvm.intr.maxnum(%[[MX]], %[[SH]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[CLAMP:.+]] = arith.constant 31 : i32
// CHECK-NEXT: %[[OFF:.+]] = arith.constant 2 : i32
// CHECK-NEXT: %[[ALL:.+]] = arith.constant -1 : i32
// CHECK-NEXT: %[[SH:.+]] = nvvm.shfl.sync bfly %[[ALL]], %[[MX1]], %[[OFF]], %[[CLAMP]] : f32 -> f32
// CHECK-NEXT: %[[MX2:.+]] = llvm.intr.maxnum(%[[MX1]], %[[SH]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[CMX:.+]] = arith.mulf %[[MX2]], %[[C]] : f32
// CHECK-NEXT: %[[NM1:.+]] = llvm.intr.maxnum(%[[M1]], %[[CMX]]) : (f32, f32) -> f32
// CHECK-NEXT: %[[EMPTY:.+]] = arith.cmpf oeq, %[[NM1]], %[[NEG]] : f32
// CHECK-NEXT: %[[SHIFT:.+]] = arith.select %[[EMPTY]], %[[ZERO]], %[[NM1]] : f32
// CHECK-NEXT: %[[NSHIFT:.+]] = arith.negf %[[SHIFT]] : f32
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[M1]], %[[SHIFT]] : f32
// CHECK-NEXT: %[[AL1:.+]] = attn_gpu.exp2 %[[D]] : f32
// CHECK-NEXT: %[[X:.+]] = llvm.intr.fma(%[[S2]], %[[C]], %[[NSHIFT]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: %[[P2:.+]] = attn_gpu.exp2 %[[X]] {fma} : f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ZERO]], %[[P2]] : f32
// CHECK-NEXT: %[[X:.+]] = llvm.intr.fma(%[[S3]], %[[C]], %[[NSHIFT]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: %[[P3:.+]] = attn_gpu.exp2 %[[X]] {fma} : f32
// CHECK-NEXT: %[[SUM1:.+]] = arith.addf %[[SUM]], %[[P3]] : f32
// CHECK-NEXT: %[[X:.+]] = llvm.intr.fma(%[[S6]], %[[C]], %[[NSHIFT]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: %[[P6:.+]] = attn_gpu.exp2 %[[X]] : f32
// CHECK-NEXT: %[[SUM2:.+]] = arith.addf %[[SUM1]], %[[P6]] : f32
// CHECK-NEXT: %[[X:.+]] = llvm.intr.fma(%[[S7]], %[[C]], %[[NSHIFT]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: %[[P7:.+]] = attn_gpu.exp2 %[[X]] : f32
// CHECK-NEXT: %[[SUM3:.+]] = arith.addf %[[SUM2]], %[[P7]] : f32
// CHECK-NEXT: %[[X:.+]] = arith.mulf %[[L1]], %[[AL1]] : f32
// CHECK-NEXT: %[[NL1:.+]] = arith.addf %[[X]], %[[SUM3]] : f32
// CHECK-NEXT: return %[[P0]], %[[P1]], %[[P2]], %[[P3]], %[[P4]], %[[P5]], %[[P6]], %[[P7]], %[[NM0]], %[[NM1]], %[[NL0]], %[[NL1]], %[[AL0]], %[[AL1]] :
// NVVM-LABEL: func.func @online_softmax
// Per row: two butterfly shuffles, then alpha and the two p of tile 1 on
// the MUFU (tile 0's on the FMA pipe).
// NVVM-COUNT-2: nvvm.shfl.sync bfly
// NVVM-NOT: nvvm.shfl.sync
// NVVM-COUNT-3: llvm.nvvm.ex2.approx.ftz.f32
// NVVM-NOT: llvm.nvvm.ex2.approx
// NVVM-COUNT-2: nvvm.shfl.sync bfly
// NVVM-NOT: nvvm.shfl.sync
// NVVM-COUNT-3: llvm.nvvm.ex2.approx.ftz.f32
// NVVM-NOT: llvm.nvvm.ex2.approx
// NVVM: return
func.func @online_softmax(%s0: f32, %s1: f32, %s2: f32, %s3: f32, %s4: f32,
                          %s5: f32, %s6: f32, %s7: f32, %m0: f32, %m1: f32,
                          %l0: f32, %l1: f32, %c: f32)
    -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
  %s = attn_gpu.frag_from_registers %s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7
      : f32, f32, f32, f32, f32, f32, f32, f32 -> !attn_gpu.frag<16x16xf32, acc>
  %m = attn_gpu.frag_from_registers %m0, %m1
      : f32, f32 -> !attn_gpu.frag<16x1xf32, rows>
  %l = attn_gpu.frag_from_registers %l0, %l1
      : f32, f32 -> !attn_gpu.frag<16x1xf32, rows>
  %p, %nm, %nl, %alpha = attn_gpu.online_softmax %s, %m, %l, %c
      {exp2_fma_tiles = 1 : i64} : !attn_gpu.frag<16x16xf32, acc>
  %pr:8 = attn_gpu.frag_registers %p : !attn_gpu.frag<16x16xf32, acc>
      -> f32, f32, f32, f32, f32, f32, f32, f32
  %mr:2 = attn_gpu.frag_registers %nm : !attn_gpu.frag<16x1xf32, rows>
      -> f32, f32
  %lr:2 = attn_gpu.frag_registers %nl : !attn_gpu.frag<16x1xf32, rows>
      -> f32, f32
  %ar:2 = attn_gpu.frag_registers %alpha : !attn_gpu.frag<16x1xf32, rows>
      -> f32, f32
  return %pr#0, %pr#1, %pr#2, %pr#3, %pr#4, %pr#5, %pr#6, %pr#7, %mr#0,
      %mr#1, %lr#0, %lr#1, %ar#0, %ar#1
      : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
}

// -----

// exp2_fma_tiles counts in every 8 column tiles: with 2 of 10 tiles, tiles
// 0, 1, 8 and 9 take the FMA pipe. Without the attribute, none does.

// CHECK-LABEL: func.func @online_softmax_fma_period
// Per row: alpha on the MUFU, then the p of tiles 0-1 (FMA), 2-7 (MUFU),
// 8-9 (FMA), two per tile.
// CHECK: attn_gpu.exp2 %{{[[:alnum:]_]+}} : f32
// CHECK-NOT: attn_gpu.exp2
// CHECK-COUNT-4: attn_gpu.exp2 %{{[[:alnum:]_]+}} {fma} : f32
// CHECK-NOT: {fma}
// CHECK-COUNT-12: attn_gpu.exp2 %{{[[:alnum:]_]+}} : f32
// CHECK-NOT: attn_gpu.exp2
// CHECK-COUNT-4: attn_gpu.exp2 %{{[[:alnum:]_]+}} {fma} : f32
// CHECK-NOT: attn_gpu.exp2
// CHECK: llvm.intr.maxnum
// CHECK: attn_gpu.exp2 %{{[[:alnum:]_]+}} : f32
// CHECK-NOT: attn_gpu.exp2
// CHECK-COUNT-4: attn_gpu.exp2 %{{[[:alnum:]_]+}} {fma} : f32
// CHECK-NOT: {fma}
// CHECK-COUNT-12: attn_gpu.exp2 %{{[[:alnum:]_]+}} : f32
// CHECK-NOT: attn_gpu.exp2
// CHECK-COUNT-4: attn_gpu.exp2 %{{[[:alnum:]_]+}} {fma} : f32
// CHECK-NOT: attn_gpu.exp2
// CHECK: return
// CHECK-LABEL: func.func @online_softmax_mufu
// CHECK-NOT: {fma}
// CHECK: return
func.func @online_softmax_fma_period(%x: f32, %c: f32) -> f32 {
  %s = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x80xf32, acc>
  %m = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x1xf32, rows>
  %p:4 = attn_gpu.online_softmax %s, %m, %m, %c {exp2_fma_tiles = 2 : i64}
      : !attn_gpu.frag<16x80xf32, acc>
  %r:2 = attn_gpu.frag_registers %p#1 : !attn_gpu.frag<16x1xf32, rows>
      -> f32, f32
  return %r#0 : f32
}
func.func @online_softmax_mufu(%x: f32, %c: f32) -> f32 {
  %s = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x80xf32, acc>
  %m = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x1xf32, rows>
  %p:4 = attn_gpu.online_softmax %s, %m, %m, %c : !attn_gpu.frag<16x80xf32, acc>
  %r:2 = attn_gpu.frag_registers %p#1 : !attn_gpu.frag<16x1xf32, rows>
      -> f32, f32
  return %r#0 : f32
}

// -----

// scale_rows: register i times factor (i % 4) / 2 (rows g and g + 8).

// CHECK-LABEL: func.func @scale_rows
// CHECK-SAME: (%[[S0:[[:alnum:]_]+]]: f32, %[[S1:[[:alnum:]_]+]]: f32, %[[S2:[[:alnum:]_]+]]: f32, %[[S3:[[:alnum:]_]+]]: f32, %[[S4:[[:alnum:]_]+]]: f32, %[[S5:[[:alnum:]_]+]]: f32, %[[S6:[[:alnum:]_]+]]: f32, %[[S7:[[:alnum:]_]+]]: f32, %[[F0:[[:alnum:]_]+]]: f32, %[[F1:[[:alnum:]_]+]]: f32)
// CHECK-NEXT: %[[R0:.+]] = arith.mulf %[[S0]], %[[F0]] : f32
// CHECK-NEXT: %[[R1:.+]] = arith.mulf %[[S1]], %[[F0]] : f32
// CHECK-NEXT: %[[R2:.+]] = arith.mulf %[[S2]], %[[F1]] : f32
// CHECK-NEXT: %[[R3:.+]] = arith.mulf %[[S3]], %[[F1]] : f32
// CHECK-NEXT: %[[R4:.+]] = arith.mulf %[[S4]], %[[F0]] : f32
// CHECK-NEXT: %[[R5:.+]] = arith.mulf %[[S5]], %[[F0]] : f32
// CHECK-NEXT: %[[R6:.+]] = arith.mulf %[[S6]], %[[F1]] : f32
// CHECK-NEXT: %[[R7:.+]] = arith.mulf %[[S7]], %[[F1]] : f32
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]] :
func.func @scale_rows(%s0: f32, %s1: f32, %s2: f32, %s3: f32, %s4: f32,
                      %s5: f32, %s6: f32, %s7: f32, %f0: f32, %f1: f32)
    -> (f32, f32, f32, f32, f32, f32, f32, f32) {
  %s = attn_gpu.frag_from_registers %s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7
      : f32, f32, f32, f32, f32, f32, f32, f32 -> !attn_gpu.frag<16x16xf32, acc>
  %f = attn_gpu.frag_from_registers %f0, %f1
      : f32, f32 -> !attn_gpu.frag<16x1xf32, rows>
  %o = attn_gpu.scale_rows %s, %f : !attn_gpu.frag<16x16xf32, acc>
  %r:8 = attn_gpu.frag_registers %o : !attn_gpu.frag<16x16xf32, acc>
      -> f32, f32, f32, f32, f32, f32, f32, f32
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7
      : f32, f32, f32, f32, f32, f32, f32, f32
}

// -----

// to_operand: A register 4k + r packs (low half first) registers (0, 1),
// then (2, 3) of column tile 2k, then (0, 1), (2, 3) of tile 2k + 1, each
// rounded to the A fragment's element type.

// CHECK-LABEL: func.func @to_operand
// CHECK-SAME: (%[[S0:[[:alnum:]_]+]]: f32, %[[S1:[[:alnum:]_]+]]: f32, %[[S2:[[:alnum:]_]+]]: f32, %[[S3:[[:alnum:]_]+]]: f32, %[[S4:[[:alnum:]_]+]]: f32, %[[S5:[[:alnum:]_]+]]: f32, %[[S6:[[:alnum:]_]+]]: f32, %[[S7:[[:alnum:]_]+]]: f32, %[[T0:[[:alnum:]_]+]]: f32, %[[T1:[[:alnum:]_]+]]: f32, %[[T2:[[:alnum:]_]+]]: f32, %[[T3:[[:alnum:]_]+]]: f32, %[[T4:[[:alnum:]_]+]]: f32, %[[T5:[[:alnum:]_]+]]: f32, %[[T6:[[:alnum:]_]+]]: f32, %[[T7:[[:alnum:]_]+]]: f32)
// The registers, numbered by column tile j and e: tile 0 is S0-S3, tile 1
// S4-S7, tile 2 T0-T3, tile 3 T4-T7.
// CHECK-NEXT: %[[V:.+]] = llvm.mlir.poison : vector<2xbf16>
// CHECK-NEXT: %[[L:.+]] = arith.truncf %[[S0]] : f32 to bf16
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[S1]] : f32 to bf16
// CHECK-NEXT: %[[I0:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[V1:.+]] = llvm.insertelement %[[L]], %[[V]][%[[I0]] : i32] : vector<2xbf16>
// CHECK-NEXT: %[[I1:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[V2:.+]] = llvm.insertelement %[[H]], %[[V1]][%[[I1]] : i32] : vector<2xbf16>
// CHECK-NEXT: %[[A0:.+]] = llvm.bitcast %[[V2]] : vector<2xbf16> to i32
// CHECK-NEXT: llvm.mlir.poison : vector<2xbf16>
// CHECK-NEXT: %[[L:.+]] = arith.truncf %[[S2]] : f32 to bf16
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[S3]] : f32 to bf16
// CHECK:      %[[A1:.+]] = llvm.bitcast
// CHECK-NEXT: llvm.mlir.poison : vector<2xbf16>
// CHECK-NEXT: %[[L:.+]] = arith.truncf %[[S4]] : f32 to bf16
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[S5]] : f32 to bf16
// CHECK:      %[[A2:.+]] = llvm.bitcast
// CHECK-NEXT: llvm.mlir.poison : vector<2xbf16>
// CHECK-NEXT: %[[L:.+]] = arith.truncf %[[S6]] : f32 to bf16
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[S7]] : f32 to bf16
// CHECK:      %[[A3:.+]] = llvm.bitcast
// CHECK-NEXT: llvm.mlir.poison : vector<2xbf16>
// CHECK-NEXT: %[[L:.+]] = arith.truncf %[[T0]] : f32 to bf16
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[T1]] : f32 to bf16
// CHECK:      %[[A4:.+]] = llvm.bitcast
// CHECK-NEXT: llvm.mlir.poison : vector<2xbf16>
// CHECK-NEXT: %[[L:.+]] = arith.truncf %[[T2]] : f32 to bf16
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[T3]] : f32 to bf16
// CHECK:      %[[A5:.+]] = llvm.bitcast
// CHECK-NEXT: llvm.mlir.poison : vector<2xbf16>
// CHECK-NEXT: %[[L:.+]] = arith.truncf %[[T4]] : f32 to bf16
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[T5]] : f32 to bf16
// CHECK:      %[[A6:.+]] = llvm.bitcast
// CHECK-NEXT: llvm.mlir.poison : vector<2xbf16>
// CHECK-NEXT: %[[L:.+]] = arith.truncf %[[T6]] : f32 to bf16
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[T7]] : f32 to bf16
// CHECK:      %[[A7:.+]] = llvm.bitcast
// CHECK-NEXT: %[[F:.+]] = llvm.mlir.poison : vector<2xf16>
// CHECK-NEXT: %[[L:.+]] = arith.truncf %[[S0]] : f32 to f16
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[S1]] : f32 to f16
// CHECK:      %[[B0:.+]] = llvm.bitcast %{{.+}} : vector<2xf16> to i32
// CHECK:      %[[B1:.+]] = llvm.bitcast %{{.+}} : vector<2xf16> to i32
// CHECK:      %[[B2:.+]] = llvm.bitcast %{{.+}} : vector<2xf16> to i32
// CHECK:      %[[B3:.+]] = llvm.bitcast %{{.+}} : vector<2xf16> to i32
// CHECK-NEXT: return %[[A0]], %[[A1]], %[[A2]], %[[A3]], %[[A4]], %[[A5]], %[[A6]], %[[A7]], %[[B0]], %[[B1]], %[[B2]], %[[B3]] :
func.func @to_operand(%s0: f32, %s1: f32, %s2: f32, %s3: f32, %s4: f32,
                      %s5: f32, %s6: f32, %s7: f32, %t0: f32, %t1: f32,
                      %t2: f32, %t3: f32, %t4: f32, %t5: f32, %t6: f32,
                      %t7: f32)
    -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {
  %s = attn_gpu.frag_from_registers %s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7,
      %t0, %t1, %t2, %t3, %t4, %t5, %t6, %t7
      : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32,
        f32, f32 -> !attn_gpu.frag<16x32xf32, acc>
  %a = attn_gpu.to_operand %s : !attn_gpu.frag<16x32xf32, acc>
      -> !attn_gpu.frag<16x32xbf16, a>
  %h = attn_gpu.frag_from_registers %s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7
      : f32, f32, f32, f32, f32, f32, f32, f32 -> !attn_gpu.frag<16x16xf32, acc>
  %b = attn_gpu.to_operand %h : !attn_gpu.frag<16x16xf32, acc>
      -> !attn_gpu.frag<16x16xf16, a>
  %r:8 = attn_gpu.frag_registers %a : !attn_gpu.frag<16x32xbf16, a>
      -> i32, i32, i32, i32, i32, i32, i32, i32
  %q:4 = attn_gpu.frag_registers %b : !attn_gpu.frag<16x16xf16, a>
      -> i32, i32, i32, i32
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %q#0, %q#1, %q#2,
      %q#3 : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32
}

// -----

// Fragments through scf.for's iter_args and results and scf.if's yields:
// the loop and the if carry the registers.

// CHECK-LABEL: func.func @control_flow
// CHECK-SAME: (%[[LB:[[:alnum:]_]+]]: index, %[[UB:[[:alnum:]_]+]]: index, %[[ST:[[:alnum:]_]+]]: index, %[[COND:[[:alnum:]_]+]]: i1, %[[X:[[:alnum:]_]+]]: f32, %[[Y:[[:alnum:]_]+]]: f32, %[[D:[[:alnum:]_]+]]: i64)
// CHECK-NEXT: %[[FOR:.+]]:6 = scf.for %{{.+}} = %[[LB]] to %[[UB]] step %[[ST]] iter_args(%[[O0:[[:alnum:]_]+]] = %[[X]], %[[O1:[[:alnum:]_]+]] = %[[X]], %[[O2:[[:alnum:]_]+]] = %[[X]], %[[O3:[[:alnum:]_]+]] = %[[X]], %[[F0:[[:alnum:]_]+]] = %[[Y]], %[[F1:[[:alnum:]_]+]] = %[[Y]]) -> (f32, f32, f32, f32, f32, f32) {
// CHECK-NEXT:   %[[R0:.+]] = arith.mulf %[[O0]], %[[F0]] : f32
// CHECK-NEXT:   %[[R1:.+]] = arith.mulf %[[O1]], %[[F0]] : f32
// CHECK-NEXT:   %[[R2:.+]] = arith.mulf %[[O2]], %[[F1]] : f32
// CHECK-NEXT:   %[[R3:.+]] = arith.mulf %[[O3]], %[[F1]] : f32
// CHECK-NEXT:   %[[IF:.+]]:4 = scf.if %[[COND]] -> (f32, f32, f32, f32) {
// CHECK-NEXT:     %[[W:.+]]:4 = attn_gpu.wgmma_ss %[[D]], %[[D]], %[[R0]], %[[R1]], %[[R2]], %[[R3]] {accumulate = true, element_type = bf16, n = 8 : i64} : f32, f32, f32, f32
// CHECK-NEXT:     scf.yield %[[W]]#0, %[[W]]#1, %[[W]]#2, %[[W]]#3 : f32, f32, f32, f32
// CHECK-NEXT:   } else {
// CHECK-NEXT:     scf.yield %[[R0]], %[[R1]], %[[R2]], %[[R3]] : f32, f32, f32, f32
// CHECK-NEXT:   }
// CHECK-NEXT:   scf.yield %[[IF]]#0, %[[IF]]#1, %[[IF]]#2, %[[IF]]#3, %[[F1]], %[[F0]] : f32, f32, f32, f32, f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[FOR]]#0, %[[FOR]]#1, %[[FOR]]#2, %[[FOR]]#3, %[[FOR]]#4, %[[FOR]]#5 : f32, f32, f32, f32, f32, f32
// NVVM-LABEL: func.func @control_flow
// NVVM: scf.for
// NVVM: scf.if
// NVVM: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 8, k = 16>
func.func @control_flow(%lb: index, %ub: index, %step: index, %cond: i1,
                        %x: f32, %y: f32, %d: i64)
    -> (f32, f32, f32, f32, f32, f32) {
  %o = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x8xf32, acc>
  %f = attn_gpu.frag_splat %y : f32 -> !attn_gpu.frag<16x1xf32, rows>
  %res:2 = scf.for %i = %lb to %ub step %step iter_args(%acc = %o, %fac = %f)
      -> (!attn_gpu.frag<16x8xf32, acc>, !attn_gpu.frag<16x1xf32, rows>) {
    %scaled = attn_gpu.scale_rows %acc, %fac : !attn_gpu.frag<16x8xf32, acc>
    %next = scf.if %cond -> !attn_gpu.frag<16x8xf32, acc> {
      %w = attn_gpu.warpgroup_mma %d, %d, %scaled
          {element_type = bf16, accumulate = true}
          : i64, !attn_gpu.frag<16x8xf32, acc>
      scf.yield %w : !attn_gpu.frag<16x8xf32, acc>
    } else {
      scf.yield %scaled : !attn_gpu.frag<16x8xf32, acc>
    }
    %fr:2 = attn_gpu.frag_registers %fac : !attn_gpu.frag<16x1xf32, rows>
        -> f32, f32
    %swapped = attn_gpu.frag_from_registers %fr#1, %fr#0
        : f32, f32 -> !attn_gpu.frag<16x1xf32, rows>
    scf.yield %next, %swapped
        : !attn_gpu.frag<16x8xf32, acc>, !attn_gpu.frag<16x1xf32, rows>
  }
  %r:4 = attn_gpu.frag_registers %res#0 : !attn_gpu.frag<16x8xf32, acc>
      -> f32, f32, f32, f32
  %s:2 = attn_gpu.frag_registers %res#1 : !attn_gpu.frag<16x1xf32, rows>
      -> f32, f32
  return %r#0, %r#1, %r#2, %r#3, %s#0, %s#1
      : f32, f32, f32, f32, f32, f32
}

// -----

// A ring becomes its base pointer: ring_view disappears and its uses take
// the base. Stage s's tile is s * tileBytes (rows * cols * 2 = 32768 here)
// bytes past it, panel p of the tile p * panelBytes (rows * 128 = 16384)
// past that; a descriptor is the tile's, K-major with leading_bytes 16,
// MN-major with one panel, the stride 8 rows of 128 bytes either way. The
// NVVM lines check the descriptors' fixed bits: 128-byte swizzle (bit 62),
// stride 1024 >> 4 = 64 at bit 32, leading 16 >> 4 = 1 (K-major) or
// 16384 >> 4 = 1024 (MN-major) at bit 16.

// CHECK-LABEL: func.func @ring_128
// CHECK-SAME: (%[[BASE:[[:alnum:]_]+]]: !llvm.ptr<3>, %[[S:[[:alnum:]_]+]]: i32)
// CHECK-NEXT: %[[TB:.+]] = arith.constant 32768 : i32
// CHECK-NEXT: %[[O:.+]] = arith.muli %[[S]], %[[TB]] : i32
// CHECK-NEXT: %[[T:.+]] = llvm.getelementptr %[[BASE]][%[[O]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[TB:.+]] = arith.constant 32768 : i32
// CHECK-NEXT: %[[O:.+]] = arith.muli %[[S]], %[[TB]] : i32
// CHECK-NEXT: %[[PT:.+]] = llvm.getelementptr %[[BASE]][%[[O]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[PB:.+]] = arith.constant 16384 : i32
// CHECK-NEXT: %[[P:.+]] = llvm.getelementptr %[[PT]][%[[PB]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[TB:.+]] = arith.constant 32768 : i32
// CHECK-NEXT: %[[O:.+]] = arith.muli %[[S]], %[[TB]] : i32
// CHECK-NEXT: %[[KT:.+]] = llvm.getelementptr %[[BASE]][%[[O]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[K:.+]] = attn_gpu.wgmma_descriptor %[[KT]], leading_bytes = 16, stride_bytes = 1024 : !llvm.ptr<3>
// CHECK-NEXT: %[[TB:.+]] = arith.constant 32768 : i32
// CHECK-NEXT: %[[O:.+]] = arith.muli %[[S]], %[[TB]] : i32
// CHECK-NEXT: %[[MT:.+]] = llvm.getelementptr %[[BASE]][%[[O]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[M:.+]] = attn_gpu.wgmma_descriptor %[[MT]], leading_bytes = 16384, stride_bytes = 1024 : !llvm.ptr<3>
// CHECK-NEXT: return %[[T]], %[[P]], %[[K]], %[[M]] : !llvm.ptr<3>, !llvm.ptr<3>, i64, i64
// NVVM-LABEL: func.func @ring_128
// NVVM: llvm.ptrtoint
// NVVM: arith.constant 4611686293305360384 : i64
// NVVM: llvm.ptrtoint
// NVVM: arith.constant 4611686293372403712 : i64
// NVVM: return
func.func @ring_128(%base: !llvm.ptr<3>, %stage: i32)
    -> (!llvm.ptr<3>, !llvm.ptr<3>, i64, i64) {
  %kv = attn_gpu.ring_view %base : !llvm.ptr<3> -> !attn_gpu.ring<2x128x128xbf16>
  %t = attn_gpu.ring_tile %kv[%stage] : !attn_gpu.ring<2x128x128xbf16>
  %p = attn_gpu.ring_tile %kv[%stage] {panel = 1 : i64}
      : !attn_gpu.ring<2x128x128xbf16>
  %k = attn_gpu.ring_descriptor %kv[%stage] : !attn_gpu.ring<2x128x128xbf16>
  %m = attn_gpu.ring_descriptor %kv[%stage] {mn_major}
      : !attn_gpu.ring<2x128x128xbf16>
  return %t, %p, %k, %m : !llvm.ptr<3>, !llvm.ptr<3>, i64, i64
}

// -----

// The bytes follow the ring's shape: 64 rows of 192 f16 columns make
// 24576-byte tiles of three 8192-byte panels (64 * 128), and the MN-major
// leading offset is that panel (8192 >> 4 = 512 at bit 16). The stages do
// not enter the arithmetic.

// CHECK-LABEL: func.func @ring_64
// CHECK-SAME: (%[[BASE:[[:alnum:]_]+]]: !llvm.ptr<3>, %[[S:[[:alnum:]_]+]]: i32)
// CHECK-NEXT: %[[TB:.+]] = arith.constant 24576 : i32
// CHECK-NEXT: %[[O:.+]] = arith.muli %[[S]], %[[TB]] : i32
// CHECK-NEXT: %[[T1:.+]] = llvm.getelementptr %[[BASE]][%[[O]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[PB:.+]] = arith.constant 8192 : i32
// CHECK-NEXT: %[[P1:.+]] = llvm.getelementptr %[[T1]][%[[PB]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[TB:.+]] = arith.constant 24576 : i32
// CHECK-NEXT: %[[O:.+]] = arith.muli %[[S]], %[[TB]] : i32
// CHECK-NEXT: %[[T2:.+]] = llvm.getelementptr %[[BASE]][%[[O]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[PB:.+]] = arith.constant 16384 : i32
// CHECK-NEXT: %[[P2:.+]] = llvm.getelementptr %[[T2]][%[[PB]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[TB:.+]] = arith.constant 24576 : i32
// CHECK-NEXT: %[[O:.+]] = arith.muli %[[S]], %[[TB]] : i32
// CHECK-NEXT: %[[MT:.+]] = llvm.getelementptr %[[BASE]][%[[O]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[M:.+]] = attn_gpu.wgmma_descriptor %[[MT]], leading_bytes = 8192, stride_bytes = 1024 : !llvm.ptr<3>
// CHECK-NEXT: return %[[P1]], %[[P2]], %[[M]] : !llvm.ptr<3>, !llvm.ptr<3>, i64
// NVVM-LABEL: func.func @ring_64
// NVVM: llvm.ptrtoint
// NVVM: arith.constant 4611686293338849280 : i64
// NVVM: return
func.func @ring_64(%base: !llvm.ptr<3>, %stage: i32)
    -> (!llvm.ptr<3>, !llvm.ptr<3>, i64) {
  %q = attn_gpu.ring_view %base : !llvm.ptr<3> -> !attn_gpu.ring<3x64x192xf16>
  %p1 = attn_gpu.ring_tile %q[%stage] {panel = 1 : i64}
      : !attn_gpu.ring<3x64x192xf16>
  %p2 = attn_gpu.ring_tile %q[%stage] {panel = 2 : i64}
      : !attn_gpu.ring<3x64x192xf16>
  %m = attn_gpu.ring_descriptor %q[%stage] {mn_major}
      : !attn_gpu.ring<3x64x192xf16>
  return %p1, %p2, %m : !llvm.ptr<3>, !llvm.ptr<3>, i64
}

// -----

// warp_mma: mma.sync on tile n_tile's four registers (8..11 for tile 2) with
// A's k-step registers (4..7 for a_k_step 1); every other register of the
// accumulator passes through untouched.

// CHECK-LABEL: func.func @warp_mma
// CHECK-SAME: (%[[A0:[[:alnum:]_]+]]: i32, %[[A1:[[:alnum:]_]+]]: i32, %[[A2:[[:alnum:]_]+]]: i32, %[[A3:[[:alnum:]_]+]]: i32, %[[A4:[[:alnum:]_]+]]: i32, %[[A5:[[:alnum:]_]+]]: i32, %[[A6:[[:alnum:]_]+]]: i32, %[[A7:[[:alnum:]_]+]]: i32, %[[B0:[[:alnum:]_]+]]: i32, %[[B1:[[:alnum:]_]+]]: i32, %[[C:[[:alnum:]_]+]]: f32)
// CHECK: %[[D:.+]] = nvvm.mma.sync A[%[[A4]], %[[A5]], %[[A6]], %[[A7]]] B[%[[B0]], %[[B1]]] C[%[[C]], %[[C]], %[[C]], %[[C]]] {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: %[[D0:.+]] = llvm.extractvalue %[[D]][0]
// CHECK: %[[D1:.+]] = llvm.extractvalue %[[D]][1]
// CHECK: %[[D2:.+]] = llvm.extractvalue %[[D]][2]
// CHECK: %[[D3:.+]] = llvm.extractvalue %[[D]][3]
// CHECK: return %[[C]], %[[C]], %[[C]], %[[C]], %[[C]], %[[C]], %[[C]], %[[C]], %[[D0]], %[[D1]], %[[D2]], %[[D3]], %[[C]], %[[C]], %[[C]], %[[C]]
// NVVM-LABEL: func.func @warp_mma
// NVVM: nvvm.mma.sync
func.func @warp_mma(%a0: i32, %a1: i32, %a2: i32, %a3: i32, %a4: i32, %a5: i32,
                    %a6: i32, %a7: i32, %b0: i32, %b1: i32, %c: f32)
    -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32,
        f32, f32) {
  %a = attn_gpu.frag_from_registers %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7
      : i32, i32, i32, i32, i32, i32, i32, i32
      -> !attn_gpu.frag<16x32xbf16, a>
  %acc = attn_gpu.frag_splat %c : f32 -> !attn_gpu.frag<16x32xf32, acc>
  %d = attn_gpu.warp_mma %a, %b0, %b1, %acc {n_tile = 2 : i64, a_k_step = 1 : i64}
      : !attn_gpu.frag<16x32xbf16, a>, !attn_gpu.frag<16x32xf32, acc>
  %r:16 = attn_gpu.frag_registers %d : !attn_gpu.frag<16x32xf32, acc>
      -> f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32,
         f32, f32
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10,
         %r#11, %r#12, %r#13, %r#14, %r#15
      : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32,
        f32, f32
}

// -----

// mask_limit: register 4·j + e stays when col·(8·j + e % 2) + row·8·(e / 2)
// <= limit. With col = -1, row = 1 (a causal edge of Sᵀ) the constants of
// registers 0..7 are 0, -1, 8, 7, -8, -9, 0, -1.

// CHECK-LABEL: func.func @mask_limit
// CHECK-SAME: (%[[R0:[[:alnum:]_]+]]: f32, %[[R1:[[:alnum:]_]+]]: f32, %{{.*}}, %[[LIM:[[:alnum:]_]+]]: i32)
// CHECK: %[[NEG:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[C0:.+]] = arith.constant 0 : i32
// CHECK: %[[T0:.+]] = arith.cmpi sle, %[[C0]], %[[LIM]] : i32
// CHECK: %[[M0:.+]] = arith.select %[[T0]], %[[R0]], %[[NEG]] : f32
// CHECK: %[[C1:.+]] = arith.constant -1 : i32
// CHECK: %[[T1:.+]] = arith.cmpi sle, %[[C1]], %[[LIM]] : i32
// CHECK: %[[M1:.+]] = arith.select %[[T1]], %[[R1]], %[[NEG]] : f32
// CHECK: arith.constant 8 : i32
// CHECK: arith.constant 7 : i32
// CHECK: arith.constant -8 : i32
// CHECK: arith.constant -9 : i32
// CHECK: arith.constant 0 : i32
// CHECK: arith.constant -1 : i32
// CHECK: return %[[M0]], %[[M1]]
// NVVM-LABEL: func.func @mask_limit
func.func @mask_limit(%r0: f32, %r1: f32, %r2: f32, %r3: f32, %r4: f32,
                      %r5: f32, %r6: f32, %r7: f32, %lim: i32)
    -> (f32, f32, f32, f32, f32, f32, f32, f32) {
  %s = attn_gpu.frag_from_registers %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7
      : f32, f32, f32, f32, f32, f32, f32, f32 -> !attn_gpu.frag<16x16xf32, acc>
  %m = attn_gpu.mask_limit %s, %lim {col = -1 : i64, row = 1 : i64}
      : !attn_gpu.frag<16x16xf32, acc>
  %r:8 = attn_gpu.frag_registers %m : !attn_gpu.frag<16x16xf32, acc>
      -> f32, f32, f32, f32, f32, f32, f32, f32
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7
      : f32, f32, f32, f32, f32, f32, f32, f32
}
