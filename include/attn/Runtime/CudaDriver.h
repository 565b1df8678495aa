//===- CudaDriver.h - the CUDA driver API, resolved at run time -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The runtime never links libcuda: it dlopens libcuda.so.1 and resolves the
// entry points it needs, so every build (CI, this machine) works without a
// driver and reports "no CUDA driver" as an error value. The few driver
// types are declared here, layout-compatible with <cuda.h>, so the runtime
// also builds without the CUDA toolkit.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDADRIVER_H
#define ATTN_RUNTIME_CUDADRIVER_H

#include "attn/Runtime/Status.h"

#include <cstddef>
#include <string>

// The opaque handle types, named as <cuda.h> names them, so a CUstream from
// there converts to ours without casts.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;

namespace attn::runtime {
namespace cu {
using Result = int; // CUresult
using Device = int; // CUdevice
using DevicePtr = unsigned long long; // CUdeviceptr (64-bit hosts only)
using Context = ::CUctx_st *;
using Module = ::CUmod_st *;
using Function = ::CUfunc_st *;
using Stream = ::CUstream_st *;
using Event = ::CUevent_st *;

// Enumerator values from <cuda.h> (CUDA 12/13); RuntimeTests checks them
// against the header where the toolkit is installed.
constexpr Result kSuccess = 0;
/// The driver has shut down (calls from static destructors at exit).
constexpr Result kErrorDeinitialized = 4;
constexpr Result kErrorNotFound = 500;
constexpr int kFuncAttrMaxThreadsPerBlock = 0;
constexpr int kFuncAttrNumRegs = 4;
constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
constexpr int kDevAttrMaxGridDimX = 5;
constexpr int kDevAttrMaxGridDimY = 6;
constexpr int kDevAttrMaxGridDimZ = 7;
constexpr int kDevAttrMultiprocessorCount = 16;
constexpr int kDevAttrL2CacheSize = 38;
constexpr int kDevAttrComputeCapabilityMajor = 75;
constexpr int kDevAttrComputeCapabilityMinor = 76;
constexpr int kDevAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSizeBytes = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;
constexpr int kJitLogVerbose = 12;
constexpr unsigned kStreamNonBlocking = 1;
constexpr unsigned kEventDefault = 0;
} // namespace cu

/// The driver entry points the runtime and attn-launch use. Each member is
/// named after the driver function without its "cu" prefix.
struct CudaDriver {
  cu::Result (*Init)(unsigned flags);
  cu::Result (*DriverGetVersion)(int *version);
  cu::Result (*GetErrorName)(cu::Result error, const char **name);
  cu::Result (*GetErrorString)(cu::Result error, const char **text);
  cu::Result (*DeviceGet)(cu::Device *device, int ordinal);
  cu::Result (*DeviceGetCount)(int *count);
  cu::Result (*DeviceGetName)(char *name, int len, cu::Device device);
  cu::Result (*DeviceGetAttribute)(int *value, int attribute,
                                   cu::Device device);
  cu::Result (*DevicePrimaryCtxRetain)(cu::Context *ctx, cu::Device device);
  cu::Result (*CtxGetCurrent)(cu::Context *ctx);
  cu::Result (*CtxSetCurrent)(cu::Context ctx);
  cu::Result (*CtxGetDevice)(cu::Device *device);
  cu::Result (*CtxPushCurrent)(cu::Context ctx);
  cu::Result (*CtxPopCurrent)(cu::Context *ctx);
  cu::Result (*ModuleLoadDataEx)(cu::Module *module, const void *image,
                                 unsigned numOptions, int *options,
                                 void **optionValues);
  cu::Result (*ModuleUnload)(cu::Module module);
  cu::Result (*ModuleGetFunction)(cu::Function *fn, cu::Module module,
                                  const char *name);
  cu::Result (*FuncGetAttribute)(int *value, int attribute, cu::Function fn);
  cu::Result (*FuncSetAttribute)(cu::Function fn, int attribute, int value);
  cu::Result (*LaunchKernel)(cu::Function fn, unsigned gridX, unsigned gridY,
                             unsigned gridZ, unsigned blockX, unsigned blockY,
                             unsigned blockZ, unsigned sharedMemBytes,
                             cu::Stream stream, void **params, void **extra);
  cu::Result (*MemGetInfo)(size_t *free, size_t *total);
  cu::Result (*MemAlloc)(cu::DevicePtr *ptr, size_t bytes);
  cu::Result (*MemFree)(cu::DevicePtr ptr);
  cu::Result (*MemcpyHtoD)(cu::DevicePtr dst, const void *src, size_t bytes);
  cu::Result (*MemcpyDtoH)(void *dst, cu::DevicePtr src, size_t bytes);
  cu::Result (*MemcpyDtoD)(cu::DevicePtr dst, cu::DevicePtr src,
                           size_t bytes);
  cu::Result (*MemsetD8)(cu::DevicePtr dst, unsigned char value, size_t n);
  cu::Result (*StreamCreate)(cu::Stream *stream, unsigned flags);
  cu::Result (*StreamDestroy)(cu::Stream stream);
  cu::Result (*StreamSynchronize)(cu::Stream stream);
  cu::Result (*EventCreate)(cu::Event *event, unsigned flags);
  cu::Result (*EventDestroy)(cu::Event event);
  cu::Result (*EventRecord)(cu::Event event, cu::Stream stream);
  cu::Result (*EventSynchronize)(cu::Event event);
  cu::Result (*EventElapsedTime)(float *ms, cu::Event start, cu::Event end);
  /// cuTensorMapEncodeTiled (CUDA 12+); null on older drivers, which then
  /// cannot launch the sm90a-wgmma kernels. Enums as int, maps as 128 bytes.
  cu::Result (*TensorMapEncodeTiled)(void *tensorMap, int dataType,
                                     unsigned rank, void *globalAddress,
                                     const unsigned long long *globalDim,
                                     const unsigned long long *globalStrides,
                                     const unsigned *boxDim,
                                     const unsigned *elementStrides,
                                     int interleave, int swizzle,
                                     int l2Promotion, int oobFill);
  /// Used by the mgpu* wrappers only (MgpuWrappers.h); null when the
  /// library lacks them (a test's fake driver), which those then report.
  cu::Result (*Memcpy)(cu::DevicePtr dst, cu::DevicePtr src, size_t bytes);
  cu::Result (*MemcpyAsync)(cu::DevicePtr dst, cu::DevicePtr src,
                            size_t bytes, cu::Stream stream);
  cu::Result (*MemAllocManaged)(cu::DevicePtr *ptr, size_t bytes,
                                unsigned flags);
  cu::Result (*MemsetD32Async)(cu::DevicePtr dst, unsigned value, size_t n,
                               cu::Stream stream);

