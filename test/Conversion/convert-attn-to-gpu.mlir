// RUN: attn-opt %s --convert-attn-to-gpu="family=sm80" --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm80 block-m=64 block-n=32" --split-input-file | FileCheck %s --check-prefix=OPT

// One kernel per attention in gpu.module @attn_kernels; the op records it.
// CHECK-LABEL: func.func @causal_gqa
// CHECK: attn.attention
// CHECK-SAME: attn.kernel = @attn_kernels::@attn_fwd_d64_bf16_causal_m128n64w4s2
// CHECK-SAME: attn.launch = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 64, warp_rows = 32, threads = 128, dynamic_shared_memory = 49152, grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic">
// CHECK: gpu.module @attn_kernels
// CHECK: llvm.mlir.global external @attn_dynamic_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: gpu.func @attn_fwd_d64_bf16_causal_m128n64w4s2(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i64
// CHECK-SAME: kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// Causal: the longest query blocks first.
// CHECK: nvvm.read.ptx.sreg.nctaid.x
// Prologue: Q and K(0), then V(0), each a cp.async group.
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.commit.group
// The kv loop carries, for each of the warp's two m16 tiles, the O
// fragment and the rows' m and l.
// CHECK: %{{.*}}:6 = scf.for {{.*}} -> (!attn_gpu.frag<16x64xf32, acc>, !attn_gpu.frag<16x1xf32, rows>, !attn_gpu.frag<16x1xf32, rows>, !attn_gpu.frag<16x64xf32, acc>, !attn_gpu.frag<16x1xf32, rows>, !attn_gpu.frag<16x1xf32, rows>)
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: nvvm.barrier0
// S = Q·Kᵀ: per K fragment (ldmatrix), one mma.sync per 8-key tile and
// m-tile, each updating its tile of the S fragment.
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// CHECK: attn_gpu.warp_mma {{.*}} {n_tile = 0 : i64} : !attn_gpu.frag<16x16xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
// CHECK: attn_gpu.warp_mma {{.*}} {n_tile = 1 : i64} : !attn_gpu.frag<16x16xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
// Only blocks at or past the first one that needs a mask compare key
// positions with the diagonal.
// The mask and the online softmax are the sm90a kernel's fragment ops, on
// the mma.sync accumulators as fragments (a warp's two m-tiles of 16 rows).
// CHECK: arith.cmpi sge
// CHECK: scf.if
// CHECK: attn_gpu.mask_scores %{{.*}}, %{{.*}} keys_left %{{.*}} row_minus_key %{{.*}} {window_right = 0 : i64} : !attn_gpu.frag<16x64xf32, acc>, !attn_gpu.frag<16x64xf32, acc>
// CHECK: attn_gpu.online_softmax {{.*}} : !attn_gpu.frag<16x64xf32, acc>
// CHECK: attn_gpu.to_operand {{.*}} -> !attn_gpu.frag<16x64xbf16, a>
// CHECK: attn_gpu.scale_rows {{.*}} : !attn_gpu.frag<16x64xf32, acc>
// CHECK: attn_gpu.online_softmax
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>
// Epilogue: LSE with lg2, then O through shared memory with 16-byte stores.
// CHECK: attn_gpu.log2
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// OPT-LABEL: func.func @causal_gqa
// OPT: attn.kernel = @attn_kernels::@attn_fwd_d64_bf16_causal_m64n32w2s2
// OPT-SAME: source = "option"
// OPT-SAME: threads = 64
func.func @causal_gqa(%q: tensor<1x8x200x64xbf16>, %k: tensor<1x2x300x64xbf16>,
                      %v: tensor<1x2x300x64xbf16>)
    -> (tensor<1x8x200x64xbf16>, tensor<1x8x200xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal>
      : tensor<1x8x200x64xbf16>, tensor<1x2x300x64xbf16>,
        tensor<1x2x300x64xbf16> -> tensor<1x8x200x64xbf16>, tensor<1x8x200xf32>
  return %o, %lse : tensor<1x8x200x64xbf16>, tensor<1x8x200xf32>
}

