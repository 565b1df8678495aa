//===- HostReference.cpp - float64 attention on the host ------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/HostReference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace attn;

void attn::referenceAttentionRow(const AttentionProblem &p, int64_t b,
                                 int64_t h, int64_t i, const double *q, const double *k,
                                 const double *v, int64_t first, int64_t last,
                                 double *out, double &lse,
                                 const double *biasRow) {
  const int64_t d = p.headDim, dv = p.vDim();
  const double scale = p.effectiveScale();
  std::fill_n(out, dv, 0.0);
  if (first >= last) {
    lse = -std::numeric_limits<double>::infinity();
    return; // output row stays 0
  }
  std::vector<double> s(last - first);
  double m = -std::numeric_limits<double>::infinity();
  bool anyNaN = false;
  for (int64_t j = first; j < last; ++j) {
    double acc = 0;
    for (int64_t x = 0; x < d; ++x)
      acc += q[x] * k[j * d + x];
    double sj = p.modifyScore(acc * scale, b, h, i, j);
    if (biasRow)
      sj += biasRow[j];
    s[j - first] = sj;
    m = std::max(m, sj);
    anyNaN = anyNaN || std::isnan(sj);
  }
  // A bias of -inf on every key masks the row. NaN scores never raise m
  // (std::max skips them), so a row of NaN scores must not take this
  // path: it is NaN, as IEEE arithmetic and the kernels make it.
  if (m == -std::numeric_limits<double>::infinity() && !anyNaN) {
    lse = m;
    return;
  }
  double l = 0;
  for (double &sj : s) {
    sj = std::exp(sj - m);
    l += sj;
  }
  for (int64_t j = first; j < last; ++j)
    for (int64_t x = 0; x < dv; ++x)
      out[x] += s[j - first] * v[j * dv + x];
  for (int64_t x = 0; x < dv; ++x)
    out[x] /= l;
  lse = m + std::log(l);
}

void attn::referenceAttention(const AttentionProblem &p,
                              const std::vector<double> &q,
                              const std::vector<double> &k,
                              const std::vector<double> &v,
                              std::vector<double> &out,
                              std::vector<double> &lse,
                              const std::vector<double> *bias) {
  if (p.isVarlen()) {
    referenceAttentionVarlen(p, q, k, v, out, lse);
    return;
  }
  const int64_t d = p.headDim, dv = p.vDim(), nq = p.seqQ, nk = p.seqKv;
  const int64_t group = p.headsQ / p.headsKv;
  out.assign(p.batch * p.headsQ * nq * dv, 0.0);
  lse.assign(p.batch * p.headsQ * nq, 0.0);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.headsQ; ++h) {
      int64_t hk = h / group;
      const double *qh = &q[((b * p.headsQ + h) * nq) * d];
      const double *kh = &k[((b * p.headsKv + hk) * nk) * d];
      const double *vh = &v[((b * p.headsKv + hk) * nk) * dv];
      double *oh = &out[((b * p.headsQ + h) * nq) * dv];
      double *lh = &lse[(b * p.headsQ + h) * nq];
      // Bias [B|1, Hq|1, Nq, Nk]: this (b, h)'s [Nq, Nk] slice.
      const double *bh = nullptr;
      if (bias && p.bias)
        bh = &(*bias)[((p.biasBroadcastBatch ? 0 : b) * p.biasHeads() +
                       (p.biasBroadcastHeads ? 0 : h)) *
                      nq * nk];
      for (int64_t i = 0; i < nq; ++i) {
        auto [first, last] = p.keyRange(i, b);
        referenceAttentionRow(p, b, h, i, qh + i * d, kh, vh, first, last,
                              oh + i * dv, lh[i], bh ? bh + i * nk : nullptr);
      }
    }
}

void attn::referenceAttentionVarlen(const AttentionProblem &p,
                                    const std::vector<double> &q,
                                    const std::vector<double> &k,
                                    const std::vector<double> &v,
                                    std::vector<double> &out,
                                    std::vector<double> &lse) {
  const int64_t d = p.headDim, dv = p.vDim(), hq = p.headsQ, hkv = p.headsKv;
  const int64_t group = hq / hkv, tq = p.totalQ();
  out.assign(tq * hq * dv, 0.0);
  lse.assign(hq * tq, 0.0);
  std::vector<int32_t> cuQ = p.cuSeqlens(/*query=*/true);
  std::vector<int32_t> cuK = p.cuSeqlens(/*query=*/false);
  std::vector<double> kh, vh, oRow(dv);
  for (int64_t s = 0; s < p.batch; ++s) {
    AttentionProblem seq = p.sequence(s);
    for (int64_t h = 0; h < hq; ++h) {
      // The sequence's keys of this head, contiguous [Nk, D] / [Nk, Dv].
      int64_t hk = h / group, nk = seq.seqKv;
      kh.resize(nk * d);
      vh.resize(nk * dv);
      for (int64_t j = 0; j < nk; ++j) {
        std::copy_n(&k[((cuK[s] + j) * hkv + hk) * d], d, &kh[j * d]);
        std::copy_n(&v[((cuK[s] + j) * hkv + hk) * dv], dv, &vh[j * dv]);
      }
      for (int64_t i = 0; i < seq.seqQ; ++i) {
        int64_t token = cuQ[s] + i;
        auto [first, last] = seq.keyRange(i);
        referenceAttentionRow(seq, s, h, i, &q[(token * hq + h) * d], kh.data(),
                              vh.data(), first, last, oRow.data(),
                              lse[h * tq + token]);
        std::copy(oRow.begin(), oRow.end(), &out[(token * hq + h) * dv]);
      }
    }
  }
}

