// The sm90a backward at head dim 256 (HopperBackwardConfig::splitHeadDim):
// with the head-split schedule its two consumer warpgroups share a block
// of 64 keys and split dK, dV and dQ over the head dim, and the f32 dQ is
// added from registers (no dQ tile: less shared memory than two Q/dO
// stages of 64 rows would leave). The heuristic takes transposed-dkv
// (below), deterministic too.
// RUN: attn-opt %s --convert-attn-to-gpu="family=auto" | FileCheck %s --check-prefix=TDKV
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a sm90-schedule=head-split" | FileCheck %s
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a sm90-schedule=dq-first" 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a block-n=128" 2>&1 | FileCheck %s --check-prefix=BLOCKN
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a stages=3" 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a block-n=64 deterministic=true" | FileCheck %s --check-prefix=DET
// RUN: attn-opt %s --convert-attn-to-gpu="family=auto deterministic=true" | FileCheck %s --check-prefix=TDKV-DET
// The transposed-dkv schedule (FlashAttention-3's at D = 256): 80 keys per
// block, S and dP of 40 keys per consumer, P and dS stored [key][query] by
// stmatrix.trans, dVᵀ, dKᵀ (m64n80, A = dOᵀ or Qᵀ read MN-major) and dQᵀ
// (m64n64, A = Kᵀ, B = dSᵀ both read MN-major) over each consumer's two
// 64-row head-dim panels; dQᵀ added from registers by columns of eight rows
// (one pointer, immediate offsets), element by element in a tail block.
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a sm90-schedule=transposed-dkv" | FileCheck %s --check-prefix=TDKV
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a sm90-schedule=transposed-dkv block-n=64" 2>&1 | FileCheck %s --check-prefix=TDKV-BLOCKN
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a sm90-schedule=transposed-dkv stages=3" 2>&1 | FileCheck %s --check-prefix=SMEM
// Block-n 80 is the transposed-dkv schedule, also deterministic (the turn
// warp's turns around both dQᵀ panels' additions).
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a block-n=80 deterministic=true" | FileCheck %s --check-prefix=TDKV-DET
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a block-n=96" 2>&1 | FileCheck %s --check-prefix=BLOCKN96
// TDKV: attn.kernel = @attn_kernels::@attn_bwd_sm90_d256_bf16_causal_dkdv_n80m64s2_tdkv
// TDKV-SAME: schedule = "transposed-dkv"
// TDKV-SAME: block_m = 64, block_n = 80, threads = 384, dynamic_shared_memory = 223216,
// TDKV-SAME: box_rows = 80>
// TDKV-SAME: role = "convert", entry = "attn_bwd_d256_bf16_causal_dq_grouped"
// TDKV-COUNT-16: attn_gpu.warpgroup_mma {{.*}} : i64, !attn_gpu.frag<16x40xf32, acc>
// TDKV-COUNT-3: nvvm.stmatrix {{.*}} layout = #nvvm.mma_layout<col>
// TDKV: attn_gpu.named_barrier_sync %{{.*}}, threads = 256
// TDKV: attn_gpu.warpgroup_mma {{.*}} {accumulate = false, element_type = bf16, transpose_a, transpose_b} : i64, !attn_gpu.frag<16x64xf32, acc>
// TDKV-COUNT-4: attn_gpu.warpgroup_mma {{.*}} {accumulate = true, element_type = bf16, transpose_a, transpose_b} : i64, !attn_gpu.frag<16x64xf32, acc>
// TDKV-COUNT-8: attn_gpu.warpgroup_mma {{.*}} {accumulate = true, element_type = bf16, transpose_a} : i64, !attn_gpu.frag<16x80xf32, acc>
// dQᵀ: a thread's 4 rows of a column per group of the grouped accumulator,
// the block's 4 groups 16·256·4 bytes apart; the convert kernel reads it.
// TDKV: attn_gpu.global_reduce_add {{.*}} {stride = 16384 : i64, width = 4 : i64} : !llvm.ptr<1>, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
// TDKV-BLOCKN: sm90-schedule transposed-dkv of the sm90a backward kernel takes block-n 80 (got block-n 64)
// TDKV-DET: attn.kernel = @attn_kernels::@attn_bwd_sm90_d256_bf16_causal_dkdv_n80m64s2_tdkv_det
// TDKV-DET-SAME: deterministic = true
// TDKV-DET: attn_gpu.named_barrier_sync %{{.*}}, threads = 288
// TDKV-DET: attn_gpu.global_reduce_add
// TDKV-DET: attn_gpu.named_barrier_arrive %{{.*}}, threads = 288
// BLOCKN96: block-n of the sm90a backward kernel at head dim 256 must be 64 (head-split) or 80 (transposed-dkv) (got 96)
// Below D = 256 the split is not a schedule.
// RUN: not attn-opt %S/convert-attn-grad-to-gpu-sm90a-invalid.mlir --split-input-file --convert-attn-to-gpu="family=sm90a sm90-schedule=head-split" 2>&1 | FileCheck %s --check-prefix=SPLIT128

