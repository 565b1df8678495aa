//===- BackwardBench.cpp - one backward shape's inputs and reference ------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "BackwardBench.h"

#include "attn/Support/HostReference.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <sstream>
#include <thread>

using namespace attn;
using namespace attn::runtime;
using namespace attn::tune;

struct BackwardBench::Set {
  explicit Set(const CudaDriver &d) : block(d) {}
  DeviceBuffer block;
  BackwardArgs args;
};

namespace {
/// Up to 16 slices (the first and the last among them), each with its
/// first and last row and random others, about `target` rows in all.
std::vector<std::pair<int64_t, int64_t>>
sampleRows(int64_t slices, int64_t n, int64_t target, uint64_t seed) {
  std::vector<std::pair<int64_t, int64_t>> rows;
  target = std::min<int64_t>(std::max<int64_t>(target, 1), slices * n);
  if (target == slices * n) {
    for (int64_t s = 0; s < slices; ++s)
      for (int64_t i = 0; i < n; ++i)
        rows.push_back({s, i});
    return rows;
  }
  std::mt19937_64 rng(seed);
  std::set<int64_t> sliceSet = {0, slices - 1};
  std::uniform_int_distribution<int64_t> pickSlice(0, slices - 1);
  while (static_cast<int64_t>(sliceSet.size()) < std::min<int64_t>(slices, 16))
    sliceSet.insert(pickSlice(rng));
  int64_t perSlice =
      std::clamp<int64_t>((target + sliceSet.size() - 1) / sliceSet.size(),
                          std::min<int64_t>(2, n), n);
  std::uniform_int_distribution<int64_t> pickRow(0, n - 1);
  for (int64_t s : sliceSet) {
    std::set<int64_t> r = {0, n - 1};
    while (static_cast<int64_t>(r.size()) < perSlice)
      r.insert(pickRow(rng));
    for (int64_t i : r)
      rows.push_back({s, i});
  }
  return rows;
}

/// Runs task(t) for t in [0, n) on `threads` threads.
void forEachTask(size_t n, unsigned threads,
                 const std::function<void(size_t)> &task) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t t; (t = next.fetch_add(1)) < n;)
      task(t);
  };
  std::vector<std::thread> pool;
  unsigned count = std::min<size_t>(threads, std::max<size_t>(n, 1));
  for (unsigned i = 1; i < count; ++i)
    pool.emplace_back(worker);
  worker();
  for (std::thread &th : pool)
    th.join();
}

/// [first, end) ranges of consecutive rows of the same slice.
std::vector<std::pair<size_t, size_t>>
sliceGroups(const std::vector<std::pair<int64_t, int64_t>> &rows) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    while (j < rows.size() && rows[j].first == rows[i].first)
      ++j;
    out.push_back({i, j});
    i = j;
  }
  return out;
}

double dot(const double *a, const double *b, int64_t n) {
  double s = 0;
  for (int64_t x = 0; x < n; ++x)
    s += a[x] * b[x];
  return s;
}
} // namespace

BackwardBench::BackwardBench(const CudaDriver &d) : d(d) {}
BackwardBench::~BackwardBench() = default;

