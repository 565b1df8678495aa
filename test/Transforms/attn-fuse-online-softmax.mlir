// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-fuse-online-softmax | FileCheck %s
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-fuse-online-softmax | FileCheck %s --check-prefix=ONEMUL
// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-tile --attn-fuse-online-softmax | FileCheck %s --check-prefix=PIPE

// attn.online_block and attn.online_finalize expand into tile arithmetic:
// scores in the exp2 domain with scale * log2(e) folded into one multiply,
// rescale by exp2(m_old - m_new), the state updated in place.

// CHECK-DAG: #[[QK_Q:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[QK_K:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[QK_S:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[PV_V:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>

// CHECK-LABEL: func.func @block_causal_bf16
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<16x32xbf16>, %[[K:[^:]+]]: tensor<32x32xbf16>, %[[V:[^:]+]]: tensor<32x8xbf16>, %[[ACC:[^:]+]]: tensor<16x8xf32>, %[[M:[^:]+]]: tensor<16xf32>, %[[L:[^:]+]]: tensor<16xf32>, %[[Q0:[^:]+]]: index, %[[KV0:[^:]+]]: index, %[[NQ:[^:]+]]: index, %[[NK:[^:]+]]: index)

// S = Q K^T, accumulated in f32.
// CHECK: %[[S0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<16x32xf32>)
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[QK_Q]], #[[QK_K]], #[[QK_S]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : tensor<16x32xbf16>, tensor<32x32xbf16>) outs(%[[S0]] : tensor<16x32xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf

// One multiply by scale * log2(e) = 0.125 * 1.442695 = 0.180336878, then
// the padding mask (col < Nk - kv0) and the bottom-right causal mask
// (kv0 + col <= q0 + row + Nk - Nq) select -inf.
// CHECK: %[[SCALE:.+]] = arith.constant 0.180336878 : f32
// CHECK: %[[KEYS:.+]] = arith.subi %[[NK]], %[[KV0]] : index
// CHECK: %[[S2:.+]] = linalg.generic {indexing_maps = [#[[ID2]]], iterator_types = ["parallel", "parallel"]} outs(%[[S]] : tensor<16x32xf32>)
// CHECK: ^bb0(%[[SV:.+]]: f32):
// CHECK: %[[COL:.+]] = linalg.index 1 : index
// CHECK: %[[INB:.+]] = arith.cmpi slt, %[[COL]], %[[KEYS]] : index
// CHECK: %[[ROWI:.+]] = linalg.index 0 : index
// CHECK: %[[QI:.+]] = arith.addi %[[Q0]], %[[ROWI]] : index
// CHECK: %[[KVI:.+]] = arith.addi %[[KV0]], %[[COL]] : index
// CHECK: %[[OFF:.+]] = arith.subi %[[NK]], %[[NQ]] : index
// CHECK: %[[DIAG:.+]] = arith.addi %[[QI]], %[[OFF]] : index
// CHECK: %[[VIS:.+]] = arith.cmpi sle, %[[KVI]], %[[DIAG]] : index
// CHECK: %[[VALID:.+]] = arith.andi %[[INB]], %[[VIS]] : i1
// CHECK: %[[SCALED:.+]] = arith.mulf %[[SV]], %[[SCALE]] : f32
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[SEL:.+]] = arith.select %[[VALID]], %[[SCALED]], %[[NINF]] : f32
// CHECK: linalg.yield %[[SEL]] : f32
// No exponential before the mask: the scores stay in the exp2 domain.
// CHECK-NOT: math.exp

// Block row max.
// CHECK: %[[BM0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<16xf32>)
// CHECK: %[[BMAX:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[S2]] : tensor<16x32xf32>) outs(%[[BM0]] : tensor<16xf32>)
// CHECK: arith.maximumf

