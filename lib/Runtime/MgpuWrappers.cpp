//===- MgpuWrappers.cpp - the mgpu* functions gpu-to-llvm calls -----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Signatures as upstream's mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp
// and the GPU dialect's LLVM IR translation (SelectObjectAttr.cpp) in MLIR
// 22; the behaviour on errors is attn's (MgpuWrappers.h).
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/MgpuWrappers.h"

#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/Runtime.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

using namespace attn::runtime;

namespace {
// <cuda.h> values used only here.
constexpr int kJitOptimizationLevel = 7; // CU_JIT_OPTIMIZATION_LEVEL
constexpr unsigned kMemAttachGlobal = 1; // CU_MEM_ATTACH_GLOBAL
constexpr int64_t kMaxGridYZ = 65535;    // CUDA's grid limits
constexpr int64_t kMaxGridX = 2147483647;
constexpr int32_t kDefaultSharedMemory = 48 * 1024;

std::mutex errorMutex;
Status pendingError;
int32_t defaultDevice = 0;

/// Records (the first) failure and prints every one.
void report(const std::string &message) {
  std::fprintf(stderr, "attn mgpu: %s\n", message.c_str());
  std::lock_guard<std::mutex> lock(errorMutex);
  if (pendingError.ok())
    pendingError = Status::error(message);
}

bool errorPending() {
  std::lock_guard<std::mutex> lock(errorMutex);
  return !pendingError.ok();
}

/// The driver with a context current on this thread (the device's primary
/// context, as the CUDA runtime and PyTorch use), or null after reporting
/// why not.
const CudaDriver *driverFor(const char *call) {
  Expected<const CudaDriver *> drv = CudaDriver::get();
  if (!drv) {
    report(std::string(call) + ": " + drv.message());
    return nullptr;
  }
  Expected<cu::Context> ctx = ensureContext(**drv, defaultDevice);
  if (!ctx) {
    report(std::string(call) + ": " + ctx.message());
    return nullptr;
  }
  return *drv;
}

/// Reports a failed driver call; true when it succeeded.
bool ok(const CudaDriver &d, cu::Result r, const std::string &call) {
  Status s = d.check(r, call);
  if (!s)
    report(s.message());
  return s.ok();
}

bool hasEntry(const void *entry, const char *name, const char *call) {
  if (entry)
    return true;
  report(std::string(call) + ": the CUDA driver lacks " + name);
  return false;
}

/// cuModuleLoadDataEx with the JIT's error log in the message.
void *loadModule(const void *image, int optLevel, const char *call) {
  const CudaDriver *d = driverFor(call);
  if (!d)
    return nullptr;
  std::string log(8192, '\0');
  int options[] = {cu::kJitErrorLogBuffer, cu::kJitErrorLogBufferSizeBytes,
                   kJitOptimizationLevel};
  void *values[] = {
      log.data(), reinterpret_cast<void *>(static_cast<uintptr_t>(log.size())),
      reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  unsigned numOptions = optLevel >= 0 ? 3 : 2;
  cu::Module module = nullptr;
  cu::Result r =
      d->ModuleLoadDataEx(&module, image, numOptions, options, values);
  if (r != cu::kSuccess) {
    std::string message = d->check(r, call).message();
    log.resize(log.find('\0'));
    while (!log.empty() && (log.back() == '\n' || log.back() == ' '))
      log.pop_back();
    if (!log.empty())
      message += "; JIT log: " + log;
    report(message);
    return nullptr;
  }
  return module;
}

cu::DevicePtr devicePtr(void *p) {
  return static_cast<cu::DevicePtr>(reinterpret_cast<uintptr_t>(p));
}
} // namespace

extern "C" void *mgpuModuleLoad(void *data, size_t /*gpuBlobSize*/) {
  // A cubin or fatbin: the driver reads its size from its header.
  return loadModule(data, -1, "cuModuleLoadDataEx");
}

extern "C" void *mgpuModuleLoadJIT(void *data, int optLevel) {
  // PTX, NUL-terminated.
  return loadModule(data, optLevel, "cuModuleLoadDataEx (PTX)");
}

extern "C" void mgpuModuleUnload(void *module) {
  if (!module) // its load failed, and said so
    return;
  // gpu-to-llvm unloads from a global destructor: at process exit the driver
  // may have shut down already, and the module went with its context.
  Expected<const CudaDriver *> d = CudaDriver::get();
  if (!d)
    return;
  cu::Result r = (*d)->ModuleUnload(static_cast<cu::Module>(module));
  if (r != cu::kErrorDeinitialized)
    ok(**d, r, "cuModuleUnload");
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!module)
    return nullptr;
  const CudaDriver *d = driverFor("cuModuleGetFunction");
  if (!d)
    return nullptr;
  cu::Function fn = nullptr;
  if (!ok(*d, d->ModuleGetFunction(&fn, static_cast<cu::Module>(module), name),
          std::string("cuModuleGetFunction(") + name + ")"))
    return nullptr;
  return fn;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *stream, void **params, void **extra,
                                 size_t /*paramsCount*/) {
  // Nothing to compute (an empty batch or sequence): no block would run,
  // and CUDA refuses a zero grid.
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  if (errorPending()) {
    std::fprintf(stderr, "attn mgpu: kernel launch skipped: an earlier "
                         "call failed\n");
    return;
  }
  if (!function) {
    report("cuLaunchKernel: no kernel function (its module did not load)");
    return;
  }
  if (gridX < 0 || gridY < 0 || gridZ < 0 || gridX > kMaxGridX ||
      gridY > kMaxGridYZ || gridZ > kMaxGridYZ) {
    report("cuLaunchKernel: grid (" + std::to_string(gridX) + ", " +
           std::to_string(gridY) + ", " + std::to_string(gridZ) +
           ") exceeds CUDA's limits (2^31 - 1, 65535, 65535)");
    return;
  }
  const CudaDriver *d = driverFor("cuLaunchKernel");
  if (!d)
    return;
  auto fn = static_cast<cu::Function>(function);
  // Over 48 KiB of dynamic shared memory must be opted into per function.
  if (smem > kDefaultSharedMemory &&
      !ok(*d,
          d->FuncSetAttribute(fn, cu::kFuncAttrMaxDynamicSharedSizeBytes, smem),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " +
              std::to_string(smem) + ")"))
    return;
  ok(*d,
     d->LaunchKernel(fn, static_cast<unsigned>(gridX),
                     static_cast<unsigned>(gridY), static_cast<unsigned>(gridZ),
                     static_cast<unsigned>(blockX),
                     static_cast<unsigned>(blockY),
                     static_cast<unsigned>(blockZ), static_cast<unsigned>(smem),
                     static_cast<cu::Stream>(stream), params, extra),
     "cuLaunchKernel");
}