void attn::referenceAttentionBackward(
    const AttentionProblem &p, const std::vector<double> &q,
    const std::vector<double> &k, const std::vector<double> &v,
    const std::vector<double> &dout, std::vector<double> &dq,
    std::vector<double> &dk, std::vector<double> &dv) {
  std::vector<double> out, lse;
  referenceAttention(p, q, k, v, out, lse);
  const int64_t d = p.headDim, dvd = p.vDim(), nq = p.seqQ, nk = p.seqKv;
  const int64_t group = p.headsQ / p.headsKv;
  const double scale = p.effectiveScale();
  dq.assign(p.batch * p.headsQ * nq * d, 0.0);
  dk.assign(p.batch * p.headsKv * nk * d, 0.0);
  dv.assign(p.batch * p.headsKv * nk * dvd, 0.0);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.headsQ; ++h) {
      int64_t hk = h / group;
      int64_t qOff = (b * p.headsQ + h) * nq, kOff = (b * p.headsKv + hk) * nk;
      for (int64_t i = 0; i < nq; ++i) {
        // The backward takes masks, the softcap (S = C·tanh(s / C), dS
        // gets the factor 1 − tanh²) and ALiBi (a term without gradient);
        // no other score modification.
        auto [first, last] = p.keyRange(i, b);
        if (first == last)
          continue;
        const double *qi = &q[(qOff + i) * d];
        const double *doi = &dout[(qOff + i) * dvd];
        const double *oi = &out[(qOff + i) * dvd];
        double delta = 0;
        for (int64_t x = 0; x < dvd; ++x)
          delta += doi[x] * oi[x];
        for (int64_t j = first; j < last; ++j) {
          const double *kj = &k[(kOff + j) * d];
          const double *vj = &v[(kOff + j) * dvd];
          double s = 0, dp = 0;
          for (int64_t x = 0; x < d; ++x)
            s += qi[x] * kj[x];
          for (int64_t x = 0; x < dvd; ++x)
            dp += doi[x] * vj[x];
          s *= scale;
          double capFactor = 1.0;
          if (p.softcap > 0) {
            double t = std::tanh(s / p.softcap);
            capFactor = 1.0 - t * t;
          }
          s = p.modifyScore(s, b, h, i, j);
          double pij = std::exp(s - lse[qOff + i]);
          double ds = pij * (dp - delta) * capFactor;
          for (int64_t x = 0; x < dvd; ++x)
            dv[(kOff + j) * dvd + x] += pij * doi[x];
          for (int64_t x = 0; x < d; ++x) {
            dq[(qOff + i) * d + x] += ds * kj[x] * scale;
            dk[(kOff + j) * d + x] += ds * qi[x] * scale;
          }
        }
      }
    }
}

ErrorStats attn::compareToReference(const std::vector<double> &got,
                                    const std::vector<double> &want,
                                    const std::vector<char> *mayBeNaN) {
  ErrorStats st;
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = i < got.size() ? got[i] : std::nan("");
    double w = want[i];
    // Non-finite values must match the reference's exactly: the same
    // infinity, or NaN where the reference is NaN (NaN/Inf inputs).
    if ((std::isinf(w) && g == w) || (std::isnan(w) && std::isnan(g)))
      continue;
    // A non-finite V behind a key the mask hides (HiddenKeyLeaks.h).
    if (mayBeNaN && i < mayBeNaN->size() && (*mayBeNaN)[i] && std::isnan(g)) {
      ++st.hiddenKeyNaN;
      continue;
    }
    if (!std::isfinite(g) || !std::isfinite(w)) {
      ++st.nonFinite;
      continue;
    }
    double diff = g - w;
    num += diff * diff;
    den += w * w;
    st.maxAbsErr = std::max(st.maxAbsErr, std::fabs(diff));
  }
  if (st.nonFinite || got.size() != want.size()) {
    st.relErr = std::numeric_limits<double>::infinity();
    st.maxAbsErr = std::numeric_limits<double>::infinity();
    return st;
  }
  st.relErr = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return st;
}

uint16_t attn::floatToBf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN stays a quiet NaN
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float attn::bf16BitsToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t attn::floatToF16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u)
    return static_cast<uint16_t>(sign | 0x7e00u);
  if (absx >= 0x477ff000u) // rounds to >= 65520: infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (absx < 0x38800000u) { // subnormal half (or zero)
    float af;
    std::memcpy(&af, &absx, 4);
    // 2^-24 is the smallest subnormal; rint rounds half to even.
    uint32_t m = static_cast<uint32_t>(std::nearbyint(af * 16777216.0f));
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t mant = absx & 0x7fffffu;
  uint32_t exp = (absx >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

float attn::f16BitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u |= sign;
    std::memcpy(&f, &u, 4);
    return f;
  }
  uint32_t u = exp == 31 ? (sign | 0x7f800000u | (mant << 13))
                         : (sign | ((exp + 112) << 23) | (mant << 13));
  std::memcpy(&f, &u, 4);
  return f;
}

double attn::roundToDType(double x, DType t) {
  switch (t) {
  case DType::f32:
    return static_cast<float>(x);
  case DType::bf16:
    return bf16BitsToFloat(floatToBf16Bits(static_cast<float>(x)));
  case DType::f16:
    return f16BitsToFloat(floatToF16Bits(static_cast<float>(x)));
  }
  return x;
}

double attn::toleranceFor(DType t) { return t == DType::f32 ? 1e-5 : 1e-2; }
