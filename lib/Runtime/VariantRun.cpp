//===- VariantRun.cpp - run kernels of variable length or with a bias -----===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/VariantRun.h"
#include "attn/Runtime/DeviceMemory.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace attn::runtime;
using attn::AttentionProblem;

LaunchArgs attn::runtime::variantLaunchArgs(
    const AttentionProblem &p, cu::DevicePtr q, cu::DevicePtr k,
    cu::DevicePtr v, cu::DevicePtr o, cu::DevicePtr lse, cu::DevicePtr bias,
    cu::DevicePtr cuSeqlensQ, cu::DevicePtr cuSeqlensKv) {
  LaunchArgs a = LaunchArgs::dense(p, q, k, v, o, lse);
  if (p.isVarlen()) {
    // Packed [T, H, X]: no batch stride (the kernel starts each sequence
    // at its cu_seqlens token), rows H·X apart; LSE [Hq, Tq].
    const int64_t d = p.headDim, dv = p.vDim();
    a.qStride = {0, d, p.headsQ * d};
    a.kStride = {0, d, p.headsKv * d};
    a.vStride = {0, dv, p.headsKv * dv};
    a.oStride = {0, dv, p.headsQ * dv};
    a.lseStride = {0, p.totalQ()};
    a.cuSeqlensQ = cuSeqlensQ;
    a.cuSeqlensKv = cuSeqlensKv;
  }
  if (p.bias) {
    a.bias = bias;
    int64_t n = p.seqQ * p.seqKv;
    a.biasStride = {p.biasBroadcastBatch ? 0 : p.biasHeads() * n,
                    p.biasBroadcastHeads ? 0 : n, p.seqKv};
  }
  return a;
}

namespace {
/// One checked row: sequence (varlen) or batch entry, head, row.
struct Row {
  int64_t seq, h, i;
};
} // namespace

CheckReport attn::runtime::checkVariantAttention(
    const AttentionProblem &p, const HostTensor &q, const HostTensor &k,
    const HostTensor &v, const HostTensor &bias, const HostTensor &o,
    const std::vector<float> &lse, const CheckOptions &opts) {
  CheckReport rep;
  rep.tolerance = toleranceFor(p.dtype);
  const int64_t hq = p.headsQ, hkv = p.headsKv, d = p.headDim, dv = p.vDim();
  const int64_t group = hq / hkv, tq = p.totalQ();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<int32_t> cuQ = p.cuSeqlens(true), cuK = p.cuSeqlens(false);
  // Element offsets of row i of (seq, h) in Q/O and of key j in K/V, and
  // the LSE index, for either layout.
  auto qRow = [&](int64_t seq, int64_t h, int64_t i) {
    return p.isVarlen() ? (cuQ[seq] + i) * hq + h : (seq * hq + h) * p.seqQ + i;
  };
  auto kRow = [&](int64_t seq, int64_t hk, int64_t j) {
    return p.isVarlen() ? (cuK[seq] + j) * hkv + hk
                        : (seq * hkv + hk) * p.seqKv + j;
  };
  auto lseAt = [&](int64_t seq, int64_t h, int64_t i) {
    return p.isVarlen() ? h * tq + cuQ[seq] + i : (seq * hq + h) * p.seqQ + i;
  };

  // Every row: outputs finite (they were poisoned with NaN).
  std::vector<Row> rows;
  double cost = 0;
  for (int64_t s = 0; s < p.batch; ++s) {
    AttentionProblem one = p.isVarlen() ? p.sequence(s) : p;
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < one.seqQ; ++i) {
        rows.push_back({s, h, i});
        auto [first, last] = one.keyRange(i, p.isVarlen() ? -1 : s);
        cost += static_cast<double>(std::max<int64_t>(last - first, 1)) *
                (d + dv);
        for (int64_t x = 0; x < dv; ++x)
          if (!std::isfinite(o.get(qRow(s, h, i) * dv + x)))
            ++rep.nonFiniteOut;
        if (p.withLse && std::isnan(lse[lseAt(s, h, i)]))
          ++rep.badLse;
      }
  }
  // The reference on every row, or every stride-th.
  size_t stride = 1;
  if (opts.maxRows > 0)
    stride = std::max<size_t>(1, rows.size() / opts.maxRows);
  else if (cost > opts.budget)
    stride = static_cast<size_t>(std::ceil(cost / opts.budget));
  rep.full = stride == 1;
  std::vector<double> gotO, wantO, gotL, wantL, kh, vh, qd(d), out(dv),
      biasRow;
  for (size_t r = 0; r < rows.size(); r += stride) {
    auto [s, h, i] = rows[r];
    AttentionProblem one = p.isVarlen() ? p.sequence(s) : p;
    int64_t hk = h / group, nk = one.seqKv;
    kh.resize(nk * d);
    vh.resize(nk * dv);
    for (int64_t j = 0; j < nk; ++j) {
      for (int64_t x = 0; x < d; ++x)
        kh[j * d + x] = k.get(kRow(s, hk, j) * d + x);
      for (int64_t x = 0; x < dv; ++x)
        vh[j * dv + x] = v.get(kRow(s, hk, j) * dv + x);
    }
    for (int64_t x = 0; x < d; ++x)
      qd[x] = q.get(qRow(s, h, i) * d + x);
    const double *br = nullptr;
    if (p.bias) {
      int64_t base =
          (((p.biasBroadcastBatch ? 0 : s) * p.biasHeads() +
            (p.biasBroadcastHeads ? 0 : h)) * p.seqQ + i) * p.seqKv;
      biasRow.resize(nk);
      for (int64_t j = 0; j < nk; ++j)
        biasRow[j] = bias.get(base + j);
      br = biasRow.data();
    }
    auto [first, last] = one.keyRange(i, p.isVarlen() ? -1 : s);
    double rowLse = 0;
    referenceAttentionRow(one, s, h, i, qd.data(), kh.data(), vh.data(), first,
                          last, out.data(), rowLse, br);
    for (int64_t x = 0; x < dv; ++x) {
      gotO.push_back(o.get(qRow(s, h, i) * dv + x));
      wantO.push_back(out[x]);
    }
    if (p.withLse) {
      double got = lse[lseAt(s, h, i)];
      if ((got == -inf) != (rowLse == -inf) || got == inf)
        ++rep.badLse;
      gotL.push_back(got);
      wantL.push_back(rowLse);
    }
    ++rep.rows;
  }
  rep.out = compareToReference(gotO, wantO);
  if (p.withLse)
    rep.lse = compareToReference(gotL, wantL);
  rep.ok = rep.out.relErr <= rep.tolerance &&
           (!p.withLse || rep.lse.relErr <= rep.tolerance) &&
           rep.nonFiniteOut == 0 && rep.badLse == 0;
  return rep;
}

