// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a" --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu --split-input-file | FileCheck %s --check-prefix=AUTO
// RUN: attn-opt %s --convert-attn-to-gpu="family=auto" --split-input-file | FileCheck %s --check-prefix=AUTO
// RUN: attn-opt %s --convert-attn-to-gpu="family=auto chip=sm_80" --split-input-file | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a sm90-schedule=pingpong+persistent" --split-input-file | FileCheck %s --check-prefix=PERSISTENT
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a block-m=64 block-n=64 stages=4" --split-input-file | FileCheck %s --check-prefix=OPT
// The exp2-emulation experiment (exp2-emulated=k: k of every 8 score
// columns take exp2 on the FMA pipe, docs/perf/2026-12-01-variants-v3.md):
// named by the kernel, an attribute of its online-softmax steps, the
// polynomial's exp2 {fma} once the fragments are lowered.
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a exp2-emulated=3" --split-input-file | FileCheck %s --check-prefix=EXP2
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a exp2-emulated=3" --lower-attn-gpu-tiles --split-input-file | FileCheck %s --check-prefix=EXP2-LOWERED
// EXP2: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_m128n128s2_e3
// EXP2: attn_gpu.online_softmax {{.*}} {exp2_fma_tiles = 3 : i64}
// EXP2-LOWERED: attn_gpu.exp2 %{{.*}} {fma} : f32
// EXP2-LOWERED: attn_gpu.exp2 %{{.*}} : f32

