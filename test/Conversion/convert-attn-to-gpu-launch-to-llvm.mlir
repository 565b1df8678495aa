// The whole host chain, without a GPU: kernels (PTX), host lowering,
// bufferization, then upstream gpu-to-llvm and the LLVM conversions, to
// the LLVM dialect and on to LLVM IR, whose runtime calls are the mgpu*
// functions attn's runtime implements (lib/Runtime/MgpuWrappers.cpp).
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm80 chip=sm_80" --convert-attn-to-gpu-launch --attn-compile-kernels="chip=sm_80 format=isa" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --gpu-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --finalize-memref-to-llvm --reconcile-unrealized-casts > %t.sm80.mlir
// RUN: FileCheck %s --check-prefix=SM80 < %t.sm80.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.sm80.mlir | FileCheck %s --check-prefix=LLVMIR
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a chip=sm_90a" --convert-attn-to-gpu-launch --attn-compile-kernels="chip=sm_90a format=isa" --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --gpu-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --finalize-memref-to-llvm --reconcile-unrealized-casts > %t.sm90a.mlir
// RUN: FileCheck %s --check-prefix=SM90A < %t.sm90a.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.sm90a.mlir | FileCheck %s --check-prefixes=LLVMIR,LLVMIR-SM90A

// Only LLVM dialect, the launch and the binary are left.
// SM80-NOT: builtin.unrealized_conversion_cast
// SM80-NOT: memref.
// SM80-NOT: func.func
// SM80: llvm.func @attention(
// SM80: gpu.launch_func <%{{.*}} : !llvm.ptr> @attn_kernels::@attn_fwd_d64_bf16_causal_m128n64w4s2 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) : i64 dynamic_shared_memory_size %{{.*}} args(%{{.*}} : !llvm.ptr<1>,
// SM80: gpu.binary @attn_kernels

// The tensor maps reach the launch as 128-byte values.
// SM90A-NOT: builtin.unrealized_conversion_cast
// SM90A: llvm.func @attnMakeTensorMap(!llvm.ptr, !llvm.ptr, i32, i32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i32)
// SM90A: llvm.func @attention(
// SM90A: llvm.call @attnMakeTensorMap(
// SM90A: gpu.launch_func <%{{.*}} : !llvm.ptr> @attn_kernels::@attn_fwd_sm90_{{.*}} args({{.*}} : !llvm.array<128 x i8>, %{{.*}} : !llvm.array<128 x i8>, %{{.*}} : !llvm.array<128 x i8>)

// The launch's parameter block: each tensor map a 128-byte field, which the
// kernel-parameter array points at (what a byval parameter copies).
// LLVMIR-SM90A: = type { ptr addrspace(1), {{.*}}, i64, [128 x i8], [128 x i8], [128 x i8] }
// LLVMIR-SM90A: declare void @attnMakeTensorMap(ptr, ptr, i32, i32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i32)
// LLVMIR: define {{.*}} @attention(
// LLVMIR-SM90A: call void @attnMakeTensorMap(
// LLVMIR: call void @mgpuLaunchKernel(
// LLVMIR-DAG: declare ptr @mgpuStreamCreate()
// LLVMIR-DAG: declare ptr @mgpuMemAlloc(i64, ptr, i8)
// LLVMIR-DAG: declare void @mgpuStreamSynchronize(ptr)
// LLVMIR-DAG: declare void @mgpuStreamDestroy(ptr)
// LLVMIR-DAG: declare ptr @mgpuModuleLoadJIT(ptr, i32)
// LLVMIR-DAG: declare void @mgpuModuleUnload(ptr)
// LLVMIR-DAG: declare ptr @mgpuModuleGetFunction(ptr, ptr)
// LLVMIR-DAG: declare void @mgpuLaunchKernel(ptr, i64, i64, i64, i64, i64, i64, i32, ptr, ptr, ptr, i64)
func.func @attention(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
                     %v: tensor<?x2x?x64xbf16>)
    -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal>
      : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>
      -> tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
}
