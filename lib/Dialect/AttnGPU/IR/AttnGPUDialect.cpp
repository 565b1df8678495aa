//===- AttnGPUDialect.cpp - attn_gpu dialect registration -----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::attn_gpu;

#include "attn/Dialect/AttnGPU/IR/AttnGPUOpsDialect.cpp.inc"

void AttnGPUDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.cpp.inc"
      >();
}
