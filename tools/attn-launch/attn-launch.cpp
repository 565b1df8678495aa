//===- attn-launch.cpp - run one compiled kernel on a GPU and check it ----===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// MLIR-free: loads a kernel directory (manifest.json + PTX/cubin) through
// the runtime, runs it on fresh random inputs with poisoned outputs, checks
// it against the float64 host reference, times it with CUDA events
// (rotating among input sets so the L2 cache does not flatter small
// shapes) and prints one JSON line, as attn-run does. Exit status: 0 ok,
// 1 over tolerance, 2 usage, loading or CUDA errors.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Check.h"
#include "attn/Runtime/Json.h"
#include "attn/Runtime/Runtime.h"

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

using namespace attn::runtime;
using attn::AttentionProblem;
using attn::DType;

namespace {
const char *kUsage =
    "usage: attn-launch <kernel-dir> [options]\n"
    "\n"
    "Runs the kernel in <kernel-dir> (manifest.json + PTX/cubin) on random\n"
    "inputs and prints one JSON line.\n"
    "\n"
    "  --batch N --heads-q N --heads-kv N --seq-q N --seq-kv N\n"
    "                    launch shape (default: the manifest's problem)\n"
    "  --seed N          random inputs' seed (default 0)\n"
    "  --input-range R   Q and K drawn from U(-R, R) (default 1; V is U(-1,1))\n"
    "  --check           compare O and LSE with the float64 host reference\n"
    "  --check-rows N    reference rows to check (default: all rows when\n"
    "                    cheap, else a random sample)\n"
    "  --time            time with CUDA events: median of --reps launches\n"
    "  --warmup N        launches before timing (default 5)\n"
    "  --reps N          timed launches (default 20)\n"
    "  --ptx             load the PTX even when a cubin is present\n"
    "  --device N        CUDA device ordinal (default 0)\n"
    "\n"
    "Exit status: 0 ok, 1 over tolerance, 2 usage, loading or CUDA errors.\n";

struct Options {
  std::string dir;
  std::optional<int64_t> batch, headsQ, headsKv, seqQ, seqKv;
  uint64_t seed = 0;
  double inputRange = 1.0;
  bool check = false, time = false, preferPtx = false;
  int64_t checkRows = 0, warmup = 5, reps = 20, device = 0;
};

std::string jsonNumber(double v) {
  if (std::isnan(v))
    return "\"nan\"";
  if (std::isinf(v))
    return v > 0 ? "\"inf\"" : "\"-inf\"";
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

/// Parses argv; an error names the flag at fault.
Expected<Options> parseArgs(int argc, char **argv) {
  Options o;
  auto integer = [](const std::string &flag,
                    const std::string &text) -> Expected<int64_t> {
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end || errno == ERANGE)
      return Status::error(flag + " expects an integer, got '" + text + "'");
    return static_cast<int64_t>(v);
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help")
      return Status::error("help");
    if (arg.rfind("--", 0) != 0) {
      if (!o.dir.empty())
        return Status::error("more than one kernel directory ('" + o.dir +
                             "' and '" + arg + "')");
      o.dir = arg;
      continue;
    }
    std::string flag = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    auto boolFlag = [&](bool &slot) -> Status {
      if (hasValue)
        return Status::error(flag + " takes no value");
      slot = true;
      return Status::success();
    };
    auto takeValue = [&]() -> Status {
      if (hasValue)
        return Status::success();
      if (i + 1 >= argc)
        return Status::error(flag + " needs a value");
      value = argv[++i];
      return Status::success();
    };
    struct IntFlag {
      const char *name;
      std::optional<int64_t> *opt;
      int64_t *plain;
      int64_t min;
    };
    const IntFlag ints[] = {
        {"--batch", &o.batch, nullptr, 1},
        {"--heads-q", &o.headsQ, nullptr, 1},
        {"--heads-kv", &o.headsKv, nullptr, 1},
        {"--seq-q", &o.seqQ, nullptr, 1},
        {"--seq-kv", &o.seqKv, nullptr, 1},
        {"--check-rows", nullptr, &o.checkRows, 1},
        {"--warmup", nullptr, &o.warmup, 0},
        {"--reps", nullptr, &o.reps, 1},
        {"--device", nullptr, &o.device, 0},
    };
    bool done = false;
    for (const IntFlag &f : ints) {
      if (flag != f.name)
        continue;
      if (Status s = takeValue(); !s)
        return s;
      Expected<int64_t> v = integer(flag, value);
      if (!v)
        return v.status();
      if (*v < f.min)
        return Status::error(flag + " must be at least " +
                             std::to_string(f.min) + " (got " + value + ")");
      if (f.opt)
        *f.opt = *v;
      else
        *f.plain = *v;
      done = true;
    }
    if (done)
      continue;
    Status s = Status::success();
    if (flag == "--check")
      s = boolFlag(o.check);
    else if (flag == "--time")
      s = boolFlag(o.time);
    else if (flag == "--ptx")
      s = boolFlag(o.preferPtx);
    else if (flag == "--seed") {
      if (s = takeValue(); s) {
        Expected<int64_t> v = integer(flag, value);
        if (!v || *v < 0)
          return Status::error("--seed expects a non-negative integer, got '" +
                               value + "'");
        o.seed = static_cast<uint64_t>(*v);
      }
    } else if (flag == "--input-range") {
      if (s = takeValue(); s) {
        char *end = nullptr;
        o.inputRange = std::strtod(value.c_str(), &end);
        if (value.empty() || *end || !(o.inputRange > 0) ||
            !std::isfinite(o.inputRange))
          return Status::error("--input-range expects a positive number, "
                               "got '" + value + "'");
      }
    } else {
      return Status::error("unknown flag '" + flag + "' (see --help)");
    }
    if (!s)
      return s;
  }
  if (o.dir.empty())
    return Status::error("no kernel directory given");
  return o;
}

/// One cuMemAlloc'd block, freed on scope exit.
class DeviceBuffer {
public:
  DeviceBuffer(const CudaDriver &d) : d(&d) {}
  DeviceBuffer(DeviceBuffer &&o) noexcept : d(o.d), ptr(o.ptr), bytes(o.bytes) {
    o.ptr = 0;
  }
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

/// Everything the JSON line reports.
struct Result {
  std::string entry, from, note, device;
  AttentionProblem problem;
  LaunchGeometry geometry;
  int registers = -1;
  std::optional<CheckReport> check;
  std::optional<double> timeMs, timeMinMs;
  int64_t reps = 0, sets = 0;
  std::optional<bool> sameAcrossSets;
};

class Launcher {
public:
  Launcher(const Options &o, const Kernel &k)
      : opts(o), kernel(k), d(k.driver()) {}

