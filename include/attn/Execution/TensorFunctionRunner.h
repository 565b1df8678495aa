//===- TensorFunctionRunner.h - run a tensor function on the host -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Runs a function written on tensors (a front end's linalg, say) on host
// buffers: wraps it in a destination-passing function on memrefs, inlines
// it, lowers the module with buildHostLoweringPipeline and JIT-compiles it.
// attn-raise-check uses it to compare a module before and after
// attn-raise-attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_TENSORFUNCTIONRUNNER_H
#define ATTN_EXECUTION_TENSORFUNCTIONRUNNER_H

#include "attn/Support/AttentionProblem.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::attn {

/// A dense row-major host tensor in f16, bf16 (raw bits) or f32.
struct HostTensor {
  std::vector<int64_t> shape;
  ::attn::DType dtype = ::attn::DType::f32;
  std::vector<uint8_t> bytes;

  int64_t numElements() const;
  /// The values as doubles.
  std::vector<double> toDoubles() const;
};

/// The shapes and element types of `entry`'s arguments and single result,
/// which must be statically shaped tensors of f16, bf16 or f32.
llvm::Error getTensorFunctionSignature(ModuleOp module, StringRef entry,
                                       std::vector<HostTensor> &args,
                                       HostTensor &result);

/// Replaces `entry` by a function `<entry>_host` on memrefs (arguments, then
/// the result buffer) with the body of `entry` inlined, decomposes
/// aggregate ops (linalg.softmax) and lowers the module to the LLVM dialect
/// for the host. Run the attn pipelines before, if any.
llvm::Error lowerTensorFunctionForHost(ModuleOp module, StringRef entry);

/// JIT-compiles `module` (lowered by lowerTensorFunctionForHost) and calls
/// `<entry>_host` on `args`, writing `result`.
llvm::Error runTensorFunction(ModuleOp module, StringRef entry,
                              std::vector<HostTensor> &args,
                              HostTensor &result);

} // namespace mlir::attn

#endif // ATTN_EXECUTION_TENSORFUNCTIONRUNNER_H