  /// Where the library came from (for messages).
  std::string libraryPath;

  /// The process-wide driver: libcuda.so.1 (or $ATTN_LIBCUDA) opened and
  /// cuInit(0) called, once. Later calls return the same answer.
  static Expected<const CudaDriver *> get();

  /// Opens the driver library at `path` and resolves the entry points,
  /// without calling cuInit. Not cached; for tests and tools.
  static Expected<CudaDriver> load(const std::string &path);

  /// "CUDA_ERROR_NOT_FOUND", or "CUresult 1234" for an unknown value.
  std::string errorName(cu::Result r) const;
  /// Success when r is CUDA_SUCCESS; otherwise an error naming `call` and
  /// the error: "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (named
  /// symbol not found)".
  Status check(cu::Result r, const std::string &call) const;
};

/// Makes a context current on this thread for `ordinal` if none is (the
/// device's primary context, the one the CUDA runtime and PyTorch share)
/// and returns the current one.
Expected<cu::Context> ensureContext(const CudaDriver &driver, int ordinal);

/// Makes `ctx` current for the lifetime of the guard if it is not already.
class ScopedContext {
public:
  ScopedContext(const CudaDriver &driver, cu::Context ctx);
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;
  const Status &status() const { return st; }

private:
  const CudaDriver &driver;
  bool pushed = false;
  Status st;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_CUDADRIVER_H
