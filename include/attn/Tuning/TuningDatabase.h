//===- TuningDatabase.h - per-shape tile configs, measured ------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The tuning database (docs/tuning.md): for each key (GPU, compiler
// version, kernel family, shape class) the fastest checked tile
// configuration and every candidate's timing. MLIR-free, so attn-tune
// builds on the GPU host; the compiler reads the same file. A file that is
// missing is an empty database; one that is corrupt or of another format
// version is ignored with a warning, never an error.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TUNING_TUNINGDATABASE_H
#define ATTN_TUNING_TUNINGDATABASE_H

#include "attn/Runtime/Status.h"
#include "attn/Support/AttentionProblem.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::tuning {

using runtime::Expected;
using runtime::Status;

/// The format version this build writes. It reads this one and version 1
/// (entries of one kernel family, before tiles named their family).
inline constexpr int64_t kDatabaseVersion = 2;
inline constexpr const char *kDatabaseFormat = "attn-tuning-db";

/// The compiler version entries are keyed by: $ATTN_COMPILER_VERSION when
/// set, else the release version (pyproject.toml) baked in at build time.
std::string compilerVersion();

/// The sequence-length bucket of `n`: the smallest power of two >= n (>= 1).
int64_t sequenceBucket(int64_t n);

/// What changes the answer. Two keys match when every field is equal; a
/// lookup with an empty `gpu` matches any GPU.
struct TuningKey {
  std::string gpu;        // device name, e.g. "NVIDIA H200"
  int64_t sms = 0;        // multiprocessors
  std::string chip;       // compile target, e.g. "sm_90a"
  std::string compiler;   // compilerVersion() of the compiler
  /// The kernel families the tuner chose among: "sm80-mma",
  /// "sm90a-wgmma", or "auto" (both: the family was tuned too).
  std::string family;
  /// "fwd" or "bwd" (the backward kernels of attn.attention_grad).
  std::string direction = "fwd";
  /// Backward: dQ without atomics (bit-reproducible). Not a tuning choice:
  /// the caller asks for it, so it keys its own entries.
  bool deterministic = false;
  std::string dtype;      // "bf16", "f16"
  int64_t headDim = 0, valueHeadDim = 0;
  int64_t headsRatio = 1; // heads_q / heads_kv
  bool causal = false;
  int64_t seqQBucket = 0, seqKvBucket = 0;

  /// The key for `p` (buckets from its sequence lengths); gpu/sms empty.
  static TuningKey forProblem(const AttentionProblem &p,
                              const std::string &chip,
                              const std::string &family,
                              const std::string &compiler);
  /// Everything but the GPU, e.g. "fwd bf16 d128 g1 causal q4096 kv4096
  /// sm_90a sm80-mma compiler=abc123" ("bwd ... causal deterministic ..."
  /// for a deterministic backward key).
  std::string shapeString() const;
  /// `gpu (N SMs): shapeString()`.
  std::string str() const;
};

/// Kernel family names (the manifest's "family").
inline constexpr const char *kSm80Family = "sm80-mma";
inline constexpr const char *kSm90aFamily = "sm90a-wgmma";
/// A key family meaning "both families were candidates".
inline constexpr const char *kAutoFamily = "auto";

struct TileChoice {
  int64_t blockM = 0, blockN = 0, warpRows = 0, stages = 2;
  /// The kernel family; "" = the key's (version 1 entries).
  std::string family;
  /// sm90a-wgmma consumer schedule: "pingpong" (two consumers taking
  /// turns), "overlap" (intra-warpgroup overlap only) or "serial"; the
  /// backward dkdv kernel's dQ schedule: "dq-pipelined", "dq-first",
  /// "dk-first", "deterministic" (no dQ), "head-split" or
  /// "transposed-dkv" (D > 128); ""
  /// for sm80-mma.
  std::string schedule;
  /// sm90a-wgmma: each thread block walks several query blocks.
  bool persistent = false;

  bool isSm90a() const { return family == kSm90aFamily; }
  /// "m128n64r32s2" (sm80-mma; backward tiles have warp_rows 16: 16 keys
  /// per warp); "wg-m128n128s2", then "-p" when
  /// persistent and "-nopp" or "-serial" when the schedule is not
  /// ping-pong (sm90a-wgmma); backward "wg-m64n128s2" and "-dqpipe",
  /// "-dqfirst", "-dkfirst", "-det" or "-hsplit".
  std::string name() const;
  bool operator==(const TileChoice &o) const {
    return blockM == o.blockM && blockN == o.blockN &&
           warpRows == o.warpRows && stages == o.stages &&
           family == o.family && schedule == o.schedule &&
           persistent == o.persistent;
  }
};

/// One candidate's fate in a tuning run.
struct CandidateResult {
  TileChoice tile;
  std::string status;  // "ok", "wrong" (failed the check), "failed"
  double timeMs = -1;  // median, when status is "ok"
  double relErr = -1;  // against the float64 reference
  bool heuristic = false; // the compiler's choice without a database
  /// Its family's own heuristic choice (attn-compile --family F without a
  /// database).
  bool familyHeuristic = false;
  std::string note;
};

struct TuningEntry {
  TuningKey key;
  TileChoice winner;
  double timeMs = 0;
  /// The shape that was timed (the key covers a class of shapes).
  int64_t batch = 0, headsQ = 0, headsKv = 0, seqQ = 0, seqKv = 0;
  std::string tunedAt; // UTC, ISO 8601
  std::vector<CandidateResult> candidates;
};

/// The fastest correct candidate of `family` in `e` (nullptr if none).
const CandidateResult *fastestOfFamily(const TuningEntry &e,
                                       const std::string &family);

/// How a lookup went: an entry, or why there is none.
struct LookupResult {
  const TuningEntry *entry = nullptr;
  std::string reason; // on a hit, the key; on a miss, why
};

class TuningDatabase {
public:
  /// Reads `path`. A missing file gives an empty database and no warning;
  /// an unreadable, corrupt or other-version file, or one that is not a
  /// regular file of at most kMaxInputFileBytes (a FIFO, /dev/zero), an
  /// empty database and a warning in `warnings` naming the path and the
  /// fault.
  static TuningDatabase load(const std::string &path,
                             std::vector<std::string> &warnings);
  /// Parses a whole file; the error says what is wrong.
  static Expected<TuningDatabase> parse(const std::string &text);
  std::string toJson() const;

  /// Adds `e`, replacing an entry with the same key.
  void put(TuningEntry e);
  const std::vector<TuningEntry> &entries() const { return items; }

  /// The entry for `want` (any GPU when want.gpu is empty: the first in
  /// key order), or why there is none.
  LookupResult lookup(const TuningKey &want) const;

private:
  std::vector<TuningEntry> items; // sorted by key
};

/// Merges `add` into the database at `path` under an exclusive lock on
/// `<file>.lock`: read, merge, write a new `<file>.tmp.<pid>.<n>` (O_EXCL |
/// O_NOFOLLOW: never through a planted link), fsync, rename over `<file>`.
/// `<file>` is `path` with its symbolic links followed, so a symlinked
/// database stays a link and its target is updated. Two writers at once
/// both land; a crash mid-write leaves the old file. A corrupt or
/// other-version file is moved to the first free `<file>.bad`,
/// `<file>.bad.1`, ... (with a warning) and replaced; one that is not a
/// regular file or is too large to read (ReadFile.h) is an error and left
/// alone.
Status updateDatabase(const std::string &path,
                      const std::vector<TuningEntry> &add,
                      std::vector<std::string> &warnings);

} // namespace attn::tuning

#endif // ATTN_TUNING_TUNINGDATABASE_H
