//===- Check.h - check a kernel's output against float64 --------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Host-side verification for kernels run through the runtime: random
// inputs in the kernel's storage format, and a comparison of O and LSE
// with attn::referenceAttention. Large problems are checked on a random
// sample of rows (always including each sampled head's first and last
// row), while the whole output is scanned for unwritten (poisoned) values.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CHECK_H
#define ATTN_RUNTIME_CHECK_H

#include "attn/Support/AttentionProblem.h"
#include "attn/Support/HiddenKeyLeaks.h"
#include "attn/Support/HostReference.h"

#include <cstdint>
#include <random>
#include <vector>

namespace attn::runtime {

/// A dense tensor in its storage format (f32, or bf16/f16 bits).
struct HostTensor {
  DType dtype = DType::f32;
  std::vector<uint8_t> bytes;

  size_t size() const { return bytes.size() / dtypeBytes(dtype); }
  double get(size_t i) const;

  static HostTensor zeros(DType t, size_t n);
  /// U(-range, range), rounded to `t`.
  static HostTensor random(DType t, size_t n, double range,
                           std::mt19937_64 &rng);
};

struct CheckOptions {
  /// Check every row when that costs at most this many multiply-adds,
  /// else a sample that costs about this much.
  double budget = 2.0e9;
  /// Overrides the budget when > 0: check at most this many rows.
  int64_t maxRows = 0;
  uint64_t seed = 0;
  /// Worker threads; 0 = the hardware's.
  unsigned threads = 0;
  /// The inputs hold NaN or infinities on purpose: check every row, and let
  /// the reference say where non-finite outputs belong (instead of counting
  /// each one as unwritten).
  bool nonFiniteInputs = false;
  /// The kernel's query and key blocks: where a non-finite V may turn rows
  /// NaN that mask its key (HiddenKeyLeaks.h); 0 = one tile, the most
  /// lenient.
  KeyTiling tiling;
};

struct CheckReport {
  bool full = false;   // every row checked against the reference
  int64_t rows = 0;    // rows checked against the reference
  ErrorStats out, lse; // over the checked rows
  /// Over the whole output: O elements that are not finite, and LSE
  /// entries that are NaN or whose -inf disagrees with the mask.
  int64_t nonFiniteOut = 0;
  int64_t badLse = 0;
  double tolerance = 0;
  bool ok = false;
};

/// Compares O ([B, Hq, Nq, Dv], dense) and LSE ([B, Hq, Nq], f32) with the
/// float64 reference on the same (already rounded) inputs. A problem with
/// key ranges or packed sequences goes to checkVariantAttention (which a
/// problem with a bias must call itself, with the bias tensor).
CheckReport checkAttention(const AttentionProblem &p, const HostTensor &q,
                           const HostTensor &k, const HostTensor &v,
                           const HostTensor &o, const std::vector<float> &lse,
                           const CheckOptions &opts = {});

} // namespace attn::runtime

#endif // ATTN_RUNTIME_CHECK_H
