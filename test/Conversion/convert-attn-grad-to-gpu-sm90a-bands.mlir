// RUN: attn-opt %s --convert-attn-to-gpu --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="deterministic=true block-m=64" --split-input-file | FileCheck %s --check-prefix=DET
// RUN: attn-opt %s --convert-attn-to-gpu="deterministic=true" --split-input-file | FileCheck %s --check-prefix=DET128

// The sm90a backward takes every mask band (family auto picks it on sm_90a
// at head dims 64 and 128), named by the band as the sm80 kernels are; at
// D = 64 with 128 query rows per step (the deterministic checks but the
// last take block-m 64).
// CHECK-LABEL: func.func @window
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_sm90_d64_bf16_br4x0_dkdv_n128m128s2
// A key block walks only the query blocks whose rows see it (both ends of
// the walk clamped), and masks both edges of the band.
// CHECK: llvm.func @attn_bwd_sm90_d64_bf16_br4x0_dkdv_n128m128s2
// CHECK-COUNT-2: arith.maxsi
// Deterministic with a right edge: the key blocks add in descending order,
// from the last block whose walk reaches the query block (the turn is the
// smaller of the row edge's and the key range's end's), and the grid takes
// the key blocks from the last.
// Two dQ warps (producer warps 2 and 3), one per dQ buffer: each walks
// every other step from its own first.
// So at block-m 128 (two dQ tiles too, the mbarriers in the alignment
// padding).
// DET128-LABEL: func.func @window
// DET128: llvm.func @attn_bwd_sm90_d64_bf16_br4x0_dkdv_n128m128s2_det
// DET128: %[[WARP:.*]] = arith.shrui %{{.*}}, %c5_i32
// DET128: %[[FIRST:.*]] = arith.subi %[[WARP]], %c2_i32
// DET128: scf.for %{{.*}} = %[[FIRST]] to %{{.*}} step %c2_i32
// DET-LABEL: func.func @window
// DET: attn.kernel = @attn_kernels::@attn_bwd_sm90_d64_bf16_br4x0_dkdv_n128m64s2_det
// DET: llvm.func @attn_bwd_sm90_d64_bf16_br4x0_dkdv_n128m64s2_det
// DET: %[[NX:.*]] = nvvm.read.ptx.sreg.nctaid.x
// DET: %[[LASTX:.*]] = arith.subi %[[NX]], %c1_i32
// DET: arith.subi %[[LASTX]], %{{.*}} : i32
// DET: %[[WARP:.*]] = arith.shrui %{{.*}}, %c5_i32
// DET: %[[FIRST:.*]] = arith.subi %[[WARP]], %c2_i32
// DET: scf.for %{{.*}} = %[[FIRST]] to %{{.*}} step %c2_i32
// DET: llvm.getelementptr {{.*}} -> !llvm.ptr<1>, i32
// DET: %[[LAST:.*]] = arith.divui
// DET: %[[EDGE:.*]] = arith.divui
// DET-NEXT: %[[TURN:.*]] = arith.minsi %[[EDGE]], %[[LAST]] : i32
// DET-NEXT: scf.while
// DET-NEXT: %[[SEEN:.*]] = llvm.load {{.*}} atomic syncscope("device") acquire
// DET-NEXT: arith.cmpi ne, %[[SEEN]], %[[TURN]] : i32
func.func @window(%q: tensor<1x2x100x64xbf16>, %lse: tensor<1x2x100xf32>)
    -> tensor<1x2x100x64xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      mask <sliding> window [4, 0]
      : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
         tensor<1x2x100x64xbf16>
  return %dq : tensor<1x2x100x64xbf16>
}

// -----

// CHECK-LABEL: func.func @top_left_causal
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_sm90_d128_bf16_tlinfx0_dkdv_n128m64s2
func.func @top_left_causal(%q: tensor<1x1x16x128xbf16>,
                           %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x128xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      mask <causal_top_left>
      : tensor<1x1x16x128xbf16>, tensor<1x1x16x128xbf16>,
        tensor<1x1x16x128xbf16>, tensor<1x1x16x128xbf16>,
        tensor<1x1x16x128xbf16>, tensor<1x1x16xf32>
      -> tensor<1x1x16x128xbf16>, tensor<1x1x16x128xbf16>,
         tensor<1x1x16x128xbf16>
  return %dq : tensor<1x1x16x128xbf16>
}

// -----

// A bidirectional window, top-left aligned.
// CHECK-LABEL: func.func @two_sided
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_sm90_d64_bf16_tl32x32_dkdv_n128m128s2
func.func @two_sided(%q: tensor<1x1x300x64xbf16>, %lse: tensor<1x1x300xf32>)
    -> tensor<1x1x300x64xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      mask <sliding_top_left> window [32, 32]
      : tensor<1x1x300x64xbf16>, tensor<1x1x300x64xbf16>,
        tensor<1x1x300x64xbf16>, tensor<1x1x300x64xbf16>,
        tensor<1x1x300x64xbf16>, tensor<1x1x300xf32>
      -> tensor<1x1x300x64xbf16>, tensor<1x1x300x64xbf16>,
         tensor<1x1x300x64xbf16>
  return %dq : tensor<1x1x300x64xbf16>
}

// -----

// A left edge only: ascending turns, counted from the first key block that
// reaches the query block (the window's left edge), not from key block 0.
// CHECK-LABEL: func.func @left_only
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_sm90_d64_bf16_br4xinf_dkdv_n128m128s2
// DET-LABEL: func.func @left_only
// DET: llvm.func @attn_bwd_sm90_d64_bf16_br4xinf_dkdv_n128m64s2_det
// DET-NOT: nvvm.read.ptx.sreg.nctaid.x
// DET: %[[FIRST:.*]] = arith.maxsi %c0_i32{{.*}}, %{{.*}} : i32
// DET-NEXT: arith.constant 128 : i32
// DET-NEXT: %[[BLOCK:.*]] = arith.divui %[[FIRST]]
// DET: %[[TURN:.*]] = arith.subi %{{.*}}, %[[BLOCK]] : i32
// DET: scf.while
// DET-NEXT: %[[SEEN:.*]] = llvm.load {{.*}} atomic syncscope("device") acquire
// DET-NEXT: arith.cmpi ne, %[[SEEN]], %[[TURN]] : i32
func.func @left_only(%q: tensor<1x2x100x64xbf16>, %lse: tensor<1x2x100xf32>)
    -> tensor<1x2x100x64xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      mask <sliding> window [4, -1]
      : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
         tensor<1x2x100x64xbf16>
  return %dq : tensor<1x2x100x64xbf16>
}
