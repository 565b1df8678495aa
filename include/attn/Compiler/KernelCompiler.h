//===- KernelCompiler.h - attn.attention to a launchable kernel -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The library behind attn-compile (and the C API and Python): runs the
// attn-to-ptx pipeline on a module holding one attn.attention, assembles the
// PTX with ptxas, and describes the result in a launch manifest
// (docs/kernel-abi.md).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_KERNELCOMPILER_H
#define ATTN_COMPILER_KERNELCOMPILER_H

#include "attn/Runtime/LaunchGrid.h"
#include "attn/Support/AttentionProblem.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::attn {

struct KernelCompileOptions {
  std::string chip = "sm_90a";
  std::string features;
  unsigned optLevel = 3;
  int64_t blockM = 0; // 0 = heuristic
  int64_t blockN = 0;
  int64_t warpRows = 0; // 0 = heuristic
  int64_t stages = 2;
  /// Kernel family: auto, sm80 or sm90a (convert-attn-to-gpu's option).
  std::string family = "auto";
  /// sm90a-wgmma consumer schedule (docs/tuning.md): "pingpong",
  /// "overlap", "serial" or "" (the tuned or heuristic one).
  std::string sm90Schedule;
  /// Tuning database (docs/tuning.md); "" = $ATTN_TUNING_DB, "none" = off.
  std::string tuningDb;
  /// GPU to look up in it; "" = $ATTN_TUNING_GPU, else any.
  std::string tuningGpu;
  /// sm90a forward experiments (attn-select-kernel-config's exp2-emulated,
  /// -1 = the family's choice, and wide-producer).
  int64_t exp2Emulated = -1;
  bool wideProducer = false;
  /// sm90a causal backward: MiB per section of the longest-first walk
  /// (section-mb; -1 = the family's choice).
  int64_t sectionMb = -1;
  /// ptxas to assemble the cubin with; "" = $CUDA_HOME/bin/ptxas,
  /// /usr/local/cuda/bin/ptxas, then PATH. Not found = no cubin.
  std::string ptxasPath;
  /// Backward kernels: dQ without atomics (bit-reproducible).
  bool deterministic = false;
  bool assemble = true;
  bool emitLLVMIR = false;
};

/// What ptxas -v says about the kernel.
struct PtxasReport {
  int64_t registers = -1;
  int64_t spillStores = 0;
  int64_t spillLoads = 0;
  int64_t stackFrame = 0;
  std::string log;
};

struct CompiledKernel {
  std::string entry;
  std::string family = "sm80-mma";
  std::string chip;
  ::attn::AttentionProblem problem;
  int64_t blockM = 0, blockN = 0, stages = 0, threads = 0;
  int64_t dynamicSharedMemory = 0;
  std::string tileSource;
  std::string tileReason; // why this tile (a database hit's key, a miss)
  int64_t warpRows = 0;
  std::string kernelMLIR; // the gpu.module in the NVVM/LLVM dialects
  std::string llvmIR;     // when KernelCompileOptions::emitLLVMIR
  std::string ptx;
  std::string cubin;      // empty when not assembled
  std::optional<PtxasReport> ptxas;
  /// sm90a-wgmma: the TMA descriptors the runtime builds, in parameter
  /// order after the sm80 family's parameters.
  struct TensorMapParam {
    std::string name, tensor;
    int64_t boxCols = 0, boxRows = 0;
  };
  std::vector<TensorMapParam> tensorMaps;
  /// The grid's policy and block rows (#attn.launch's grid).
  ::attn::runtime::GridSpec grid;

  /// The launch manifest (docs/kernel-abi.md).
  std::string manifestJSON() const;
};

/// Compiles the single attn.attention in `module` (which is modified).
/// Diagnostics go to the context's handler; errors carry a summary.
llvm::Expected<CompiledKernel>
compileAttentionKernel(ModuleOp module, const KernelCompileOptions &options);

/// Writes manifest.json, kernel.ptx and (when assembled) kernel.cubin.
llvm::Error writeKernelDirectory(const CompiledKernel &kernel,
                                 llvm::StringRef dir);

/// Writes a kernel directory: `dir`/kernel.ptx, kernel.cubin (when not
/// empty) and manifest.json, creating `dir`.
llvm::Error writeKernelFiles(llvm::StringRef dir, llvm::StringRef ptx,
                             llvm::StringRef cubin, llvm::StringRef manifest);

/// Runs ptxas on `ptx` for `chip`; returns the cubin and fills `report`.
llvm::Expected<std::string> assemblePTX(llvm::StringRef ptxas,
                                        llvm::StringRef ptx,
                                        llvm::StringRef chip,
                                        PtxasReport &report);

/// The tuning database a compile reads: `option` ("none" = no lookup),
/// else $ATTN_TUNING_DB; "" = none. The passes read no environment.
std::string resolveTuningDatabasePath(llvm::StringRef option);
/// The GPU to look up in it: `option`, else $ATTN_TUNING_GPU; "" = any.
std::string resolveTuningGpu(llvm::StringRef option);

/// The ptxas to use ("" when none is found).
std::string findPtxas(llvm::StringRef requested);

/// The gpu.binary of the module's @attn_kernels, serialised as `format`
/// ("isa" = PTX, "llvm" = bitcode).
llvm::Expected<std::string> serializeKernelModule(ModuleOp module,
                                                  llvm::StringRef format);

} // namespace mlir::attn

#endif // ATTN_COMPILER_KERNELCOMPILER_H
