//===- CudaDriver.cpp - the CUDA driver API, resolved at run time ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

using namespace attn::runtime;

namespace {
/// Resolves the first of `names` the library exports into `slot`. Several
/// names cover entry points that gained a _v2 in later drivers.
template <typename Fn>
bool resolve(void *lib, Fn &slot, std::initializer_list<const char *> names,
             std::string &missing) {
  for (const char *name : names)
    if (void *sym = dlsym(lib, name)) {
      slot = reinterpret_cast<Fn>(sym);
      return true;
    }
  if (!missing.empty())
    missing += ", ";
  missing += *names.begin();
  return false;
}
} // namespace

Expected<CudaDriver> CudaDriver::load(const std::string &path) {
  // Never dlclose: modules and contexts outlive any one caller.
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    return Status::error("no CUDA driver: cannot load " + path + " (" +
                         (why ? why : "unknown reason") +
                         "); run on a host with the NVIDIA driver, or set "
                         "ATTN_LIBCUDA to libcuda's path");
  }
  CudaDriver d{};
  d.libraryPath = path;
  std::string missing;
  resolve(lib, d.Init, {"cuInit"}, missing);
  resolve(lib, d.DriverGetVersion, {"cuDriverGetVersion"}, missing);
  resolve(lib, d.GetErrorName, {"cuGetErrorName"}, missing);
  resolve(lib, d.GetErrorString, {"cuGetErrorString"}, missing);
  resolve(lib, d.DeviceGet, {"cuDeviceGet"}, missing);
  resolve(lib, d.DeviceGetCount, {"cuDeviceGetCount"}, missing);
  resolve(lib, d.DeviceGetName, {"cuDeviceGetName"}, missing);
  resolve(lib, d.DeviceGetAttribute, {"cuDeviceGetAttribute"}, missing);
  resolve(lib, d.DevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"},
          missing);
  resolve(lib, d.CtxGetCurrent, {"cuCtxGetCurrent"}, missing);
  resolve(lib, d.CtxSetCurrent, {"cuCtxSetCurrent"}, missing);
  resolve(lib, d.CtxGetDevice, {"cuCtxGetDevice"}, missing);
  resolve(lib, d.CtxPushCurrent, {"cuCtxPushCurrent_v2", "cuCtxPushCurrent"},
          missing);
  resolve(lib, d.CtxPopCurrent, {"cuCtxPopCurrent_v2", "cuCtxPopCurrent"},
          missing);
  resolve(lib, d.ModuleLoadDataEx, {"cuModuleLoadDataEx"}, missing);
  resolve(lib, d.ModuleUnload, {"cuModuleUnload"}, missing);
  resolve(lib, d.ModuleGetFunction, {"cuModuleGetFunction"}, missing);
  resolve(lib, d.FuncGetAttribute, {"cuFuncGetAttribute"}, missing);
  resolve(lib, d.FuncSetAttribute, {"cuFuncSetAttribute"}, missing);
  resolve(lib, d.LaunchKernel, {"cuLaunchKernel"}, missing);
  resolve(lib, d.MemGetInfo, {"cuMemGetInfo_v2", "cuMemGetInfo"}, missing);
  resolve(lib, d.MemAlloc, {"cuMemAlloc_v2", "cuMemAlloc"}, missing);
  resolve(lib, d.MemFree, {"cuMemFree_v2", "cuMemFree"}, missing);
  resolve(lib, d.MemcpyHtoD, {"cuMemcpyHtoD_v2", "cuMemcpyHtoD"}, missing);
  resolve(lib, d.MemcpyDtoH, {"cuMemcpyDtoH_v2", "cuMemcpyDtoH"}, missing);
  resolve(lib, d.MemcpyDtoD, {"cuMemcpyDtoD_v2", "cuMemcpyDtoD"}, missing);
  resolve(lib, d.MemsetD8, {"cuMemsetD8_v2", "cuMemsetD8"}, missing);
  resolve(lib, d.StreamCreate, {"cuStreamCreate"}, missing);
  resolve(lib, d.StreamDestroy, {"cuStreamDestroy_v2", "cuStreamDestroy"},
          missing);
  resolve(lib, d.StreamSynchronize, {"cuStreamSynchronize"}, missing);
  resolve(lib, d.EventCreate, {"cuEventCreate"}, missing);
  resolve(lib, d.EventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"},
          missing);
  resolve(lib, d.EventRecord, {"cuEventRecord"}, missing);
  resolve(lib, d.EventSynchronize, {"cuEventSynchronize"}, missing);
  resolve(lib, d.EventElapsedTime,
          {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing);
  std::string optional;
  resolve(lib, d.TensorMapEncodeTiled, {"cuTensorMapEncodeTiled"}, optional);
  resolve(lib, d.Memcpy, {"cuMemcpy"}, optional);
  resolve(lib, d.MemcpyAsync, {"cuMemcpyAsync"}, optional);
  resolve(lib, d.MemAllocManaged, {"cuMemAllocManaged"}, optional);
  resolve(lib, d.MemsetD32Async, {"cuMemsetD32Async"}, optional);
  if (!missing.empty())
    return Status::error("CUDA driver " + path +
                         " lacks entry points the runtime needs: " + missing +
                         " (driver too old?)");
  return d;
}