// The sm90a-wgmma family: a producer warpgroup and two consumers (384
// threads), tensor maps as 128-byte grid-constant parameters. Causal: one
// block per (head, query block) tile, x length-major (every head's longest
// query block first), y the batch.
// CHECK-LABEL: func.func @causal_gqa
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_m128n128s2
// CHECK-SAME: attn.launch = #attn.launch<family = "sm90a-wgmma", block_m = 128, block_n = 128, threads = 384, dynamic_shared_memory = 164944, grid = #attn.grid<length_major, block_rows = 128>, tensor_maps = [#attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64, box_rows = 128>, #attn.tensor_map<name = "k_tmap", tensor = "k", box_cols = 64, box_rows = 128>, #attn.tensor_map<name = "v_tmap", tensor = "v", box_cols = 64, box_rows = 128>], source = "heuristic">
// CHECK: llvm.mlir.global external @attn_dynamic_smem_sm90() {addr_space = 3 : i32, alignment = 1024 : i64}
// CHECK: llvm.func @attn_fwd_sm90_d128_bf16_causal_m128n128s2(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-SAME: attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32}
// Thread 0 initialises 2 + 4 x stages mbarriers (Q full/empty, K and V
// full/empty per stage); the "empty" ones count the 8 consumer warps.
// CHECK-COUNT-10: attn_gpu.mbarrier_init
// CHECK: attn_gpu.mbarrier_init_fence
// CHECK: nvvm.barrier0
// Producer: fewer registers; the default grid's block owns one query block
// (no loop over query blocks): Q by two 64-column TMA boxes, then K and V
// per key block once the consumers released the stage.
// CHECK: nvvm.setmaxregister  decrease 24
// CHECK-NOT: nvvm.read.ptx.sreg.nctaid.x
// CHECK: attn_gpu.mbarrier_arrive_expect_tx %{{.*}}, bytes = 32768
// CHECK-COUNT-2: attn_gpu.tma_load
// CHECK: scf.for
// CHECK: attn_gpu.mbarrier_wait
// CHECK: attn_gpu.tma_load
// Consumers: more registers (24 + 2 x 240 = 3 x 168). Block 0: S = Q·Kᵀ by 8 wgmma k-steps from
// shared memory (the first overwrites the accumulators), its softmax.
// CHECK: nvvm.setmaxregister  increase 240
// Ping-pong: consumer 1 lets consumer 0 issue its GEMMs first; each then
// waits for its turn (named barrier 1 or 2) before issuing. The consumers
// wait for Q first.
// CHECK: attn_gpu.named_barrier_arrive %{{.*}}, threads = 256
// CHECK-NOT: scf.for
// CHECK: attn_gpu.mbarrier_wait
// The consumer's tiles are fragments (a warp's 16 rows in their register
// layout): O 16x128 and the rows' m and l start at 0, -inf, 0.
// CHECK: %[[O0:.*]] = attn_gpu.frag_splat %{{.*}} : f32 -> !attn_gpu.frag<16x128xf32, acc>
// CHECK: %[[M0:.*]] = attn_gpu.frag_splat %{{.*}} : f32 -> !attn_gpu.frag<16x1xf32, rows>
// CHECK: %[[L0:.*]] = attn_gpu.frag_splat %{{.*}} : f32 -> !attn_gpu.frag<16x1xf32, rows>
// CHECK: attn_gpu.named_barrier_sync %{{.*}}, threads = 256
// CHECK: attn_gpu.mbarrier_wait
// CHECK: attn_gpu.frag_undef : !attn_gpu.frag<16x128xf32, acc>
// CHECK: attn_gpu.wgmma_fence
// CHECK: attn_gpu.warpgroup_mma {{.*}} {accumulate = false, element_type = bf16} : i64, !attn_gpu.frag<16x128xf32, acc>
// CHECK-COUNT-7: attn_gpu.warpgroup_mma {{.*}} {accumulate = true, element_type = bf16} : i64, !attn_gpu.frag<16x128xf32, acc>
// CHECK: attn_gpu.wgmma_commit_group
// CHECK: %[[S0:.*]] = attn_gpu.wgmma_wait_group 0, %{{.*}} : !attn_gpu.frag<16x128xf32, acc>
// CHECK: attn_gpu.mbarrier_arrive
// Only the blocks on the diagonal or the tail are masked.
// CHECK: arith.cmpi sge
// CHECK: %[[MASKED:.*]] = scf.if %{{.*}} -> (!attn_gpu.frag<16x128xf32, acc>)
// CHECK: attn_gpu.mask_scores %[[S0]] keys_left %{{.*}} row_minus_key %{{.*}} {window_right = 0 : i64}
// CHECK: %[[P0:.*]], %[[M1:.*]], %[[L1:.*]], %{{.*}} = attn_gpu.online_softmax %[[MASKED]], %[[M0]], %[[L0]], %{{.*}} : !attn_gpu.frag<16x128xf32, acc>
// CHECK: %[[A0:.*]] = attn_gpu.to_operand %[[P0]] : !attn_gpu.frag<16x128xf32, acc> -> !attn_gpu.frag<16x128xbf16, a>
// Blocks 1..: S(j) and O += P(j-1)·V(j-1) (P from registers, V transposed)
// in flight together; the softmax of S(j) runs once S(j) is done. The loop
// carries O, m, l and P (the A operand of the next P·V).
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[O0]], %{{.*}} = %[[M1]], %{{.*}} = %[[L1]], %{{.*}} = %[[A0]]) -> (!attn_gpu.frag<16x128xf32, acc>, !attn_gpu.frag<16x1xf32, rows>, !attn_gpu.frag<16x1xf32, rows>, !attn_gpu.frag<16x128xbf16, a>)
// CHECK: attn_gpu.named_barrier_sync
// CHECK: %[[F:.*]]:3 = attn_gpu.wgmma_fence %{{.*}}, %{{.*}}, %{{.*}} : !attn_gpu.frag<16x128xf32, acc>, !attn_gpu.frag<16x128xf32, acc>, !attn_gpu.frag<16x128xbf16, a>
// CHECK: attn_gpu.warpgroup_mma {{.*}} {accumulate = false, element_type = bf16}
// CHECK-COUNT-7: attn_gpu.warpgroup_mma {{.*}} {accumulate = true, element_type = bf16}
// CHECK: attn_gpu.wgmma_commit_group
// CHECK: attn_gpu.mbarrier_wait
// CHECK: attn_gpu.warpgroup_mma %[[F]]#2, %{{.*}}, %[[F]]#1 {accumulate = true, transpose_b} : !attn_gpu.frag<16x128xbf16, a>, !attn_gpu.frag<16x128xf32, acc>
// CHECK-COUNT-7: attn_gpu.warpgroup_mma %[[F]]#2, {{.*}} {a_k_step = {{[1-7]}} : i64, accumulate = true, transpose_b}
// CHECK: attn_gpu.wgmma_commit_group
// CHECK: attn_gpu.named_barrier_arrive
// CHECK: attn_gpu.wgmma_wait_group 1
// CHECK: attn_gpu.mask_scores
// CHECK: attn_gpu.online_softmax
// CHECK: attn_gpu.to_operand
// CHECK: %[[W:.*]]:2 = attn_gpu.wgmma_wait_group 0, %{{.*}}, %[[F]]#2
// CHECK: attn_gpu.scale_rows %[[W]]#0
// The last block's P·V after the loop (on the persistent grid once Q is
// released: every Q·Kᵀ of the query block is done).
// CHECK: scf.yield
// CHECK: attn_gpu.wgmma_fence
// CHECK-COUNT-8: attn_gpu.warpgroup_mma {{.*}} transpose_b
// CHECK: attn_gpu.wgmma_wait_group 0
// Epilogue: LSE and O straight from registers.
// CHECK: attn_gpu.log2
// The persistent grid: (blocks per batch, batch); each block walks its
// batch's (head, query block) tiles head-major with the ring counter and
// the "Q empty" mbarrier carried across them; the producer keeps 40
// registers for that loop (40 + 2 x 232 = 3 x 168).
// PERSISTENT: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_m128n128s2_p
// PERSISTENT-SAME: grid = #attn.grid<persistent, block_rows = 128>
// PERSISTENT: nvvm.setmaxregister  decrease 40
// PERSISTENT: nvvm.read.ptx.sreg.nctaid.x
// PERSISTENT: scf.for
// PERSISTENT: arith.divui
// PERSISTENT: arith.remui
// PERSISTENT: attn_gpu.mbarrier_wait
// PERSISTENT: attn_gpu.mbarrier_arrive_expect_tx
// PERSISTENT: nvvm.setmaxregister  increase 232
// AUTO: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_m128n128s2
// AUTO-SAME: reason = "family auto chose sm90a-wgmma (chip sm_90a, the attention fits it); sm90a-wgmma heuristic"
// SM80: attn.kernel = @attn_kernels::@attn_fwd_d128_bf16_causal_m128n64w4s2
// SM80-SAME: reason = "family auto chose sm80-mma (chip 'sm_80' is not supported by the sm90a-wgmma forward kernels: they need sm_90a (wgmma and setmaxnreg are sm_90a-only)); no tuning database (tuning-db, $ATTN_TUNING_DB)"
// OPT: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_m64n64s4
// OPT-SAME: source = "option"
// OPT-SAME: threads = 256
func.func @causal_gqa(%q: tensor<1x8x200x128xbf16>, %k: tensor<1x2x300x128xbf16>,
                      %v: tensor<1x2x300x128xbf16>)
    -> (tensor<1x8x200x128xbf16>, tensor<1x8x200xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal>
      : tensor<1x8x200x128xbf16>, tensor<1x2x300x128xbf16>,
        tensor<1x2x300x128xbf16> -> tensor<1x8x200x128xbf16>, tensor<1x8x200xf32>
  return %o, %lse : tensor<1x8x200x128xbf16>, tensor<1x8x200xf32>
}

// -----

// D = 64: three consumer warpgroups (192 query rows, 512 threads) with the
// 32/160 register split, the named barriers round-robin over 1, 2, 3.
// CHECK-LABEL: func.func @d64_f16
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_sm90_d64_f16_nolse_m192n128s2
// CHECK-SAME: threads = 512
// CHECK: nvvm.maxntid = array<i32: 512, 1, 1>
// CHECK-COUNT-10: attn_gpu.mbarrier_init %{{.*}}, count = {{1|12}} : !llvm.ptr<3>
// CHECK: nvvm.setmaxregister  decrease 32
// CHECK: nvvm.setmaxregister  increase 160
// CHECK: attn_gpu.warpgroup_mma {{.*}} {accumulate = false, element_type = f16} : i64, !attn_gpu.frag<16x128xf32, acc>
// AUTO: attn.kernel = @attn_kernels::@attn_fwd_sm90_d64_f16_nolse_m192n128s2
func.func @d64_f16(%q: tensor<2x4x64x64xf16>) -> tensor<2x4x64x64xf16> {
  %o = attn.attention %q, %q, %q
      : tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16> -> tensor<2x4x64x64xf16>
  return %o : tensor<2x4x64x64xf16>
}