Expected<std::unique_ptr<BackwardBench>>
BackwardBench::create(const CudaDriver &d, const AttentionProblem &p,
                      const Kernel &forward, uint64_t workspaceBytes,
                      const BenchOptions &o) {
  std::unique_ptr<BackwardBench> sb(new BackwardBench(d));
  BackwardBench &b = *sb;
  b.p = p;
  b.opts = o;
  unsigned threads = threadCount(o.threads);
  auto start = std::chrono::steady_clock::now();
  if (Status s = b.stream.create(); !s)
    return s;
  const size_t eb = dtypeBytes(p.dtype);
  const int64_t D = p.headDim, Dv = p.vDim(), Nq = p.seqQ, Nk = p.seqKv;
  const size_t qN = p.batch * p.headsQ * Nq * D;
  const size_t kN = p.batch * p.headsKv * Nk * D;
  const size_t vN = p.batch * p.headsKv * Nk * Dv;
  const size_t oN = p.batch * p.headsQ * Nq * Dv;
  const size_t lN = p.batch * p.headsQ * Nq;
  b.qBytes = qN * eb;
  b.kBytes = kN * eb;
  b.vBytes = vN * eb;
  b.oBytes = oN * eb;
  b.lseBytes = lN * sizeof(float);
  b.wsBytes = std::max<uint64_t>(workspaceBytes, 16);
  b.q = randomTensor(p.dtype, qN, 1.0, o.seed * 5 + 1, threads);
  b.k = randomTensor(p.dtype, kN, 1.0, o.seed * 5 + 2, threads);
  b.v = randomTensor(p.dtype, vN, 1.0, o.seed * 5 + 3, threads);
  b.dO = randomTensor(p.dtype, oN, 1.0, o.seed * 5 + 4, threads);
  b.o = HostTensor::zeros(p.dtype, oN);
  b.dq = HostTensor::zeros(p.dtype, qN);
  b.dk = HostTensor::zeros(p.dtype, kN);
  b.dv = HostTensor::zeros(p.dtype, vN);
  b.lse.assign(lN, 0.0f);

  // One set: the inputs (Q, K, V, O, dO, LSE) then the outputs (dQ, dK,
  // dV, workspace). Enough sets that a pass is three times the L2.
  size_t inBytes = alignUp(b.qBytes) + alignUp(b.kBytes) + alignUp(b.vBytes) +
                   2 * alignUp(b.oBytes) + alignUp(b.lseBytes);
  size_t setBytes = inBytes + alignUp(b.qBytes) + alignUp(b.kBytes) +
                    alignUp(b.vBytes) + alignUp(b.wsBytes);
  Expected<size_t> nSets = bufferSetCount(d, setBytes);
  if (!nSets)
    return nSets.status();
  for (size_t i = 0; i < *nSets; ++i) {
    auto set = std::make_unique<Set>(d);
    if (Status s = set->block.allocate(setBytes); !s)
      return s;
    BackwardArgs &a = set->args;
    a = BackwardArgs::dense(p);
    cu::DevicePtr at = set->block.get();
    for (auto [ptr, bytes] :
         {std::pair{&a.q, b.qBytes}, {&a.k, b.kBytes}, {&a.v, b.vBytes},
          {&a.o, b.oBytes}, {&a.dO, b.oBytes}, {&a.lse, b.lseBytes},
          {&a.dq, b.qBytes}, {&a.dk, b.kBytes}, {&a.dv, b.vBytes},
          {&a.workspace, b.wsBytes}}) {
      *ptr = at;
      at += alignUp(bytes);
    }
    b.bufs.push_back(std::move(set));
  }
  const BackwardArgs &a0 = b.bufs[0]->args;
  for (auto [dst, src, n, what] :
       {std::tuple{a0.q, &b.q, b.qBytes, "Q"}, {a0.k, &b.k, b.kBytes, "K"},
        {a0.v, &b.v, b.vBytes, "V"}, {a0.dO, &b.dO, b.oBytes, "dO"}})
    if (Status s = d.check(d.MemcpyHtoD(dst, src->bytes.data(), n),
                           std::string("cuMemcpyHtoD(") + what + ")");
        !s)
      return s;
  if (Status s = d.check(d.StreamSynchronize(nullptr),
                         "cuStreamSynchronize(legacy stream) after the inputs");
      !s)
    return s;

  // O and the LSE from the bundle's forward kernel.
  if (Status s = forward.launch(
          LaunchArgs::dense(p, a0.q, a0.k, a0.v, a0.o, a0.lse), b.stream.get());
      !s)
    return s.prepend("the bundle's forward kernel");
  if (Status s = d.check(d.StreamSynchronize(b.stream.get()),
                         "cuStreamSynchronize after the forward kernel");
      !s)
    return s;
  if (Status s = d.check(d.MemcpyDtoH(b.o.bytes.data(), a0.o, b.oBytes),
                         "cuMemcpyDtoH(O)");
      !s)
    return s;
  if (Status s = d.check(d.MemcpyDtoH(b.lse.data(), a0.lse, b.lseBytes),
                         "cuMemcpyDtoH(LSE)");
      !s)
    return s;
  for (size_t i = 1; i < b.bufs.size(); ++i)
    if (Status s = d.check(d.MemcpyDtoD(b.bufs[i]->args.q, a0.q, inBytes),
                           "cuMemcpyDtoD(inputs)");
        !s)
      return s;
  if (Status s = d.check(d.StreamSynchronize(nullptr),
                         "cuStreamSynchronize(legacy stream) after the copies");
      !s)
    return s;
  auto mid = std::chrono::steady_clock::now();
  b.inputSeconds = std::chrono::duration<double>(mid - start).count();

  const int64_t group = p.headsQ / p.headsKv;
  const double scale = p.effectiveScale();
  b.qRows = sampleRows(p.batch * p.headsQ, Nq, o.checkRows,
                       o.seed ^ 0x5eed5eedull);
  b.kRows = sampleRows(p.batch * p.headsKv, Nk, o.checkRows,
                       o.seed ^ 0x6eed6eedull);
  b.wantDq.assign(b.qRows.size() * D, 0.0);
  b.wantDk.assign(b.kRows.size() * D, 0.0);
  b.wantDv.assign(b.kRows.size() * Dv, 0.0);

  // The forward kernel against float64 on the dQ rows, and dQ of those
  // rows: dQ_i = scale · Σ_j P_ij (dO_i·V_j − Δ_i) K_j.
  std::vector<std::pair<size_t, size_t>> qTasks = sliceGroups(b.qRows);
  std::vector<double> fwdGotO(b.qRows.size() * Dv), fwdWantO(fwdGotO.size());
  std::vector<double> fwdGotL(b.qRows.size()), fwdWantL(b.qRows.size());
  forEachTask(qTasks.size(), threads, [&](size_t t) {
    int64_t slice = b.qRows[qTasks[t].first].first;
    int64_t bi = slice / p.headsQ, h = slice % p.headsQ, hk = h / group;
    size_t kBase = ((bi * p.headsKv + hk) * Nk) * D;
    size_t vBase = ((bi * p.headsKv + hk) * Nk) * Dv;
    std::vector<double> kd(Nk * D), vd(Nk * Dv), qd(D), dod(Dv), od(Dv);
    for (int64_t x = 0; x < Nk * D; ++x)
      kd[x] = b.k.get(kBase + x);
    for (int64_t x = 0; x < Nk * Dv; ++x)
      vd[x] = b.v.get(vBase + x);
    for (size_t r = qTasks[t].first; r < qTasks[t].second; ++r) {
      int64_t i = b.qRows[r].second;
      size_t row = slice * Nq + i;
      for (int64_t x = 0; x < D; ++x)
        qd[x] = b.q.get(row * D + x);
      for (int64_t x = 0; x < Dv; ++x) {
        dod[x] = b.dO.get(row * Dv + x);
        od[x] = b.o.get(row * Dv + x);
        fwdGotO[r * Dv + x] = od[x];
      }
      auto [first, last] = p.keyRange(i);
      double wantLse = 0;
      referenceAttentionRow(p, bi, h, i, qd.data(), kd.data(), vd.data(), first,
                            last, &fwdWantO[r * Dv], wantLse);
      fwdWantL[r] = wantLse;
      fwdGotL[r] = b.lse[row];
      double lseI = b.lse[row], delta = dot(dod.data(), od.data(), Dv);
      double *out = &b.wantDq[r * D];
      for (int64_t j = first; j < last; ++j) {
        double s = scale * dot(qd.data(), &kd[j * D], D);
        double pij = std::exp(s - lseI);
        double ds = pij * (dot(dod.data(), &vd[j * Dv], Dv) - delta);
        for (int64_t x = 0; x < D; ++x)
          out[x] += ds * kd[j * D + x];
      }
      for (int64_t x = 0; x < D; ++x)
        out[x] *= scale;
    }
  });
  b.forwardRelErr = compareToReference(fwdGotO, fwdWantO).relErr;
  b.forwardLseRelErr = compareToReference(fwdGotL, fwdWantL).relErr;
  double tol = toleranceFor(p.dtype);
  if (!(b.forwardRelErr <= tol && b.forwardLseRelErr <= tol)) {
    std::ostringstream os;
    os << "the bundle's forward kernel fails the float64 check (O rel_err "
       << b.forwardRelErr << ", LSE rel_err " << b.forwardLseRelErr
       << "): no gradient can be checked";
    return Status::error(os.str());
  }

  // dK_j = scale · Σ_i dS_ij Q_i and dV_j = Σ_i P_ij dO_i over the query
  // rows (of every query head of the group) that see key j.
  std::vector<std::pair<size_t, size_t>> kTasks = sliceGroups(b.kRows);
  forEachTask(kTasks.size(), threads, [&](size_t t) {
    int64_t slice = b.kRows[kTasks[t].first].first;
    int64_t bi = slice / p.headsKv, hk = slice % p.headsKv;
    std::vector<double> qd(Nq * D), dod(Nq * Dv), delta(Nq), kd(D), vd(Dv);
    for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
      size_t qBase = ((bi * p.headsQ + h) * Nq) * D;
      size_t oBase = ((bi * p.headsQ + h) * Nq) * Dv;
      const float *lseH = &b.lse[(bi * p.headsQ + h) * Nq];
      for (int64_t x = 0; x < Nq * D; ++x)
        qd[x] = b.q.get(qBase + x);
      for (int64_t i = 0; i < Nq; ++i) {
        double sum = 0;
        for (int64_t x = 0; x < Dv; ++x) {
          double g = b.dO.get(oBase + i * Dv + x);
          dod[i * Dv + x] = g;
          sum += g * b.o.get(oBase + i * Dv + x);
        }
        delta[i] = sum;
      }
      for (size_t r = kTasks[t].first; r < kTasks[t].second; ++r) {
        int64_t j = b.kRows[r].second;
        size_t row = slice * Nk + j;
        for (int64_t x = 0; x < D; ++x)
          kd[x] = b.k.get(row * D + x);
        for (int64_t x = 0; x < Dv; ++x)
          vd[x] = b.v.get(row * Dv + x);
        double *gk = &b.wantDk[r * D], *gv = &b.wantDv[r * Dv];
        for (int64_t i = 0; i < Nq; ++i) {
          auto [first, last] = p.keyRange(i);
          if (j < first || j >= last)
            continue;
          double s = scale * dot(&qd[i * D], kd.data(), D);
          double pij = std::exp(s - lseH[i]);
          double ds =
              pij * (dot(&dod[i * Dv], vd.data(), Dv) - delta[i]);
          for (int64_t x = 0; x < Dv; ++x)
            gv[x] += pij * dod[i * Dv + x];
          for (int64_t x = 0; x < D; ++x)
            gk[x] += ds * qd[i * D + x];
        }
      }
    }
    for (size_t r = kTasks[t].first; r < kTasks[t].second; ++r)
      for (int64_t x = 0; x < D; ++x)
        b.wantDk[r * D + x] *= scale;
  });
  b.referenceSeconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - mid)
                           .count();
  return sb;
}