// -----

// f16 operands travel as vector<2xf16>; no LSE means no lg2. Two ops with
// the same specialisation share one kernel.
// CHECK-LABEL: func.func @f16_shared_kernel
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_d128_f16_nolse_m128n64w4s2
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_d128_f16_nolse_m128n64w4s2
// CHECK: gpu.func @attn_fwd_d128_f16_nolse_m128n64w4s2
// CHECK-NOT: gpu.func
// CHECK: attn_gpu.warp_mma {{.*}} : !attn_gpu.frag<16x16xf16, a>, !attn_gpu.frag<16x64xf32, acc>
// CHECK-NOT: attn_gpu.log2
func.func @f16_shared_kernel(%q: tensor<2x4x64x128xf16>, %k: tensor<2x4x64x128xf16>,
                             %v: tensor<2x4x64x128xf16>) -> tensor<2x4x64x128xf16> {
  %o = attn.attention %q, %k, %v
      : tensor<2x4x64x128xf16>, tensor<2x4x64x128xf16>,
        tensor<2x4x64x128xf16> -> tensor<2x4x64x128xf16>
  %o2 = attn.attention %q, %k, %o
      : tensor<2x4x64x128xf16>, tensor<2x4x64x128xf16>,
        tensor<2x4x64x128xf16> -> tensor<2x4x64x128xf16>
  return %o2 : tensor<2x4x64x128xf16>
}

// -----

// The scale is a launch argument (softmax_scale, f32, after the sizes): a
// non-default one names no kernel of its own, and the kernel multiplies by
// the argument, never by a constant.
// CHECK-LABEL: func.func @scaled
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_d256_bf16_m64n32w4s2
// CHECK: gpu.func @attn_fwd_d256_bf16_m64n32w4s2(%{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %[[SCALE:.+]]: f32, %{{.*}}: i64,
// CHECK: arith.mulf %[[SCALE]], %{{.*}} : f32
// CHECK-NOT: 5.000000e-01
func.func @scaled(%q: tensor<1x1x16x256xbf16>, %k: tensor<1x1x16x256xbf16>,
                  %v: tensor<1x1x16x256xbf16>) -> (tensor<1x1x16x256xbf16>, tensor<1x1x16xf32>) {
  %o, %lse = attn.attention %q, %k, %v scale 0.5
      : tensor<1x1x16x256xbf16>, tensor<1x1x16x256xbf16>,
        tensor<1x1x16x256xbf16> -> tensor<1x1x16x256xbf16>, tensor<1x1x16xf32>
  return %o, %lse : tensor<1x1x16x256xbf16>, tensor<1x1x16xf32>
}

// -----

// A sliding window (top-left, [64, 0]) with the softcap sugar: the kv loop
// starts at the window's first block, blocks straddling either edge take
// the mask (a left test as well as the right one), and the softcap region
// is cloned per score element with attn_gpu.tanh (tanh.approx.f32).
// CHECK-LABEL: func.func @sliding_softcap
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_d64_bf16_tl64x0_mod{{[0-9a-f]+}}_nolse_m128n64w4s2
// CHECK: gpu.func @attn_fwd_d64_bf16_tl64x0_mod{{[0-9a-f]+}}_nolse_m128n64w4s2
// CHECK: arith.divui
// CHECK: scf.for %{{.+}} = %[[FIRST:[^ ]+]] to
// CHECK: attn_gpu.tanh %{{.*}} : f32
// CHECK: arith.ori
// CHECK: scf.if
// CHECK: attn_gpu.mask_scores {{.*}} {window_left = 64 : i64, window_right = 0 : i64}
func.func @sliding_softcap(%q: tensor<1x2x300x64xbf16>) -> tensor<1x2x300x64xbf16> {
  %o = attn.attention %q, %q, %q mask <sliding_top_left> window [64, 0] softcap 30.0
      : tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16> -> tensor<1x2x300x64xbf16>
  return %o : tensor<1x2x300x64xbf16>
}
