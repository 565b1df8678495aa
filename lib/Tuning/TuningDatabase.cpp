//===- TuningDatabase.cpp - per-shape tile configs, measured --------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Tuning/TuningDatabase.h"
#include "attn/Runtime/Json.h"
#include "attn/Runtime/ReadFile.h"
#include "attn/Support/Sm90Schedules.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ATTN_COMPILER_VERSION
#define ATTN_COMPILER_VERSION "unknown"
#endif

using namespace attn::tuning;
using attn::runtime::Expected;
using attn::runtime::JsonValue;
using attn::runtime::jsonQuote;
using attn::runtime::Status;

std::string attn::tuning::compilerVersion() {
  if (const char *v = std::getenv("ATTN_COMPILER_VERSION"); v && *v)
    return v;
  return ATTN_COMPILER_VERSION;
}

int64_t attn::tuning::sequenceBucket(int64_t n) {
  int64_t b = 1;
  while (b < n && b < (int64_t(1) << 40))
    b *= 2;
  return b;
}

TuningKey TuningKey::forProblem(const AttentionProblem &p,
                                const std::string &chip,
                                const std::string &family,
                                const std::string &compiler) {
  TuningKey k;
  k.chip = chip;
  k.family = family;
  k.compiler = compiler;
  k.dtype = dtypeName(p.dtype);
  k.headDim = p.headDim;
  k.valueHeadDim = p.vDim();
  k.headsRatio = p.headsKv > 0 ? std::max<int64_t>(1, p.headsQ / p.headsKv) : 1;
  k.causal = p.causal;
  k.seqQBucket = sequenceBucket(p.seqQ);
  k.seqKvBucket = sequenceBucket(p.seqKv);
  return k;
}

std::string TuningKey::shapeString() const {
  std::ostringstream os;
  os << direction << " " << dtype << " d" << headDim;
  if (valueHeadDim != headDim)
    os << "v" << valueHeadDim;
  os << " g" << headsRatio << (causal ? " causal" : " nomask")
     << (deterministic ? " deterministic" : "") << " q"
     << seqQBucket << " kv" << seqKvBucket << " " << chip << " " << family
     << " compiler=" << compiler;
  return os.str();
}

std::string TuningKey::str() const {
  std::ostringstream os;
  os << (gpu.empty() ? "any GPU" : gpu) << " (" << sms
     << " SMs): " << shapeString();
  return os.str();
}

std::string TileChoice::name() const {
  std::ostringstream os;
  if (isSm90a()) {
    os << "wg-m" << blockM << "n" << blockN << "s" << stages;
    if (persistent)
      os << "-p";
    if (const attn::Sm90Schedule *s = attn::findSm90Schedule(schedule))
      os << s->tileSuffix;
    return os.str();
  }
  os << "m" << blockM << "n" << blockN << "r" << warpRows << "s" << stages;
  return os.str();
}

