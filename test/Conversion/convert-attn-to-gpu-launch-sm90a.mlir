// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a sm90-schedule=pingpong" --convert-attn-to-gpu-launch --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a sm90-schedule=pingpong+persistent" --convert-attn-to-gpu-launch --split-input-file | FileCheck %s --check-prefix=PERSISTENT

// The sm90a-wgmma family: after the 23 parameters, one 128-byte TMA
// descriptor each for Q, K and V, encoded by the runtime (attnMakeTensorMap)
// into a stack slot at the function's entry and passed by value to the
// kernel's byval grid-constant parameters. Causal: one block per (head,
// query block) tile, x length-major, y the batch.
// CHECK: func.func private @attnMakeTensorMap(!llvm.ptr, !llvm.ptr, i32, i32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i32)
// CHECK-LABEL: func.func @causal
// CHECK: %[[QSLOT:.+]] = llvm.alloca %{{.*}} x !llvm.array<128 x i8> {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK: %[[KSLOT:.+]] = llvm.alloca %{{.*}} x !llvm.array<128 x i8> {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK: %[[VSLOT:.+]] = llvm.alloca %{{.*}} x !llvm.array<128 x i8> {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK: %{{.*}}, %{{.*}}, %[[QSIZE:.+]]:4, %[[QSTRIDE:.+]]:4 = memref.extract_strided_metadata
// Q: bf16 (2 bytes), dims {D, N, H, B}, strides {b, h, n} in elements,
// box 64 columns by block_m rows, 128-byte swizzle.
// CHECK: %[[QD:.+]] = arith.index_cast %[[QSIZE]]#3 : index to i64
// CHECK: %[[QN:.+]] = arith.index_cast %[[QSIZE]]#2 : index to i64
// CHECK: %[[QH:.+]] = arith.index_cast %[[QSIZE]]#1 : index to i64
// CHECK: %[[QB:.+]] = arith.index_cast %[[QSIZE]]#0 : index to i64
// CHECK: call @attnMakeTensorMap(%[[QSLOT]], %{{.*}}, %{{.*}}, %{{.*}}, %[[QD]], %[[QN]], %[[QH]], %[[QB]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i32, i32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
// CHECK: %[[QMAP:.+]] = llvm.load %[[QSLOT]] {alignment = 64 : i64} : !llvm.ptr -> !llvm.array<128 x i8>
// CHECK: call @attnMakeTensorMap(%[[KSLOT]],
// CHECK: %[[KMAP:.+]] = llvm.load %[[KSLOT]]
// CHECK: call @attnMakeTensorMap(%[[VSLOT]],
// CHECK: %[[VMAP:.+]] = llvm.load %[[VSLOT]]
// CHECK: %[[C128:.+]] = arith.constant 128 : index
// CHECK: %[[QBLOCKS:.+]] = arith.ceildivui %[[QSIZE]]#2, %[[C128]] : index
// CHECK: %[[TILES:.+]] = arith.muli %[[QBLOCKS]], %[[QSIZE]]#1 : index
// CHECK: %[[THREADS:.+]] = arith.constant 384 : index
// CHECK: gpu.launch_func async [%{{.*}}] @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_nolse_m128n128s2 blocks in (%[[TILES]], %[[QSIZE]]#0, %{{.*}}) threads in (%[[THREADS]], %{{.*}}, %{{.*}}) dynamic_shared_memory_size %{{.*}} args({{.*}}, %[[QMAP]] : !llvm.array<128 x i8>, %[[KMAP]] : !llvm.array<128 x i8>, %[[VMAP]] : !llvm.array<128 x i8>)

// PERSISTENT-LABEL: func.func @causal
// PERSISTENT: gpu.launch_func async [%{{.*}}] @attn_kernels::@{{.*}}_p blocks in
func.func @causal(%q: tensor<2x8x?x128xbf16>, %k: tensor<2x2x?x128xbf16>,
                  %v: tensor<2x2x?x128xbf16>) -> tensor<2x8x?x128xbf16> {
  %o = attn.attention %q, %k, %v mask <causal>
      : tensor<2x8x?x128xbf16>, tensor<2x2x?x128xbf16>, tensor<2x2x?x128xbf16>
      -> tensor<2x8x?x128xbf16>
  return %o : tensor<2x8x?x128xbf16>
}

// -----

// No mask, not persistent (the heuristic's choice here is persistent; the
// schedule option overrides it): head-major, (ceil(seq_q / block_m),
// batch * heads_q).
// CHECK-LABEL: func.func @full
// CHECK: %{{.*}}, %{{.*}}, %[[QSIZE:.+]]:4, %{{.*}}:4 = memref.extract_strided_metadata
// CHECK: %[[QBLOCKS:.+]] = arith.ceildivui %[[QSIZE]]#2, %{{.*}} : index
// CHECK: %[[BH:.+]] = arith.muli %[[QSIZE]]#0, %[[QSIZE]]#1 : index
// CHECK: gpu.launch_func async [%{{.*}}] @attn_kernels::@attn_fwd_sm90_{{.*}} blocks in (%[[QBLOCKS]], %[[BH]], %{{.*}})

// Persistent: x = max(1, min(T, max(floor(num_sms / batch), T * floor(seq_q
// / 4096)))) with T = ceil(seq_q / block_m) * heads_q and the SM count from
// the runtime, computed as the runtime's launchGrid does: max(1, seq_q >=
// 4096 ? T : min(T, num_sms / max(batch, 1))); y = batch.
// PERSISTENT: func.func private @attnDeviceMultiprocessorCount() -> i32
// PERSISTENT-LABEL: func.func @full
// PERSISTENT: %{{.*}}, %{{.*}}, %[[QSIZE:.+]]:4, %{{.*}}:4 = memref.extract_strided_metadata
// PERSISTENT: %[[QBLOCKS:.+]] = arith.ceildivui %[[QSIZE]]#2, %{{.*}} : index
// PERSISTENT: %[[SMS32:.+]] = call @attnDeviceMultiprocessorCount() : () -> i32
// PERSISTENT: %[[SMS:.+]] = arith.index_castui %[[SMS32]] : i32 to index
// PERSISTENT: %[[ONE:.+]] = arith.constant 1 : index
// PERSISTENT: %[[T:.+]] = arith.muli %[[QBLOCKS]], %[[QSIZE]]#1 : index
// PERSISTENT: %[[B1:.+]] = arith.maxui %[[QSIZE]]#0, %[[ONE]] : index
// PERSISTENT: %[[PERB:.+]] = arith.divui %[[SMS]], %[[B1]] : index
// PERSISTENT: %[[C4096:.+]] = arith.constant 4096 : index
// PERSISTENT: %[[LONG:.+]] = arith.cmpi uge, %[[QSIZE]]#2, %[[C4096]] : index
// PERSISTENT: %[[MIN:.+]] = arith.minui %[[T]], %[[PERB]] : index
// PERSISTENT: %[[SEL:.+]] = arith.select %[[LONG]], %[[T]], %[[MIN]] : index
// PERSISTENT: %[[X:.+]] = arith.maxui %[[SEL]], %[[ONE]] : index
// PERSISTENT: gpu.launch_func async [%{{.*}}] @attn_kernels::@{{.*}}_p blocks in (%[[X]], %[[QSIZE]]#0, %{{.*}})
func.func @full(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x8x?x128xbf16>,
                %v: tensor<?x8x?x128xbf16>) -> tensor<?x8x?x128xbf16> {
  %o = attn.attention %q, %k, %v
      : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>
      -> tensor<?x8x?x128xbf16>
  return %o : tensor<?x8x?x128xbf16>
}
