//===- AttnGPU.h - attn's mid-level kernel IR -------------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The attn_gpu dialect: the ops the attention kernels are scheduled in
// between attn.attention and NVVM (see AttnGPUOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNGPU_IR_ATTNGPU_H
#define ATTN_DIALECT_ATTNGPU_IR_ATTNGPU_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/Dialect/AttnGPU/IR/AttnGPUOpsDialect.h.inc"

namespace mlir::attn_gpu {
/// How a fragment's elements sit in its warp's registers
/// (AttnGPUTypes.td): the mma/wgmma accumulator layout, the packed
/// A-operand layout, or one value per row.
enum class FragmentLayout { Accumulator, OperandA, Rows };
} // namespace mlir::attn_gpu

#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/AttnGPU/IR/AttnGPUOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.h.inc"

#endif // ATTN_DIALECT_ATTNGPU_IR_ATTNGPU_H
