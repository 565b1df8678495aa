//===- ShapeBench.cpp - one shape's inputs, reference and timing ----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "ShapeBench.h"

#include "attn/Support/HostReference.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <thread>

using namespace attn;
using namespace attn::runtime;
using namespace attn::tune;

struct ShapeBench::Set {
  explicit Set(const CudaDriver &d) : block(d) {}
  DeviceBuffer block;
  cu::DevicePtr q = 0, k = 0, v = 0, o = 0, lse = 0;
};

size_t attn::tune::alignUp(size_t n) { return (n + 255) & ~size_t(255); }

unsigned attn::tune::threadCount(unsigned want) {
  unsigned n = want ? want : std::thread::hardware_concurrency();
  return std::clamp<unsigned>(n, 1, 64);
}

void attn::tune::parallelFor(size_t n, unsigned threads,
                             const std::function<void(size_t, size_t)> &body) {
  threads = std::min<size_t>(threads, std::max<size_t>(n / 65536, 1));
  if (threads <= 1) {
    body(0, n);
    return;
  }
  std::vector<std::thread> pool;
  size_t chunk = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    size_t b = t * chunk, e = std::min(n, b + chunk);
    if (b < e)
      pool.emplace_back(body, b, e);
  }
  for (std::thread &th : pool)
    th.join();
}

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

} // namespace

HostTensor attn::tune::randomTensor(DType t, size_t n, double range,
                                    uint64_t seed, unsigned threads) {
  HostTensor h = HostTensor::zeros(t, n);
  parallelFor(n, threads, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      double u = (splitmix64(seed ^ (i * 0xd1b54a32d192ed03ull)) >> 11) *
                 (1.0 / 9007199254740992.0); // [0, 1)
      float f = static_cast<float>((2 * u - 1) * range);
      if (t == DType::f32) {
        std::memcpy(&h.bytes[4 * i], &f, 4);
      } else {
        uint16_t x = t == DType::bf16 ? floatToBf16Bits(f) : floatToF16Bits(f);
        std::memcpy(&h.bytes[2 * i], &x, 2);
      }
    }
  });
  return h;
}

int64_t attn::tune::countNonFinite(const HostTensor &o, unsigned threads) {
  std::atomic<int64_t> bad{0};
  size_t n = o.size();
  parallelFor(n, threads, [&](size_t b, size_t e) {
    int64_t local = 0;
    if (o.dtype == DType::f32) {
      for (size_t i = b; i < e; ++i) {
        float f;
        std::memcpy(&f, &o.bytes[4 * i], 4);
        local += !std::isfinite(f);
      }
    } else {
      // All-ones exponent: bf16 0x7f80, f16 0x7c00.
      uint16_t mask = o.dtype == DType::bf16 ? 0x7f80 : 0x7c00;
      for (size_t i = b; i < e; ++i) {
        uint16_t x;
        std::memcpy(&x, &o.bytes[2 * i], 2);
        local += (x & mask) == mask;
      }
    }
    bad += local;
  });
  return bad.load();
}

ShapeBench::ShapeBench(const CudaDriver &d) : d(d) {}
ShapeBench::~ShapeBench() = default;

