//===- ShapeBench.h - one shape's inputs, reference and timing --*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// attn-tune runs tens of candidate kernels on the same shape. What does not
// depend on the candidate is done once per shape: random inputs (generated
// on all cores), the device buffers, and the float64 reference of the
// sampled rows. Each candidate then costs its launches, one download of O
// and LSE, and a scan of them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTN_TUNE_SHAPEBENCH_H
#define ATTN_TOOLS_ATTN_TUNE_SHAPEBENCH_H

#include "attn/Runtime/Check.h"
#include "attn/Runtime/DeviceMemory.h"
#include "attn/Runtime/Runtime.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attn::tune {

/// Shared by the forward and backward benches.
size_t alignUp(size_t n); // to 256 bytes
unsigned threadCount(unsigned want); // 0 = the hardware's, at most 64
/// Runs body(begin, end) over [0, n) split across `threads` threads.
void parallelFor(size_t n, unsigned threads,
                 const std::function<void(size_t, size_t)> &body);
/// U(-range, range) rounded to `t`; element i depends only on (seed, i),
/// so any split over threads gives the same tensor.
runtime::HostTensor randomTensor(DType t, size_t n, double range,
                                 uint64_t seed, unsigned threads);
/// Elements of `o` that are NaN or infinite (the poison, never written).
int64_t countNonFinite(const runtime::HostTensor &o, unsigned threads);

struct BenchOptions {
  uint64_t seed = 0;
  int64_t checkRows = 256; // reference rows (all rows when the shape is smaller)
  unsigned threads = 0;    // host threads; 0 = the hardware's
};

/// How one candidate compared with the reference.
struct BenchCheck {
  bool ok = false;
  double relErr = -1, lseRelErr = -1;
  int64_t nonFiniteOut = 0, badLse = 0;
  /// Backward: what failed, for the candidate's note ("" = the forward's
  /// fields say it).
  std::string detail;
};

class ShapeBench {
public:
  /// Inputs, buffers (enough sets that a pass over them is three times the
  /// L2) and the reference rows for `p`, in the current context.
  static runtime::Expected<std::unique_ptr<ShapeBench>>
  create(const runtime::CudaDriver &d, const AttentionProblem &p,
         const BenchOptions &o);
  ~ShapeBench();

  /// Poisons set 0's outputs with NaN, launches `k` once on them and
  /// compares O and LSE with the reference (the sampled rows) and scans
  /// the whole output for unwritten values.
  runtime::Status check(const runtime::Kernel &k, BenchCheck &out);
  /// `warmup` launches, then `reps` timed launches rotating over the sets;
  /// appends each launch's milliseconds to `samples`.
  runtime::Status time(const runtime::Kernel &k, int64_t warmup,
                       int64_t reps, std::vector<float> &samples);
  /// Launches `k` twice on the same inputs and says whether O and LSE
  /// are bit-identical (a cheap race detector).
  runtime::Status repeatable(const runtime::Kernel &k, bool &same);

  /// Whether the context still works (a fault leaves a sticky error that
  /// fails every later call; a refused launch does not).
  bool healthy();

  int64_t sets() const { return static_cast<int64_t>(bufs.size()); }
  /// Seconds spent making inputs and the reference.
  double inputSeconds = 0, referenceSeconds = 0;

private:
  explicit ShapeBench(const runtime::CudaDriver &d);
  struct Set;
  runtime::Status launchOn(const runtime::Kernel &k, size_t set);
  runtime::Status download(size_t set);

  const runtime::CudaDriver &d;
  AttentionProblem p;
  BenchOptions opts;
  runtime::OwnedStream stream{d};
  std::vector<std::unique_ptr<Set>> bufs;
  size_t qBytes = 0, kBytes = 0, vBytes = 0, oBytes = 0, lseBytes = 0;
  runtime::HostTensor q, k, v, o;
  std::vector<float> lse;
  // The sampled rows: (slice = batch * heads_q + head, row) and their
  // float64 output and LSE.
  std::vector<std::pair<int64_t, int64_t>> rows;
  std::vector<double> wantO, wantL;
};

} // namespace attn::tune

#endif // ATTN_TOOLS_ATTN_TUNE_SHAPEBENCH_H