extern "C" void *mgpuStreamCreate() {
  const CudaDriver *d = driverFor("cuStreamCreate");
  if (!d)
    return nullptr;
  cu::Stream stream = nullptr;
  if (!ok(*d, d->StreamCreate(&stream, cu::kStreamNonBlocking),
          "cuStreamCreate"))
    return nullptr;
  return stream;
}

extern "C" void mgpuStreamDestroy(void *stream) {
  if (!stream)
    return;
  if (const CudaDriver *d = driverFor("cuStreamDestroy"))
    ok(*d, d->StreamDestroy(static_cast<cu::Stream>(stream)),
       "cuStreamDestroy");
}

extern "C" void mgpuStreamSynchronize(void *stream) {
  if (!stream) // a failed create: a launch on it was skipped as well
    return;
  if (const CudaDriver *d = driverFor("cuStreamSynchronize"))
    ok(*d, d->StreamSynchronize(static_cast<cu::Stream>(stream)),
       "cuStreamSynchronize");
}

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                              bool isHostShared) {
  if (sizeBytes == 0)
    return nullptr;
  const CudaDriver *d = driverFor("cuMemAlloc");
  if (!d)
    return nullptr;
  cu::DevicePtr ptr = 0;
  std::string call = "cuMemAlloc(" + std::to_string(sizeBytes) + " bytes)";
  if (isHostShared) {
    if (!hasEntry(reinterpret_cast<const void *>(d->MemAllocManaged),
                  "cuMemAllocManaged", "gpu.alloc host_shared") ||
        !ok(*d, d->MemAllocManaged(&ptr, sizeBytes, kMemAttachGlobal),
            "cuMemAllocManaged(" + std::to_string(sizeBytes) + " bytes)"))
      return nullptr;
  } else if (!ok(*d, d->MemAlloc(&ptr, sizeBytes), call)) {
    return nullptr;
  }
  return reinterpret_cast<void *>(static_cast<uintptr_t>(ptr));
}

