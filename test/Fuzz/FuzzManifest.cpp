//===- FuzzManifest.cpp - libFuzzer: the runtime's JSON and manifests -----===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Feeds the input to the runtime's JSON reader and manifest parser, and
// for manifests that parse, computes the launch geometry and packs the
// parameters for the manifest's own problem and for a few awkward shapes
// (the grid computed for them). Errors are expected; only crashes,
// sanitizer reports and hangs are findings.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Json.h"
#include "attn/Runtime/Manifest.h"
#include "attn/Runtime/Runtime.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

using namespace attn::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 65536)
    return 0;
  std::string text(reinterpret_cast<const char *>(data), size);
  Expected<JsonValue> json = parseJson(text);
  (void)json;
  Expected<KernelManifest> m = parseManifest(text);
  if (!m)
    return 0;

  const int64_t big = std::numeric_limits<int32_t>::max();
  const int64_t shapes[][5] = {
      {m->problem.batch, m->problem.headsQ, m->problem.headsKv,
       m->problem.seqQ, m->problem.seqKv},
      {1, 1, 1, 1, 1},
      {3, 8, 2, 1000, 17},
      {1, 1, 1, big, big},
      {1, 65536, 1, 65536, 1},
      {0, -1, 0, -5, 0},
  };
  for (const auto &s : shapes) {
    attn::AttentionProblem p = m->problem;
    p.batch = s[0];
    p.headsQ = s[1];
    p.headsKv = s[2];
    p.seqQ = s[3];
    p.seqKv = s[4];
    // Dense strides are products of the sizes; shapes whose strides do not
    // fit in int64 are not launchable and not what this target checks.
    int64_t stride = 0;
    if (__builtin_mul_overflow(p.batch, p.headsQ, &stride) ||
        __builtin_mul_overflow(stride, p.seqQ, &stride) ||
        __builtin_mul_overflow(stride, std::max<int64_t>(p.headDim, p.vDim()),
                               &stride) ||
        __builtin_mul_overflow(p.batch, p.headsKv, &stride) ||
        __builtin_mul_overflow(stride, p.seqKv, &stride) ||
        __builtin_mul_overflow(stride, std::max<int64_t>(p.headDim, p.vDim()),
                               &stride))
      continue;
    LaunchArgs a = LaunchArgs::dense(p, 0x1000, 0x2000, 0x3000, 0x4000, 0x5000);
    for (int64_t sms : {0, 1, 132}) {
      Expected<LaunchGeometry> g = computeLaunchGeometry(*m, a, sms);
      (void)g;
    }
    Expected<PackedParams> pp = packParams(*m, a);
    (void)pp;
  }
  return 0;
}