Status BackwardBench::launchOn(const BackwardKernel &kernel, size_t set) {
  return kernel.launch(bufs[set]->args, stream.get());
}

Status BackwardBench::download(size_t set) {
  const BackwardArgs &a = bufs[set]->args;
  if (Status st = d.check(d.StreamSynchronize(stream.get()),
                          "cuStreamSynchronize (a backward kernel faulted)");
      !st)
    return st;
  for (auto [dst, src, n, what] :
       {std::tuple{&dq, a.dq, qBytes, "dQ"}, {&dk, a.dk, kBytes, "dK"},
        {&dv, a.dv, vBytes, "dV"}})
    if (Status s = d.check(d.MemcpyDtoH(dst->bytes.data(), src, n),
                           std::string("cuMemcpyDtoH(") + what + ")");
        !s)
      return s;
  return Status::success();
}

Status BackwardBench::check(const BackwardKernel &kernel, BenchCheck &out) {
  const BackwardArgs &a = bufs[0]->args;
  // NaN in every float format, garbage in the workspace: the kernels must
  // write every gradient and initialise their own scratch.
  for (auto [ptr, n, what] :
       {std::tuple{a.dq, qBytes, "dQ"}, {a.dk, kBytes, "dK"},
        {a.dv, vBytes, "dV"}, {a.workspace, wsBytes, "workspace"}})
    if (Status s = d.check(d.MemsetD8(ptr, 0xff, n),
                           std::string("cuMemsetD8(") + what + ")");
        !s)
      return s;
  // cuMemsetD8 runs on the legacy stream, which the launch stream does not
  // wait for.
  if (Status s = d.check(d.StreamSynchronize(nullptr),
                         "cuStreamSynchronize(legacy stream) after the poison");
      !s)
    return s;
  if (Status s = launchOn(kernel, 0); !s)
    return s;
  if (Status s = download(0); !s)
    return s;
  unsigned threads = threadCount(opts.threads);
  const int64_t D = p.headDim, Dv = p.vDim();
  out.nonFiniteOut = countNonFinite(dq, threads) + countNonFinite(dk, threads) +
                     countNonFinite(dv, threads);
  auto gather = [](const HostTensor &t,
                   const std::vector<std::pair<int64_t, int64_t>> &rows,
                   int64_t n, int64_t width) {
    std::vector<double> got(rows.size() * width);
    for (size_t r = 0; r < rows.size(); ++r) {
      size_t base = (rows[r].first * n + rows[r].second) * width;
      for (int64_t x = 0; x < width; ++x)
        got[r * width + x] = t.get(base + x);
    }
    return got;
  };
  double eq = compareToReference(gather(dq, qRows, p.seqQ, D), wantDq).relErr;
  double ek = compareToReference(gather(dk, kRows, p.seqKv, D), wantDk).relErr;
  double ev = compareToReference(gather(dv, kRows, p.seqKv, Dv), wantDv).relErr;
  out.relErr = std::max({eq, ek, ev});
  out.lseRelErr = 0;
  out.badLse = 0;
  double tol = toleranceFor(p.dtype);
  out.ok = eq <= tol && ek <= tol && ev <= tol && out.nonFiniteOut == 0;
  std::ostringstream os;
  os.precision(3);
  os << "dq/dk/dv rel_err " << eq << "/" << ek << "/" << ev << ", "
     << out.nonFiniteOut << " non-finite";
  out.detail = os.str();
  return Status::success();
}

Status BackwardBench::time(const BackwardKernel &kernel, int64_t warmup,
                           int64_t reps, std::vector<float> &samples) {
  return timeEachLaunch(
      d, stream.get(), warmup, reps,
      [&](size_t n) { return launchOn(kernel, n % bufs.size()); }, samples);
}

Status BackwardBench::repeatable(const BackwardKernel &kernel,
                                 bool deterministic, bool &same) {
  if (Status s = launchOn(kernel, 0); !s)
    return s;
  if (Status s = download(0); !s)
    return s;
  HostTensor firstQ = dq, firstK = dk, firstV = dv;
  if (Status s = launchOn(kernel, 0); !s)
    return s;
  if (Status s = download(0); !s)
    return s;
  same = firstK.bytes == dk.bytes && firstV.bytes == dv.bytes &&
         (!deterministic || firstQ.bytes == dq.bytes);
  return Status::success();
}

bool BackwardBench::healthy() {
  return d.MemsetD8(bufs[0]->args.workspace, 0, 4) == cu::kSuccess &&
         d.StreamSynchronize(nullptr) == cu::kSuccess &&
         d.StreamSynchronize(stream.get()) == cu::kSuccess;
}