Expected<std::unique_ptr<ShapeBench>>
ShapeBench::create(const CudaDriver &d, const AttentionProblem &p,
                   const BenchOptions &o) {
  std::unique_ptr<ShapeBench> sb(new ShapeBench(d));
  sb->p = p;
  sb->opts = o;
  unsigned threads = threadCount(o.threads);
  auto start = std::chrono::steady_clock::now();
  if (Status s = sb->stream.create(); !s)
    return s;
  const size_t eb = dtypeBytes(p.dtype);
  const size_t qN = p.batch * p.headsQ * p.seqQ * p.headDim;
  const size_t kN = p.batch * p.headsKv * p.seqKv * p.headDim;
  const size_t vN = p.batch * p.headsKv * p.seqKv * p.vDim();
  const size_t oN = p.batch * p.headsQ * p.seqQ * p.vDim();
  const size_t lN = p.batch * p.headsQ * p.seqQ;
  sb->qBytes = qN * eb;
  sb->kBytes = kN * eb;
  sb->vBytes = vN * eb;
  sb->oBytes = oN * eb;
  sb->lseBytes = lN * sizeof(float);
  sb->q = randomTensor(p.dtype, qN, 1.0, o.seed * 3 + 1, threads);
  sb->k = randomTensor(p.dtype, kN, 1.0, o.seed * 3 + 2, threads);
  sb->v = randomTensor(p.dtype, vN, 1.0, o.seed * 3 + 3, threads);
  sb->o = HostTensor::zeros(p.dtype, oN);
  sb->lse.assign(lN, 0.0f);

  // Buffer sets: enough that one pass is three times the L2 (small shapes
  // are timed from device memory, as in a model), as many as half the
  // free memory holds.
  size_t setBytes = alignUp(sb->qBytes) + alignUp(sb->kBytes) +
                    alignUp(sb->vBytes) + alignUp(sb->oBytes) +
                    alignUp(sb->lseBytes);
  Expected<size_t> nSets = bufferSetCount(d, setBytes);
  if (!nSets)
    return nSets.status();
  for (size_t i = 0; i < *nSets; ++i) {
    auto set = std::make_unique<Set>(d);
    if (Status s = set->block.allocate(setBytes); !s)
      return s;
    set->q = set->block.get();
    set->k = set->q + alignUp(sb->qBytes);
    set->v = set->k + alignUp(sb->kBytes);
    set->o = set->v + alignUp(sb->vBytes);
    set->lse = set->o + alignUp(sb->oBytes);
    if (i == 0) {
      for (auto [dst, src, n] : {std::tuple{set->q, &sb->q, sb->qBytes},
                                 std::tuple{set->k, &sb->k, sb->kBytes},
                                 std::tuple{set->v, &sb->v, sb->vBytes}})
        if (Status s = d.check(d.MemcpyHtoD(dst, src->bytes.data(), n),
                               "cuMemcpyHtoD(inputs)");
            !s)
          return s;
    } else if (Status s = d.check(d.MemcpyDtoD(set->q, sb->bufs[0]->q,
                                               sb->bufs[0]->o - sb->bufs[0]->q),
                                  "cuMemcpyDtoD(inputs)");
               !s) {
      return s;
    }
    sb->bufs.push_back(std::move(set));
  }
  // The copies ran on the legacy stream; the launches use a non-blocking
  // one that does not wait for it.
  if (Status s = d.check(d.StreamSynchronize(nullptr),
                         "cuStreamSynchronize(legacy stream) after the inputs");
      !s)
    return s;
  auto mid = std::chrono::steady_clock::now();
  sb->inputSeconds = std::chrono::duration<double>(mid - start).count();

  // The sampled rows: up to 16 (batch, head) slices (the first and last
  // among them), each with its first and last row and random ones.
  const int64_t slices = p.batch * p.headsQ, Nq = p.seqQ;
  const int64_t total = slices * Nq;
  int64_t target = std::min<int64_t>(std::max<int64_t>(o.checkRows, 1), total);
  std::mt19937_64 rng(o.seed ^ 0x5eed5eedull);
  if (target == total) {
    for (int64_t s = 0; s < slices; ++s)
      for (int64_t i = 0; i < Nq; ++i)
        sb->rows.push_back({s, i});
  } else {
    std::set<int64_t> sliceSet = {0, slices - 1};
    std::uniform_int_distribution<int64_t> pickSlice(0, slices - 1);
    while (static_cast<int64_t>(sliceSet.size()) <
           std::min<int64_t>(slices, 16))
      sliceSet.insert(pickSlice(rng));
    int64_t perSlice = std::clamp<int64_t>(
        (target + sliceSet.size() - 1) / sliceSet.size(),
        std::min<int64_t>(2, Nq), Nq);
    std::uniform_int_distribution<int64_t> pickRow(0, Nq - 1);
    for (int64_t s : sliceSet) {
      std::set<int64_t> r = {0, Nq - 1};
      while (static_cast<int64_t>(r.size()) < perSlice)
        r.insert(pickRow(rng));
      for (int64_t i : r)
        sb->rows.push_back({s, i});
    }
  }
  // The float64 reference, one task per slice (its K and V converted once).
  const int64_t D = p.headDim, Dv = p.vDim(), Nk = p.seqKv;
  const int64_t group = p.headsQ / p.headsKv;
  sb->wantO.assign(sb->rows.size() * Dv, 0.0);
  sb->wantL.assign(sb->rows.size(), 0.0);
  std::vector<std::pair<size_t, size_t>> tasks; // [first, end) in rows
  for (size_t i = 0; i < sb->rows.size();) {
    size_t j = i;
    while (j < sb->rows.size() && sb->rows[j].first == sb->rows[i].first)
      ++j;
    tasks.push_back({i, j});
    i = j;
  }
  std::atomic<size_t> next{0};
  ShapeBench &b = *sb;
  auto worker = [&] {
    std::vector<double> kd, vd, qd(D);
    for (size_t t; (t = next.fetch_add(1)) < tasks.size();) {
      int64_t slice = b.rows[tasks[t].first].first;
      int64_t bi = slice / p.headsQ, h = slice % p.headsQ, hk = h / group;
      const size_t kBase = ((bi * p.headsKv + hk) * Nk) * D;
      const size_t vBase = ((bi * p.headsKv + hk) * Nk) * Dv;
      const size_t qBase = ((bi * p.headsQ + h) * Nq) * D;
      kd.resize(Nk * D);
      vd.resize(Nk * Dv);
      for (int64_t x = 0; x < Nk * D; ++x)
        kd[x] = b.k.get(kBase + x);
      for (int64_t x = 0; x < Nk * Dv; ++x)
        vd[x] = b.v.get(vBase + x);
      for (size_t r = tasks[t].first; r < tasks[t].second; ++r) {
        int64_t i = b.rows[r].second;
        for (int64_t x = 0; x < D; ++x)
          qd[x] = b.q.get(qBase + i * D + x);
        auto [first, last] = p.keyRange(i);
        double rowLse = 0;
        referenceAttentionRow(p, bi, h, i, qd.data(), kd.data(), vd.data(), first,
                              last, &b.wantO[r * Dv], rowLse);
        b.wantL[r] = rowLse;
      }
    }
  };
  std::vector<std::thread> pool;
  unsigned n = std::min<size_t>(threads, std::max<size_t>(tasks.size(), 1));
  for (unsigned i = 1; i < n; ++i)
    pool.emplace_back(worker);
  worker();
  for (std::thread &th : pool)
    th.join();
  sb->referenceSeconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - mid)
                             .count();
  return sb;
}

