//===- AttnGPUToNVVM.h - attn_gpu to NVVM patterns --------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNGPUTONVVM_ATTNGPUTONVVM_H
#define ATTN_CONVERSION_ATTNGPUTONVVM_ATTNGPUTONVVM_H

namespace mlir {
class RewritePatternSet;
class TypeConverter;

namespace attn {
/// One pattern per attn_gpu op, onto NVVM ops (and LLVM intrinsics where
/// MLIR has no NVVM op); inline PTX only for what neither expresses: the
/// register-A wgmma, the bulk and the global f32 reductions and the opaque
/// moves. The attn_gpu ops carry LLVM types already, so no type conversion
/// is involved.
void populateAttnGPUToNVVMPatterns(RewritePatternSet &patterns);

/// One pattern per op on `!attn_gpu.frag` values, onto the instruction-level
/// attn_gpu ops and arith/LLVM/NVVM ops on the fragments' registers;
/// `converter` turns each fragment into its registers (1:N).
void populateAttnGPUTileLoweringPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns);
} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNGPUTONVVM_ATTNGPUTONVVM_H
