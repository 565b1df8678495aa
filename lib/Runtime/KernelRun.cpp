//===- KernelRun.cpp - run, check and time one kernel ---------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/KernelRun.h"
#include "attn/Runtime/DeviceMemory.h"
#include "attn/Runtime/Json.h"
#include "attn/Runtime/VariantRun.h"
#include "attn/Support/JsonNumber.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <tuple>

using namespace attn::runtime;
using attn::AttentionProblem;

using ::attn::jsonNumber;

namespace {
/// One set of Q, K, V, O, LSE carved out of a single allocation.
struct BufferSet {
  DeviceBuffer block;
  cu::DevicePtr q = 0, k = 0, v = 0, o = 0, lse = 0;
};

size_t alignUp(size_t n) { return (n + 255) & ~size_t(255); }

struct Sizes {
  size_t q, k, v, o, lse;
  size_t total() const {
    return alignUp(q) + alignUp(k) + alignUp(v) + alignUp(o) + alignUp(lse);
  }
};

Status allocateSet(const Sizes &sz, BufferSet &set) {
  if (Status s = set.block.allocate(sz.total()); !s)
    return s;
  cu::DevicePtr p = set.block.get();
  set.q = p;
  set.k = set.q + alignUp(sz.q);
  set.v = set.k + alignUp(sz.k);
  set.o = set.v + alignUp(sz.v);
  set.lse = set.o + alignUp(sz.o);
  return Status::success();
}

} // namespace