const CandidateResult *attn::tuning::fastestOfFamily(const TuningEntry &e,
                                                     const std::string &family) {
  const CandidateResult *best = nullptr;
  for (const CandidateResult &c : e.candidates)
    if (c.status == "ok" && c.tile.family == family &&
        (!best || c.timeMs < best->timeMs))
      best = &c;
  return best;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
/// Field access that remembers the first thing wrong, by path.
struct Reader {
  std::string error;

  const JsonValue *member(const JsonValue &obj, const std::string &key,
                          const std::string &where) {
    const JsonValue *v = obj.get(key);
    if (!v && error.empty())
      error = where + ": missing \"" + key + "\"";
    return v;
  }
  int64_t integer(const JsonValue &obj, const std::string &key,
                  const std::string &where) {
    const JsonValue *v = member(obj, key, where);
    if (!v)
      return 0;
    if (!v->isInteger()) {
      if (error.empty())
        error = where + "." + key + ": expected an integer, got " +
                v->describe();
      return 0;
    }
    return v->asInt();
  }
  double number(const JsonValue &obj, const std::string &key,
                const std::string &where) {
    const JsonValue *v = member(obj, key, where);
    if (!v)
      return 0;
    if (!v->isNumber()) {
      if (error.empty())
        error = where + "." + key + ": expected a number, got " +
                v->describe();
      return 0;
    }
    return v->asNumber();
  }
  std::string string(const JsonValue &obj, const std::string &key,
                     const std::string &where) {
    const JsonValue *v = member(obj, key, where);
    if (!v)
      return "";
    if (!v->isString()) {
      if (error.empty())
        error = where + "." + key + ": expected a string, got " +
                v->describe();
      return "";
    }
    return v->asString();
  }
  bool boolean(const JsonValue &obj, const std::string &key,
               const std::string &where) {
    const JsonValue *v = member(obj, key, where);
    if (!v)
      return false;
    if (!v->isBool()) {
      if (error.empty())
        error = where + "." + key + ": expected true or false, got " +
                v->describe();
      return false;
    }
    return v->asBool();
  }
  const JsonValue *object(const JsonValue &obj, const std::string &key,
                          const std::string &where) {
    const JsonValue *v = member(obj, key, where);
    if (v && !v->isObject()) {
      if (error.empty())
        error = where + "." + key + ": expected an object, got " +
                v->describe();
      return nullptr;
    }
    return v;
  }

  TileChoice tile(const JsonValue &obj, const std::string &where) {
    TileChoice t;
    t.blockM = integer(obj, "block_m", where);
    t.blockN = integer(obj, "block_n", where);
    t.warpRows = integer(obj, "warp_rows", where);
    t.stages = integer(obj, "stages", where);
    if (error.empty() && (t.blockM <= 0 || t.blockN <= 0 || t.warpRows <= 0 ||
                          t.stages <= 0))
      error = where + ": tile sizes must be positive";
    // Version 2: the family and (sm90a-wgmma) the consumer schedule.
    if (obj.get("family"))
      t.family = string(obj, "family", where);
    if (obj.get("schedule"))
      t.schedule = string(obj, "schedule", where);
    if (obj.get("persistent"))
      t.persistent = boolean(obj, "persistent", where);
    if (error.empty() && t.isSm90a() && !attn::findSm90Schedule(t.schedule))
      error = where + ".schedule: expected " +
              attn::sm90ScheduleNames(/*backward=*/false) + " (forward), " +
              attn::sm90ScheduleNames(/*backward=*/true) + " (backward), got '" +
              t.schedule + "'";
    return t;
  }
};
} // namespace

Expected<TuningDatabase> TuningDatabase::parse(const std::string &text) {
  Expected<JsonValue> doc = runtime::parseJson(text);
  if (!doc)
    return Status::error("not valid JSON: " + doc.message());
  if (!doc->isObject())
    return Status::error("expected a JSON object at the top level");
  const JsonValue *format = doc->get("format");
  if (!format || !format->isString() ||
      format->asString() != kDatabaseFormat)
    return Status::error(std::string("not a tuning database (\"format\" is "
                                     "not \"") +
                         kDatabaseFormat + "\")");
  const JsonValue *version = doc->get("version");
  if (!version || !version->isInteger())
    return Status::error("\"version\" is missing or not an integer");
  if (version->asInt() != kDatabaseVersion && version->asInt() != 1)
    return Status::error("format version " +
                         std::to_string(version->asInt()) +
                         ", this build reads versions 1 and " +
                         std::to_string(kDatabaseVersion));
  const JsonValue *entries = doc->get("entries");
  if (!entries || !entries->isArray())
    return Status::error("\"entries\" is missing or not an array");

  Reader r;
  TuningDatabase db;
  size_t i = 0;
  for (const JsonValue &ev : entries->asArray()) {
    std::string where = "entries[" + std::to_string(i++) + "]";
    if (!ev.isObject())
      return Status::error(where + ": expected an object");
    TuningEntry e;
    const JsonValue *k = r.object(ev, "key", where);
    if (k) {
      std::string kw = where + ".key";
      e.key.gpu = r.string(*k, "gpu", kw);
      e.key.sms = r.integer(*k, "sms", kw);
      e.key.chip = r.string(*k, "chip", kw);
      e.key.compiler = r.string(*k, "compiler", kw);
      e.key.family = r.string(*k, "family", kw);
      e.key.direction = r.string(*k, "direction", kw);
      if (r.error.empty() && e.key.direction != "fwd" &&
          e.key.direction != "bwd")
        r.error = kw + ".direction: expected fwd or bwd, got '" +
                  e.key.direction + "'";
      if (k->get("deterministic"))
        e.key.deterministic = r.boolean(*k, "deterministic", kw);
      e.key.dtype = r.string(*k, "dtype", kw);
      e.key.headDim = r.integer(*k, "head_dim", kw);
      e.key.valueHeadDim = r.integer(*k, "value_head_dim", kw);
      e.key.headsRatio = r.integer(*k, "heads_ratio", kw);
      e.key.causal = r.string(*k, "mask", kw) == "causal";
      e.key.seqQBucket = r.integer(*k, "seq_q_bucket", kw);
      e.key.seqKvBucket = r.integer(*k, "seq_kv_bucket", kw);
    }
    if (const JsonValue *w = r.object(ev, "winner", where))
      e.winner = r.tile(*w, where + ".winner");
    if (e.winner.family.empty()) // version 1: the key's family
      e.winner.family = e.key.family;
    if (r.error.empty() && e.key.family != kAutoFamily &&
        e.winner.family != e.key.family)
      r.error = where + ".winner.family: '" + e.winner.family +
                "' is not the key's family '" + e.key.family + "'";
    e.timeMs = r.number(ev, "time_ms", where);
    if (const JsonValue *s = r.object(ev, "tuned_shape", where)) {
      std::string sw = where + ".tuned_shape";
      e.batch = r.integer(*s, "batch", sw);
      e.headsQ = r.integer(*s, "heads_q", sw);
      e.headsKv = r.integer(*s, "heads_kv", sw);
      e.seqQ = r.integer(*s, "seq_q", sw);
      e.seqKv = r.integer(*s, "seq_kv", sw);
    }
    e.tunedAt = r.string(ev, "tuned_at", where);
    const JsonValue *cands = r.member(ev, "candidates", where);
    if (cands && !cands->isArray() && r.error.empty())
      r.error = where + ".candidates: expected an array";
    if (cands && cands->isArray()) {
      size_t j = 0;
      for (const JsonValue &cv : cands->asArray()) {
        std::string cw = where + ".candidates[" + std::to_string(j++) + "]";
        if (!cv.isObject()) {
          if (r.error.empty())
            r.error = cw + ": expected an object";
          break;
        }
        CandidateResult c;
        c.tile = r.tile(cv, cw);
        c.status = r.string(cv, "status", cw);
        c.timeMs = r.number(cv, "time_ms", cw);
        c.relErr = r.number(cv, "rel_err", cw);
        c.heuristic = r.boolean(cv, "heuristic", cw);
        if (cv.get("family_heuristic"))
          c.familyHeuristic = r.boolean(cv, "family_heuristic", cw);
        if (c.tile.family.empty()) // version 1: the key's family
          c.tile.family = e.key.family;
        if (const JsonValue *n = cv.get("note"); n && n->isString())
          c.note = n->asString();
        e.candidates.push_back(std::move(c));
      }
    }
    if (!r.error.empty())
      return Status::error(r.error);
    db.put(std::move(e));
  }
  return db;
}

