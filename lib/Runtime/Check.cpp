//===- Check.cpp - check a kernel's output against float64 ----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Check.h"
#include "attn/Runtime/VariantRun.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <thread>

using namespace attn;
using namespace attn::runtime;

double HostTensor::get(size_t i) const {
  switch (dtype) {
  case DType::f32: {
    float f;
    std::memcpy(&f, &bytes[4 * i], 4);
    return f;
  }
  case DType::bf16: {
    uint16_t h;
    std::memcpy(&h, &bytes[2 * i], 2);
    return bf16BitsToFloat(h);
  }
  case DType::f16: {
    uint16_t h;
    std::memcpy(&h, &bytes[2 * i], 2);
    return f16BitsToFloat(h);
  }
  }
  return std::nan("");
}

HostTensor HostTensor::zeros(DType t, size_t n) {
  HostTensor h;
  h.dtype = t;
  h.bytes.assign(n * dtypeBytes(t), 0);
  return h;
}

HostTensor HostTensor::random(DType t, size_t n, double range,
                              std::mt19937_64 &rng) {
  HostTensor h = zeros(t, n);
  std::uniform_real_distribution<double> dist(-range, range);
  for (size_t i = 0; i < n; ++i) {
    float f = static_cast<float>(dist(rng));
    if (t == DType::f32) {
      std::memcpy(&h.bytes[4 * i], &f, 4);
    } else {
      uint16_t b = t == DType::bf16 ? floatToBf16Bits(f) : floatToF16Bits(f);
      std::memcpy(&h.bytes[2 * i], &b, 2);
    }
  }
  return h;
}

namespace {
/// Rows checked together: one (batch, head) slice and some of its rows.
struct Task {
  int64_t b, h;
  std::vector<int64_t> rows; // query rows within the slice
  size_t first;              // position of rows[0] in the gathered output
};
} // namespace

