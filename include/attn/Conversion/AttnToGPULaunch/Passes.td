//===- Passes.td - attn host lowering pass -----------------*- tablegen -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPULAUNCH_PASSES_TD
#define ATTN_CONVERSION_ATTNTOGPULAUNCH_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToGPULaunch
    : Pass<"convert-attn-to-gpu-launch", "::mlir::ModuleOp"> {
  let summary = "Lower annotated attn.attention ops to a gpu.launch_func of "
                "their kernel";
  let description = [{
    Runs after `convert-attn-to-gpu` (before or after `attn-compile-kernels`)
    and replaces every `attn.attention` that carries `attn.kernel` and
    `attn.launch` by bufferized host code that launches that kernel:

      * Q, K and V become memrefs with `bufferization.to_buffer` (layout
        `strided<[?, ?, ?, 1], offset: ?>`: any view whose head dim is
        contiguous); O (and the LSE when the op returns it) is written into
        the caller's buffer when the result's only use is a
        `bufferization.materialize_in_destination` into a writable memref
        (destination-passing style), else allocated with `gpu.alloc` and
        handed back through `bufferization.to_tensor`. The buffers are
        device memory: the enclosing function is meant to be bufferized
        (`one-shot-bufferize`) and called with device buffers.
      * The allocations and the launch are `async` on one stream
        (`gpu.wait async` ... `gpu.wait`): the code returns when the kernel
        is done.
      * The kernel's arguments follow the one kernel-ABI definition
        (`attn/Runtime/KernelAbi.h`): base pointers (aligned pointer plus
        offset), sizes as i32 and strides in elements as i64, all read from
        the memrefs at run time.
      * The grid is computed in IR from the dynamic sizes by the policy of
        the `#attn.launch`'s `#attn.grid` (docs/kernel-abi.md; the
        arithmetic of the runtime's `launchGrid`, LaunchGridIR.h):
        `query_tiles`, `ceil(seq_q / block_m)` by `batch * heads_q`; the
        sm90a-wgmma family's `length_major` causal tiles and `persistent`
        grids (which ask the runtime for the SM count,
        `attnDeviceMultiprocessorCount`).
      * sm90a-wgmma TMA descriptors are encoded at run time by
        `attnMakeTensorMap` (declared here, implemented in attn's runtime)
        into a 128-byte stack slot and passed by value
        (`!llvm.array<128 x i8>`) to the kernel's byval
        `__grid_constant__` parameters.

    Ops without `attn.kernel` are left alone. What the kernel ABI needs but
    this pass cannot produce yet (variable-length batches, a bias, the
    backward's `attn.attention_grad`) is a diagnostic. Upstream `gpu-to-llvm` lowers the result; the `mgpu*`
    functions it calls are in attn's runtime (docs/runtime.md).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // ATTN_CONVERSION_ATTNTOGPULAUNCH_PASSES_TD
