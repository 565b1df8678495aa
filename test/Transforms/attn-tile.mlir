// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-tile --cse | FileCheck %s
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-tile="block-m=32 block-n=16" --cse | FileCheck %s --check-prefix=OPT
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-tile="block-n=32" --cse | FileCheck %s --check-prefix=OPTN
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-tile="shared-memory-bytes=49152" --cse | FileCheck %s --check-prefix=SMEM48K
// RUN: not attn-opt %s --attn-tile="block-m=24" 2>&1 | FileCheck %s --check-prefix=BADM
// RUN: not attn-opt %s --attn-tile="block-m=32 block-n=-16" 2>&1 | FileCheck %s --check-prefix=BADN
// RUN: not attn-opt %s --attn-tile="shared-memory-bytes=0" 2>&1 | FileCheck %s --check-prefix=BADSMEM

// BADM: error: attn-tile: block-m and block-n must be positive multiples of 16 (got block-m=24, block-n=0)
// BADN: error: attn-tile: block-m and block-n must be positive multiples of 16 (got block-m=32, block-n=-16)
// BADSMEM: error: attn-tile: shared-memory-bytes must be positive (got 0)

// The loop structure: a parallel grid over (batch, head, query block), a
// serial loop over key/value blocks carrying (acc, max, sum), one finalize.
// Nq = Nk = 100 is not a multiple of either block: tiles are padded.

// CHECK-LABEL: func.func @tile_structure
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x100x64xf32>, %[[K:[^:]+]]: tensor<1x2x100x64xf32>, %[[V:[^:]+]]: tensor<1x2x100x64xf32>)
// CHECK-DAG: %[[NQ:.+]] = tensor.dim %[[Q]], %{{.+}} : tensor<1x2x100x64xf32>
// CHECK-DAG: %[[NK:.+]] = tensor.dim %[[K]], %{{.+}} : tensor<1x2x100x64xf32>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[BR:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[BC:.+]] = arith.constant 128 : index
// CHECK: %[[NQB:.+]] = arith.ceildivui %[[NQ]], %[[BR]] : index
// CHECK: %[[OUT:.+]] = tensor.empty() : tensor<1x2x100x64xf32>
// CHECK: %[[RES:.+]] = scf.forall (%[[B:[^,]+]], %[[H:[^,]+]], %[[QB:[^)]+]]) in (1, 2, %[[NQB]]) shared_outs(%[[OUTS:.+]] = %[[OUT]]) -> (tensor<1x2x100x64xf32>)
// CHECK: %[[Q0:.+]] = arith.muli %[[QB]], %[[BR]] : index
// CHECK: %[[LEFT:.+]] = arith.subi %[[NQ]], %[[Q0]] : index
// CHECK: %[[ROWS:.+]] = arith.minui %[[LEFT]], %[[BR]] : index
// CHECK: %[[KVH:.+]] = arith.divui %[[H]], %{{.+}} : index
// CHECK: %[[QS:.+]] = tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, %[[ROWS]], 64] [1, 1, 1, 1] : tensor<1x2x100x64xf32> to tensor<?x64xf32>
// CHECK: %[[QT:.+]] = tensor.pad %[[QS]] low[0, 0] high[%{{.+}}, 0]
// CHECK: } : tensor<?x64xf32> to tensor<64x64xf32>
// CHECK: %[[ACC0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<64x64xf32>)
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[M0:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<64xf32>)
// CHECK: %[[L0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<64xf32>)
// CHECK: %[[LOOP:.+]]:3 = scf.for %[[KV0:[^ ]+]] = %[[C0]] to %[[NK]] step %[[BC]]
// CHECK-SAME: iter_args(%[[ACC:[^ ]+]] = %[[ACC0]], %[[M:[^ ]+]] = %[[M0]], %[[L:[^ ]+]] = %[[L0]])
// CHECK-SAME: -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK: %[[KS:.+]] = tensor.extract_slice %[[K]][%[[B]], %[[KVH]], %[[KV0]], 0]
// CHECK: %[[KT:.+]] = tensor.pad %[[KS]]
// CHECK: } : tensor<?x64xf32> to tensor<128x64xf32>
// CHECK: %[[VS:.+]] = tensor.extract_slice %[[V]][%[[B]], %[[KVH]], %[[KV0]], 0]
// CHECK: %[[VT:.+]] = tensor.pad %[[VS]]
// CHECK: %[[NACC:[^,]+]], %[[NM:[^,]+]], %[[NL:[^ ]+]] = attn.online_block %[[QT]], %[[KT]], %[[VT]] into %[[ACC]], %[[M]], %[[L]] at(%[[Q0]], %[[KV0]]) of(%[[NQ]], %[[NK]]) scale 1.250000e-01 :
// CHECK-SAME: tensor<64x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
// CHECK: scf.yield %[[NACC]], %[[NM]], %[[NL]]
// CHECK: %[[O:[^,]+]], %{{.+}} = attn.online_finalize %[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2 : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<64x64xf32>, tensor<64xf32>
// CHECK: %[[OROWS:.+]] = tensor.extract_slice %[[O]][0, 0] [%[[ROWS]], 64] [1, 1] : tensor<64x64xf32> to tensor<?x64xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[OROWS]] into %[[OUTS]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, %[[ROWS]], 64]
// CHECK: } {attn.tile = {block_m = 64 : i64, block_n = 128 : i64, source = "heuristic"}}
// CHECK: return %[[RES]]