CheckReport attn::runtime::checkAttention(const AttentionProblem &p,
                                          const HostTensor &q,
                                          const HostTensor &k,
                                          const HostTensor &v,
                                          const HostTensor &o,
                                          const std::vector<float> &lse,
                                          const CheckOptions &opts) {
  // Per-batch key ranges and packed sequences change each batch entry's
  // keys: the per-sequence check handles them (a bias needs its tensor:
  // callers with one call checkVariantAttention).
  if (p.hasKeyRanges() || p.isVarlen())
    return checkVariantAttention(p, q, k, v, HostTensor{}, o, lse, opts);
  CheckReport rep;
  rep.tolerance = toleranceFor(p.dtype);
  const int64_t B = p.batch, Hq = p.headsQ, Hkv = p.headsKv, Nq = p.seqQ,
                Nk = p.seqKv, D = p.headDim, Dv = p.vDim();
  const int64_t group = Hq / Hkv;
  auto visible = [&](int64_t i) {
    auto [first, last] = p.keyRange(i);
    return last - first;
  };
  const double inf = std::numeric_limits<double>::infinity();

  // Whole-output scan: the output was poisoned with NaN before the launch,
  // so anything not finite was never written (or overflowed). With
  // non-finite inputs every row is compared with the reference instead.
  const int64_t slices = B * Hq, totalRows = slices * Nq;
  for (int64_t r = 0; r < totalRows && !opts.nonFiniteInputs; ++r) {
    for (int64_t x = 0; x < Dv; ++x)
      if (!std::isfinite(o.get(r * Dv + x)))
        ++rep.nonFiniteOut;
    if (p.withLse) {
      float l = lse[r];
      bool masked = visible(r % Nq) == 0;
      if (std::isnan(l) || l == inf || masked != (l == -inf))
        ++rep.badLse;
    }
  }

  // Which rows get the float64 reference.
  double rowsCost = 0; // multiply-adds for one slice
  for (int64_t i = 0; i < Nq; ++i)
    rowsCost += static_cast<double>(std::max<int64_t>(visible(i), 1)) * (D + Dv);
  double totalCost = rowsCost * slices;
  bool full = opts.nonFiniteInputs ||
              (opts.maxRows > 0 ? opts.maxRows >= totalRows
                                : totalCost <= opts.budget);
  std::mt19937_64 rng(opts.seed ^ 0x9e3779b97f4a7c15ull);
  std::vector<std::pair<int64_t, std::vector<int64_t>>> chosen; // slice, rows
  if (full) {
    std::vector<int64_t> all(Nq);
    for (int64_t i = 0; i < Nq; ++i)
      all[i] = i;
    for (int64_t s = 0; s < slices; ++s)
      chosen.emplace_back(s, all);
  } else {
    double avg = totalCost / static_cast<double>(totalRows);
    int64_t target = opts.maxRows > 0
                         ? opts.maxRows
                         : std::max<int64_t>(16, opts.budget / avg);
    target = std::min(target, totalRows);
    int64_t nSlices = std::min<int64_t>(slices, 16);
    std::set<int64_t> sliceSet = {0, slices - 1};
    std::uniform_int_distribution<int64_t> pickSlice(0, slices - 1);
    while (static_cast<int64_t>(sliceSet.size()) < nSlices)
      sliceSet.insert(pickSlice(rng));
    nSlices = sliceSet.size();
    int64_t perSlice = std::clamp<int64_t>((target + nSlices - 1) / nSlices,
                                           std::min<int64_t>(2, Nq), Nq);
    std::uniform_int_distribution<int64_t> pickRow(0, Nq - 1);
    for (int64_t s : sliceSet) {
      std::set<int64_t> rows = {0, Nq - 1};
      while (static_cast<int64_t>(rows.size()) < perSlice)
        rows.insert(pickRow(rng));
      chosen.emplace_back(s, std::vector<int64_t>(rows.begin(), rows.end()));
    }
  }

  // Split into tasks of a few rows so that threads share big slices.
  std::vector<Task> tasks;
  size_t gathered = 0;
  for (auto &[s, rows] : chosen)
    for (size_t i = 0; i < rows.size(); i += 16) {
      Task t{s / Hq, s % Hq, {}, gathered};
      size_t end = std::min(rows.size(), i + 16);
      t.rows.assign(rows.begin() + i, rows.begin() + end);
      gathered += t.rows.size();
      tasks.push_back(std::move(t));
    }
  rep.full = full;
  rep.rows = gathered;

  std::vector<double> gotO(gathered * Dv), wantO(gathered * Dv);
  // NaN from a non-finite V behind a hidden key, where the contract allows.
  std::optional<HiddenKeyLeaks> leaks;
  if (opts.nonFiniteInputs)
    leaks.emplace(p, opts.tiling, [&](size_t n) { return v.get(n); });
  std::vector<char> mayBeNaN;
  if (leaks && leaks->any())
    mayBeNaN.assign(gathered * Dv, 0);
  std::vector<double> gotL(gathered), wantL(gathered);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    std::vector<double> kd, vd, qd, outd;
    for (size_t ti; (ti = next.fetch_add(1)) < tasks.size();) {
      const Task &t = tasks[ti];
      const int64_t hk = t.h / group;
      // Keys [lo, need) cover every row of the task; the rest stay 0.
      int64_t need = 0, lo = Nk;
      for (int64_t i : t.rows) {
        auto [first, last] = p.keyRange(i);
        if (first < last) {
          lo = std::min(lo, first);
          need = std::max(need, last);
        }
      }
      lo = std::min(lo, need);
      const size_t kBase = ((t.b * Hkv + hk) * Nk) * D;
      const size_t vBase = ((t.b * Hkv + hk) * Nk) * Dv;
      const size_t qBase = ((t.b * Hq + t.h) * Nq) * D;
      const size_t oBase = ((t.b * Hq + t.h) * Nq) * Dv;
      kd.assign(need * D, 0.0);
      vd.assign(need * Dv, 0.0);
      for (int64_t j = lo * D; j < need * D; ++j)
        kd[j] = k.get(kBase + j);
      for (int64_t j = lo * Dv; j < need * Dv; ++j)
        vd[j] = v.get(vBase + j);

      qd.resize(D);
      outd.resize(Dv);
      for (size_t r = 0; r < t.rows.size(); ++r) {
        const int64_t i = t.rows[r];
        const size_t at = t.first + r;
        for (int64_t x = 0; x < Dv; ++x)
          gotO[at * Dv + x] = o.get(oBase + i * Dv + x);
        gotL[at] = p.withLse ? lse[(t.b * Hq + t.h) * Nq + i] : 0.0;
        for (int64_t x = 0; x < D; ++x)
          qd[x] = q.get(qBase + i * D + x);
        auto [first, last] = p.keyRange(i);
        double rowLse = 0;
        referenceAttentionRow(p, t.b, t.h, i, qd.data(), kd.data(), vd.data(),
                              first, last, outd.data(), rowLse);
        std::copy(outd.begin(), outd.end(), &wantO[at * Dv]);
        if (!mayBeNaN.empty())
          leaks->markRow(t.b, t.h, i, &mayBeNaN[at * Dv]);
        wantL[at] = p.withLse ? rowLse : 0.0;
      }
    }
  };
  unsigned n = opts.threads ? opts.threads : std::thread::hardware_concurrency();
  n = std::clamp<unsigned>(n, 1, 64);
  n = std::min<unsigned>(n, std::max<size_t>(tasks.size(), 1));
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < n; ++i)
    pool.emplace_back(worker);
  worker();
  for (std::thread &th : pool)
    th.join();

  rep.out = compareToReference(gotO, wantO,
                               mayBeNaN.empty() ? nullptr : &mayBeNaN);
  if (p.withLse)
    rep.lse = compareToReference(gotL, wantL);
  rep.ok = rep.out.relErr <= rep.tolerance &&
           (!p.withLse || rep.lse.relErr <= rep.tolerance) &&
           rep.nonFiniteOut == 0 && rep.badLse == 0;
  return rep;
}
