//===- Passes.td - passes of the attn pipelines ------------*- tablegen -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PASSES_TD
#define ATTN_PIPELINES_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnCompileKernels : Pass<"attn-compile-kernels", "::mlir::ModuleOp"> {
  let summary = "Lower attn's gpu.module @attn_kernels to NVVM and serialise it";
  let description = [{
    The second half of `attn-to-ptx`, after `convert-attn-to-gpu`: lowers
    the kernels in `gpu.module @attn_kernels` (the attn_gpu kernel IR to
    NVVM by `convert-attn-gpu-to-nvvm`, then structured control flow, GPU
    and arith ops to the NVVM and LLVM dialects with 32-bit indices),
    attaches an NVVM target for `chip`, and, unless `format` is `none`,
    serialises the module into `gpu.binary @attn_kernels` (PTX for `isa`):
    upstream's `convert-nvvm-to-llvm` first expands the NVVM ops that MLIR
    implements as PTX strings (wgmma.mma_async, mbarrier.try_wait.parity),
    then `gpu-module-to-binary`.

    Only `@attn_kernels` is touched: other `gpu.module`s of the module (a
    caller's own kernels) are neither lowered, nor given a target, nor
    serialised, so the pass can run inside another compiler's pipeline.
    Without `@attn_kernels` the pass does nothing.

    Example: `attn-opt --convert-attn-to-gpu
    --attn-compile-kernels="chip=sm_80 format=isa"`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"",
           "Target chip, e.g. sm_80, sm_90a">,
    Option<"features", "features", "std::string", "\"\"",
           "PTX features, e.g. +ptx80 (default: the back end's)">,
    Option<"optLevel", "O", "unsigned", "3",
           "LLVM optimisation level for the kernels">,
    Option<"format", "format", "std::string", "\"isa\"",
           "What to serialise to: isa (PTX), llvm (bitcode), bin (cubin "
           "through ptxas), fatbin, or none (stop before serialising)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

#endif // ATTN_PIPELINES_PASSES_TD