Status attn::runtime::runVariantKernel(const Kernel &kernel,
                                       const RunOptions &opts,
                                       RunResult &res) {
  const CudaDriver &d = kernel.driver();
  const AttentionProblem &p = res.problem;
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
  // A varlen launch shape comes with its lengths (batch = their count).
  if (std::string why = p.validate(); !why.empty())
    return Status::error(why);
  const int64_t tq = p.totalQ(), tk = p.totalKv();
  const int64_t qN = tq * p.headsQ * p.headDim, kN = tk * p.headsKv * p.headDim;
  const int64_t vN = tk * p.headsKv * p.vDim(), oN = tq * p.headsQ * p.vDim();
  const int64_t lN = tq * p.headsQ;
  const int64_t biasN =
      p.bias ? p.biasBatch() * p.biasHeads() * p.seqQ * p.seqKv : 0;
  const size_t eb = attn::dtypeBytes(p.dtype);

  OwnedStream stream(d);
  if (Status s = stream.create(); !s)
    return s;
  std::mt19937_64 rng(opts.seed);
  HostTensor hq = HostTensor::random(p.dtype, qN, opts.inputRange, rng);
  HostTensor hk = HostTensor::random(p.dtype, kN, opts.inputRange, rng);
  HostTensor hv = HostTensor::random(p.dtype, vN, 1.0, rng);
  HostTensor hb = HostTensor::random(p.dtype, biasN, 2.0, rng);
  {
    // One bias entry in 16 at -inf: the bias masks too.
    std::uniform_int_distribution<int> pick(0, 15);
    uint16_t negInf = p.dtype == attn::DType::bf16 ? 0xff80 : 0xfc00;
    for (int64_t i = 0; i < biasN && eb == 2; ++i)
      if (pick(rng) == 0)
        std::memcpy(&hb.bytes[2 * i], &negInf, 2);
  }
  std::vector<int32_t> cuQ = p.cuSeqlens(true), cuK = p.cuSeqlens(false);
  std::vector<int32_t> keyStarts = p.keyBounds(true),
                       keyEnds = p.keyBounds(false);
  std::vector<float> alibiSlopes;
  if (p.alibi)
    alibiSlopes = p.alibiSlopes();

  // Zero-sized tensors (every sequence empty) still get a valid pointer.
  auto bytes = [](size_t n) { return std::max<size_t>(n, 16); };
  DeviceBuffer bq(d), bk(d), bv(d), bo(d), bl(d), bb(d), bcq(d), bck(d),
      bks(d), bke(d), bal(d);
  struct Upload {
    DeviceBuffer *buf;
    const void *host;
    size_t n;
    const char *what;
  } uploads[] = {{&bq, hq.bytes.data(), qN * eb, "Q"},
                 {&bk, hk.bytes.data(), kN * eb, "K"},
                 {&bv, hv.bytes.data(), vN * eb, "V"},
                 {&bb, hb.bytes.data(), biasN * eb, "bias"},
                 {&bcq, cuQ.data(), cuQ.size() * 4, "cu_seqlens_q"},
                 {&bck, cuK.data(), cuK.size() * 4, "cu_seqlens_kv"},
                 {&bks, keyStarts.data(), keyStarts.size() * 4, "key_start"},
                 {&bke, keyEnds.data(), keyEnds.size() * 4, "key_end"},
                 {&bal, alibiSlopes.data(), alibiSlopes.size() * 4,
                  "alibi_slopes"}};
  for (const Upload &u : uploads) {
    if (Status s = u.buf->allocate(bytes(u.n)); !s)
      return s;
    if (u.n)
      if (Status s = d.check(d.MemcpyHtoD(u.buf->get(), u.host, u.n),
                             std::string("cuMemcpyHtoD(") + u.what + ")");
          !s)
        return s;
  }
  if (Status s = bo.allocate(bytes(oN * eb)); !s)
    return s;
  if (Status s = bl.allocate(bytes(lN * 4)); !s)
    return s;
  if (Status s = d.check(d.MemsetD8(bo.get(), 0xff, bytes(oN * eb)),
                         "cuMemsetD8(O)");
      !s)
    return s;
  if (Status s = d.check(d.MemsetD8(bl.get(), 0xff, bytes(lN * 4)),
                         "cuMemsetD8(LSE)");
      !s)
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

  LaunchArgs args = variantLaunchArgs(
      p, bq.get(), bk.get(), bv.get(), bo.get(), bl.get(),
      p.bias ? bb.get() : 0, p.isVarlen() ? bcq.get() : 0,
      p.isVarlen() ? bck.get() : 0);
  if (p.hasKeyRanges()) {
    args.keyStart = bks.get();
    args.keyEnd = bke.get();
  }
  if (p.alibi) {
    args.alibiSlopes = bal.get();
    args.alibiSlopesStrideB = p.headsQ;
  }
  Expected<LaunchGeometry> g = kernel.geometry(args);
  if (!g)
    return g.status();
  res.geometry = *g;
  if (Status s = kernel.launch(args, stream.get()); !s)
    return s;
  if (Status s = d.check(d.StreamSynchronize(stream.get()),
                         "cuStreamSynchronize after the first launch "
                         "(the kernel faulted)");
      !s)
    return s;

  if (opts.check) {
    HostTensor ho = HostTensor::zeros(p.dtype, oN);
    std::vector<float> hl(lN);
    if (oN)
      if (Status s = d.check(d.MemcpyDtoH(ho.bytes.data(), bo.get(), oN * eb),
                             "cuMemcpyDtoH(O)");
          !s)
        return s;
    if (lN)
      if (Status s = d.check(d.MemcpyDtoH(hl.data(), bl.get(), lN * 4),
                             "cuMemcpyDtoH(LSE)");
          !s)
        return s;
    CheckOptions co;
    co.maxRows = opts.checkRows;
    co.seed = opts.seed;
    res.check = checkVariantAttention(p, hq, hk, hv, hb, ho, hl, co);
  }
  if (!opts.time)
    return Status::success();
  Expected<LaunchTiming> timing =
      timeLaunches(d, stream.get(), opts.warmup, opts.reps,
                   [&]() { return kernel.launch(args, stream.get()); });
  if (!timing)
    return timing.status();
  res.timeMs = timing->medianMs;
  res.timeMinMs = timing->minMs;
  res.reps = opts.reps;
  res.sets = 1;
  return Status::success();
}
