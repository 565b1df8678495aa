//===- Backward.h - launching the backward kernels --------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// A backward kernel directory (attn-compile --backward) holds three kernels
// in one module; its manifest lists them under "launches". BackwardKernel
// loads them and launches them in order on one stream
// (docs/kernel-abi.md, "Backward").
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_BACKWARD_H
#define ATTN_RUNTIME_BACKWARD_H

#include "attn/Runtime/Runtime.h"

namespace attn::runtime {

struct BackwardArgs {
  cu::DevicePtr q = 0, k = 0, v = 0, o = 0, dO = 0, lse = 0;
  cu::DevicePtr dq = 0, dk = 0, dv = 0;
  cu::DevicePtr workspace = 0; // workspaceBytes(), 16-byte aligned
  /// key_range kernels: i32 [batch] each (as LaunchArgs::keyStart/keyEnd).
  cu::DevicePtr keyStart = 0, keyEnd = 0;
  /// ALiBi kernels: as LaunchArgs::alibiSlopes / alibiSlopesStrideB.
  cu::DevicePtr alibiSlopes = 0;
  int64_t alibiSlopesStrideB = 0;
  int64_t batch = 0, headsQ = 0, headsKv = 0, seqQ = 0, seqKv = 0;
  std::array<int64_t, 3> qStride{}, kStride{}, vStride{}, oStride{},
      doStride{}, dqStride{}, dkStride{}, dvStride{};
  std::array<int64_t, 2> lseStride{};
  /// The forward's softmax scale (as LaunchArgs::softmaxScale).
  double softmaxScale = 0;

  /// Arguments for dense row-major tensors of `problem`'s shape (dO, dQ,
  /// dK, dV shaped as O, Q, K, V).
  static BackwardArgs dense(const AttentionProblem &problem);
};

class BackwardKernel {
public:
  /// Loads a backward kernel directory: an error when the manifest's
  /// direction is not "backward".
  static Expected<std::unique_ptr<BackwardKernel>>
  load(const std::string &dir, const LoadOptions &opts = {});
  /// The same, from the already loaded main kernel of such a directory.
  static Expected<std::unique_ptr<BackwardKernel>>
  adopt(std::unique_ptr<Kernel> main);

  const KernelManifest &manifest() const { return main->manifest(); }
  const Kernel &mainKernel() const { return *main; }

  /// Bytes of f32 scratch a launch with `args` needs: per (batch, query
  /// head) Δ [seq_q rounded up to 4] and the dQ accumulator [seq_q,
  /// head_dim].
  uint64_t workspaceBytes(const BackwardArgs &args) const;

  /// Launches the kernels in order on `stream`, asynchronously.
  Status launch(const BackwardArgs &args, cu::Stream stream) const;

private:
  BackwardKernel() = default;
  std::unique_ptr<Kernel> main;
  std::vector<cu::Function> functions; // one per manifest launch
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_BACKWARD_H
