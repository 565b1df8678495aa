//===- DeviceMemory.cpp - device buffers and event timing -----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/DeviceMemory.h"

#include <algorithm>
#include <vector>

using namespace attn::runtime;

Status attn::runtime::timeEachLaunch(
    const CudaDriver &d, cu::Stream stream, int64_t warmup, int64_t reps,
    const std::function<Status(size_t)> &launch, std::vector<float> &samples) {
  size_t launchNo = 1;
  for (int64_t w = 0; w < warmup; ++w)
    if (Status s = launch(launchNo++); !s)
      return s;
  std::vector<cu::Event> events(2 * reps, nullptr);
  struct EventGuard {
    const CudaDriver &d;
    std::vector<cu::Event> &e;
    ~EventGuard() {
      for (cu::Event x : e)
        if (x)
          (void)d.EventDestroy(x);
    }
  } guard{d, events};
  for (cu::Event &e : events)
    if (Status s = d.check(d.EventCreate(&e, cu::kEventDefault),
                           "cuEventCreate");
        !s)
      return s;
  for (int64_t r = 0; r < reps; ++r) {
    if (Status s = d.check(d.EventRecord(events[2 * r], stream),
                           "cuEventRecord");
        !s)
      return s;
    if (Status s = launch(launchNo++); !s)
      return s;
    if (Status s = d.check(d.EventRecord(events[2 * r + 1], stream),
                           "cuEventRecord");
        !s)
      return s;
  }
  if (Status s = d.check(d.StreamSynchronize(stream),
                         "cuStreamSynchronize after the timed launches");
      !s)
    return s;
  for (int64_t r = 0; r < reps; ++r) {
    float ms = 0;
    if (Status s = d.check(d.EventElapsedTime(&ms, events[2 * r],
                                              events[2 * r + 1]),
                           "cuEventElapsedTime");
        !s)
      return s;
    samples.push_back(ms);
  }
  return Status::success();
}

Expected<LaunchTiming>
attn::runtime::timeLaunches(const CudaDriver &d, cu::Stream stream,
                            int64_t warmup, int64_t reps,
                            const std::function<Status()> &launch) {
  std::vector<float> ms;
  if (Status s = timeEachLaunch(
          d, stream, warmup, reps, [&](size_t) { return launch(); }, ms);
      !s)
    return s;
  std::sort(ms.begin(), ms.end());
  LaunchTiming t;
  t.medianMs = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
  t.minMs = ms.front();
  return t;
}

Expected<size_t> attn::runtime::bufferSetCount(const CudaDriver &d,
                                               size_t setBytes) {
  int l2 = 0;
  cu::Device dev;
  if (Status s = d.check(d.CtxGetDevice(&dev), "cuCtxGetDevice"); !s)
    return s;
  (void)d.DeviceGetAttribute(&l2, cu::kDevAttrL2CacheSize, dev);
  size_t freeMem = 0, totalMem = 0;
  if (Status s = d.check(d.MemGetInfo(&freeMem, &totalMem), "cuMemGetInfo");
      !s)
    return s;
  size_t want =
      (3 * static_cast<size_t>(std::max(l2, 1 << 20)) + setBytes - 1) /
      setBytes;
  size_t nSets =
      std::clamp<size_t>(std::min(want, freeMem / 2 / setBytes), 1, 512);
  return nSets;
}
