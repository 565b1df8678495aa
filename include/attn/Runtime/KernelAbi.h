//===- KernelAbi.h - the generated kernels' parameter lists -----*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The one definition of the parameters a generated kernel takes, in order
// (docs/kernel-abi.md). The compiler writes a manifest's "params" from it
// (lib/Compiler); the runtime refuses a manifest whose "params" differ
// (lib/Runtime/Manifest.cpp), since it fills the kernel's arguments in the
// manifest's order: a reordered or short list would launch the kernel with
// permuted arguments. MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_KERNELABI_H
#define ATTN_RUNTIME_KERNELABI_H

#include <string>
#include <vector>

namespace attn::runtime {

enum class ParamType { Ptr, I32, I64, F32, TensorMap };
/// "ptr", "i32", "i64", "f32" or "tensormap" (the manifest's spelling).
const char *paramTypeName(ParamType t);

struct AbiParam {
  std::string name;
  ParamType type;
  /// TensorMap only: the tensor the TMA descriptor describes.
  std::string tensor;
};

/// The family whose kernels take TMA descriptors (the manifest's "family").
inline constexpr const char *kTensorMapFamily = "sm90a-wgmma";

/// The backward's workspace (docs/kernel-abi.md, "Backward"): per (batch,
/// query head) a region of Nq4 = seq_q rounded up to 4 rows of this many
/// 4-byte slots each: Δ [Nq4], the f32 dQ accumulator [Nq4, head_dim],
/// then one i32 per row (the first ceil(seq_q / 16) order the
/// deterministic sm90a kernel's dQ additions per 16-row slice).
inline constexpr int64_t backwardWorkspaceSlotsPerRow(int64_t headDim) {
  return headDim + 2;
}
/// Where a region's semaphores start: this many slots per padded row in
/// (after Δ and the accumulator).
inline constexpr int64_t backwardWorkspaceSemaphoresAt(int64_t headDim) {
  return headDim + 1;
}

/// Which kernel: the manifest's direction, its problem's variants and
/// whether its family (sm90a-wgmma) takes TMA descriptors.
struct KernelAbi {
  bool backward = false;
  bool bias = false;       // forward: problem.bias
  bool varlen = false;     // forward: problem.seq_lens_q
  bool keyRange = false;   // problem.key_ranges (key padding)
  bool alibi = false;      // problem.alibi (the slopes at launch)
  bool tensorMaps = false; // family kTensorMapFamily

  /// Forward: q, k, v, o, lse; seq_q, seq_kv, heads_q, heads_kv;
  /// softmax_scale; the q/k/v/o strides and lse_stride_b/h (24), then bias
  /// and its 3 strides, then cu_seqlens_q/kv, then key_start/key_end (i32
  /// [B]), then alibi_slopes (f32) and alibi_slopes_stride_b (i64; the
  /// slope of (b, h) is alibi_slopes[b · stride_b + h]), then q_tmap,
  /// k_tmap, v_tmap.
  /// Backward: the 41 of docs/kernel-abi.md, then key_start/key_end, then
  /// alibi_slopes and its stride, then q_tmap, k_tmap, v_tmap, do_tmap.
  std::vector<AbiParam> params() const;
  /// "forward kernel with a bias", "backward sm90a-wgmma kernel", ...
  std::string describe() const;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_KERNELABI_H
