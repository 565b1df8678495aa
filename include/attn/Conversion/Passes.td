//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

// The options that choose a kernel: attn-select-kernel-config's, and
// convert-attn-to-gpu's for ops that arrive without a #attn.kernel_config.
defvar KernelSelectionOptions = [
  Option<"chip", "chip", "std::string", "\"sm_90a\"",
         "Target chip (sm_80 or newer)">,
  Option<"blockM", "block-m", "int64_t", "0",
         "Query rows per thread block (16 per warp); 0 = heuristic">,
  Option<"blockN", "block-n", "int64_t", "0",
         "Key/value rows per pipeline stage; 0 = heuristic">,
  Option<"warpRows", "warp-rows", "int64_t", "0",
         "Query rows per warp: 16 or 32; 0 = heuristic">,
  Option<"stages", "stages", "int64_t", "2",
         "Depth of the K/V shared-memory ring (>= 2)">,
  Option<"family", "family", "std::string", "\"auto\"",
         "Kernel family: auto (the default: sm90a on chip sm_90a where the "
         "spec allows, else sm80, the reason in the kernel_config), sm80 "
         "(mma.sync/cp.async) or sm90a (wgmma/TMA, warp-specialised)">,
  Option<"sm90Schedule", "sm90-schedule", "std::string", "\"\"",
         "sm90a-wgmma consumer schedule: pingpong, overlap (intra-"
         "warpgroup only) or serial, optionally +persistent; for the "
         "backward dkdv kernel dq-pipelined, dq-first or dk-first (head-split "
         "above head dim 128); empty = "
         "the family's choice (a tuned entry's, else the heuristic's)">,
  Option<"deterministic", "deterministic", "bool", "false",
         "attn.attention_grad: bit-reproducible dQ, slower: sm80-mma "
         "computes it in a separate kernel, sm90a-wgmma adds it in "
         "key-block order (a semaphore per query block)">,
  Option<"exp2Emulated", "exp2-emulated", "int64_t", "-1",
         "sm90a forward: of every 8 columns of 8 keys, how many take their "
         "exp2 on the FMA pipe (0 to 8); -1 = the family's choice">,
  Option<"wideProducer", "wide-producer", "bool", "false",
         "sm90a forward: the persistent grid's 40/232 setmaxnreg split on "
         "the plain grid too (an experiment)">,
  Option<"sectionMb", "section-mb", "int64_t", "-1",
         "sm90a causal backward: MiB of Q and dO per section of the "
         "longest-first walk (deterministic: shortest first; 0 = "
         "head-major); -1 = the family's choice">,
];

def AttnSelectKernelConfig
    : Pass<"attn-select-kernel-config", "::mlir::ModuleOp"> {
  let summary = "Choose the GPU kernel of every attention";
  let description = [{
    Annotates every `attn.attention` and `attn.attention_grad` with a
    `#attn.kernel_config` (attribute `attn.kernel_config`): the kernel
    family, tile, ring depth and schedule `convert-attn-to-gpu` will
    generate, and why. Options given win (source `option`); otherwise the
    tuning database (`tuning-db`, docs/tuning.md), then the family's
    heuristic. This is the only pass that reads a tuning database; it reads
    no environment variables (the tools and the C API resolve
    `$ATTN_TUNING_DB` / `$ATTN_TUNING_GPU` into the options).
  }];
  let options = KernelSelectionOptions # [
    Option<"tuningDb", "tuning-db", "std::string", "\"\"",
           "Tuning database to look each shape up in before the heuristic "
           "(docs/tuning.md); empty or 'none' = no lookup. Not read when "
           "block-m/block-n/warp-rows/stages are given">,
    Option<"tuningGpu", "tuning-gpu", "std::string", "\"\"",
           "GPU name to look up (e.g. 'NVIDIA H200'); empty = any GPU "
           "tuned for the chip">,
  ];
}