  Status run(Result &res);

private:
  const Options &opts;
  const Kernel &kernel;
  const CudaDriver &d;
  cu::Stream stream = nullptr;
};

Status Launcher::run(Result &res) {
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
    CheckOptions co;
    co.maxRows = opts.checkRows;
    co.seed = opts.seed;
    res.check = checkAttention(p, hq, hk, hv, ho, hl, co);
  }

  if (!opts.time)
    return Status::success();

  // Enough input sets that one pass over them is several times the L2, so
  // small shapes are timed from device memory, as they run in a model.
  int l2 = 0;
  cu::Device dev;
  if (Status s = d.check(d.CtxGetDevice(&dev), "cuCtxGetDevice"); !s)
    return s;
  (void)d.DeviceGetAttribute(&l2, cu::kDevAttrL2CacheSize, dev);
  size_t freeMem = 0, totalMem = 0;
  if (Status s = d.check(d.MemGetInfo(&freeMem, &totalMem), "cuMemGetInfo");
      !s)
    return s;
  size_t want = (3 * static_cast<size_t>(std::max(l2, 1 << 20)) +
                 sz.total() - 1) / sz.total();
  size_t fit = freeMem / 2 / sz.total();
  size_t nSets = std::clamp<size_t>(std::min(want, fit), 1, 512);
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

