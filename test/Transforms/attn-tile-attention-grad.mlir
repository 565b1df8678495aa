// RUN: attn-opt %s --attn-tile-attention-grad="block-m=16 block-n=16" --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --attn-tile-attention-grad="block-m=16 block-n=16 deterministic=true" --canonicalize --cse | FileCheck %s --check-prefix=DET
// RUN: not attn-opt %s --attn-tile-attention-grad="block-m=8" 2>&1 | FileCheck %s --check-prefix=BADBLOCK

// FlashAttention-2's backward on tiles. Two query heads share one kv-head
// (GQA), causal with Nq = 20 < Nk = 24 (diagonal offset 4), blocks of 16:
// two key blocks, two query blocks (the second a tail of 4 rows).

// BADBLOCK: error: attn-tile-attention-grad: block-m and block-n must be positive multiples of 16 (got block-m=8, block-n=32)

// CHECK-LABEL: func.func @grad
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x20x16xf32>, %[[K:[^:]+]]: tensor<1x1x24x16xf32>, %[[V:[^:]+]]: tensor<1x1x24x16xf32>, %[[O:[^:]+]]: tensor<1x2x20x16xf32>, %[[DO:[^:]+]]: tensor<1x2x20x16xf32>, %[[LSE:[^:]+]]: tensor<1x2x20xf32>)
// CHECK-DAG: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[C:.+]] = arith.constant 0.360673755 : f32
// Preprocess: Δ = rowsum(dO ∘ O) on whole tensors.
// CHECK: %[[DELTA:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[DO]], %[[O]] : {{.*}}) outs(%{{.+}} : tensor<1x2x20xf32>)
// The key-block loop carries dK, dV and the in-place f32 dQ accumulator.
// CHECK: %[[KV:.+]]:3 = scf.for %[[KV0:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32>, tensor<1x2x20x16xf32>)
// Query heads of the group, then query blocks from the first one that sees
// a key of this block.
// CHECK: scf.for %[[G:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.*}}) -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<1x2x20x16xf32>)
// CHECK: scf.for %[[Q0:.+]] = %[[QSTART:.+]] to %{{.+}} step %{{.+}} iter_args(%[[DKACC:.+]] = %{{.+}}, %[[DVACC:.+]] = %{{.+}}, %[[DQACC:.+]] = %{{.+}}) -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<1x2x20x16xf32>)
// S = Q·Kᵀ, then P = exp2(S·c − LSE·log2e), 0 where masked.
// CHECK: %[[S:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: %[[P:.+]] = linalg.generic {{.*}} outs(%[[S]] : tensor<16x16xf32>)
// CHECK: arith.cmpf one, %{{.+}}, %[[NINF]]
// CHECK: arith.cmpi sle
// CHECK: arith.mulf %{{.+}}, %[[LOG2E]]
// CHECK: arith.mulf %{{.+}}, %[[C]]
// CHECK: math.exp2
// CHECK: arith.select
// dP = dO·Vᵀ, dS = P ∘ (dP − Δ).
// CHECK: %[[DP:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: %[[DS:.+]] = linalg.generic {{.*}} ins(%[[P]], %{{.+}} : tensor<16x16xf32>, tensor<16xf32>) outs(%[[DP]] : tensor<16x16xf32>)
// CHECK: arith.subf
// CHECK: arith.mulf
// dK += dSᵀ·Q and dV += Pᵀ·dO, over the carried accumulators.
// CHECK: %[[DK:.+]] = linalg.generic {{.*}} ins(%[[DS]], %{{.+}} : tensor<16x16xf32>, tensor<16x16xf32>) outs(%[[DKACC]] : tensor<16x16xf32>)
// CHECK: %[[DV:.+]] = linalg.generic {{.*}} ins(%[[P]], %{{.+}} : tensor<16x16xf32>, tensor<16x16xf32>) outs(%[[DVACC]] : tensor<16x16xf32>)
// dQ += dS·K·scale, in place into the carried accumulator.
// CHECK: %[[DQT:.+]] = linalg.generic {{.*}} ins(%[[DS]], %{{.+}} : tensor<16x16xf32>, tensor<16x16xf32>)
// CHECK: %[[OLD:.+]] = tensor.extract_slice %[[DQACC]][0, %[[G]], %[[Q0]], 0]
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} outs(%[[OLD]] : tensor<?x16xf32>)
// CHECK: %[[NEWDQ:.+]] = tensor.insert_slice %[[SUM]] into %[[DQACC]][0, %[[G]], %[[Q0]], 0]
// CHECK: scf.yield %[[DK]], %[[DV]], %[[NEWDQ]]
// dK (scaled) and dV tiles of the key block, rows that exist.
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, %[[KV0]], 0]
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, %[[KV0]], 0]
// CHECK: return %{{.+}}, %[[KV]]#0, %[[KV]]#1

