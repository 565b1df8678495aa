//===- ProblemFlags.h - shape flags shared by the tools ---------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_PROBLEMFLAGS_H
#define ATTN_EXECUTION_PROBLEMFLAGS_H

#include "attn/Support/AttentionProblem.h"

#include "llvm/Support/CommandLine.h"

namespace mlir::attn {

/// The command-line flags that describe one attention problem
/// (--batch --heads-q --heads-kv --seq-q --seq-kv --head-dim
/// --value-head-dim --dtype --causal --scale --no-lse, the variants'
/// --top-left --window-* --softcap --alibi --seq-lens-q/kv --bias),
/// registered in the
/// tool's option category. Construct one as a static object.
class ProblemFlags {
public:
  /// `defaultDType` is --dtype's default: f32 for the CPU tools, bf16 for
  /// those that only make GPU kernels (no GPU kernel takes f32).
  explicit ProblemFlags(llvm::cl::OptionCategory &category,
                        ::attn::DType defaultDType = ::attn::DType::f32);

  /// The problem the flags describe, or a message naming the flag at fault.
  llvm::Expected<::attn::AttentionProblem> get() const;

private:
  llvm::cl::opt<int64_t> batch, headsQ, headsKv, seqQ, seqKv, headDim,
      valueHeadDim;
  llvm::cl::opt<std::string> dtype;
  llvm::cl::opt<bool> causal, topLeft;
  llvm::cl::opt<int64_t> windowLeft, windowRight;
  llvm::cl::opt<double> softcap;
  llvm::cl::opt<bool> alibi;
  llvm::cl::opt<double> scale;
  llvm::cl::opt<bool> noLse;
  llvm::cl::list<int64_t> seqLensQ, seqLensKv;
  llvm::cl::opt<std::string> bias;
  llvm::cl::list<int64_t> keyStarts, keyEnds;
};

} // namespace mlir::attn

#endif // ATTN_EXECUTION_PROBLEMFLAGS_H
