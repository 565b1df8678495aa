//===- BackwardRun.cpp - run, check and time backward kernels -------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/BackwardRun.h"
#include "attn/Runtime/DeviceMemory.h"
#include "attn/Runtime/Json.h"
#include "attn/Support/JsonNumber.h"

#include <cmath>
#include <cstring>
#include <tuple>
#include <sstream>

using namespace attn;
using namespace attn::runtime;

bool BackwardRunResult::ok() const {
  for (const std::optional<ErrorStats> &e : {dq, dk, dv})
    if (e && !(e->nonFinite == 0 && e->relErr <= tolerance))
      return false;
  // Atomic dQ accumulation is not bit-reproducible: `repeatable` is
  // reported, not required.
  return true;
}

namespace {
std::vector<double> toDoubles(const HostTensor &t) {
  std::vector<double> out(t.size());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = t.get(i);
  return out;
}

/// `values` rounded to `dtype` and stored in its format.
HostTensor fromDoubles(DType dtype, const std::vector<double> &values) {
  HostTensor t = HostTensor::zeros(dtype, values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    float f = static_cast<float>(values[i]);
    if (dtype == DType::bf16) {
      uint16_t b = floatToBf16Bits(f);
      std::memcpy(t.bytes.data() + 2 * i, &b, 2);
    } else if (dtype == DType::f16) {
      uint16_t h = floatToF16Bits(f);
      std::memcpy(t.bytes.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(t.bytes.data() + 4 * i, &f, 4);
    }
  }
  return t;
}
} // namespace

Status attn::runtime::runBackwardKernel(const BackwardKernel &kernel,
                                        const RunOptions &opts,
                                        int64_t repeats,
                                        BackwardRunResult &res) {
  const Kernel &main = kernel.mainKernel();
  const CudaDriver &d = main.driver();
  res.entry = main.manifest().entry;
  res.from = main.loadedFrom();
  {
    char name[256] = {0};
    cu::Device dev;
    if (d.CtxGetDevice(&dev) == cu::kSuccess &&
        d.DeviceGetName(name, sizeof(name) - 1, dev) == cu::kSuccess)
      res.device = name;
  }
  const AttentionProblem &p = res.problem;
  res.tolerance = toleranceFor(p.dtype);
  const size_t qN = p.batch * p.headsQ * p.seqQ * p.headDim;
  const size_t kN = p.batch * p.headsKv * p.seqKv * p.headDim;
  const size_t vN = p.batch * p.headsKv * p.seqKv * p.vDim();
  const size_t oN = p.batch * p.headsQ * p.seqQ * p.vDim();
  const size_t lN = p.batch * p.headsQ * p.seqQ;
  const size_t eb = dtypeBytes(p.dtype);

  OwnedStream stream(d);
  if (Status s = stream.create(); !s)
    return s;

  std::mt19937_64 rng(opts.seed);
  HostTensor hq = HostTensor::random(p.dtype, qN, opts.inputRange, rng);
  HostTensor hk = HostTensor::random(p.dtype, kN, opts.inputRange, rng);
  HostTensor hv = HostTensor::random(p.dtype, vN, 1.0, rng);
  HostTensor hdo = HostTensor::random(p.dtype, oN, 1.0, rng);
  std::vector<double> q = toDoubles(hq), k = toDoubles(hk), v = toDoubles(hv),
                      dO = toDoubles(hdo);
  std::vector<double> o, lse;
  referenceAttention(p, q, k, v, o, lse);
  HostTensor ho = fromDoubles(p.dtype, o);
  std::vector<float> hl(lN);
  for (size_t i = 0; i < lN; ++i)
    hl[i] = static_cast<float>(lse[i]);

  struct Buffer {
    DeviceBuffer mem;
    const char *name;
    size_t bytes;
  };
  BackwardArgs a = BackwardArgs::dense(p);
  std::vector<Buffer> bufs;
  bufs.reserve(12);
  auto alloc = [&](const char *name, size_t bytes,
                   cu::DevicePtr &out) -> Status {
    bufs.push_back(Buffer{DeviceBuffer(d), name, bytes});
    if (Status s = bufs.back().mem.allocate(std::max<size_t>(bytes, 16)); !s)
      return s.prepend(name);
    out = bufs.back().mem.get();
    return Status::success();
  };
  for (auto [name, bytes, ptr] :
       {std::tuple{"q", qN * eb, &a.q}, {"k", kN * eb, &a.k},
        {"v", vN * eb, &a.v}, {"o", oN * eb, &a.o}, {"do", oN * eb, &a.dO},
        {"lse", lN * sizeof(float), &a.lse}, {"dq", qN * eb, &a.dq},
        {"dk", kN * eb, &a.dk}, {"dv", vN * eb, &a.dv},
        {"workspace", kernel.workspaceBytes(a), &a.workspace}})
    if (Status s = alloc(name, bytes, *ptr); !s)
      return s;
  std::vector<int32_t> keyStarts = p.keyBounds(true),
                       keyEnds = p.keyBounds(false);
  if (p.hasKeyRanges())
    for (auto [name, host, ptr] : {std::tuple{"key_start", &keyStarts,
                                              &a.keyStart},
                                   {"key_end", &keyEnds, &a.keyEnd}}) {
      if (Status s = alloc(name, host->size() * 4, *ptr); !s)
        return s;
      if (Status s = d.check(d.MemcpyHtoD(*ptr, host->data(), host->size() * 4),
                             std::string("cuMemcpyHtoD(") + name + ")");
          !s)
        return s;
    }
  if (p.alibi) {
    std::vector<float> slopes = p.alibiSlopes();
    if (Status s = alloc("alibi_slopes", slopes.size() * 4, a.alibiSlopes); !s)
      return s;
    if (Status s = d.check(d.MemcpyHtoD(a.alibiSlopes, slopes.data(),
                                        slopes.size() * 4),
                           "cuMemcpyHtoD(alibi_slopes)");
        !s)
      return s;
    a.alibiSlopesStrideB = p.headsQ;
  }
  for (auto [dst, src, n, what] :
       {std::tuple{a.q, (const void *)hq.bytes.data(), qN * eb, "Q"},
        {a.k, (const void *)hk.bytes.data(), kN * eb, "K"},
        {a.v, (const void *)hv.bytes.data(), vN * eb, "V"},
        {a.o, (const void *)ho.bytes.data(), oN * eb, "O"},
        {a.dO, (const void *)hdo.bytes.data(), oN * eb, "dO"},
        {a.lse, (const void *)hl.data(), lN * sizeof(float), "LSE"}})
    if (Status s = d.check(d.MemcpyHtoD(dst, src, n),
                           std::string("cuMemcpyHtoD(") + what + ")");
        !s)
      return s;
  // NaN in every float format, and garbage in the workspace: the kernels
  // must write every gradient and initialise their own scratch.
  auto poison = [&]() -> Status {
    for (auto [ptr, n, what] : {std::tuple{a.dq, qN * eb, "dQ"},
                                {a.dk, kN * eb, "dK"},
                                {a.dv, vN * eb, "dV"},
                                {a.workspace, kernel.workspaceBytes(a),
                                 "workspace"}})
      if (Status s = d.check(d.MemsetD8(ptr, 0xff, n),
                             std::string("cuMemsetD8(") + what + ")");
          !s)
        return s;
    // The copies and cuMemsetD8 run on the legacy default stream, which
    // the non-blocking launch stream does not wait for.
    return d.check(d.StreamSynchronize(nullptr),
                   "cuStreamSynchronize(legacy stream) after the inputs and "
                   "the poison");
  };
  if (Status s = poison(); !s)
    return s;
  if (Status s = kernel.launch(a, stream.get()); !s)
    return s;
  if (Status s = d.check(d.StreamSynchronize(stream.get()),
                         "cuStreamSynchronize after the backward launches "
                         "(a kernel faulted)");
      !s)
    return s;

  HostTensor gq = HostTensor::zeros(p.dtype, qN),
             gk = HostTensor::zeros(p.dtype, kN),
             gv = HostTensor::zeros(p.dtype, vN);
  auto download = [&]() -> Status {
    for (auto [dst, src, n, what] :
         {std::tuple{&gq, a.dq, qN * eb, "dQ"}, {&gk, a.dk, kN * eb, "dK"},
          {&gv, a.dv, vN * eb, "dV"}})
      if (Status s = d.check(d.MemcpyDtoH(dst->bytes.data(), src, n),
                             std::string("cuMemcpyDtoH(") + what + ")");
          !s)
        return s;
    return Status::success();
  };
  if (Status s = download(); !s)
    return s;
  if (opts.check) {
    std::vector<double> rq, rk, rv;
    referenceAttentionBackward(p, q, k, v, dO, rq, rk, rv);
    res.dq = compareToReference(toDoubles(gq), rq);
    res.dk = compareToReference(toDoubles(gk), rk);
    res.dv = compareToReference(toDoubles(gv), rv);
  }

  if (repeats > 0) {
    HostTensor fq = gq, fk = gk, fv = gv;
    bool same = true;
    for (int64_t r = 0; r < repeats && same; ++r) {
      if (Status s = poison(); !s)
        return s;
      if (Status s = kernel.launch(a, stream.get()); !s)
        return s;
      if (Status s = d.check(d.StreamSynchronize(stream.get()),
                             "cuStreamSynchronize");
          !s)
        return s;
      if (Status s = download(); !s)
        return s;
      same = fq.bytes == gq.bytes && fk.bytes == gk.bytes &&
             fv.bytes == gv.bytes;
    }
    res.repeatable = same;
    res.repeats = repeats;
  }

  if (opts.time) {
    Expected<LaunchTiming> t =
        timeLaunches(d, stream.get(), opts.warmup, opts.reps,
                     [&] { return kernel.launch(a, stream.get()); });
    if (!t)
      return t.status();
    res.timeMs = t->medianMs;
    res.timeMinMs = t->minMs;
    res.reps = opts.reps;
  }
  return Status::success();
}

std::string attn::runtime::backwardRunResultJson(const RunOptions &o,
                                                 const BackwardRunResult &r,
                                                 const std::string &dir) {
  const AttentionProblem &p = r.problem;
  std::ostringstream os;
  os << "{\"target\":\"cuda\",\"direction\":\"backward\",\"kernel\":"
     << jsonQuote(r.entry) << ",\"dir\":" << jsonQuote(dir)
     << ",\"module\":\"" << r.from << "\",\"device\":" << jsonQuote(r.device)
     << ",\"shape\":" << p.shapeJson()
     << ",\"scale\":" << jsonNumber(p.effectiveScale())
     << ",\"seed\":" << o.seed;
  for (auto [name, e] : {std::pair{"dq", &r.dq}, {"dk", &r.dk},
                         {"dv", &r.dv}})
    if (*e)
      os << ",\"" << name << "_rel_err\":" << jsonNumber((*e)->relErr)
         << ",\"" << name << "_max_abs_err\":" << jsonNumber((*e)->maxAbsErr)
         << ",\"" << name << "_nonfinite\":" << (*e)->nonFinite;
  os << ",\"check\":\"" << (r.dq ? "full" : "none") << "\""
     << ",\"tolerance\":" << jsonNumber(r.tolerance);
  if (r.timeMs) {
    double tflops = 2.5 * p.forwardFlops() / (*r.timeMs * 1e-3) / 1e12;
    os << ",\"time_ms\":" << jsonNumber(*r.timeMs)
       << ",\"time_ms_min\":" << jsonNumber(*r.timeMinMs)
       << ",\"reps\":" << r.reps << ",\"tflops\":" << jsonNumber(tflops);
  }
  if (r.repeatable)
    os << ",\"repeats\":" << r.repeats << ",\"bit_identical\":"
       << (*r.repeatable ? "true" : "false");
  os << ",\"ok\":" << (r.ok() ? "true" : "false") << "}";
  return os.str();
}