// OPT-LABEL: func.func @tile_structure
// OPT: arith.constant 32 : index
// OPT: arith.constant 16 : index
// OPT: scf.for %
// OPT-SAME: -> (tensor<32x64xf32>, tensor<32xf32>, tensor<32xf32>)
// OPT: attn.online_block {{.*}} : tensor<32x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<32x64xf32>, tensor<32xf32>, tensor<32xf32>
// OPT: {attn.tile = {block_m = 32 : i64, block_n = 16 : i64, source = "option"}}

// Only block-n given: block-m still comes from the heuristic, but the
// config is reported as coming from the options.
// OPTN-LABEL: func.func @tile_structure
// OPTN: {attn.tile = {block_m = 64 : i64, block_n = 32 : i64, source = "option"}}
func.func @tile_structure(%q: tensor<1x2x100x64xf32>, %k: tensor<1x2x100x64xf32>,
                          %v: tensor<1x2x100x64xf32>) -> tensor<1x2x100x64xf32> {
  %o = attn.attention %q, %k, %v
      : tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32> -> tensor<1x2x100x64xf32>
  return %o : tensor<1x2x100x64xf32>
}

// -----

// Causal with Nq > Nk, grouped-query heads (4 query heads share 2 kv-heads),
// LSE requested. The kv loop stops at the diagonal of the block's last row:
// min(max(q0 + rows + (Nk - Nq), 0), Nk); later key blocks are never visited.

