//===- Pipelines.h - named attn pass pipelines ------------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Pipelines/Passes.h.inc"

/// The gpu.module (and, once serialised, gpu.binary) that convert-attn-to-gpu
/// puts every kernel into.
inline constexpr const char *kAttnKernelModule = "attn_kernels";

/// Options of `attn-to-cpu`: which algorithm to run on the host.
struct AttnToCPUOptions : public PassPipelineOptions<AttnToCPUOptions> {
  PassOptions::Option<bool> tiled{
      *this, "tiled",
      llvm::cl::desc("Run the tiled, fused FlashAttention algorithm (default) "
                     "instead of the reference lowering"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> blockM{
      *this, "block-m", llvm::cl::desc("Query rows per block; 0 = heuristic"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockN{
      *this, "block-n",
      llvm::cl::desc("Key/value rows per block; 0 = heuristic"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> deterministic{
      *this, "deterministic",
      llvm::cl::desc("Tiled attn.attention_grad: compute dQ in its own pass "
                     "over query blocks instead of accumulating it in place"),
      llvm::cl::init(false)};
};

/// Options of `attn-to-ptx`.
struct AttnToPTXOptions : public PassPipelineOptions<AttnToPTXOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target chip, e.g. sm_80, sm_90a"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features, e.g. +ptx80 (default: the back end's)"),
      llvm::cl::init("")};
  PassOptions::Option<unsigned> optLevel{
      *this, "O", llvm::cl::desc("LLVM optimisation level for the kernels"),
      llvm::cl::init(3)};
  PassOptions::Option<int64_t> blockM{
      *this, "block-m",
      llvm::cl::desc("Query rows per thread block; 0 = heuristic"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockN{
      *this, "block-n", llvm::cl::desc("Keys per K/V tile; 0 = heuristic"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> warpRows{
      *this, "warp-rows",
      llvm::cl::desc("Query rows per warp (16 or 32); 0 = heuristic"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> stages{
      *this, "stages", llvm::cl::desc("Depth of the K/V shared-memory ring"),
      llvm::cl::init(2)};
  PassOptions::Option<std::string> family{
      *this, "family",
      llvm::cl::desc("Kernel family: auto (sm90a on sm_90a where the spec "
                     "allows, else sm80), sm80 or sm90a"),
      llvm::cl::init("auto")};
  PassOptions::Option<std::string> sm90Schedule{
      *this, "sm90-schedule",
      llvm::cl::desc("sm90a-wgmma consumer schedule: pingpong, overlap or "
                     "serial (backward: dq-pipelined, dq-first or dk-first; "
                     "head-split above head dim 128); "
                     "empty = the family's choice"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> tuningDb{
      *this, "tuning-db",
      llvm::cl::desc("Tuning database to look shapes up in first "
                     "(docs/tuning.md); empty or 'none' = no lookup"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> tuningGpu{
      *this, "tuning-gpu",
      llvm::cl::desc("GPU name to look up; empty = any GPU tuned for the "
                     "chip"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> exp2Emulated{
      *this, "exp2-emulated",
      llvm::cl::desc("sm90a forward: exp2 of this many of every 8 columns of "
                     "8 keys on the FMA pipe (0 to 8); -1 = the family's"),
      llvm::cl::init(-1)};
  PassOptions::Option<bool> wideProducer{
      *this, "wide-producer",
      llvm::cl::desc("sm90a forward: the 40/232 setmaxnreg split on the "
                     "plain grid too (an experiment)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> sectionMb{
      *this, "section-mb",
      llvm::cl::desc("sm90a causal backward: MiB of Q and dO per section of "
                     "the longest-first walk (deterministic: shortest "
                     "first; 0 = head-major); -1 = the family's"),
      llvm::cl::init(-1)};
  PassOptions::Option<bool> deterministicGrad{
      *this, "deterministic",
      llvm::cl::desc("Backward kernels: dQ without atomics "
                     "(bit-reproducible)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What gpu-module-to-binary produces: isa (PTX, "
                     "default), llvm (bitcode), bin (cubin through ptxas), "
                     "fatbin"),
      llvm::cl::init("isa")};
};

/// attn.attention -> annotated ops plus gpu.module @attn_kernels in the LLVM
/// and NVVM dialects with an NVVM target attached (everything before
/// serialisation).
void buildAttnToGPUKernelsPipeline(OpPassManager &pm,
                                   const AttnToPTXOptions &options);

/// The whole GPU path: attn-select-kernel-config, convert-attn-to-gpu, then
/// attn-compile-kernels, which serialises @attn_kernels into gpu.binary
/// @attn_kernels (PTX for format=isa). For a pass manager on builtin.module. Only attention ops and
/// @attn_kernels are touched: a caller can run it on a module that holds its
/// own functions and gpu.modules too. Every dialect and interface the
/// pipeline needs is loaded by its passes; the caller's registry needs only
/// the attn dialect (registerAttnDialect) and its own.
void buildAttnToPTXPipeline(OpPassManager &pm, const AttnToPTXOptions &options);

/// Serialises every gpu.module with a target attached into a gpu.binary of
/// `format` (isa, llvm, bin or fatbin): first upstream's convert-nvvm-to-llvm
/// expands the NVVM ops that MLIR implements as inline PTX rather than as
/// LLVM intrinsics (wgmma.mma_async, ...), then gpu-module-to-binary.
void buildKernelSerialisationPipeline(OpPassManager &pm, StringRef format);

/// The serialised kernels of `module` after attn-to-ptx: the first object of
/// gpu.binary @attn_kernels (PTX text for format=isa). Fails when there is
/// no such binary (no attention, or the pipeline did not run).
FailureOr<StringRef> getAttnKernelsObject(ModuleOp module);

/// attn.attention on tensors -> the algorithm (tiled or reference) on tensors.
void buildAttnAlgorithmPipeline(OpPassManager &pm,
                                const AttnToCPUOptions &options);

/// The whole CPU path: the algorithm, bufferization, loops, LLVM dialect.
/// Functions must take memrefs (destination-passing style).
void buildAttnToCPUPipeline(OpPassManager &pm, const AttnToCPUOptions &options);

/// Tensors -> buffers -> loops -> LLVM dialect, for the host. Used after the
/// algorithm pipeline by buildAttnToCPUPipeline.
void buildHostLoweringPipeline(OpPassManager &pm);

/// Registers the named pipelines `attn-to-cpu` and `attn-to-ptx`, and the
/// passes they are built of that live here (attn-compile-kernels).
void registerAttnPipelines();

#define GEN_PASS_REGISTRATION
#include "attn/Pipelines/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
