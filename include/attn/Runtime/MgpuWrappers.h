//===- MgpuWrappers.h - the mgpu* functions gpu-to-llvm calls ---*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Upstream MLIR's gpu-to-llvm lowers gpu.launch_func, gpu.alloc, ... to
// calls of `mgpu*` C functions that MLIR's CUDA runtime wrappers
// (libmlir_cuda_runtime) implement. Debian's MLIR ships no such library, so
// attn's runtime implements the ones the host lowering
// (convert-attn-to-gpu-launch) makes gpu-to-llvm emit, with the same
// signatures, on the dlopen'ed driver (CudaDriver.h), plus the two attn
// calls that pass declares. docs/runtime.md lists them.
//
// Errors: upstream prints and carries on. These print too (to stderr, once
// per failure, prefixed "attn mgpu:"), keep the first failure for
// takeMgpuError(), and never crash on what a failure left behind: while a
// failure is pending (not yet taken) kernel launches are skipped, so a
// kernel never runs with a function that failed to load or a tensor map
// that failed to encode. MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_MGPUWRAPPERS_H
#define ATTN_RUNTIME_MGPUWRAPPERS_H

#include "attn/Runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

extern "C" {
// What gpu-to-llvm and the GPU dialect's LLVM IR translation emit (MLIR 22).
void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate();
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, uint32_t value, size_t count, void *stream);
void mgpuSetDefaultDevice(int32_t device);

// Declared by convert-attn-to-gpu-launch.
/// The current device's SM count (persistent sm90a-wgmma grids); 1 after
/// an error, so that the grid stays valid.
int32_t attnDeviceMultiprocessorCount();
/// Encodes the 4-D tiled TMA descriptor {dim, seq, heads, batch} of a
/// tensor at `base` (strides in elements; the head dim contiguous) into the
/// 128 bytes at `out` (64-byte aligned). Sizes of 0 are encoded as 1: a
/// kernel never reads past a sequence's end, and TMA refuses empty boxes.
void attnMakeTensorMap(void *out, void *base, int32_t elementBytes,
                       int32_t isBF16, int64_t dim, int64_t seq, int64_t heads,
                       int64_t batch, int64_t strideB, int64_t strideH,
                       int64_t strideN, int64_t boxCols, int64_t boxRows,
                       int32_t swizzle);
}

namespace attn::runtime {
/// The first failure of an mgpu*/attn* call since the last take (success
/// when none), and clears it, so later launches run again.
Status takeMgpuError();
/// Every function above by name, for a JIT's symbol map.
std::vector<std::pair<const char *, void *>> mgpuSymbols();
} // namespace attn::runtime

#endif // ATTN_RUNTIME_MGPUWRAPPERS_H
