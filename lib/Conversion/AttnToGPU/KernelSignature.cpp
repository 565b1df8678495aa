//===- KernelSignature.cpp - kernel parameters from the ABI ---------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "KernelSignature.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::attn::nvvm;
using ::attn::runtime::ParamType;

KernelSignature::KernelSignature(const ::attn::runtime::KernelAbi &abi)
    : params(abi.params()) {}

SmallVector<Type> KernelSignature::types(MLIRContext *ctx) const {
  SmallVector<Type> types;
  for (const ::attn::runtime::AbiParam &p : params) {
    switch (p.type) {
    case ParamType::Ptr:
      types.push_back(LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1));
      break;
    case ParamType::I32:
      types.push_back(IntegerType::get(ctx, 32));
      break;
    case ParamType::I64:
      types.push_back(IntegerType::get(ctx, 64));
      break;
    case ParamType::F32:
      types.push_back(Float32Type::get(ctx));
      break;
    case ParamType::TensorMap:
      types.push_back(LLVM::LLVMPointerType::get(ctx));
      break;
    }
  }
  return types;
}

SmallVector<unsigned> KernelSignature::tensorMapPositions() const {
  SmallVector<unsigned> positions;
  for (auto [i, p] : llvm::enumerate(params))
    if (p.type == ParamType::TensorMap)
      positions.push_back(i);
  return positions;
}

Value KernelSignature::operator[](StringRef name) const {
  for (auto [i, p] : llvm::enumerate(params))
    if (p.name == name)
      return entry->getArgument(i);
  llvm::report_fatal_error(llvm::Twine("attn kernel emitter: the kernel ABI "
                                       "has no parameter '") +
                           name + "'");
}

Value KernelSignature::stride(StringRef tensor, int dim) const {
  return (*this)[(tensor + "_stride_" + StringRef(&"bhn"[dim], 1)).str()];
}