// CHECK: attn.kernel = @attn_kernels::@attn_bwd_sm90_d256_bf16_causal_dkdv_n64m64s2_hsplit
// CHECK-SAME: family = "sm90a-wgmma", block_m = 64, block_n = 64, threads = 384, dynamic_shared_memory = 231408,
// CHECK-SAME: box_rows = 64>
// CHECK-SAME: #attn.kernel_launch<role = "dkdv", entry = "attn_bwd_sm90_d256_bf16_causal_dkdv_n64m64s2_hsplit", threads = 384,
// CHECK-SAME: schedule = "head-split"
// SCHED: cannot be compiled for the GPU: sm90-schedule of the sm90a backward kernel above head dim 128 must be head-split or transposed-dkv (got 'dq-first')
// BLOCKN: cannot be compiled for the GPU: block-n of the sm90a backward kernel at head dim 256 must be 64 (head-split) or 80 (transposed-dkv) (got 128)
// SMEM: cannot be compiled for the GPU: the sm90a backward kernel needs {{[0-9]+}} bytes of shared memory, sm_90a offers 232448
// The deterministic split adds each warp's 16 rows of dQ from registers
// once the slice's semaphore has both consumers' arrivals from every
// earlier key block (family auto takes it too). Producer warp 2 keeps the
// turns: it spins (acquire), arrives on "turns acquired" (2 + parity),
// waits on "dQ added" (4 + parity) and passes the turn on for both
// consumers (release, + 2); the consumers wait on the first and arrive on
// the second around their additions, with no fence of their own.
// DET: attn.kernel = @attn_kernels::@attn_bwd_sm90_d256_bf16_causal_dkdv_n64m64s2_hsplit_det
// DET-SAME: deterministic = true
// DET: scf.while
// DET: llvm.load {{.*}} atomic syncscope("device") acquire
// DET: %[[ACQ:.*]] = arith.addi %c2_i32{{.*}}, %{{.*}} : i32
// DET-NEXT: attn_gpu.named_barrier_arrive %[[ACQ]], threads = 288
// DET: %[[ADDED:.*]] = arith.addi %c4_i32{{.*}}, %{{.*}} : i32
// DET-NEXT: attn_gpu.named_barrier_sync %[[ADDED]], threads = 288
// DET: llvm.fence syncscope("device") release
// DET-NEXT: %c2_i32{{.*}} = arith.constant 2 : i32
// DET-NEXT: llvm.atomicrmw add %{{.*}}, %c2_i32{{.*}} syncscope("device") release
// DET: attn_gpu.named_barrier_sync %{{.*}}, threads = 288
// DET-NOT: llvm.fence
// DET: attn_gpu.global_reduce_add
// DET-NOT: llvm.fence
// DET: attn_gpu.named_barrier_arrive %{{.*}}, threads = 288
// SPLIT128: sm90-schedule of the sm90a backward kernel must be dq-pipelined, dq-first or dk-first (got 'head-split')

func.func @d256(%q: tensor<1x2x100x256xbf16>, %lse: tensor<1x2x100xf32>)
    -> tensor<1x2x100x256xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      {mask = #attn.mask<causal>}
      : tensor<1x2x100x256xbf16>, tensor<1x2x100x256xbf16>,
        tensor<1x2x100x256xbf16>, tensor<1x2x100x256xbf16>,
        tensor<1x2x100x256xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x256xbf16>, tensor<1x2x100x256xbf16>,
         tensor<1x2x100x256xbf16>
  return %dq : tensor<1x2x100x256xbf16>
}