Status attn::runtime::runKernel(const Kernel &kernel, const RunOptions &opts,
                                RunResult &res) {
  // Variable length, bias, key ranges and ALiBi's slopes take other
  // buffers (VariantRun.cpp).
  if (res.problem.isVarlen() || res.problem.bias ||
      res.problem.hasKeyRanges() || res.problem.alibi)
    return runVariantKernel(kernel, opts, res);
  const CudaDriver &d = kernel.driver();
  cu::Stream stream = nullptr;
  res.entry = kernel.manifest().entry;
  res.from = kernel.loadedFrom();
  res.note = kernel.loadNote();
  res.registers = kernel.registers();
  {
    char name[256] = {0};
    cu::Device dev;
    if (d.CtxGetDevice(&dev) == cu::kSuccess &&
        d.DeviceGetName(name, sizeof(name) - 1, dev) == cu::kSuccess)
      res.device = name;
  }
  const AttentionProblem &p = res.problem;
  const int64_t qN = p.batch * p.headsQ * p.seqQ * p.headDim;
  const int64_t kN = p.batch * p.headsKv * p.seqKv * p.headDim;
  const int64_t vN = p.batch * p.headsKv * p.seqKv * p.vDim();
  const int64_t oN = p.batch * p.headsQ * p.seqQ * p.vDim();
  const int64_t lN = p.batch * p.headsQ * p.seqQ;
  const size_t eb = attn::dtypeBytes(p.dtype);
  Sizes sz{qN * eb, kN * eb, vN * eb, oN * eb, lN * sizeof(float)};

  if (Status s = d.check(d.StreamCreate(&stream, cu::kStreamNonBlocking),
                         "cuStreamCreate");
      !s)
    return s;
  struct StreamGuard {
    const CudaDriver &d;
    cu::Stream s;
    ~StreamGuard() { (void)d.StreamDestroy(s); }
  } streamGuard{d, stream};

  // Fresh random inputs, rounded to the storage type.
  std::mt19937_64 rng(opts.seed);
  HostTensor hq = HostTensor::random(p.dtype, qN, opts.inputRange, rng);
  HostTensor hk = HostTensor::random(p.dtype, kN, opts.inputRange, rng);
  HostTensor hv = HostTensor::random(p.dtype, vN, 1.0, rng);
  for (const SpecialValue &sv : opts.specials) {
    HostTensor &t = sv.tensor == 'q' ? hq : sv.tensor == 'k' ? hk : hv;
    if (std::string why = applySpecialValue(sv, p.dtype, t.bytes);
        !why.empty())
      return Status::error(why);
  }
  CheckOptions co;
  co.maxRows = opts.checkRows;
  co.seed = opts.seed;
  co.nonFiniteInputs = !opts.specials.empty();
  co.tiling = {kernel.manifest().tile.blockM, kernel.manifest().tile.blockN};

  // An empty problem (batch 0 or seq_q 0) launches nothing and succeeds,
  // whatever the pointers (PyTorch hands out null ones for empty tensors):
  // run it through Kernel::launch with null pointers to show that.
  if (p.batch == 0 || p.seqQ == 0) {
    res.launched = false;
    if (Status s = kernel.launch(LaunchArgs::dense(p, 0, 0, 0, 0, 0), stream);
        !s)
      return s;
    if (opts.check)
      res.check = checkAttention(p, hq, hk, hv, HostTensor::zeros(p.dtype, 0),
                                 {}, co);
    return Status::success();
  }

  std::vector<BufferSet> sets;
  sets.reserve(1);
  sets.push_back(BufferSet{DeviceBuffer(d)});
  if (Status s = allocateSet(sz, sets[0]); !s)
    return s;
  BufferSet &s0 = sets[0];
  for (auto [dst, src, n, what] :
       {std::tuple{s0.q, &hq, sz.q, "Q"}, std::tuple{s0.k, &hk, sz.k, "K"},
        std::tuple{s0.v, &hv, sz.v, "V"}})
    if (Status s = d.check(d.MemcpyHtoD(dst, src->bytes.data(), n),
                           std::string("cuMemcpyHtoD(") + what + ")");
        !s)
      return s;
  // NaN in every float format: unwritten outputs cannot pass the check.
  auto poison = [&](const BufferSet &set) -> Status {
    if (Status s = d.check(d.MemsetD8(set.o, 0xff, sz.o), "cuMemsetD8(O)"); !s)
      return s;
    return d.check(d.MemsetD8(set.lse, 0xff, sz.lse), "cuMemsetD8(LSE)");
  };
  if (Status s = poison(s0); !s)
    return s;
  // The copies and cuMemsetD8 run on the legacy default stream, which the
  // non-blocking launch stream does not wait for: without this the poison
  // can land after the kernel's writes (seen on the H200 with several
  // processes sharing the GPU: unwritten-looking rows, NaN LSEs).
  if (Status s = d.check(d.StreamSynchronize(nullptr),
                         "cuStreamSynchronize(legacy stream) after the "
                         "inputs and the poison");
      !s)
    return s;

  auto argsFor = [&](const BufferSet &set) {
    return LaunchArgs::dense(p, set.q, set.k, set.v, set.o, set.lse);
  };
  Expected<LaunchGeometry> g = kernel.geometry(argsFor(s0));
  if (!g)
    return g.status();
  res.geometry = *g;

  if (Status s = kernel.launch(argsFor(s0), stream); !s)
    return s;
  if (Status s = d.check(d.StreamSynchronize(stream),
                         "cuStreamSynchronize after the first launch "
                         "(the kernel faulted)");
      !s)
    return s;

  HostTensor ho = HostTensor::zeros(p.dtype, oN);
  std::vector<float> hl(lN);
  auto download = [&](const BufferSet &set) -> Status {
    if (Status s = d.check(d.MemcpyDtoH(ho.bytes.data(), set.o, sz.o),
                           "cuMemcpyDtoH(O)");
        !s)
      return s;
    return d.check(d.MemcpyDtoH(hl.data(), set.lse, sz.lse),
                   "cuMemcpyDtoH(LSE)");
  };
  if (opts.check) {
    if (Status s = download(s0); !s)
      return s;
    res.check = checkAttention(p, hq, hk, hv, ho, hl, co);
  }

  if (!opts.time)
    return Status::success();

  Expected<size_t> setCount = bufferSetCount(d, sz.total());
  if (!setCount)
    return setCount.status();
  size_t nSets = *setCount;
  sets.reserve(nSets);
  for (size_t i = 1; i < nSets; ++i) {
    sets.push_back(BufferSet{DeviceBuffer(d)});
    if (Status s = allocateSet(sz, sets.back()); !s)
      return s;
    // Q, K, V are contiguous in a set: one copy each.
    if (Status s = d.check(d.MemcpyDtoD(sets.back().q, sets[0].q,
                                        sets[0].o - sets[0].q),
                           "cuMemcpyDtoD(inputs)");
        !s)
      return s;
    if (Status s = poison(sets.back()); !s)
      return s;
  }
  res.sets = nSets;
  if (Status s = d.check(d.StreamSynchronize(nullptr),
                         "cuStreamSynchronize(legacy stream) after the "
                         "input sets");
      !s)
    return s;

  size_t launchNo = 1;
  auto launchNext = [&]() -> Status {
    return kernel.launch(argsFor(sets[launchNo++ % nSets]), stream);
  };
  Expected<LaunchTiming> timing =
      timeLaunches(d, stream, opts.warmup, opts.reps, launchNext);
  if (!timing)
    return timing.status();
  res.timeMs = timing->medianMs;
  res.timeMinMs = timing->minMs;
  res.reps = opts.reps;

  // The same inputs in another set must give the same output: a cheap
  // race detector (METHOD.md: "a moving error is a race").
  if (opts.check && nSets > 1) {
    HostTensor first = ho;
    std::vector<float> firstLse = hl;
    // The set of the last launch, which ran from poisoned outputs too.
    if (Status s = download(sets[(launchNo - 1) % nSets]); !s)
      return s;
    res.sameAcrossSets = first.bytes == ho.bytes &&
                         std::memcmp(firstLse.data(), hl.data(), sz.lse) == 0;
  }
  return Status::success();
}