TuningDatabase TuningDatabase::load(const std::string &path,
                                    std::vector<std::string> &warnings) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT)
    return {};
  Expected<std::string> text = runtime::readFile(path);
  if (!text) {
    warnings.push_back("tuning database '" + path +
                       "' ignored: " + text.message());
    return {};
  }
  Expected<TuningDatabase> db = parse(*text);
  if (!db) {
    warnings.push_back("tuning database '" + path + "' ignored: " +
                       db.message());
    return {};
  }
  return db.take();
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {
std::string number(double v) {
  if (!std::isfinite(v))
    return "-1";
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

std::string tileJson(const TileChoice &t) {
  std::ostringstream os;
  if (!t.family.empty())
    os << "\"family\": " << jsonQuote(t.family) << ", ";
  os << "\"block_m\": " << t.blockM << ", \"block_n\": " << t.blockN
     << ", \"warp_rows\": " << t.warpRows << ", \"stages\": " << t.stages;
  if (!t.schedule.empty())
    os << ", \"schedule\": " << jsonQuote(t.schedule);
  if (t.persistent)
    os << ", \"persistent\": true";
  return os.str();
}
} // namespace

std::string TuningDatabase::toJson() const {
  std::ostringstream os;
  os << "{\n  \"format\": \"" << kDatabaseFormat << "\",\n  \"version\": "
     << kDatabaseVersion << ",\n  \"entries\": [";
  for (size_t i = 0; i < items.size(); ++i) {
    const TuningEntry &e = items[i];
    const TuningKey &k = e.key;
    os << (i ? ",\n" : "\n") << "    {\n      \"key\": {\"gpu\": "
       << jsonQuote(k.gpu) << ", \"sms\": " << k.sms
       << ", \"chip\": " << jsonQuote(k.chip)
       << ", \"compiler\": " << jsonQuote(k.compiler)
       << ", \"family\": " << jsonQuote(k.family)
       << ", \"direction\": " << jsonQuote(k.direction);
    if (k.direction != "fwd")
      os << ", \"deterministic\": " << (k.deterministic ? "true" : "false");
    os << ", \"dtype\": " << jsonQuote(k.dtype)
       << ", \"head_dim\": " << k.headDim
       << ", \"value_head_dim\": " << k.valueHeadDim
       << ", \"heads_ratio\": " << k.headsRatio << ", \"mask\": \""
       << (k.causal ? "causal" : "none")
       << "\", \"seq_q_bucket\": " << k.seqQBucket
       << ", \"seq_kv_bucket\": " << k.seqKvBucket << "},\n"
       << "      \"winner\": {" << tileJson(e.winner) << "},\n"
       << "      \"time_ms\": " << number(e.timeMs) << ",\n"
       << "      \"tuned_shape\": {\"batch\": " << e.batch
       << ", \"heads_q\": " << e.headsQ << ", \"heads_kv\": " << e.headsKv
       << ", \"seq_q\": " << e.seqQ << ", \"seq_kv\": " << e.seqKv << "},\n"
       << "      \"tuned_at\": " << jsonQuote(e.tunedAt) << ",\n"
       << "      \"candidates\": [";
    for (size_t j = 0; j < e.candidates.size(); ++j) {
      const CandidateResult &c = e.candidates[j];
      os << (j ? ",\n" : "\n") << "        {" << tileJson(c.tile)
         << ", \"status\": " << jsonQuote(c.status)
         << ", \"time_ms\": " << number(c.timeMs)
         << ", \"rel_err\": " << number(c.relErr)
         << ", \"heuristic\": " << (c.heuristic ? "true" : "false");
      if (c.familyHeuristic)
        os << ", \"family_heuristic\": true";
      if (!c.note.empty())
        os << ", \"note\": " << jsonQuote(c.note);
      os << "}";
    }
    os << (e.candidates.empty() ? "]" : "\n      ]") << "\n    }";
  }
  os << (items.empty() ? "]" : "\n  ]") << "\n}\n";
  return os.str();
}

void TuningDatabase::put(TuningEntry e) {
  std::string s = e.key.str();
  auto it = std::lower_bound(
      items.begin(), items.end(), s,
      [](const TuningEntry &a, const std::string &b) { return a.key.str() < b; });
  if (it != items.end() && it->key.str() == s)
    *it = std::move(e);
  else
    items.insert(it, std::move(e));
}

LookupResult TuningDatabase::lookup(const TuningKey &want) const {
  LookupResult r;
  std::string shape = want.shapeString();
  for (const TuningEntry &e : items) {
    if (e.key.shapeString() != shape)
      continue;
    if (!want.gpu.empty() && (e.key.gpu != want.gpu ||
                              (want.sms && e.key.sms != want.sms)))
      continue;
    r.entry = &e;
    r.reason = "hit: " + e.key.str();
    return r;
  }
  // A miss: say what came closest.
  if (items.empty()) {
    r.reason = "miss: the database has no entries";
    return r;
  }
  auto sameBut = [&](const TuningEntry &e, auto field) {
    TuningKey k = e.key;
    TuningKey w = want;
    field(k, w);
    return k.shapeString() == w.shapeString();
  };
  for (const TuningEntry &e : items) {
    if (e.key.shapeString() == shape) {
      r.reason = "miss: this shape is tuned only for other GPUs (e.g. " +
                 e.key.gpu + ", " + std::to_string(e.key.sms) +
                 " SMs), not " + want.gpu;
      return r;
    }
  }
  for (const TuningEntry &e : items)
    if (sameBut(e, [](TuningKey &k, TuningKey &w) { k.compiler = w.compiler; })) {
      r.reason = "miss: this shape was tuned by compiler " + e.key.compiler +
                 ", this is " + want.compiler + " (re-tune)";
      return r;
    }
  for (const TuningEntry &e : items)
    if (sameBut(e, [](TuningKey &k, TuningKey &w) {
          k.seqQBucket = w.seqQBucket;
          k.seqKvBucket = w.seqKvBucket;
        })) {
      r.reason = "miss: no entry for sequence buckets q" +
                 std::to_string(want.seqQBucket) + " kv" +
                 std::to_string(want.seqKvBucket) +
                 " (this head/mask class is tuned for others, e.g. q" +
                 std::to_string(e.key.seqQBucket) + " kv" +
                 std::to_string(e.key.seqKvBucket) + ")";
      return r;
    }
  r.reason = "miss: no entry for " + shape;
  return r;
}

//===----------------------------------------------------------------------===//
// Atomic update
//===----------------------------------------------------------------------===//

namespace {
/// Where `path` leads: its last symbolic link followed (relative targets
/// from the link's directory) until a name that is not a link, which need
/// not exist yet. Writing there keeps a symlinked database a symlink.
Expected<std::string> resolveLinks(const std::string &path) {
  std::string at = path;
  int why = ELOOP;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
      return at;
    std::string target(static_cast<size_t>(st.st_size) + 256, '\0');
    ssize_t n = ::readlink(at.c_str(), target.data(), target.size());
    if (n < 0) {
      why = errno;
      break;
    }
    target.resize(static_cast<size_t>(n));
    size_t slash = at.rfind('/');
    if (target.empty() || target[0] == '/' || slash == std::string::npos)
      at = target;
    else
      at = at.substr(0, slash + 1) + target;
  }
  return Status::error("cannot resolve the symbolic link '" + path +
                       "': " + std::strerror(why));
}

/// The first of `<path>.bad`, `<path>.bad.1`, ... that does not exist:
/// every database set aside is kept. Called under the lock.
std::string freeBadName(const std::string &path) {
  std::string name = path + ".bad";
  struct stat st;
  for (int i = 1; ::lstat(name.c_str(), &st) == 0; ++i)
    name = path + ".bad." + std::to_string(i);
  return name;
}

Status renameFile(const std::string &from, const std::string &to) {
  if (std::rename(from.c_str(), to.c_str()) == 0)
    return Status::success();
  return Status::error("cannot rename '" + from + "' to '" + to +
                       "': " + std::strerror(errno));
}

/// Creates a new temporary file next to `path` (O_EXCL | O_NOFOLLOW: a
/// name planted there, as a link or a file, is never written through).
Expected<int> createTemp(const std::string &path, std::string &tmp) {
  for (int attempt = 0;; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
          std::to_string(attempt);
    int fd = ::open(tmp.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0)
      return fd;
    if (errno != EEXIST || attempt == 99)
      return Status::error("cannot create '" + tmp +
                           "': " + std::strerror(errno));
  }
}
} // namespace