// CHECK-LABEL: func.func @causal_gqa_lse
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x100x64xf32>, %[[K:[^:]+]]: tensor<2x2x80x64xf32>
// CHECK-DAG: %[[NQ:.+]] = tensor.dim %[[Q]]
// CHECK-DAG: %[[NK:.+]] = tensor.dim %[[K]]
// CHECK-DAG: %[[GROUP:.+]] = arith.constant 2 : index
// CHECK: %[[OUT:.+]] = tensor.empty() : tensor<2x4x100x64xf32>
// CHECK: %[[LSE:.+]] = tensor.empty() : tensor<2x4x100xf32>
// CHECK: scf.forall (%[[B:[^,]+]], %[[H:[^,]+]], %[[QB:[^)]+]]) in (2, 4, %{{.+}}) shared_outs(%[[OUTS:[^ ]+]] = %[[OUT]], %[[LSES:[^ ]+]] = %[[LSE]])
// CHECK: %[[Q0:.+]] = arith.muli %[[QB]]
// CHECK: %[[ROWS:.+]] = arith.minui
// CHECK: %[[KVH:.+]] = arith.divui %[[H]], %[[GROUP]] : index
// Causal, bottom-right: the last row q0 + rows - 1 sees keys up to
// q0 + rows - 1 + (Nk - Nq), so the kv loop stops at q0 + (Nk - Nq) + rows.
// CHECK: %[[SHIFT:.+]] = arith.subi %[[NK]], %[[NQ]] : index
// CHECK: %[[D0:.+]] = arith.addi %[[Q0]], %[[SHIFT]] : index
// CHECK: %[[END1:.+]] = arith.addi %[[D0]], %[[ROWS]] : index
// CHECK: %[[END2:.+]] = arith.maxsi %[[END1]], %{{.+}} : index
// CHECK: %[[KVEND:.+]] = arith.minsi %[[END2]], %[[NK]] : index
// CHECK: scf.for %[[KV0:[^ ]+]] = %{{.+}} to %[[KVEND]] step
// CHECK: tensor.extract_slice %[[K]][%[[B]], %[[KVH]], %[[KV0]], 0]
// CHECK: attn.online_block {{.*}} at(%[[Q0]], %[[KV0]]) of(%[[NQ]], %[[NK]]) mask <causal> scale 1.250000e-01
// CHECK: %[[O:[^,]+]], %[[L:[^ ]+]] = attn.online_finalize
// CHECK: %[[OROWS:.+]] = tensor.extract_slice %[[O]][0, 0] [%[[ROWS]], 64]
// CHECK: %[[LROWS:.+]] = tensor.extract_slice %[[L]][0] [%[[ROWS]]] [1] : tensor<64xf32> to tensor<?xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[OROWS]] into %[[OUTS]][%[[B]], %[[H]], %[[Q0]], 0]
// CHECK-NEXT: tensor.parallel_insert_slice %[[LROWS]] into %[[LSES]][%[[B]], %[[H]], %[[Q0]]] [1, 1, %[[ROWS]]] [1, 1, 1] : tensor<?xf32> into tensor<2x4x100xf32>
// CHECK: attn.tile = {block_m = 64 : i64, block_n = 128 : i64, source = "heuristic"}
func.func @causal_gqa_lse(%q: tensor<2x4x100x64xf32>, %k: tensor<2x2x80x64xf32>, %v: tensor<2x2x80x64xf32>)
    -> (tensor<2x4x100x64xf32>, tensor<2x4x100xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal>
      : tensor<2x4x100x64xf32>, tensor<2x2x80x64xf32>, tensor<2x2x80x64xf32>
        -> tensor<2x4x100x64xf32>, tensor<2x4x100xf32>
  return %o, %lse : tensor<2x4x100x64xf32>, tensor<2x4x100xf32>
}

// -----

// Dynamic batch and sequence lengths: the grid and the loop bounds come from
// tensor.dim.

// CHECK-LABEL: func.func @dynamic_seq
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x8x?x32xbf16>, %[[K:[^:]+]]: tensor<?x1x?x32xbf16>
// CHECK-DAG: %[[NQ:.+]] = tensor.dim %[[Q]], %{{.+}} : tensor<?x8x?x32xbf16>
// CHECK-DAG: %[[NK:.+]] = tensor.dim %[[K]], %{{.+}} : tensor<?x1x?x32xbf16>
// CHECK-DAG: %[[BR:.+]] = arith.constant 32 : index
// CHECK: %[[NQB:.+]] = arith.ceildivui %[[NQ]], %[[BR]]
// CHECK: %[[BATCH:.+]] = tensor.dim %[[Q]], %{{.+}} : tensor<?x8x?x32xbf16>
// CHECK: scf.forall ({{.*}}) in (%[[BATCH]], 8, %[[NQB]])
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[NK]] step
// CHECK: attn.online_block {{.*}} : tensor<32x32xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>
// CHECK: attn.online_finalize {{.*}} -> tensor<32x32xbf16>, tensor<32xf32>
// CHECK: attn.tile = {block_m = 32 : i64, block_n = 128 : i64, source = "heuristic"}
func.func @dynamic_seq(%q: tensor<?x8x?x32xbf16>, %k: tensor<?x1x?x32xbf16>, %v: tensor<?x1x?x32xbf16>)
    -> tensor<?x8x?x32xbf16> {
  %o = attn.attention %q, %k, %v
      : tensor<?x8x?x32xbf16>, tensor<?x1x?x32xbf16>, tensor<?x1x?x32xbf16> -> tensor<?x8x?x32xbf16>
  return %o : tensor<?x8x?x32xbf16>
}

// -----

// The SRAM-fit heuristic: M = shared-memory-bytes / element bytes,
// Bc = ceil(M / 4d), Br = min(Bc, d), each rounded down to a multiple of 16
// and clamped to [16, 128]. Defaults to sm_90 (232448 bytes); SMEM48K is a
// 48 KiB target. Every attention op gets its own config.

