//===- BackwardCompiler.h - attn.attention_grad to GPU kernels --*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The backward counterpart of KernelCompiler: one attn.attention_grad to the
// three kernels of FlashBackwardKernel.h in one PTX module/cubin, with a
// manifest whose "launches" list the kernels in launch order
// (docs/kernel-abi.md, "Backward").
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_BACKWARDCOMPILER_H
#define ATTN_COMPILER_BACKWARDCOMPILER_H

#include "attn/Compiler/KernelCompiler.h"

namespace mlir::attn {

struct CompiledBackward {
  struct Launch {
    std::string role, entry;
    ::attn::runtime::GridSpec grid;
    int64_t threads = 0, dynamicSharedMemory = 0;
    std::optional<PtxasReport> ptxas;
  };
  std::string chip;
  ::attn::AttentionProblem problem;
  int64_t blockM = 0, blockN = 0, threads = 0, stages = 2;
  bool deterministic = false;
  /// The dkdv kernel's family: sm80-mma or sm90a-wgmma (whose tensor maps
  /// follow the 40 backward parameters).
  /// The sm90a-wgmma dkdv kernel's dQ schedule (dq-pipelined, dq-first,
  /// dk-first, deterministic, head-split); "" for sm80-mma.
  std::string schedule;
  std::string family = "sm80-mma";
  std::vector<CompiledKernel::TensorMapParam> tensorMaps;
  std::string tileSource;
  std::string tileReason; // why this tile (#attn.kernel_config's reason)
  std::vector<Launch> launches;
  std::string kernelMLIR, ptx, cubin;

  /// The dkdv launch: the one that names the directory.
  const Launch &main() const;
  std::string manifestJSON() const;
};

/// Builds `func.func @attention_grad(q, k, v, o, do, lse) -> (dq, dk, dv)`
/// on tensors of `problem`'s static shapes, with its mask and window; an
/// error naming the flag for what attn.attention_grad cannot express (a
/// score modification, bias, variable length, no LSE).
llvm::Expected<OwningOpRef<ModuleOp>>
buildAttentionGradModule(MLIRContext &ctx, const ::attn::AttentionProblem &p);

/// Compiles the single attn.attention_grad of `module`.
llvm::Expected<CompiledBackward>
compileAttentionGradKernels(ModuleOp module,
                            const KernelCompileOptions &options);

llvm::Error writeBackwardDirectory(const CompiledBackward &kernels,
                                   llvm::StringRef dir);

} // namespace mlir::attn

#endif // ATTN_COMPILER_BACKWARDCOMPILER_H
