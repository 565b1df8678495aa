//===- HopperKernel.h - the sm_90a (wgmma/TMA) kernel family ----*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_HOPPERKERNEL_H
#define ATTN_CONVERSION_ATTNTOGPU_HOPPERKERNEL_H

#include "attn/Conversion/AttnToGPU/FlashKernel.h"

namespace mlir::attn {

/// The Hopper kernel family (manifest "family").
inline constexpr const char *kHopperKernelFamily = "sm90a-wgmma";

/// How the Hopper kernel computes: one producer warpgroup issuing TMA and
/// blockM / 64 consumer warpgroups, each owning 64 query rows.
struct HopperKernelConfig {
  int64_t blockM = 0; // query rows per thread block (64 per consumer)
  int64_t blockN = 0; // keys per K/V tile (the N of S = Q·Kᵀ)
  int64_t stages = 2; // depth of the K/V shared-memory ring
  int64_t producerRegisters = 24;  // setmaxnreg.dec of the producer
  int64_t consumerRegisters = 240; // setmaxnreg.inc of the consumers
  /// Intra-warpgroup overlap: S(j+1) = Q·K(j+1)ᵀ and O += P(j)·V(j) in
  /// flight together while the softmax of S(j+1) runs.
  bool overlap = true;
  /// Ping-pong (two consumers, with overlap): named barriers let one
  /// consumer issue its GEMMs while the other runs its softmax.
  bool pingPong = true;
  std::string source;              // "heuristic" or "option"

  int64_t consumers() const { return blockM / 64; }
  int64_t threads() const { return 128 * (consumers() + 1); }
};

/// Whether the Hopper family can compile `spec` for `chip` ("" when it can,
/// else why not): sm_90a, f16/bf16, head dims 64, 128 or 256.
std::string hopperFamilySupports(const FlashKernelSpec &spec, StringRef chip);

HopperKernelConfig chooseHopperKernelConfig(const FlashKernelSpec &spec);

/// Why `config` cannot implement `spec` ("" when it can); names the option.
std::string validateHopperKernel(const FlashKernelSpec &spec,
                                 const HopperKernelConfig &config);

int64_t hopperKernelSharedMemoryBytes(const FlashKernelSpec &spec,
                                      const HopperKernelConfig &config);

/// attn_fwd_sm90_d<D>[v<Dv>]_<dtype>[_causal]_m<M>n<N>s<S>.
std::string hopperKernelName(const FlashKernelSpec &spec,
                             const HopperKernelConfig &config);

/// One TMA tensor map the kernel takes as a 128-byte __grid_constant__
/// parameter after the sm80 family's parameters: a 4-D map of `tensor`
/// (q, k or v) with dims {head dim, sequence, heads, batch}, a box of
/// {boxCols, boxRows, 1, 1} and 128-byte swizzle (docs/kernel-abi.md).
struct HopperTensorMap {
  std::string name;   // parameter name: q_tmap, k_tmap, v_tmap
  std::string tensor; // q, k, v
  int64_t boxCols = 64;
  int64_t boxRows = 0;
};
SmallVector<HopperTensorMap> hopperTensorMaps(const FlashKernelSpec &spec,
                                              const HopperKernelConfig &config);

/// Emits the Hopper forward kernel into `module` as an llvm.func marked
/// gpu.kernel / nvvm.kernel. The caller validated the configuration.
Operation *emitHopperForwardKernel(OpBuilder &builder,
                                       gpu::GPUModuleOp module, StringRef name,
                                       const FlashKernelSpec &spec,
                                       const HopperKernelConfig &config);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOGPU_HOPPERKERNEL_H