extern "C" void mgpuMemFree(void *ptr, void * /*stream*/) {
  if (!ptr)
    return;
  if (const CudaDriver *d = driverFor("cuMemFree"))
    ok(*d, d->MemFree(devicePtr(ptr)), "cuMemFree");
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void *stream) {
  if (sizeBytes == 0)
    return;
  const CudaDriver *d = driverFor("cuMemcpyAsync");
  if (d && hasEntry(reinterpret_cast<const void *>(d->MemcpyAsync),
                    "cuMemcpyAsync", "gpu.memcpy"))
    ok(*d,
       d->MemcpyAsync(devicePtr(dst), devicePtr(src), sizeBytes,
                      static_cast<cu::Stream>(stream)),
       "cuMemcpyAsync");
}

extern "C" void mgpuMemset32(void *dst, uint32_t value, size_t count,
                             void *stream) {
  if (count == 0)
    return;
  const CudaDriver *d = driverFor("cuMemsetD32Async");
  if (d && hasEntry(reinterpret_cast<const void *>(d->MemsetD32Async),
                    "cuMemsetD32Async", "gpu.memset"))
    ok(*d,
       d->MemsetD32Async(devicePtr(dst), value, count,
                         static_cast<cu::Stream>(stream)),
       "cuMemsetD32Async");
}

extern "C" void mgpuSetDefaultDevice(int32_t device) { defaultDevice = device; }

extern "C" int32_t attnDeviceMultiprocessorCount() {
  const CudaDriver *d = driverFor("cuDeviceGetAttribute");
  if (!d)
    return 1;
  cu::Device dev = 0;
  int sms = 0;
  if (!ok(*d, d->CtxGetDevice(&dev), "cuCtxGetDevice") ||
      !ok(*d, d->DeviceGetAttribute(&sms, cu::kDevAttrMultiprocessorCount, dev),
          "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)"))
    return 1;
  return sms > 0 ? sms : 1;
}

extern "C" void attnMakeTensorMap(void *out, void *base, int32_t elementBytes,
                                  int32_t isBF16, int64_t dim, int64_t seq,
                                  int64_t heads, int64_t batch, int64_t strideB,
                                  int64_t strideH, int64_t strideN,
                                  int64_t boxCols, int64_t boxRows,
                                  int32_t swizzle) {
  TiledTensorMap t;
  t.tensor = "tensor";
  t.base = devicePtr(base);
  t.elementBytes = elementBytes;
  // CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6, BFLOAT16 = 9, FLOAT32 = 7.
  t.dataType = elementBytes == 4 ? 7 : isBF16 ? 9 : 6;
  auto atLeastOne = [](int64_t x) { return x > 0 ? x : int64_t(1); };
  t.dim = dim;
  t.seq = atLeastOne(seq);
  t.heads = atLeastOne(heads);
  t.batch = atLeastOne(batch);
  t.stride = {strideB, strideH, strideN};
  t.boxCols = boxCols;
  t.boxRows = boxRows;
  t.swizzle = swizzle;
  PackedParams::TensorMap map;
  std::memset(&map, 0, sizeof(map));
  if (Status s = encodeTiledTensorMap(t, map); !s)
    report("attnMakeTensorMap: " + s.message());
  std::memcpy(out, &map, sizeof(map));
}

Status attn::runtime::takeMgpuError() {
  std::lock_guard<std::mutex> lock(errorMutex);
  Status s = pendingError;
  pendingError = Status::success();
  return s;
}

std::vector<std::pair<const char *, void *>> attn::runtime::mgpuSymbols() {
#define ATTN_MGPU_SYMBOL(name)                                                 \
  { #name, reinterpret_cast < void *>(&name) }
  return {ATTN_MGPU_SYMBOL(mgpuModuleLoad),
          ATTN_MGPU_SYMBOL(mgpuModuleLoadJIT),
          ATTN_MGPU_SYMBOL(mgpuModuleUnload),
          ATTN_MGPU_SYMBOL(mgpuModuleGetFunction),
          ATTN_MGPU_SYMBOL(mgpuLaunchKernel),
          ATTN_MGPU_SYMBOL(mgpuStreamCreate),
          ATTN_MGPU_SYMBOL(mgpuStreamDestroy),
          ATTN_MGPU_SYMBOL(mgpuStreamSynchronize),
          ATTN_MGPU_SYMBOL(mgpuMemAlloc),
          ATTN_MGPU_SYMBOL(mgpuMemFree),
          ATTN_MGPU_SYMBOL(mgpuMemcpy),
          ATTN_MGPU_SYMBOL(mgpuMemset32),
          ATTN_MGPU_SYMBOL(mgpuSetDefaultDevice),
          ATTN_MGPU_SYMBOL(attnDeviceMultiprocessorCount),
          ATTN_MGPU_SYMBOL(attnMakeTensorMap)};
#undef ATTN_MGPU_SYMBOL
}