// alpha = exp2(m_old - m_new), with m_new = -inf shifted by 0.
// CHECK: %[[ALPHA:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%[[M]], %[[BMAX]] : tensor<16xf32>, tensor<16xf32>)
// CHECK: ^bb0(%[[MOLD:[^:]+]]: f32, %[[MBLK:[^:]+]]: f32, %{{.+}}: f32):
// CHECK: %[[MNEWV:.+]] = arith.maximumf %[[MOLD]], %[[MBLK]] : f32
// CHECK: %[[ISNINF:.+]] = arith.cmpf oeq, %[[MNEWV]], %{{.+}} : f32
// CHECK: %[[SAFE:.+]] = arith.select %[[ISNINF]], %{{.+}}, %[[MNEWV]] : f32
// CHECK: %[[DIFF:.+]] = arith.subf %[[MOLD]], %[[SAFE]] : f32
// CHECK: %[[EXP:.+]] = math.exp2 %[[DIFF]] : f32
// CHECK: linalg.yield %[[EXP]]

// m_new = max(m_old, block max), updated in place (m_old is the init).
// CHECK: %[[MNEW:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%[[BMAX]] : tensor<16xf32>) outs(%[[M]] : tensor<16xf32>)
// CHECK: arith.maximumf

// P = exp2(S - m_new), in place of S.
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[MNEW]] : tensor<16xf32>) outs(%[[S2]] : tensor<16x32xf32>)
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: arith.subf
// CHECK: math.exp2

// l_new = l_old * alpha + rowsum(P), in place.
// CHECK: %[[LSC:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%[[ALPHA]] : tensor<16xf32>) outs(%[[L]] : tensor<16xf32>)
// CHECK: arith.mulf
// CHECK: %[[LNEW:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<16x32xf32>) outs(%[[LSC]] : tensor<16xf32>)
// CHECK: arith.addf

// acc_new = acc_old * alpha + P V, in place; P is rounded to bf16 first.
// CHECK: %[[ASC:.+]] = linalg.generic {indexing_maps = [#[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[ALPHA]] : tensor<16xf32>) outs(%[[ACC]] : tensor<16x8xf32>)
// CHECK: arith.mulf
// CHECK: %[[ANEW:.+]] = linalg.generic {indexing_maps = [#[[QK_Q]], #[[PV_V]], #[[QK_S]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[P]], %[[V]] : tensor<16x32xf32>, tensor<32x8xbf16>) outs(%[[ASC]] : tensor<16x8xf32>)
// CHECK: ^bb0(%[[PV:[^:]+]]: f32, %[[VV:[^:]+]]: bf16, %[[AV:[^:]+]]: f32):
// CHECK: %[[PT:.+]] = arith.truncf %[[PV]] : f32 to bf16
// CHECK: %[[PE:.+]] = arith.extf %[[PT]] : bf16 to f32
// CHECK: %[[VE:.+]] = arith.extf %[[VV]] : bf16 to f32
// CHECK: %[[PROD:.+]] = arith.mulf %[[PE]], %[[VE]] : f32
// CHECK: arith.addf %[[AV]], %[[PROD]] : f32
// CHECK: return %[[ANEW]], %[[MNEW]], %[[LNEW]]
// The folded constant has exactly one use: a single multiply per score.
// ONEMUL-LABEL: func.func @block_causal_bf16
// ONEMUL: %[[SCALE:.+]] = arith.constant 0.180336878 : f32
// ONEMUL: arith.mulf %{{.+}}, %[[SCALE]] : f32
// ONEMUL-NOT: %[[SCALE]]
// ONEMUL-NOT: 0.180336878
// ONEMUL-NOT: math.exp {{.*}}
// ONEMUL-LABEL: func.func @block_no_mask_f32
func.func @block_causal_bf16(%q: tensor<16x32xbf16>, %k: tensor<32x32xbf16>, %v: tensor<32x8xbf16>,
                             %acc: tensor<16x8xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>,
                             %q0: index, %kv0: index, %nq: index, %nk: index)
    -> (tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>) {
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%q0, %kv0) of (%nq, %nk)
      mask <causal> scale 0.125
      : tensor<16x32xbf16>, tensor<32x32xbf16>, tensor<32x8xbf16>, tensor<16x8xf32>,
        tensor<16xf32>, tensor<16xf32>
  return %a, %mx, %s : tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// Without a mask only the padding is masked; f32 inputs need no extension
// and P is not rounded before P V. scale = 1: the folded constant is log2(e).

