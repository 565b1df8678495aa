//===- HiddenKeyLeaks.h - where a non-finite V may leak ---------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The contract for a non-finite value (NaN, +-Inf) in V at key j
// (docs/reliability.md, "Non-finite values in V"):
//
// - every row that attends to j gets it, as the float64 reference says;
// - rows whose mask hides j but whose query block visits j's key block may
//   get NaN in that column: the tiled kernels multiply a whole block of
//   probabilities with V (one tensor-core product), a hidden key's
//   probability is 0, and 0 * NaN = 0 * Inf = NaN;
// - rows whose query block never visits j's key block are never affected,
//   and the LSE never is (it does not read V).
//
// A query block is `blockM` rows [q0, q0 + blockM) sharing one key loop;
// it visits the key blocks of `blockN` keys that its rows' mask band
// touches (the block skipping of MaskBlocks.h, the sm80 and the sm90a
// kernels). The checks use this to allow exactly those NaN.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_HIDDENKEYLEAKS_H
#define ATTN_SUPPORT_HIDDENKEYLEAKS_H

#include "attn/Support/AttentionProblem.h"

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace attn {

/// The tiles of a tiled attention; 0 = the whole extent (one tile: the
/// reference lowering, PyTorch's math path).
struct KeyTiling {
  int64_t blockM = 0;
  int64_t blockN = 0;
};

/// The keys [begin, end) the query block holding row `i` visits: its rows'
/// band [d(q0) - left, d(q0 + rows - 1) + right], clamped to [0, Nk] and
/// widened to whole key blocks (the last one clamped to Nk); begin == end
/// when it visits none.
std::pair<int64_t, int64_t> tiledKeySpan(const AttentionProblem &p, int64_t i,
                                         KeyTiling t);

/// The non-finite values of a dense V [B, Hkv, Nk, Dv], and which output
/// elements they may turn NaN beyond the reference.
class HiddenKeyLeaks {
public:
  /// `vAt(n)` reads element n of V (as the kernel saw it).
  HiddenKeyLeaks(const AttentionProblem &p, KeyTiling t,
                 const std::function<double(size_t)> &vAt);

  /// True when V holds any non-finite value.
  bool any() const { return count > 0; }

  /// Sets cols[x] (x < Dv) when O[b, h, i, x] may be NaN although the
  /// reference is finite there: a non-finite V[., j, x] whose key j row i's
  /// mask hides, in a key block row i's query block visits. Leaves the
  /// other entries alone.
  void markRow(int64_t b, int64_t h, int64_t i, char *cols) const;

private:
  const AttentionProblem &p;
  KeyTiling tiling;
  /// Per (batch, kv head): the (key, column) pairs whose V is not finite.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> bad;
  int64_t count = 0;
};

} // namespace attn

#endif // ATTN_SUPPORT_HIDDENKEYLEAKS_H