Status attn::tuning::updateDatabase(const std::string &path,
                                    const std::vector<TuningEntry> &add,
                                    std::vector<std::string> &warnings) {
  Expected<std::string> resolved = resolveLinks(path);
  if (!resolved)
    return resolved.status();
  const std::string file = *resolved; // written in place of `path`
  struct stat st;
  if (::stat(file.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return Status::error("tuning database '" + file + "' is " +
                         runtime::fileKindName(st.st_mode) +
                         ", not a regular file: not written");

  std::string lockPath = file + ".lock";
  int lock =
      ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (lock < 0)
    return Status::error("cannot open lock file '" + lockPath +
                         "': " + std::strerror(errno));
  struct Unlock {
    int fd;
    ~Unlock() {
      (void)::flock(fd, LOCK_UN);
      (void)::close(fd);
    }
  } unlock{lock};
  while (::flock(lock, LOCK_EX) != 0)
    if (errno != EINTR)
      return Status::error("cannot lock '" + lockPath +
                           "': " + std::strerror(errno));

  // Read and merge under the lock: a concurrent writer's entries survive.
  TuningDatabase db;
  bool existed = ::stat(file.c_str(), &st) == 0;
  if (existed) {
    Expected<std::string> text = runtime::readFile(file);
    if (!text) // not a regular file, too large, unreadable: leave it be
      return Status::error("tuning database not written: " + text.message());
    Expected<TuningDatabase> old = TuningDatabase::parse(*text);
    if (old) {
      db = old.take();
    } else {
      std::string bad = freeBadName(file);
      if (Status s = renameFile(file, bad); !s)
        return s;
      warnings.push_back("tuning database '" + file +
                         "' ignored: " + old.message() + "; moved it to '" +
                         bad + "' and started a new one");
    }
  }
  for (const TuningEntry &e : add)
    db.put(e);

  std::string tmp;
  Expected<int> created = createTemp(file, tmp);
  if (!created)
    return created.status();
  int fd = *created;
  if (existed) // keep the database's permissions
    (void)::fchmod(fd, st.st_mode & 07777);
  std::string text = db.toJson();
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      (void)::close(fd);
      (void)::unlink(tmp.c_str());
      return Status::error("cannot write '" + tmp + "': " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string why = std::strerror(errno);
    (void)::unlink(tmp.c_str());
    return Status::error("cannot flush '" + tmp + "': " + why);
  }
  Status renamed = renameFile(tmp, file);
  if (!renamed)
    (void)::unlink(tmp.c_str());
  return renamed;
}
