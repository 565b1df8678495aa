//===- AttentionModule.h - build IR for one attention problem ---*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_ATTENTIONMODULE_H
#define ATTN_EXECUTION_ATTENTIONMODULE_H

#include "attn/Support/AttentionProblem.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::attn {

/// Name of the entry function of modules built by buildAttentionModule.
inline constexpr const char *kAttentionEntry = "attention";

/// The sequence lengths a variable-length attn.attention was built for
/// (DenseI64ArrayAttr): the kernel manifest's problem records them, so that
/// attn-launch --check runs that batch.
inline constexpr const char *kSeqLensQAttr = "attn.seq_lens_q";
inline constexpr const char *kSeqLensKvAttr = "attn.seq_lens_kv";
/// The key ranges an attn.attention with key_range was built for, likewise.
inline constexpr const char *kKeyStartsAttr = "attn.key_starts";
inline constexpr const char *kKeyEndsAttr = "attn.key_ends";

/// Where the softmax scale of a module built here comes from.
enum class ScaleSource {
  /// The problem's scale (1/sqrt(D) when unset), the op's attribute: the
  /// module serves that scale only.
  Attribute,
  /// A `memref<f32>` argument of the entry function, read at every call
  /// and given to the op as its run-time scale operand: one module serves
  /// every scale (the problem's scale is not used).
  Argument,
};

/// Builds `func.func @attention(%q, %k, %v, [%bias], [%cu_q, %cu_kv],
/// [%key_start, %key_end], [%alibi_slopes], [%scale], %o, [%lse])` on
/// memrefs (destination-passing style, `llvm.emit_c_interface`) holding one
/// attn.attention for `problem` (key_range: i32 [B] each, with
/// problem.keyStarts; alibi_slopes: f32 [B, Hq] with problem.alibi).
/// `%lse` is present when problem.withLse, `%bias` with problem.bias, the
/// i32 cu_seqlens (and the packed layouts of attn.attention) for a
/// variable-length problem, `%scale` (memref<f32>) with
/// ScaleSource::Argument.
OwningOpRef<ModuleOp>
buildAttentionModule(MLIRContext &ctx, const ::attn::AttentionProblem &p,
                     ScaleSource scale = ScaleSource::Attribute);

/// Name of the entry function of modules built by
/// buildAttentionBackwardModule.
inline constexpr const char *kAttentionBackwardEntry = "attention_backward";

/// Builds `func.func @attention_backward(%q, %k, %v, %do, %o, %lse,
/// [%key_start, %key_end], [%alibi_slopes], %dq, %dk, %dv)` on memrefs, in the order of
/// buildHostAttentionGradModule's arguments (q, k, v, do and the key ranges
/// read, the rest written; the key ranges with problem.keyStarts):
/// the forward attn.attention gives O and LSE, and attn.attention_grad the
/// gradients for the output gradient %do.
OwningOpRef<ModuleOp>
buildAttentionBackwardModule(MLIRContext &ctx,
                             const ::attn::AttentionProblem &p);

/// Name of the entry function of modules built by
/// buildHostAttentionGradModule.
inline constexpr const char *kHostAttentionGradEntry = "attention_grad";

/// Builds `func.func @attention_grad(%q, %k, %v, %o, %do, %lse,
/// [%key_start, %key_end], [%alibi_slopes], [%scale], %dq, %dk, %dv)` on
/// memrefs (all but the last three read; the key ranges with
/// problem.keyStarts, the slopes f32 [B, Hq] with problem.alibi): one
/// attn.attention_grad of the dense problem `p` (its mask, window, softcap
/// and ALiBi; no other score modification) from the given O and LSE, which need not be
/// this block's own (context parallelism passes the final ones).
/// `%scale` (memref<f32>) is there with ScaleSource::Argument.
OwningOpRef<ModuleOp>
buildHostAttentionGradModule(MLIRContext &ctx,
                             const ::attn::AttentionProblem &p,
                             ScaleSource scale = ScaleSource::Attribute);

} // namespace mlir::attn

#endif // ATTN_EXECUTION_ATTENTIONMODULE_H