Status ShapeBench::launchOn(const Kernel &kernel, size_t set) {
  const Set &s = *bufs[set];
  return kernel.launch(LaunchArgs::dense(p, s.q, s.k, s.v, s.o, s.lse),
                       stream.get());
}

Status ShapeBench::download(size_t set) {
  const Set &s = *bufs[set];
  if (Status st = d.check(d.StreamSynchronize(stream.get()),
                          "cuStreamSynchronize (the kernel faulted)");
      !st)
    return st;
  if (Status st = d.check(d.MemcpyDtoH(o.bytes.data(), s.o, oBytes),
                          "cuMemcpyDtoH(O)");
      !st)
    return st;
  return d.check(d.MemcpyDtoH(lse.data(), s.lse, lseBytes),
                 "cuMemcpyDtoH(LSE)");
}

Status ShapeBench::check(const Kernel &kernel, BenchCheck &out) {
  const Set &s0 = *bufs[0];
  // NaN in every float format: unwritten outputs cannot pass.
  if (Status s = d.check(d.MemsetD8(s0.o, 0xff, oBytes), "cuMemsetD8(O)"); !s)
    return s;
  if (Status s = d.check(d.MemsetD8(s0.lse, 0xff, lseBytes),
                         "cuMemsetD8(LSE)");
      !s)
    return s;
  // cuMemsetD8 runs on the legacy stream, which a non-blocking stream does
  // not wait for: without this the poison can land after the kernel's
  // writes (seen on the H200 as whole LSE arrays of NaN).
  if (Status s = d.check(d.StreamSynchronize(nullptr),
                         "cuStreamSynchronize(legacy stream) after the poison");
      !s)
    return s;
  if (Status s = launchOn(kernel, 0); !s)
    return s;
  if (Status s = download(0); !s)
    return s;

  unsigned threads = threadCount(opts.threads);
  out.nonFiniteOut = countNonFinite(o, threads);
  const double inf = std::numeric_limits<double>::infinity();
  out.badLse = 0;
  if (p.withLse)
    for (size_t r = 0; r < lse.size(); ++r) {
      auto [first, last] = p.keyRange(static_cast<int64_t>(r % p.seqQ));
      bool masked = last <= first;
      float l = lse[r];
      if (std::isnan(l) || l == inf || masked != (l == -inf))
        ++out.badLse;
    }
  const int64_t Dv = p.vDim();
  std::vector<double> gotO(rows.size() * Dv), gotL(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    auto [slice, i] = rows[r];
    size_t base = (slice * p.seqQ + i) * Dv;
    for (int64_t x = 0; x < Dv; ++x)
      gotO[r * Dv + x] = o.get(base + x);
    gotL[r] = lse[slice * p.seqQ + i];
  }
  out.relErr = compareToReference(gotO, wantO).relErr;
  out.lseRelErr = p.withLse ? compareToReference(gotL, wantL).relErr : 0.0;
  double tol = toleranceFor(p.dtype);
  out.ok = out.relErr <= tol && (!p.withLse || out.lseRelErr <= tol) &&
           out.nonFiniteOut == 0 && out.badLse == 0;
  return Status::success();
}



Status ShapeBench::time(const Kernel &kernel, int64_t warmup, int64_t reps,
                        std::vector<float> &samples) {
  return timeEachLaunch(
      d, stream.get(), warmup, reps,
      [&](size_t n) { return launchOn(kernel, n % bufs.size()); }, samples);
}

Status ShapeBench::repeatable(const Kernel &kernel, bool &same) {
  if (Status s = launchOn(kernel, 0); !s)
    return s;
  if (Status s = download(0); !s)
    return s;
  HostTensor firstO = o;
  std::vector<float> firstL = lse;
  if (Status s = launchOn(kernel, 0); !s)
    return s;
  if (Status s = download(0); !s)
    return s;
  same = firstO.bytes == o.bytes &&
         std::memcmp(firstL.data(), lse.data(), lseBytes) == 0;
  return Status::success();
}

bool ShapeBench::healthy() {
  return d.MemsetD8(bufs[0]->lse, 0, 4) == cu::kSuccess &&
         d.StreamSynchronize(nullptr) == cu::kSuccess &&
         d.StreamSynchronize(stream.get()) == cu::kSuccess;
}
