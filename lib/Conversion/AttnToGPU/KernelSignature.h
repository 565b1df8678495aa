//===- KernelSignature.h - kernel parameters from the ABI ------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// A generated kernel's parameters as attn::runtime::KernelAbi defines them
// (the one definition of the ABI, docs/kernel-abi.md): the function's types,
// and each argument by name, so that no emitter restates positions.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELSIGNATURE_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELSIGNATURE_H

#include "attn/Runtime/KernelAbi.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <vector>

namespace mlir::attn::nvvm {

class KernelSignature {
public:
  explicit KernelSignature(const ::attn::runtime::KernelAbi &abi);

  /// ptr: !llvm.ptr<1>; i32, i64, f32; tensormap: !llvm.ptr (a 128-byte
  /// __grid_constant__ byval parameter whose generic address TMA takes).
  SmallVector<Type> types(MLIRContext *ctx) const;
  /// Positions of the tensormap parameters.
  SmallVector<unsigned> tensorMapPositions() const;

  /// Reads the arguments from `entry`, the kernel's entry block.
  void bind(Block &entry) { this->entry = &entry; }
  /// Argument `name` of the bound kernel; a name the ABI lacks is a bug in
  /// the emitter (reported as a fatal error naming it).
  Value operator[](StringRef name) const;
  /// Stride `dim` (0 = b, 1 = h, 2 = n) of `tensor`: "q_stride_b", ...
  Value stride(StringRef tensor, int dim) const;

private:
  std::vector<::attn::runtime::AbiParam> params;
  Block *entry = nullptr;
};

} // namespace mlir::attn::nvvm

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELSIGNATURE_H