std::string attn::runtime::runResultJson(const RunOptions &o,
                                         const RunResult &r,
                                         const std::string &dir) {
  const AttentionProblem &p = r.problem;
  std::ostringstream os;
  os << "{\"target\":\"cuda\",\"kernel\":" << jsonQuote(r.entry)
     << ",\"dir\":" << jsonQuote(dir) << ",\"module\":\"" << r.from << "\"";
  if (!r.note.empty())
    os << ",\"load_note\":" << jsonQuote(r.note);
  os << ",\"device\":" << jsonQuote(r.device) << ",\"shape\":" << p.shapeJson()
     << ",\"scale\":" << jsonNumber(p.effectiveScale())
     << ",\"seed\":" << o.seed << ",\"grid\":[" << r.geometry.grid[0] << ","
     << r.geometry.grid[1] << "," << r.geometry.grid[2] << "]"
     << ",\"threads\":" << r.geometry.threads
     << ",\"dynamic_shared_memory\":" << r.geometry.dynamicSharedMemory
     << ",\"registers\":" << r.registers;
  if (!r.launched)
    os << ",\"launched\":false";
  bool ok = true;
  if (r.check) {
    const CheckReport &c = *r.check;
    os << ",\"check\":\"" << (c.full ? "full" : "sampled") << "\""
       << ",\"checked_rows\":" << c.rows
       << ",\"rel_err\":" << jsonNumber(c.out.relErr)
       << ",\"max_abs_err\":" << jsonNumber(c.out.maxAbsErr);
    if (p.withLse)
      os << ",\"lse_rel_err\":" << jsonNumber(c.lse.relErr)
         << ",\"lse_max_abs_err\":" << jsonNumber(c.lse.maxAbsErr);
    // Chosen non-finite inputs: the O elements NaN behind a hidden key
    // (allowed, HiddenKeyLeaks.h).
    if (!o.specials.empty())
      os << ",\"hidden_key_nan\":" << c.out.hiddenKeyNaN;
    os << ",\"nonfinite_out\":" << c.nonFiniteOut
       << ",\"bad_lse\":" << c.badLse
       << ",\"tolerance\":" << jsonNumber(c.tolerance);
    ok = c.ok;
  } else {
    os << ",\"check\":\"none\"";
  }
  if (r.timeMs) {
    double tflops = p.forwardFlops() / (*r.timeMs * 1e-3) / 1e12;
    os << ",\"time_ms\":" << jsonNumber(*r.timeMs)
       << ",\"time_ms_min\":" << jsonNumber(*r.timeMinMs)
       << ",\"reps\":" << r.reps << ",\"buffer_sets\":" << r.sets
       << ",\"tflops\":" << jsonNumber(tflops);
  }
  if (r.sameAcrossSets)
    os << ",\"same_across_sets\":" << (*r.sameAcrossSets ? "true" : "false");
  os << ",\"ok\":" << (ok ? "true" : "false") << "}";
  return os.str();
}

