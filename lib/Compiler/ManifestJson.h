//===- ManifestJson.h - pieces shared by the compilers' JSON files -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The forward and backward kernel manifests (docs/kernel-abi.md) and the
// tuning bundles (docs/tuning.md) describe the same problem and the same
// kernel files; these helpers write those parts once.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_COMPILER_MANIFESTJSON_H
#define ATTN_LIB_COMPILER_MANIFESTJSON_H

#include "attn/Compiler/KernelCompiler.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Runtime/KernelAbi.h"
#include "attn/Support/AttentionProblem.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/JSON.h"

namespace mlir::attn {

/// The problem's shape as attn.attention / attn.attention_grad give it:
/// batch, heads and sequence lengths from Q [B, Hq, Nq, D] and K
/// [B, Hkv, Nk, D] (0 where dynamic), the head dims and the element type.
::attn::AttentionProblem problemShapeOf(RankedTensorType q,
                                        RankedTensorType k, int64_t headDim,
                                        int64_t valueHeadDim);

/// The key ranges of `op` (an attn.attention or attn.attention_grad with
/// key_range) into `p`: run-time values, so the ones the tools built it for
/// (the kKeyStartsAttr/kKeyEndsAttr attributes), else every key, for
/// attn-launch --check.
void setKeyRangesOf(Operation *op, ::attn::AttentionProblem &p);

/// "batch" … "causal", then the mask's "mask_align" and "window_left"/
/// "window_right" and the "softcap" where it has them, of a JSON "problem"
/// object (the caller adds what its file needs after them).
void writeProblemShape(llvm::json::OStream &j,
                       const ::attn::AttentionProblem &problem);

/// A kernel manifest's first members: format, direction (backward only),
/// entry, family, chip and the kernel files.
void writeManifestHeader(llvm::json::OStream &j, llvm::StringRef direction,
                         llvm::StringRef entry, llvm::StringRef family,
                         llvm::StringRef chip, bool hasCubin);

/// A manifest's "grid": the policy's name and block rows
/// (attn/Runtime/LaunchGrid.h).
void writeManifestGrid(llvm::json::OStream &j,
                       const ::attn::runtime::GridSpec &grid);

/// The TMA descriptors of `launch`, for writeManifestParams.
std::vector<CompiledKernel::TensorMapParam> tensorMapParams(LaunchAttr launch);

/// A manifest's "params": the kernel ABI's (attn/Runtime/KernelAbi.h, which
/// the runtime checks them against) up to the TMA descriptors, then the
/// kernel's own descriptors `maps`, as convert-attn-to-gpu made them.
void writeManifestParams(llvm::json::OStream &j, ::attn::runtime::KernelAbi abi,
                         llvm::ArrayRef<CompiledKernel::TensorMapParam> maps);

} // namespace mlir::attn

#endif // ATTN_LIB_COMPILER_MANIFESTJSON_H
