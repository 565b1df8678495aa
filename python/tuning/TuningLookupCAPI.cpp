//===- TuningLookupCAPI.cpp - the tuning database lookup as a C ABI -------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// libattn_tuning_lookup.so: TuningDatabase::lookup (lib/Tuning) behind a
// small C ABI, so that the Python package (python/attn/tuning.py, through
// ctypes) looks kernels up exactly as attn-compile does, on the compiler
// host and on the GPU host alike (the GPU host has no MLIR, hence no
// pybind11 bindings, but builds lib/Tuning). MLIR-free.
//
//===----------------------------------------------------------------------===//

#include "attn/Tuning/TuningDatabase.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace attn::tuning;

namespace {
TuningKey makeKey(const char *gpu, int64_t sms, const char *chip,
                  const char *compiler, const char *family,
                  const char *direction, const char *dtype, int64_t headDim,
                  int64_t valueHeadDim, int64_t headsRatio, int causal,
                  int64_t seqQ, int64_t seqKv, bool deterministic = false) {
  TuningKey key;
  key.gpu = gpu ? gpu : "";
  key.sms = sms;
  key.chip = chip ? chip : "";
  key.compiler = compiler ? compiler : "";
  key.family = family ? family : "";
  key.direction = direction ? direction : "fwd";
  key.dtype = dtype ? dtype : "";
  key.headDim = headDim;
  key.valueHeadDim = valueHeadDim;
  key.headsRatio = headsRatio;
  key.causal = causal != 0;
  key.deterministic = deterministic;
  key.seqQBucket = sequenceBucket(seqQ);
  key.seqKvBucket = sequenceBucket(seqKv);
  return key;
}

void copyOut(const std::string &text, char *out, size_t size) {
  if (!out || size == 0)
    return;
  size_t n = std::min(text.size(), size - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}
} // namespace

#define ATTN_TUNING_EXPORT __attribute__((visibility("default")))

extern "C" {

/// The C ABI version of this library (bump on any signature change).
/// 3: adds attn_tuning_lookup_families.
/// 4: adds attn_tuning_lookup_kernel (direction "bwd" and deterministic).
ATTN_TUNING_EXPORT int attn_tuning_capi_version(void) { return 4; }

/// The compiler version this build keys entries by (compilerVersion()).
ATTN_TUNING_EXPORT const char *attn_tuning_compiler_version(void) {
  static std::string v = compilerVersion();
  return v.c_str();
}

/// The sequence-length bucket of `n` (sequenceBucket()).
ATTN_TUNING_EXPORT int64_t attn_tuning_sequence_bucket(int64_t n) { return sequenceBucket(n); }

/// Looks the forward shape class up in the database at `db` ("" or a
/// missing file = empty). `gpu` "" matches any GPU; `sms` 0 any count.
/// On a hit writes {block_m, block_n, warp_rows, stages} into `tile` and
/// the winner's name (TileChoice::name(), e.g. "m128n64r32s2") into
/// `winner`, and returns 1; on a miss returns 0. `reason` receives the
/// lookup's reason (the key that hit, or why nothing did), preceded by any
/// warning about the file (corrupt, other version) on lines of their own.
ATTN_TUNING_EXPORT int attn_tuning_lookup(const char *db, const char *gpu, int64_t sms,
                       const char *chip, const char *compiler,
                       const char *family, const char *direction,
                       const char *dtype, int64_t head_dim,
                       int64_t value_head_dim, int64_t heads_ratio,
                       int causal, int64_t seq_q, int64_t seq_kv,
                       int64_t *tile, char *winner, size_t winner_size,
                       char *reason, size_t reason_size) {
  std::vector<std::string> warnings;
  std::string path = db ? db : "";
  TuningDatabase database = path.empty() ? TuningDatabase()
                                         : TuningDatabase::load(path, warnings);
  TuningKey key = makeKey(gpu, sms, chip, compiler, family, direction, dtype,
                          head_dim, value_head_dim, heads_ratio, causal,
                          seq_q, seq_kv);
  LookupResult r = database.lookup(key);
  std::string text;
  for (const std::string &w : warnings)
    text += "warning: " + w + "\n";
  text += path.empty() ? "miss: no tuning database given" : r.reason;
  copyOut(text, reason, reason_size);
  if (!r.entry)
    return 0;
  copyOut(r.entry->winner.name(), winner, winner_size);
  if (tile) {
    tile[0] = r.entry->winner.blockM;
    tile[1] = r.entry->winner.blockN;
    tile[2] = r.entry->winner.warpRows;
    tile[3] = r.entry->winner.stages;
  }
  return 1;
}

/// The lookup of a kernel for the kernel families `families` allows,
/// comma-separated ("sm80-mma", "sm90a-wgmma" or both), as the compiler
/// does it: `direction` "fwd" as convert-attn-to-gpu
/// (lookupTunedForwardKernel), "bwd" as attn-compile --backward
/// (lookupTunedBackwardKernel; `deterministic` picks the dQ mode's key).
/// With both families, the "auto" entry's winner (either family); with
/// one, that family's entry, else the fastest correct candidate of that
/// family in the entry that tuned both. On a hit writes the tile's name
/// (TileChoice::name(): "m128n64r32s2", "wg-m128n176s2-p",
/// "wg-m64n128s3-dqfirst": the name says the family, schedule and grid)
/// into `winner` and returns 1; on a miss returns 0. `reason` as
/// attn_tuning_lookup's, the fallback's hit said as attn-compile says it.
/// The tile is not checked against the kernel's limits (that needs the
/// compiler): compiling it does.
ATTN_TUNING_EXPORT int
attn_tuning_lookup_kernel(const char *db, const char *gpu, int64_t sms,
                          const char *chip, const char *compiler,
                          const char *families, const char *direction,
                          int deterministic, const char *dtype,
                          int64_t head_dim, int64_t value_head_dim,
                          int64_t heads_ratio, int causal, int64_t seq_q,
                          int64_t seq_kv, char *winner, size_t winner_size,
                          char *reason, size_t reason_size) {
  std::vector<std::string> warnings;
  std::string path = db ? db : "";
  TuningDatabase database = path.empty() ? TuningDatabase()
                                         : TuningDatabase::load(path, warnings);
  std::string list = families ? families : "";
  bool both = list.find(',') != std::string::npos;
  std::string keyFamily = both ? std::string(kAutoFamily) : list;
  const char *dir = direction && *direction ? direction : "fwd";
  auto keyFor = [&](const std::string &family) {
    return makeKey(gpu, sms, chip, compiler, family.c_str(), dir, dtype,
                   head_dim, value_head_dim, heads_ratio, causal, seq_q,
                   seq_kv, deterministic != 0);
  };
  const TileChoice *tile = nullptr;
  LookupResult primary = database.lookup(keyFor(keyFamily));
  std::string why = primary.reason;
  if (primary.entry) {
    tile = &primary.entry->winner;
  } else if (!both) {
    LookupResult all = database.lookup(keyFor(kAutoFamily));
    if (all.entry) {
      if (const CandidateResult *c = fastestOfFamily(*all.entry, keyFamily)) {
        tile = &c->tile;
        why = "hit: the fastest " + keyFamily + " candidate of " +
              all.entry->key.str();
      } else {
        why += "; the entry tuning both families has no correct " +
               keyFamily + " candidate";
      }
    }
  }
  std::string text;
  for (const std::string &w : warnings)
    text += "warning: " + w + "\n";
  text += path.empty() ? "miss: no tuning database given" : why;
  copyOut(text, reason, reason_size);
  if (!tile)
    return 0;
  copyOut(tile->name(), winner, winner_size);
  return 1;
}

/// attn_tuning_lookup_kernel for forward kernels (kept for version 3's
/// callers).
ATTN_TUNING_EXPORT int
attn_tuning_lookup_families(const char *db, const char *gpu, int64_t sms,
                            const char *chip, const char *compiler,
                            const char *families, const char *dtype,
                            int64_t head_dim, int64_t value_head_dim,
                            int64_t heads_ratio, int causal, int64_t seq_q,
                            int64_t seq_kv, char *winner, size_t winner_size,
                            char *reason, size_t reason_size) {
  return attn_tuning_lookup_kernel(db, gpu, sms, chip, compiler, families,
                                   "fwd", 0, dtype, head_dim, value_head_dim,
                                   heads_ratio, causal, seq_q, seq_kv, winner,
                                   winner_size, reason, reason_size);
}

} // extern "C"
