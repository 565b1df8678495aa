//===- WgmmaHelpers.h - Hopper (sm_90a) building blocks ---------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Emitters for the sm_90a instructions the Hopper kernel family is made of:
// mbarriers, TMA tensor loads (cp.async.bulk.tensor), warpgroup MMAs
// (wgmma.mma_async with A from shared memory or from registers), their
// fences, and setmaxnreg. Each builds one op of the mid-level kernel IR
// (attn_gpu, lowered by convert-attn-gpu-to-nvvm) or an NVVM op: the
// schedules in Hopper*Kernel.cpp are written in these calls.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_WGMMAHELPERS_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_WGMMAHELPERS_H

#include "KernelSignature.h"
#include "attn/Dialect/AttnGPU/Utils/KernelBuilder.h"

#include <optional>

namespace mlir::attn::nvvm {

/// An sm_90a kernel function with its entry block, for `threads` threads
/// and one block per SM (setmaxnreg redistributes that block's registers).
/// An llvm.func rather than a gpu.func: the NVVM verifier accepts
/// nvvm.grid_constant only on functions marked nvvm.kernel, which a
/// gpu.func cannot carry. The signature's tensor maps are 128-byte,
/// 64-aligned __grid_constant__ byval parameters whose (generic) address
/// TMA takes.
LLVM::LLVMFuncOp createHopperKernelFunc(OpBuilder &builder, Location loc,
                                        StringRef name,
                                        const KernelSignature &params,
                                        int64_t threads);

/// The 32-bit shared-memory address of a shared (addrspace 3) pointer.
Value sharedAddress(KernelBuilder &kb, Value sharedPtr);

/// mbarrier.init with `count` expected arrivals.
void mbarrierInit(KernelBuilder &kb, Value barrier, int64_t count);
/// fence.mbarrier_init + fence.proxy.async: initialised barriers become
/// visible to the TMA unit (followed by a CTA barrier by the caller).
void mbarrierInitFence(KernelBuilder &kb);
/// fence.proxy.async.shared::cta: generic-proxy writes to shared memory
/// become visible to the async proxy (TMA, wgmma) before what follows.
void fenceProxyAsyncShared(KernelBuilder &kb);
/// One arrival that also expects `bytes` of transactions (TMA completions).
void mbarrierArriveExpectTx(KernelBuilder &kb, Value barrier, int64_t bytes);
/// One plain arrival.
void mbarrierArrive(KernelBuilder &kb, Value barrier);
/// Spins until the phase of parity `parity` (i32 0/1) has completed.
void mbarrierWait(KernelBuilder &kb, Value barrier, Value parity);

/// TMA load of one box of a 4-D tensor map (coordinates innermost first)
/// into shared memory, completing `bytes` on `barrier`.
void tmaLoad4d(KernelBuilder &kb, Value sharedDst, Value tensorMap,
               ArrayRef<Value> coords, Value barrier);

/// setmaxnreg.{inc,dec}.sync.aligned.u32 for the whole warpgroup.
void setMaxRegisters(KernelBuilder &kb, int64_t count, bool increase);

/// bar.sync / bar.arrive on named barrier `id` (i32) for `threads` threads.
void namedBarrierSync(KernelBuilder &kb, Value id, int64_t threads);
void namedBarrierArrive(KernelBuilder &kb, Value id, int64_t threads);

/// A wgmma shared-memory matrix descriptor for a tile in the 128-byte
/// swizzled layout TMA writes (1024-byte aligned, rows of 128 bytes):
/// `leadingBytes` / `strideBytes` as in the PTX ISA's descriptor format.
Value wgmmaDescriptor(KernelBuilder &kb, Value sharedTile, int64_t leadingBytes,
                      int64_t strideBytes);
/// `desc` advanced by `bytes` (a multiple of 16) of its start address.
Value wgmmaDescriptorAdvance(KernelBuilder &kb, Value desc, int64_t bytes);

/// wgmma.fence with `values` (accumulators and register operands about to
/// feed a wgmma) threaded through it; returns them.
SmallVector<Value> wgmmaFence(KernelBuilder &kb, ValueRange values);
void wgmmaCommitGroup(KernelBuilder &kb);
/// wgmma.wait_group `pending`, after which `values` (the accumulators) are
/// read; returns them.
SmallVector<Value> wgmmaWaitGroup(KernelBuilder &kb, int64_t pending,
                                  ValueRange values);

/// `base` as a ring of `stages` tiles of rows x cols `elementType`
/// (attn_gpu.ring_view: the 128-byte-swizzled panels TMA writes).
Value ringView(KernelBuilder &kb, Value base, int64_t stages, int64_t rows,
               int64_t cols, Type elementType);
/// Stage `stage`'s tile of `ring`, or its 64-column panel `panel`.
Value ringTile(KernelBuilder &kb, Value ring, Value stage,
               std::optional<int64_t> panel = std::nullopt);
/// The wgmma descriptor of stage `stage`'s tile, K-major or MN-major.
Value ringDescriptor(KernelBuilder &kb, Value ring, Value stage, bool mnMajor);

/// One wgmma.mma_async.m64nNk16 k-step on fragments
/// (attn_gpu.warpgroup_mma): acc = A·B + (accumulate ? acc : 0), N the
/// accumulator fragment's columns. A is a shared-memory descriptor (i64;
/// `elementType` f16 or bf16; K-major unless `transposeA`) or an A-operand
/// fragment, whose columns 16·aKStep.. this k-step takes. B is a
/// shared-memory descriptor, K-major unless `transposeB`.
Value warpgroupMma(KernelBuilder &kb, Value a, Value descB, Value acc,
                   bool accumulate, bool transposeB, Type elementType = {},
                   int64_t aKStep = 0, bool transposeA = false);

} // namespace mlir::attn::nvvm

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_WGMMAHELPERS_H
