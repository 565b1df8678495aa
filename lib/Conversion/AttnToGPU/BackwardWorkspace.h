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

/// Where element (row, col) of the dQ accumulator is, in floats from its
/// start. Row-major ([Nq, D]) unless `grouped`, the sm90a transposed-dkv
/// kernel's layout (HopperBackwardConfig::groupedDq): the rows of each whole
/// 16-row group (below Nq rounded down to 16) are stored column by column,
/// column d's 16 rows at group·16·D + 16·d, row 8a + 2t + e (a wgmma
/// accumulator's register order) at slot 4t + 2a + e. A thread's four rows
/// of a dQᵀ column then add as one red.global.add.v4.f32 and a warp's 8
/// columns × 4 threads as 512 contiguous bytes. The last, partial group
/// stays row-major, so the layout permutes the same Nq·D floats (the
/// preprocess kernel zeroes them row by row).
inline Value dqAccumulatorOffset(KernelBuilder &kb, Value row, Value col,
                                 Value seqQ, int64_t headDim, bool grouped) {
  Value rowMajor =
      kb.add(kb.mul(kb.sext64(row), kb.i64(headDim)), kb.sext64(col));
  if (!grouped)
    return rowMajor;
  Value r = kb.andi(row, 15);
  Value slot = kb.add(kb.shl(kb.andi(kb.lshr(r, 1), 3), 2),
                      kb.add(kb.shl(kb.lshr(r, 3), 1), kb.andi(r, 1)));
  Value inGroups = kb.add(
      kb.mul(kb.sext64(kb.andi(row, ~int64_t(15))), kb.i64(headDim)),
      kb.sext64(kb.add(kb.shl(col, 4), slot)));
  return kb.select(kb.slt(row, kb.andi(seqQ, ~int64_t(15))), inGroups,
                   rowMajor);
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