// CHECK-LABEL: func.func @heuristic_per_op
// CHECK: attn.tile = {block_m = 32 : i64, block_n = 128 : i64, source = "heuristic"}
// CHECK: attn.tile = {block_m = 32 : i64, block_n = 128 : i64, source = "heuristic"}
// CHECK: attn.tile = {block_m = 64 : i64, block_n = 128 : i64, source = "heuristic"}
// CHECK: attn.tile = {block_m = 64 : i64, block_n = 128 : i64, source = "heuristic"}
// CHECK: attn.tile = {block_m = 112 : i64, block_n = 112 : i64, source = "heuristic"}
// CHECK: attn.tile = {block_m = 128 : i64, block_n = 128 : i64, source = "heuristic"}
// CHECK: attn.tile = {block_m = 48 : i64, block_n = 48 : i64, source = "heuristic"}
// CHECK: attn.tile = {block_m = 112 : i64, block_n = 112 : i64, source = "heuristic"}
// CHECK: attn.tile = {block_m = 128 : i64, block_n = 128 : i64, source = "heuristic"}
// CHECK: return

// SMEM48K-LABEL: func.func @heuristic_per_op
// SMEM48K: attn.tile = {block_m = 32 : i64, block_n = 96 : i64, source = "heuristic"}
// SMEM48K: attn.tile = {block_m = 32 : i64, block_n = 128 : i64, source = "heuristic"}
// SMEM48K: attn.tile = {block_m = 48 : i64, block_n = 48 : i64, source = "heuristic"}
// SMEM48K: attn.tile = {block_m = 64 : i64, block_n = 96 : i64, source = "heuristic"}
// SMEM48K: attn.tile = {block_m = 16 : i64, block_n = 16 : i64, source = "heuristic"}
// SMEM48K: attn.tile = {block_m = 48 : i64, block_n = 48 : i64, source = "heuristic"}
// SMEM48K: attn.tile = {block_m = 16 : i64, block_n = 16 : i64, source = "heuristic"}
// SMEM48K: attn.tile = {block_m = 16 : i64, block_n = 16 : i64, source = "heuristic"}
// SMEM48K: attn.tile = {block_m = 48 : i64, block_n = 48 : i64, source = "heuristic"}
// SMEM48K: return

// OPT-LABEL: func.func @heuristic_per_op
// OPT-COUNT-9: attn.tile = {block_m = 32 : i64, block_n = 16 : i64, source = "option"}
func.func @heuristic_per_op(%q32f: tensor<1x1x256x32xf32>, %q32b: tensor<1x1x256x32xbf16>,
                            %q64f: tensor<1x1x256x64xf32>, %q64b: tensor<1x1x256x64xbf16>,
                            %q128f: tensor<1x1x256x128xf32>, %q128b: tensor<1x1x256x128xbf16>,
                            %q256f: tensor<1x1x256x256xf32>, %q256b: tensor<1x1x256x256xbf16>,
                            %q128h: tensor<1x1x256x128xf16>)
    -> (tensor<1x1x256x32xf32>, tensor<1x1x256x32xbf16>, tensor<1x1x256x64xf32>,
        tensor<1x1x256x64xbf16>, tensor<1x1x256x128xf32>, tensor<1x1x256x128xbf16>,
        tensor<1x1x256x256xf32>, tensor<1x1x256x256xbf16>, tensor<1x1x256x128xf16>) {
  // D = 32, f32 then bf16.
  %0 = attn.attention %q32f, %q32f, %q32f
      : tensor<1x1x256x32xf32>, tensor<1x1x256x32xf32>, tensor<1x1x256x32xf32> -> tensor<1x1x256x32xf32>
  %1 = attn.attention %q32b, %q32b, %q32b
      : tensor<1x1x256x32xbf16>, tensor<1x1x256x32xbf16>, tensor<1x1x256x32xbf16> -> tensor<1x1x256x32xbf16>
  // D = 64.
  %2 = attn.attention %q64f, %q64f, %q64f
      : tensor<1x1x256x64xf32>, tensor<1x1x256x64xf32>, tensor<1x1x256x64xf32> -> tensor<1x1x256x64xf32>
  %3 = attn.attention %q64b, %q64b, %q64b
      : tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16> -> tensor<1x1x256x64xbf16>
  // D = 128.
  %4 = attn.attention %q128f, %q128f, %q128f
      : tensor<1x1x256x128xf32>, tensor<1x1x256x128xf32>, tensor<1x1x256x128xf32> -> tensor<1x1x256x128xf32>
  %5 = attn.attention %q128b, %q128b, %q128b
      : tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16> -> tensor<1x1x256x128xbf16>
  // D = 256.
  %6 = attn.attention %q256f, %q256f, %q256f
      : tensor<1x1x256x256xf32>, tensor<1x1x256x256xf32>, tensor<1x1x256x256xf32> -> tensor<1x1x256x256xf32>
  %7 = attn.attention %q256b, %q256b, %q256b
      : tensor<1x1x256x256xbf16>, tensor<1x1x256x256xbf16>, tensor<1x1x256x256xbf16> -> tensor<1x1x256x256xbf16>
  // f16 takes the same blocks as bf16.
  %8 = attn.attention %q128h, %q128h, %q128h
      : tensor<1x1x256x128xf16>, tensor<1x1x256x128xf16>, tensor<1x1x256x128xf16> -> tensor<1x1x256x128xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8
      : tensor<1x1x256x32xf32>, tensor<1x1x256x32xbf16>, tensor<1x1x256x64xf32>,
        tensor<1x1x256x64xbf16>, tensor<1x1x256x128xf32>, tensor<1x1x256x128xbf16>,
        tensor<1x1x256x256xf32>, tensor<1x1x256x256xbf16>, tensor<1x1x256x128xf16>
}