// Deterministic: the key-block loop carries only dK and dV; dQ has its own
// loop nest over (head, query block) with a key loop that stops at the
// diagonal, and each dQ tile is written once.
// DET-LABEL: func.func @grad
// DET: %[[KV:.+]]:2 = scf.for {{.*}} -> (tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32>)
// DET-NOT: tensor<1x2x20x16xf32>)
// DET: scf.yield %{{.+}}, %{{.+}} : tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32>
// DET: %[[DQ:.+]] = scf.for %[[H:.+]] = {{.*}} -> (tensor<1x2x20x16xf32>)
// DET: scf.for %[[Q0:.+]] = {{.*}} iter_args(%[[DQT:.+]] = %{{.+}}) -> (tensor<1x2x20x16xf32>)
// DET: scf.for {{.*}} -> (tensor<16x16xf32>)
// DET: math.exp2
// DET: tensor.insert_slice %{{.+}} into %[[DQT]][%{{.+}}, %{{.+}}, %[[Q0]], 0]
// DET: return %[[DQ]], %[[KV]]#0, %[[KV]]#1
func.func @grad(%q: tensor<1x2x20x16xf32>, %k: tensor<1x1x24x16xf32>, %v: tensor<1x1x24x16xf32>,
                %o: tensor<1x2x20x16xf32>, %do: tensor<1x2x20x16xf32>, %lse: tensor<1x2x20xf32>)
    -> (tensor<1x2x20x16xf32>, tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse mask <causal> scale 0.25
      : tensor<1x2x20x16xf32>, tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32>,
        tensor<1x2x20x16xf32>, tensor<1x2x20x16xf32>, tensor<1x2x20xf32>
      -> tensor<1x2x20x16xf32>, tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32>
  return %dq, %dk, %dv : tensor<1x2x20x16xf32>, tensor<1x1x24x16xf32>, tensor<1x1x24x16xf32>
}

// A run-time scale: scale·log2(e) formed once from the operand, before the
// loops; P's exponent, dQ and dK multiply by the operand's values.
// CHECK-LABEL: func.func @grad_runtime_scale
// CHECK-SAME: %[[S:[^:]+]]: f32)
// CHECK: %[[C:.+]] = arith.mulf %[[S]], %{{.+}} : f32
// CHECK: scf.for
// CHECK: arith.mulf %{{.+}}, %[[C]] : f32
// CHECK: math.exp2
// CHECK: arith.mulf %{{.+}}, %[[S]] : f32
// CHECK: return
func.func @grad_runtime_scale(%q: tensor<1x1x20x16xf32>, %lse: tensor<1x1x20xf32>, %s: f32)
    -> (tensor<1x1x20x16xf32>, tensor<1x1x20x16xf32>, tensor<1x1x20x16xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse scale(%s)
      : tensor<1x1x20x16xf32>, tensor<1x1x20x16xf32>, tensor<1x1x20x16xf32>,
        tensor<1x1x20x16xf32>, tensor<1x1x20x16xf32>, tensor<1x1x20xf32>
      -> tensor<1x1x20x16xf32>, tensor<1x1x20x16xf32>, tensor<1x1x20x16xf32>
  return %dq, %dk, %dv : tensor<1x1x20x16xf32>, tensor<1x1x20x16xf32>, tensor<1x1x20x16xf32>
}
