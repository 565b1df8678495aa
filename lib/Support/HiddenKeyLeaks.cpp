//===- HiddenKeyLeaks.cpp - where a non-finite V may leak -----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/HiddenKeyLeaks.h"

#include <algorithm>
#include <cmath>

using namespace attn;

std::pair<int64_t, int64_t> attn::tiledKeySpan(const AttentionProblem &p,
                                               int64_t i, KeyTiling t) {
  const int64_t nq = p.seqQ, nk = p.seqKv;
  const int64_t bm = t.blockM > 0 ? t.blockM : std::max<int64_t>(nq, 1);
  const int64_t bn = t.blockN > 0 ? t.blockN : std::max<int64_t>(nk, 1);
  const int64_t q0 = i / bm * bm, rows = std::min(bm, nq - q0);
  auto clampKv = [&](int64_t x) { return std::clamp<int64_t>(x, 0, nk); };
  // As the kernels compute it (FlashForwardKernel.cpp, MaskBlocks.h): the
  // first row's left edge and the last row's right edge, not the union of
  // non-empty rows, so a block whose rows see nothing may still visit one.
  const int64_t d0 = p.topLeft ? q0 : q0 + nk - nq;
  int64_t begin = 0, end = nk;
  if (p.hasMask()) {
    if (p.windowLeft >= 0)
      begin = clampKv(d0 - p.windowLeft);
    if (p.rightBound() >= 0)
      end = clampKv(d0 + rows + p.rightBound());
  }
  const int64_t firstBlock = begin / bn, pastBlock = (end + bn - 1) / bn;
  if (firstBlock >= pastBlock)
    return {0, 0};
  return {firstBlock * bn, std::min(nk, pastBlock * bn)};
}

HiddenKeyLeaks::HiddenKeyLeaks(const AttentionProblem &p, KeyTiling t,
                               const std::function<double(size_t)> &vAt)
    : p(p), tiling(t) {
  const int64_t nk = p.seqKv, dv = p.vDim();
  bad.resize(p.batch * p.headsKv);
  for (int64_t s = 0; s < p.batch * p.headsKv; ++s)
    for (int64_t j = 0; j < nk; ++j)
      for (int64_t x = 0; x < dv; ++x)
        if (!std::isfinite(vAt(static_cast<size_t>((s * nk + j) * dv + x)))) {
          bad[s].emplace_back(j, x);
          ++count;
        }
}

void HiddenKeyLeaks::markRow(int64_t b, int64_t h, int64_t i,
                             char *cols) const {
  const auto &here = bad[b * p.headsKv + h / (p.headsQ / p.headsKv)];
  if (here.empty())
    return;
  auto [spanBegin, spanEnd] = tiledKeySpan(p, i, tiling);
  auto [first, last] = p.keyRange(i);
  for (auto [j, x] : here)
    if (j >= spanBegin && j < spanEnd && (j < first || j >= last))
      cols[x] = 1;
}