// -----

// Dynamic head counts cannot be tiled (the grid and the GQA group need them).
func.func @dynamic_heads(%q: tensor<1x?x16x64xf32>, %k: tensor<1x2x16x64xf32>,
                         %v: tensor<1x2x16x64xf32>) -> tensor<1x?x16x64xf32> {
  // expected-error @+1 {{'attn.attention' op could not be tiled: dynamic head counts are not supported}}
  %o = attn.attention %q, %k, %v
      : tensor<1x?x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32> -> tensor<1x?x16x64xf32>
  return %o : tensor<1x?x16x64xf32>
}

// -----

// A sliding window skips key blocks on both sides: the loop starts at the
// block holding d(q0) - left (rounded down to a block) and stops after
// d(q0 + rows - 1) + right; top-left, so d(i) = i. The score_mod region is
// cloned into each online_block with the batch and head indices.

// CHECK-LABEL: func.func @sliding_window_score_mod
// CHECK: scf.forall (%[[B:[^,]+]], %[[H:[^,]+]], %[[QB:[^)]+]]) in (1, 2, %{{.+}})
// CHECK: %[[Q0:.+]] = arith.muli %[[QB]]
// CHECK: %[[ROWS:.+]] = arith.minui
// CHECK: %[[D0:.+]] = arith.addi %[[Q0]], %{{.+}} : index
// CHECK: %[[LEFT:.+]] = arith.constant -16 : index
// CHECK: %[[FIRST:.+]] = arith.addi %[[D0]], %[[LEFT]] : index
// CHECK: %[[PAST0:.+]] = arith.addi %[[D0]], %[[ROWS]] : index
// CHECK: %[[RIGHT:.+]] = arith.constant 4 : index
// CHECK: %[[PAST:.+]] = arith.addi %[[PAST0]], %[[RIGHT]] : index
// CHECK: %[[F0:.+]] = arith.maxsi %[[FIRST]]
// CHECK: %[[F1:.+]] = arith.minsi %[[F0]]
// CHECK: %[[FB:.+]] = arith.divui %[[F1]], %[[BN:[^ ]+]] : index
// CHECK: %[[BEGIN:.+]] = arith.muli %[[FB]], %[[BN]] : index
// CHECK: %[[E0:.+]] = arith.maxsi %[[PAST]]
// CHECK: %[[END:.+]] = arith.minsi %[[E0]]
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step
// CHECK: attn.online_block {{.*}} head(%[[B]], %[[H]]) mask <sliding_top_left> window [16, 4] scale
// CHECK-SAME: score_mod {
// CHECK: math.tanh
// CHECK: attn.yield
func.func @sliding_window_score_mod(%q: tensor<1x2x100x32xf32>) -> tensor<1x2x100x32xf32> {
  %o = attn.attention %q, %q, %q mask <sliding_top_left> window [16, 4] softcap 20.0
      : tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<1x2x100x32xf32>
  return %o : tensor<1x2x100x32xf32>
}