// CHECK-LABEL: func.func @block_no_mask_f32
// CHECK-SAME: %[[KV0:[^:]+]]: index, %[[NK:[^:]+]]: index)
// CHECK: %[[S:.+]] = linalg.generic
// CHECK-NOT: arith.extf
// CHECK: %[[SCALE:.+]] = arith.constant 1.44269502 : f32
// CHECK: %[[KEYS:.+]] = arith.subi %[[NK]], %[[KV0]] : index
// CHECK: linalg.generic {{.*}} outs(%[[S]] : tensor<32x16xf32>)
// CHECK: %[[COL:.+]] = linalg.index 1 : index
// CHECK: %[[INB:.+]] = arith.cmpi slt, %[[COL]], %[[KEYS]] : index
// CHECK-NOT: arith.cmpi sle
// CHECK: %[[SCALED:.+]] = arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: arith.select %[[INB]], %[[SCALED]], %{{.+}} : f32
// CHECK: math.exp2
// CHECK: math.exp2
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<32x16xf32>, tensor<16x4xf32>) outs(%{{.+}} : tensor<32x4xf32>)
// CHECK-NOT: arith.truncf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: return
func.func @block_no_mask_f32(%q: tensor<32x64xf32>, %k: tensor<16x64xf32>, %v: tensor<16x4xf32>,
                             %acc: tensor<32x4xf32>, %m: tensor<32xf32>, %l: tensor<32xf32>,
                             %q0: index, %kv0: index, %nk: index)
    -> (tensor<32x4xf32>, tensor<32xf32>, tensor<32xf32>) {
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%q0, %kv0) of (%q0, %nk)
      scale 1.0
      : tensor<32x64xf32>, tensor<16x64xf32>, tensor<16x4xf32>, tensor<32x4xf32>,
        tensor<32xf32>, tensor<32xf32>
  return %a, %mx, %s : tensor<32x4xf32>, tensor<32xf32>, tensor<32xf32>
}

// -----

// A score_mod is applied to the natural-domain scaled score (s * scale),
// then the result goes into the exp2 domain; the band mask uses absolute
// positions (q0 + row, kv0 + col), which the region also receives.

// CHECK-LABEL: func.func @block_score_mod_window
// CHECK-SAME: %[[Q0:[^:]+]]: index, %[[KV0:[^:]+]]: index, %[[NQ:[^:]+]]: index, %[[NK:[^:]+]]: index, %[[BI:[^:]+]]: index, %[[HI:[^:]+]]: index)
// CHECK: %[[SCALE:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: linalg.generic
// CHECK: %[[COL:.+]] = linalg.index 1 : index
// CHECK: %[[ROWI:.+]] = linalg.index 0 : index
// CHECK: %[[QI:.+]] = arith.addi %[[Q0]], %[[ROWI]] : index
// CHECK: %[[KVI:.+]] = arith.addi %[[KV0]], %[[COL]] : index
// CHECK: arith.cmpi sle, %[[KVI]], %{{.+}} : index
// CHECK: arith.cmpi sge, %[[KVI]], %{{.+}} : index
// CHECK: %[[SCALED:.+]] = arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: %[[HF:.+]] = arith.index_cast %[[HI]] : index to i64
// CHECK: %[[MOD:.+]] = arith.addf %[[SCALED]], %{{.+}} : f32
// CHECK: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK: %[[X:.+]] = arith.mulf %[[MOD]], %[[LOG2E]] : f32
// CHECK: arith.select %{{.+}}, %[[X]], %{{.+}} : f32
// CHECK-NOT: attn.yield
func.func @block_score_mod_window(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>,
                                  %acc: tensor<16x8xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>,
                                  %q0: index, %kv0: index, %nq: index, %nk: index, %bi: index, %hi: index)
    -> (tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>) {
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%q0, %kv0) of (%nq, %nk)
      head (%bi, %hi) mask <sliding> window [3, 2] scale 0.5
      : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>,
        tensor<16xf32>, tensor<16xf32> score_mod {
  ^bb0(%sc: f32, %b: index, %h: index, %i: index, %j: index):
    // A per-head bias: s + h.
    %h64 = arith.index_cast %h : index to i64
    %hf = arith.sitofp %h64 : i64 to f32
    %y = arith.addf %sc, %hf : f32
    attn.yield %y : f32
  }
  return %a, %mx, %s : tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// Finalize: O = acc / l once per row, 0 for rows that saw no key (l = 0);