def ConvertAttnToGPU : Pass<"convert-attn-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Schedule a tensor-core FlashAttention kernel per attention op";
  let description = [{
    For every `attn.attention` (and `attn.attention_grad`), writes the
    kernel(s) of its `#attn.kernel_config` into the `gpu.module
    @attn_kernels` of the enclosing module and records them on the op as
    `attn.kernel` (a symbol reference) and `attn.launch` (an `#attn.launch`:
    threads, dynamic shared memory, the `#attn.grid` policy, tensor maps). A kernel is a *schedule* in the
    mid-level kernel IR: `attn_gpu` ops (mbarrier waits and arrivals, TMA
    loads, named barriers, warpgroup MMAs, the fence and the wait that
    threads the accumulators, exp2/log2) with upstream scf/arith/LLVM/NVVM
    ops (cp.async, ldmatrix, mma.sync, shuffles, setmaxnreg), in issue order;
    `convert-attn-gpu-to-nvvm` lowers it (docs/pipeline.md). The sm80-mma
    forward kernel is the FlashAttention-2 algorithm of attn-tile /
    attn-fuse-online-softmax mapped onto one thread block per (query block,
    batch × query head); the sm90a-wgmma one is warp-specialised (a TMA
    producer warpgroup, two wgmma consumer warpgroups in ping-pong):

      * the Q tile is brought into shared memory once; K and V tiles stream
        through a `stages`-deep shared-memory ring filled with `cp.async`
        (16-byte, zero-filled past the sequence end) so the next tile loads
        while the current one is used;
      * each warp owns 16 or 32 query rows (one or two m16 tiles; with
        two, every K/V fragment feeds two MMAs); S = Q·Kᵀ and O += P·V run on
        `mma.sync.m16n8k16` (f16/bf16 in, f32 accumulate), with fragments
        read by `ldmatrix` from XOR-swizzled tiles (no bank conflicts);
      * the online softmax stays in registers: row max and sum across the
        four threads of a row by warp shuffles, exp2 with scale·log2(e)
        folded into one multiply, P reused from the S accumulators as the A
        operand of P·V;
      * causal blocks above the diagonal are skipped by the loop bounds and
        only diagonal / tail blocks pay for masking;
      * the epilogue normalises once, stages O through shared memory and
        writes it with 16-byte coalesced stores, and writes LSE.

    Sequence lengths, head counts and strides are kernel arguments (see
    docs/kernel-abi.md); head dims, element type, mask, scale and the tile
    configuration specialise the kernel.

    The kernel of each op is the one its `attn.kernel_config` attribute
    (`attn-select-kernel-config`) names; an op without one gets the
    heuristic's under this pass's options.
  }];
  // Ops without a #attn.kernel_config get the heuristic's kernel (no
  // tuning database) under these options.
  let options = KernelSelectionOptions;
  let dependentDialects = ["::mlir::attn_gpu::AttnGPUDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def LowerAttnGPUTiles : Pass<"lower-attn-gpu-tiles"> {
  let summary = "Lower attn_gpu's tiles: fragments to registers, rings to pointers";
  let description = [{
    Replaces every `!attn_gpu.frag` by its registers (f32, or i32 packed
    pairs, as its layout says) and every `!attn_gpu.ring` by its base
    pointer, and every op on them by one pattern
    (populateAttnGPUTileLoweringPatterns) onto the instruction-level
    attn_gpu ops and arith/LLVM/NVVM ops: `warpgroup_mma` becomes
    `wgmma_ss` or `wgmma_rs`, `mask_scores` the compares and selects of
    each register, `online_softmax` the row max over the quad's shuffles,
    the exp2s and the row sums, `scale_rows` and `to_operand` their
    multiplies and packs, `ring_tile` and `ring_descriptor` the stage's
    address and its wgmma descriptor; the wgmma fence and wait thread the
    registers. scf.for/if/while/yield that carry fragments carry their
    registers (fragments are not function or branch arguments: the
    schedules keep them in structured control flow). Nothing is
    reordered.

    Runs on anything; `attn-compile-kernels` runs it before
    `convert-attn-gpu-to-nvvm`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def ConvertAttnGPUToNVVM : Pass<"convert-attn-gpu-to-nvvm"> {
  let summary = "Lower attn's mid-level kernel IR (attn_gpu) to NVVM";
  let description = [{
    Rewrites every `attn_gpu` op by one pattern (populateAttnGPUToNVVMPatterns)
    onto NVVM ops: mbarrier init/arrive/expect-tx/try-wait-parity, TMA
    tensor loads, named barriers, the wgmma fence/commit/wait and the
    shared-memory wgmma;
    ex2/lg2/tanh become intrinsic calls. What neither NVVM nor LLVM's NVPTX
    intrinsics express becomes inline PTX, behind one helper: the wgmma
    with A in registers, the non-tensor bulk reduction
    (cp.reduce.async.bulk), the global f32 reductions (red.global.add) and
    the opaque register moves. Nothing is
    reordered: each op's replacement takes its place, so the schedule's
    program order is kept.

    Runs on anything (the kernels' `llvm.func`s inside `gpu.module
    @attn_kernels`) once `lower-attn-gpu-tiles` has run; an op left
    with fragments is an error. `attn-compile-kernels` runs both.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // ATTN_CONVERSION_PASSES_TD
