//===- DeviceMemory.h - device buffers and event timing ---------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// What the runners (runKernel, runBackwardKernel) share: a cuMemAlloc'd
// buffer freed on scope exit, a non-blocking stream, and the median of
// CUDA-event-timed launches.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_DEVICEMEMORY_H
#define ATTN_RUNTIME_DEVICEMEMORY_H

#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/Status.h"

#include <functional>
#include <string>
#include <vector>

namespace attn::runtime {

/// One cuMemAlloc'd block, freed on scope exit.
class DeviceBuffer {
public:
  explicit DeviceBuffer(const CudaDriver &d) : d(&d) {}
  DeviceBuffer(DeviceBuffer &&o) noexcept : d(o.d), ptr(o.ptr), bytes(o.bytes) {
    o.ptr = 0;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (ptr)
      (void)d->MemFree(ptr);
  }
  Status allocate(size_t n) {
    bytes = n;
    return d->check(d->MemAlloc(&ptr, n),
                    "cuMemAlloc(" + std::to_string(n) + " bytes)");
  }
  cu::DevicePtr get() const { return ptr; }
  size_t size() const { return bytes; }

private:
  const CudaDriver *d;
  cu::DevicePtr ptr = 0;
  size_t bytes = 0;
};

/// A non-blocking stream destroyed on scope exit.
class OwnedStream {
public:
  explicit OwnedStream(const CudaDriver &d) : d(d) {}
  ~OwnedStream() {
    if (stream)
      (void)d.StreamDestroy(stream);
  }
  Status create() {
    return d.check(d.StreamCreate(&stream, cu::kStreamNonBlocking),
                   "cuStreamCreate");
  }
  cu::Stream get() const { return stream; }

private:
  const CudaDriver &d;
  cu::Stream stream = nullptr;
};

struct LaunchTiming {
  double medianMs = 0, minMs = 0;
};

/// How many input/output buffer sets of `setBytes` a timing pass rotates
/// through: enough that one pass is three times the L2 (small shapes are
/// timed from device memory, as they run in a model), at most what half
/// the free memory holds, 1 to 512.
Expected<size_t> bufferSetCount(const CudaDriver &d, size_t setBytes);

/// `warmup` calls of `launch`, then `reps` calls each between two events
/// on `stream`: the median and minimum time per call.
Expected<LaunchTiming> timeLaunches(const CudaDriver &d, cu::Stream stream,
                                    int64_t warmup, int64_t reps,
                                    const std::function<Status()> &launch);

/// The same, appending every timed call's milliseconds to `samples`;
/// launch(n) learns its call number n, counted from 1 over the warm-up and
/// timed calls (attn-tune rotates input buffers by it).
Status timeEachLaunch(const CudaDriver &d, cu::Stream stream, int64_t warmup,
                      int64_t reps, const std::function<Status(size_t)> &launch,
                      std::vector<float> &samples);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_DEVICEMEMORY_H