// LSE = (m + log2 l) * ln 2 in natural-log units, -inf for those rows.

// CHECK-LABEL: func.func @finalize_f16
// CHECK-SAME: (%[[ACC:[^:]+]]: tensor<16x8xf32>, %[[M:[^:]+]]: tensor<16xf32>, %[[L:[^:]+]]: tensor<16xf32>)
// CHECK: %[[OINIT:.+]] = tensor.empty() : tensor<16x8xf16>
// CHECK: %[[O:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%[[ACC]], %[[L]] : tensor<16x8xf32>, tensor<16xf32>) outs(%[[OINIT]] : tensor<16x8xf16>)
// CHECK: ^bb0(%[[A:[^:]+]]: f32, %[[LV:[^:]+]]: f32, %{{.+}}: f16):
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.+]] = arith.cmpf oeq, %[[LV]], %[[ZERO]] : f32
// CHECK: %[[DIV:.+]] = arith.divf %[[A]], %[[LV]] : f32
// CHECK: %[[SEL:.+]] = arith.select %[[EMPTY]], %[[ZERO]], %[[DIV]] : f32
// CHECK: %[[T:.+]] = arith.truncf %[[SEL]] : f32 to f16
// CHECK: linalg.yield %[[T]] : f16
// CHECK: %[[LSE:.+]] = linalg.generic {{.*}} ins(%[[M]], %[[L]] : tensor<16xf32>, tensor<16xf32>) outs(%{{.+}} : tensor<16xf32>)
// CHECK: ^bb0(%[[MV:[^:]+]]: f32, %[[LV2:[^:]+]]: f32, %{{.+}}: f32):
// CHECK: %[[EMPTY2:.+]] = arith.cmpf oeq, %[[LV2]], %{{.+}} : f32
// CHECK: %[[LOG:.+]] = math.log2 %[[LV2]] : f32
// CHECK: %[[LN2:.+]] = arith.constant 0.693147182 : f32
// CHECK: %[[SUM:.+]] = arith.addf %[[MV]], %[[LOG]] : f32
// CHECK: %[[NAT:.+]] = arith.mulf %[[SUM]], %[[LN2]] : f32
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[R:.+]] = arith.select %[[EMPTY2]], %[[NINF]], %[[NAT]] : f32
// CHECK: linalg.yield %[[R]] : f32
// CHECK: return %[[O]], %[[LSE]]
func.func @finalize_f16(%acc: tensor<16x8xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>)
    -> (tensor<16x8xf16>, tensor<16xf32>) {
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16x8xf16>, tensor<16xf32>
  return %o, %lse : tensor<16x8xf16>, tensor<16xf32>
}

// -----

// f32 output: no truncation.
// CHECK-LABEL: func.func @finalize_f32
// CHECK: arith.divf
// CHECK-NOT: arith.truncf
// CHECK: math.log2
// CHECK: return
func.func @finalize_f32(%acc: tensor<16x8xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>)
    -> (tensor<16x8xf32>, tensor<16xf32>) {
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<16x8xf32>, tensor<16xf32>
  return %o, %lse : tensor<16x8xf32>, tensor<16xf32>
}

// -----

// The whole tiled loop: after attn-tile the pass leaves no attn op behind.
// CHECK-LABEL: func.func @after_tile
// CHECK: attn.attention
// PIPE-LABEL: func.func @after_tile
// PIPE-NOT: attn.online
// PIPE: scf.forall
// PIPE-NOT: attn.online
// PIPE: scf.for %
// PIPE-NOT: attn.online
// PIPE: math.exp2
// PIPE-NOT: attn.online
// PIPE: scf.yield
// PIPE-NOT: attn.online
// PIPE: math.log2
// PIPE-NOT: attn.online
// PIPE: attn.tile = {block_m = 32 : i64, block_n = 128 : i64, source = "heuristic"}
// PIPE: return
func.func @after_tile(%q: tensor<1x2x40x32xbf16>, %k: tensor<1x1x40x32xbf16>, %v: tensor<1x1x40x32xbf16>)
    -> (tensor<1x2x40x32xbf16>, tensor<1x2x40xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal>
      : tensor<1x2x40x32xbf16>, tensor<1x1x40x32xbf16>, tensor<1x1x40x32xbf16>
        -> tensor<1x2x40x32xbf16>, tensor<1x2x40xf32>
  return %o, %lse : tensor<1x2x40x32xbf16>, tensor<1x2x40xf32>
}