Expected<const CudaDriver *> CudaDriver::get() {
  static std::once_flag once;
  static CudaDriver driver;
  static Status failure;
  std::call_once(once, [] {
    const char *env = std::getenv("ATTN_LIBCUDA");
    std::string path = env && *env ? env : "libcuda.so.1";
    Expected<CudaDriver> d = load(path);
    if (!d) {
      failure = d.status();
      return;
    }
    if (cu::Result r = d->Init(0); r != cu::kSuccess) {
      failure = d->check(r, "cuInit");
      failure.prepend("no usable CUDA device");
      return;
    }
    driver = d.take();
  });
  if (!failure.ok())
    return failure;
  return &driver;
}

std::string CudaDriver::errorName(cu::Result r) const {
  const char *name = nullptr;
  if (GetErrorName && GetErrorName(r, &name) == cu::kSuccess && name)
    return name;
  return "CUresult " + std::to_string(r);
}

Status CudaDriver::check(cu::Result r, const std::string &call) const {
  if (r == cu::kSuccess)
    return Status::success();
  std::string msg = call + " failed: " + errorName(r);
  const char *text = nullptr;
  if (GetErrorString && GetErrorString(r, &text) == cu::kSuccess && text)
    msg += std::string(" (") + text + ")";
  return Status::error(msg);
}

Expected<cu::Context> attn::runtime::ensureContext(const CudaDriver &driver,
                                                   int ordinal) {
  cu::Context ctx = nullptr;
  if (Status s = driver.check(driver.CtxGetCurrent(&ctx), "cuCtxGetCurrent");
      !s)
    return s;
  if (ctx)
    return ctx;
  int count = 0;
  if (Status s = driver.check(driver.DeviceGetCount(&count), "cuDeviceGetCount");
      !s)
    return s;
  if (ordinal < 0 || ordinal >= count)
    return Status::error("CUDA device " + std::to_string(ordinal) +
                         " does not exist (" + std::to_string(count) +
                         " visible)");
  cu::Device dev;
  if (Status s = driver.check(driver.DeviceGet(&dev, ordinal), "cuDeviceGet");
      !s)
    return s;
  // The primary context is retained for the life of the process: it is
  // the one the CUDA runtime (and PyTorch) use, so sharing it is free.
  if (Status s = driver.check(driver.DevicePrimaryCtxRetain(&ctx, dev),
                              "cuDevicePrimaryCtxRetain");
      !s)
    return s;
  if (Status s = driver.check(driver.CtxSetCurrent(ctx), "cuCtxSetCurrent");
      !s)
    return s;
  return ctx;
}

ScopedContext::ScopedContext(const CudaDriver &driver, cu::Context ctx)
    : driver(driver) {
  cu::Context cur = nullptr;
  st = driver.check(driver.CtxGetCurrent(&cur), "cuCtxGetCurrent");
  if (!st || cur == ctx)
    return;
  st = driver.check(driver.CtxPushCurrent(ctx), "cuCtxPushCurrent");
  pushed = st.ok();
}

ScopedContext::~ScopedContext() {
  if (pushed) {
    cu::Context ignored;
    (void)driver.CtxPopCurrent(&ignored);
  }
}