// -----

// Variable length: the grid is (sequence, head, query block of the longest
// sequence); each iteration reads its sequence's bounds from cu_seqlens,
// clamps its rows at 0 (blocks past a shorter sequence have none), reads
// tiles at the sequence's token offset and writes O [T, H, Dv] and LSE
// [H, T] there.
// CHECK-LABEL: func.func @tile_varlen
// CHECK: scf.forall (%[[S:[^,]+]], %[[H:[^,]+]], %[[QB:[^)]+]]) in (%{{.+}}, 4, %{{.+}})
// CHECK: tensor.extract %{{.+}}[%[[S]]] : tensor<4xi32>
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract_slice %{{.+}}[%{{.+}}, %[[H]], 0] [%{{.+}}, 1, 32] [1, 1, 1] : tensor<40x4x32xf32> to tensor<?x32xf32>
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.+}}[%{{.+}}, %{{.+}}, 0] [%{{.+}}, 1, 32] [1, 1, 1] : tensor<50x2x32xf32> to tensor<?x32xf32>
// CHECK: attn.online_block
// CHECK: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%{{.+}}, %[[H]], 0] [%{{.+}}, 1, 32] [1, 1, 1] : tensor<?x32xf32> into tensor<40x4x32xf32>
// CHECK: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[H]], %{{.+}}] [1, %{{.+}}] [1, 1] : tensor<?xf32> into tensor<4x40xf32>
func.func @tile_varlen(%q: tensor<40x4x32xf32>, %k: tensor<50x2x32xf32>, %v: tensor<50x2x32xf32>, %cq: tensor<4xi32>, %ck: tensor<4xi32>) -> (tensor<40x4x32xf32>, tensor<4x40xf32>) {
  %o, %l = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<4xi32>, tensor<4xi32> max [20, 30] mask <causal>
      : tensor<40x4x32xf32>, tensor<50x2x32xf32>, tensor<50x2x32xf32> -> tensor<40x4x32xf32>, tensor<4x40xf32>
  return %o, %l : tensor<40x4x32xf32>, tensor<4x40xf32>
}

// -----

// Bias: each key block's [Br, Bc] bias tile (index 0 along the broadcast
// batch dim), zero-padded, goes to attn.online_block.
// CHECK-LABEL: func.func @tile_bias
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.+}}[0, %{{.+}}, %{{.+}}, %{{.+}}] [1, 1, %{{.+}}, %{{.+}}] [1, 1, 1, 1] : tensor<1x4x40x50xf32> to tensor<?x?xf32>
// CHECK: tensor.pad
// CHECK: attn.online_block {{.*}} bias %{{.+}} : tensor<{{[0-9]+}}x{{[0-9]+}}xf32>
func.func @tile_bias(%q: tensor<2x4x40x32xf32>, %k: tensor<2x2x50x32xf32>, %v: tensor<2x2x50x32xf32>, %b: tensor<1x4x40x50xf32>) -> tensor<2x4x40x32xf32> {
  %o = attn.attention %q, %k, %v bias %b : tensor<1x4x40x50xf32>
      : tensor<2x4x40x32xf32>, tensor<2x2x50x32xf32>, tensor<2x2x50x32xf32> -> tensor<2x4x40x32xf32>
  return %o : tensor<2x4x40x32xf32>
}

// -----

// A run-time scale goes to every block as its operand (no attribute).
// CHECK-LABEL: func.func @tile_runtime_scale
// CHECK-SAME: %[[S:[^:]+]]: f32)
// CHECK: scf.for
// CHECK: attn.online_block {{.*}} of(%{{[^,]+}}, %{{[^)]+}}) scale(%[[S]]) :
func.func @tile_runtime_scale(%q: tensor<1x2x40x32xf32>, %s: f32) -> tensor<1x2x40x32xf32> {
  %o = attn.attention %q, %q, %q scale(%s)
      : tensor<1x2x40x32xf32>, tensor<1x2x40x32xf32>, tensor<1x2x40x32xf32> -> tensor<1x2x40x32xf32>
  return %o : tensor<1x2x40x32xf32>
}