// -----

func.func @dynamic_block(%q: tensor<?x32xf32>, %k: tensor<32x32xf32>, %v: tensor<32x8xf32>,
                         %acc: tensor<?x8xf32>, %m: tensor<?xf32>, %l: tensor<?xf32>, %i: index)
    -> tensor<?x8xf32> {
  // expected-error @+1 {{'attn.online_block' op could not be expanded: tiles must have static shapes}}
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%i, %i) of (%i, %i) scale 0.125
      : tensor<?x32xf32>, tensor<32x32xf32>, tensor<32x8xf32>, tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @dynamic_finalize(%acc: tensor<?x8xf32>, %m: tensor<?xf32>, %l: tensor<?xf32>)
    -> (tensor<?x8xbf16>, tensor<?xf32>) {
  // expected-error @+1 {{'attn.online_finalize' op could not be expanded: tiles must have static shapes}}
  %o, %lse = attn.online_finalize %acc, %m, %l
      : tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x8xbf16>, tensor<?xf32>
  return %o, %lse : tensor<?x8xbf16>, tensor<?xf32>
}

// -----

// A bias tile: the scores leave the exp2 domain's folded multiply (scale
// alone), get the bias added, then one multiply by log2(e).
// CHECK-LABEL: func.func @block_bias
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : tensor<16x32xbf16>) outs(%{{.+}} : tensor<16x32xf32>)
// CHECK: ^bb0(%[[BV:.+]]: bf16, %[[SV:.+]]: f32):
// CHECK: %[[SC:.+]] = arith.mulf %[[SV]], %{{.+}} : f32
// CHECK: %[[BF:.+]] = arith.extf %[[BV]] : bf16 to f32
// CHECK: %[[ADD:.+]] = arith.addf %[[SC]], %[[BF]] : f32
// CHECK: arith.mulf %[[ADD]], %{{.+}} : f32
func.func @block_bias(%q: tensor<16x64xbf16>, %k: tensor<32x64xbf16>, %v: tensor<32x64xbf16>,
                      %acc: tensor<16x64xf32>, %m: tensor<16xf32>, %l: tensor<16xf32>,
                      %b: tensor<16x32xbf16>, %q0: index, %kv0: index, %nq: index, %nk: index)
    -> (tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>) {
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%q0, %kv0) of (%nq, %nk)
      bias %b : tensor<16x32xbf16> scale 1.250000e-01
      : tensor<16x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return %a, %mx, %s : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// A run-time scale: scale·log2(e) is formed once per block, from the
// operand, and the scores take one multiply by it.

// CHECK-LABEL: func.func @block_runtime_scale
// CHECK-SAME: %[[SC:[^:]+]]: f32)
// CHECK: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK: %[[C:.+]] = arith.mulf %[[SC]], %[[LOG2E]] : f32
// CHECK: linalg.generic
// CHECK: %[[SCALED:.+]] = arith.mulf %{{.+}}, %[[C]] : f32
// CHECK-NOT: arith.mulf %{{.+}}, %[[LOG2E]]
// CHECK: arith.select %{{.+}}, %[[SCALED]], %{{.+}} : f32
// CHECK: return
func.func @block_runtime_scale(%q: tensor<32x64xf32>, %k: tensor<16x64xf32>, %v: tensor<16x4xf32>,
                               %acc: tensor<32x4xf32>, %m: tensor<32xf32>, %l: tensor<32xf32>,
                               %q0: index, %kv0: index, %nk: index, %sc: f32)
    -> (tensor<32x4xf32>, tensor<32xf32>, tensor<32xf32>) {
  %a, %mx, %s = attn.online_block %q, %k, %v into %acc, %m, %l at (%q0, %kv0) of (%q0, %nk)
      scale(%sc)
      : tensor<32x64xf32>, tensor<16x64xf32>, tensor<16x4xf32>, tensor<32x4xf32>,
        tensor<32xf32>, tensor<32xf32>
  return %a, %mx, %s : tensor<32x4xf32>, tensor<32xf32>, tensor<32xf32>
}
