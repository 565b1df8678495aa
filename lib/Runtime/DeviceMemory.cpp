//===- DeviceMemory.cpp - device buffers and event timing -----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/DeviceMemory.h"

#include <algorithm>
#include <vector>

using namespace attn::runtime;

Expected<LaunchTiming>
attn::runtime::timeLaunches(const CudaDriver &d, cu::Stream stream,
                            int64_t warmup, int64_t reps,
                            const std::function<Status()> &launch) {
  for (int64_t i = 0; i < warmup; ++i)
    if (Status s = launch(); !s)
      return s;
  std::vector<cu::Event> events(2 * reps, nullptr);
  struct EventGuard {
    const CudaDriver &d;
    std::vector<cu::Event> &e;
    ~EventGuard() {
      for (cu::Event ev : e)
        if (ev)
          (void)d.EventDestroy(ev);
    }
  } eventGuard{d, events};
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
    if (Status s = launch(); !s)
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
  std::vector<float> ms(reps);
  for (int64_t r = 0; r < reps; ++r)
    if (Status s = d.check(d.EventElapsedTime(&ms[r], events[2 * r],
                                              events[2 * r + 1]),
                           "cuEventElapsedTime");
        !s)
      return s;
  std::sort(ms.begin(), ms.end());
  LaunchTiming t;
  t.medianMs = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
  t.minMs = ms.front();
  return t;
}
