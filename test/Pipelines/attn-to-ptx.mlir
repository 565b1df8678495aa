// RUN: attn-opt %s --attn-to-ptx="chip=sm_80" | FileCheck %s
// RUN: attn-opt %s --attn-to-ptx="chip=sm_80 format=none" | FileCheck %s --check-prefix=NONE

// attn-to-ptx inside a module that also holds another compiler's code: only
// the attention and attn's own @attn_kernels are touched. The caller's
// gpu.module (no target: upstream's gpu-module-to-binary would reject it)
// and its functions come out as they went in.

// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func @caller_math(%[[A:.+]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[A]], %[[A]] : tensor<4xf32>
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[S]], %[[A]] : tensor<4xf32>
// CHECK-NEXT: return %[[M]]
// CHECK: func.func @attention
// CHECK: attn.attention
// CHECK-SAME: attn.kernel = @attn_kernels::@attn_fwd_
// CHECK: gpu.module @caller_kernels {
// CHECK-NEXT: gpu.func @scale(%{{.+}}: memref<?xf32>) kernel {
// CHECK-NEXT: %{{.+}} = gpu.thread_id x
// CHECK: gpu.return
// CHECK: gpu.binary @attn_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">,
// CHECK-SAME: assembly = "{{.*}}.target sm_80{{.*}}.entry attn_fwd_

// NONE: gpu.module @caller_kernels {
// NONE-NEXT: gpu.func @scale
// NONE: gpu.module @attn_kernels [#nvvm.target<O = 3, chip = "sm_80">]
// NONE: llvm.func @attn_fwd_
// NONE-NOT: gpu.binary
module {
  func.func @caller_math(%a: tensor<4xf32>) -> tensor<4xf32> {
    %s = arith.addf %a, %a : tensor<4xf32>
    %m = arith.mulf %s, %a : tensor<4xf32>
    return %m : tensor<4xf32>
  }
  func.func @attention(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>,
                       %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
    %o = attn.attention %q, %k, %v mask <causal>
        : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16> -> tensor<1x2x128x64xbf16>
    return %o : tensor<1x2x128x64xbf16>
  }
  gpu.module @caller_kernels {
    gpu.func @scale(%buf: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %x = memref.load %buf[%tid] : memref<?xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %buf[%tid] : memref<?xf32>
      gpu.return
    }
  }
}
