//===- BackwardWorkspace.h - the backward kernels' workspace ----*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Addresses in the backward's workspace (docs/kernel-abi.md, "Backward";
// runtime::backwardWorkspaceSlotsPerRow defines its size), for both
// backward families' kernels: per (batch, query head) a region of Nq4 rows
// holding Δ [Nq4], the f32 dQ accumulator [Nq, D] and a semaphore per row.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_BACKWARDWORKSPACE_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_BACKWARDWORKSPACE_H

#include "attn/Dialect/AttnGPU/Utils/KernelBuilder.h"
#include "attn/Runtime/KernelAbi.h"

namespace mlir::attn::nvvm {

/// Nq rounded up to a multiple of 4 (Nq4): the workspace's Δ slots, so that
/// the dQ accumulator after them stays 16-byte aligned.
inline Value paddedSeqQ(KernelBuilder &kb, Value seqQ) {
  return kb.andi(kb.add(seqQ, kb.i32(3)), ~int64_t(3));
}

/// The region of (batch, query head) `bh` = b·Hq + h in `workspace`: Nq4
/// rows of runtime::backwardWorkspaceSlotsPerRow 4-byte slots; Δ first.
inline Value workspaceRegion(KernelBuilder &kb, Value workspace, Value bh,
                             Value seqQ, int64_t headDim) {
  Value floats = kb.mul(
      kb.zext64(bh),
      kb.mul(kb.zext64(paddedSeqQ(kb, seqQ)),
             kb.i64(::attn::runtime::backwardWorkspaceSlotsPerRow(headDim))));
  return kb.gep(workspace, kb.builder().getF32Type(), floats);
}

/// The dQ accumulator [Nq, D] inside a workspace region.
inline Value dqAccumulator(KernelBuilder &kb, Value region, Value seqQ) {
  return kb.gep(region, kb.builder().getF32Type(),
                kb.zext64(paddedSeqQ(kb, seqQ)));
}

/// The semaphores [Nq4] inside a workspace region, after the accumulator.
inline Value dqSemaphores(KernelBuilder &kb, Value region, Value seqQ,
                          int64_t headDim) {
  return kb.gep(region, kb.builder().getF32Type(),
                kb.mul(kb.zext64(paddedSeqQ(kb, seqQ)),
                       kb.i64(::attn::runtime::backwardWorkspaceSemaphoresAt(
                           headDim))));
}

} // namespace mlir::attn::nvvm

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_BACKWARDWORKSPACE_H
