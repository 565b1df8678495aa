//===- FuzzLaunchFlags.cpp - libFuzzer: attn-launch's command line --------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Feeds the input, split into words, to attn-launch's own parser (parseArgs
// in tools/attn-launch/attn-launch.cpp, compiled into this target with its
// main renamed), then applies the shape overrides to a manifest's problem
// and validates it as attn-launch's main does before it loads anything,
// and writes the --special values into small tensors.
// Nothing here touches the file system or a GPU.
//
//===----------------------------------------------------------------------===//

#include "FuzzArgv.h"

// The tool's headers before `main` is renamed, so that only the tool's own
// definition is affected.
#include "attn/Runtime/BackwardRun.h"
#include "attn/Runtime/Json.h"
#include "attn/Runtime/KernelRun.h"
#include "attn/Support/SpecialValues.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#define main attnLaunchMain
#include "../../tools/attn-launch/attn-launch.cpp"
#undef main

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  attn::fuzz::FuzzArgv args("attn-launch", data, size);
  Expected<Options> parsed = parseArgs(args.argc(), args.pointers());
  if (!parsed)
    return 0;
  // A manifest's problem (bf16, D=128, GQA 4:1, Nq != Nk), overridden by
  // the flags exactly as main does.
  AttentionProblem p;
  p.batch = 2;
  p.headsQ = 8;
  p.headsKv = 2;
  p.seqQ = 1000;
  p.seqKv = 17;
  p.headDim = 128;
  p.dtype = DType::bf16;
  p.causal = true;
  const Options &o = *parsed;
  if (o.batch)
    p.batch = *o.batch;
  if (o.headsQ)
    p.headsQ = *o.headsQ;
  if (o.headsKv)
    p.headsKv = *o.headsKv;
  if (o.seqQ)
    p.seqQ = *o.seqQ;
  if (o.seqKv)
    p.seqKv = *o.seqKv;
  AttentionProblem shape = p;
  shape.batch = std::max<int64_t>(p.batch, 1);
  if (std::string why = shape.validate(); !why.empty())
    return 0;
  // The chosen input values on a small tensor of each dtype (the runtime
  // applies them the same way to Q, K and V).
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    std::vector<uint8_t> bytes(64 * attn::dtypeBytes(t));
    std::vector<double> values(64);
    for (const attn::SpecialValue &sv : o.specials)
      (void)attn::applySpecialValue(sv, t, bytes, &values);
  }
  // The mask arithmetic on the first and last rows (i + Nk - Nq).
  volatile int64_t keys = p.keyRange(0).second + p.keyRange(p.seqQ - 1).first;
  (void)keys;
  volatile double flops = p.forwardFlops();
  (void)flops;
  std::string json = p.shapeJson();
  (void)json;
  return 0;
}