  size_t launchNo = 1;
  auto launchNext = [&]() -> Status {
    return kernel.launch(argsFor(sets[launchNo++ % nSets]), stream);
  };
  for (int64_t i = 0; i < opts.warmup; ++i)
    if (Status s = launchNext(); !s)
      return s;
  std::vector<cu::Event> events(2 * opts.reps, nullptr);
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
  for (int64_t r = 0; r < opts.reps; ++r) {
    if (Status s = d.check(d.EventRecord(events[2 * r], stream),
                           "cuEventRecord");
        !s)
      return s;
    if (Status s = launchNext(); !s)
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
  std::vector<float> ms(opts.reps);
  for (int64_t r = 0; r < opts.reps; ++r)
    if (Status s = d.check(d.EventElapsedTime(&ms[r], events[2 * r],
                                              events[2 * r + 1]),
                           "cuEventElapsedTime");
        !s)
      return s;
  std::sort(ms.begin(), ms.end());
  res.timeMs = opts.reps % 2 ? ms[opts.reps / 2]
                             : 0.5 * (ms[opts.reps / 2 - 1] + ms[opts.reps / 2]);
  res.timeMinMs = ms.front();
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

std::string resultJson(const Options &o, const Result &r) {
  const AttentionProblem &p = r.problem;
  std::ostringstream os;
  os << "{\"target\":\"cuda\",\"kernel\":" << jsonQuote(r.entry)
     << ",\"dir\":" << jsonQuote(o.dir) << ",\"module\":\"" << r.from << "\"";
  if (!r.note.empty())
    os << ",\"load_note\":" << jsonQuote(r.note);
  os << ",\"device\":" << jsonQuote(r.device) << ",\"shape\":" << p.shapeJson()
     << ",\"scale\":" << jsonNumber(p.effectiveScale())
     << ",\"seed\":" << o.seed << ",\"grid\":[" << r.geometry.grid[0] << ","
     << r.geometry.grid[1] << "," << r.geometry.grid[2] << "]"
     << ",\"threads\":" << r.geometry.threads
     << ",\"dynamic_shared_memory\":" << r.geometry.dynamicSharedMemory
     << ",\"registers\":" << r.registers;
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

/// Exit 2 with the message on stderr, and a JSON line on stdout so that
/// scripts collecting results see the failure too.
int fail(const Options *o, const std::string &msg) {
  std::fprintf(stderr, "attn-launch: error: %s\n", msg.c_str());
  if (o && !o->dir.empty())
    std::printf("{\"target\":\"cuda\",\"dir\":%s,\"ok\":false,\"error\":%s}\n",
                jsonQuote(o->dir).c_str(), jsonQuote(msg).c_str());
  return 2;
}
} // namespace

int main(int argc, char **argv) {
  Expected<Options> parsed = parseArgs(argc, argv);
  if (!parsed) {
    if (parsed.message() == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (argc == 1)
      std::fputs(kUsage, stderr);
    else
      std::fprintf(stderr,
                   "attn-launch: error: %s\nrun 'attn-launch --help' for "
                   "usage\n",
                   parsed.message().c_str());
    return 2;
  }
  const Options &opts = *parsed;

  // The manifest first: its errors need no GPU.
  Expected<KernelManifest> man = readManifest(opts.dir);
  if (!man)
    return fail(&opts, man.message());
  Result res;
  res.problem = man->problem;
  AttentionProblem &p = res.problem;
  if (opts.batch)
    p.batch = *opts.batch;
  if (opts.headsQ)
    p.headsQ = *opts.headsQ;
  if (opts.headsKv)
    p.headsKv = *opts.headsKv;
  if (opts.seqQ)
    p.seqQ = *opts.seqQ;
  if (opts.seqKv)
    p.seqKv = *opts.seqKv;
  if (std::string why = p.validate(); !why.empty())
    return fail(&opts, why);

  LoadOptions lo;
  lo.preferPtx = opts.preferPtx;
  lo.deviceOrdinal = static_cast<int>(opts.device);
  Expected<std::unique_ptr<Kernel>> kernel = Kernel::load(opts.dir, lo);
  if (!kernel)
    return fail(&opts, kernel.message());
  const Kernel &k = **kernel;
  res.entry = k.manifest().entry;
  res.from = k.loadedFrom();
  res.note = k.loadNote();
  res.registers = k.registers();
  {
    char name[256] = {0};
    cu::Device dev;
    if (k.driver().CtxGetDevice(&dev) == cu::kSuccess &&
        k.driver().DeviceGetName(name, sizeof(name) - 1, dev) == cu::kSuccess)
      res.device = name;
  }

  Launcher launcher(opts, k);
  if (Status s = launcher.run(res); !s)
    return fail(&opts, s.message());
  std::string line = resultJson(opts, res);
  std::printf("%s\n", line.c_str());
  bool ok = !res.check || res.check->ok;
  return ok ? 0 : 1;
}
