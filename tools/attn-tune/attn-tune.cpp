//===- attn-tune.cpp - run tuning bundles, record the winners -------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// MLIR-free: the GPU host's half of the split tuning flow (docs/tuning.md).
// For each bundle written by `attn-compile --tune-bundle`, runs every
// candidate kernel through the runtime's shared measurement (runKernel:
// poisoned outputs, float64 check, warm-up, median of N with input sets
// rotating past the L2), rejects wrong ones, and records the fastest
// correct candidate and every candidate's timing in the tuning database.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Json.h"
#include "attn/Runtime/KernelRun.h"
#include "attn/Runtime/Manifest.h"
#include "attn/Tuning/TuningDatabase.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace attn::runtime;
using namespace attn::tuning;
using attn::AttentionProblem;

namespace {
const char *kUsage =
    "usage: attn-tune [options] <bundle-dir>...\n"
    "       attn-tune --db <file> --show\n"
    "       attn-tune --db <file> --merge <other-db>...\n"
    "       attn-tune --version\n"
    "\n"
    "Runs every candidate kernel of each tuning bundle (written by\n"
    "`attn-compile --tune-bundle`; a directory without bundle.json is\n"
    "searched one level down), checks it against the float64 reference,\n"
    "times it, and records the fastest correct one in the database.\n"
    "\n"
    "  --db FILE         tuning database to update (default $ATTN_TUNING_DB)\n"
    "  --warmup N        launches before timing (default 5)\n"
    "  --reps N          timed launches; the median counts (default 20)\n"
    "  --check-rows N    reference rows checked per candidate (default 512)\n"
    "  --seed N          random inputs' seed (default 0)\n"
    "  --table FILE      also write the summary table as Markdown\n"
    "  --results FILE    every candidate's JSON line (JSON Lines)\n"
    "  --show            print the database's entries\n"
    "  --merge FILE...   merge other databases' entries into --db\n"
    "  --version         the compiler version new bundles are keyed by\n"
    "\n"
    "Exit status: 0 done, 1 a bundle had no correct candidate, 2 usage or\n"
    "errors.\n";

struct Options {
  std::string db, table, results;
  std::vector<std::string> inputs;
  int64_t warmup = 5, reps = 20, checkRows = 512;
  uint64_t seed = 0;
  bool show = false, merge = false;
};

int usageError(const std::string &msg) {
  std::fprintf(stderr, "attn-tune: error: %s\nrun 'attn-tune --help' for "
                       "usage\n",
               msg.c_str());
  return 2;
}

bool isDir(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool isFile(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// `dir` when it holds bundle.json, else its subdirectories that do.
std::vector<std::string> findBundles(const std::string &dir) {
  if (isFile(dir + "/bundle.json"))
    return {dir};
  std::vector<std::string> found;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != ".." &&
          isFile(dir + "/" + name + "/bundle.json"))
        found.push_back(dir + "/" + name);
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  return found;
}

struct BundleCandidate {
  std::string dir;
  TileChoice tile;
  bool heuristic = false;
};

struct Bundle {
  std::string dir, compiler, chip, family;
  AttentionProblem problem;
  std::vector<BundleCandidate> candidates;
  int64_t pruned = 0;
};

Expected<Bundle> readBundle(const std::string &dir) {
  Expected<std::string> text = readFile(dir + "/bundle.json");
  if (!text)
    return text.status();
  Expected<JsonValue> doc = parseJson(*text);
  if (!doc)
    return Status::error(dir + "/bundle.json: " + doc.message());
  auto str = [&](const JsonValue &o, const char *k) -> std::string {
    const JsonValue *v = o.get(k);
    return v && v->isString() ? v->asString() : "";
  };
  auto num = [&](const JsonValue &o, const char *k) -> int64_t {
    const JsonValue *v = o.get(k);
    return v && v->isInteger() ? v->asInt() : 0;
  };
  Bundle b;
  b.dir = dir;
  if (str(*doc, "format") != "attn-tune-bundle")
    return Status::error(dir + "/bundle.json: not a tuning bundle (\"format\" "
                               "is not \"attn-tune-bundle\")");
  if (num(*doc, "version") != 1)
    return Status::error(dir + "/bundle.json: bundle version " +
                         std::to_string(num(*doc, "version")) +
                         ", this attn-tune reads version 1");
  b.compiler = str(*doc, "compiler");
  b.chip = str(*doc, "chip");
  b.family = str(*doc, "family");
  const JsonValue *cands = doc->get("candidates");
  if (!cands || !cands->isArray() || cands->asArray().empty())
    return Status::error(dir + "/bundle.json: no \"candidates\"");
  for (const JsonValue &c : cands->asArray()) {
    BundleCandidate bc;
    bc.dir = dir + "/" + str(c, "dir");
    bc.tile = {num(c, "block_m"), num(c, "block_n"), num(c, "warp_rows"),
               num(c, "stages")};
    const JsonValue *h = c.get("heuristic");
    bc.heuristic = h && h->isBool() && h->asBool();
    b.candidates.push_back(bc);
  }
  if (const JsonValue *p = doc->get("pruned"); p && p->isArray())
    b.pruned = static_cast<int64_t>(p->asArray().size());
  // The problem, exactly as compiled: the first candidate's manifest.
  Expected<KernelManifest> man = readManifest(b.candidates.front().dir);
  if (!man)
    return man.status();
  b.problem = man->problem;
  return b;
}

std::string fmtMs(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", ms);
  return buf;
}

std::string shapeLabel(const AttentionProblem &p) {
  std::ostringstream os;
  os << attn::dtypeName(p.dtype) << " d" << p.headDim;
  if (p.vDim() != p.headDim)
    os << "v" << p.vDim();
  os << " b" << p.batch << " h" << p.headsQ;
  if (p.headsKv != p.headsQ)
    os << "/" << p.headsKv;
  os << " n" << p.seqQ;
  if (p.seqKv != p.seqQ)
    os << "/" << p.seqKv;
  os << (p.causal ? " causal" : "");
  return os.str();
}

/// One line, redrawn in place on a terminal; one line per step otherwise.
class Progress {
public:
  Progress() : tty(::isatty(2)) {}
  void draw(size_t done, size_t total, const std::string &what) {
    const int width = 24;
    int filled = total ? static_cast<int>(width * done / total) : width;
    std::string bar(filled, '#');
    bar += std::string(width - filled, '.');
    std::fprintf(stderr, "%s[%s] %zu/%zu %s%s", tty ? "\r\033[K" : "",
                 bar.c_str(), done, total, what.c_str(), tty ? "" : "\n");
    std::fflush(stderr);
  }
  void finish() {
    if (tty)
      std::fputc('\n', stderr);
  }

private:
  bool tty;
};

struct Row {
  std::string shape, winner, runnerUp, heuristic, speedup, counts;
  double seconds = 0;
  std::string time;
};

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string tableText(const std::vector<Row> &rows, bool markdown) {
  std::vector<std::string> head = {"shape",     "winner",   "time ms",
                                   "runner-up", "heuristic", "vs heuristic",
                                   "ok/wrong/failed/pruned", "tune s"};
  std::vector<std::vector<std::string>> cells;
  for (const Row &r : rows) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", r.seconds);
    cells.push_back({r.shape, r.winner, r.time, r.runnerUp, r.heuristic,
                     r.speedup, r.counts, secs});
  }
  std::vector<size_t> w(head.size());
  for (size_t i = 0; i < head.size(); ++i) {
    w[i] = head[i].size();
    for (auto &c : cells)
      w[i] = std::max(w[i], c[i].size());
  }
  std::ostringstream os;
  auto line = [&](const std::vector<std::string> &c) {
    for (size_t i = 0; i < c.size(); ++i) {
      if (markdown)
        os << "| ";
      os << c[i] << std::string(w[i] - c[i].size(), ' ')
         << (markdown ? " " : "  ");
    }
    os << (markdown ? "|\n" : "\n");
  };
  line(head);
  std::vector<std::string> rule;
  for (size_t x : w)
    rule.push_back(std::string(x, '-'));
  line(rule);
  for (auto &c : cells)
    line(c);
  return os.str();
}

int showDatabase(const std::string &path) {
  std::vector<std::string> warnings;
  TuningDatabase db = TuningDatabase::load(path, warnings);
  for (const std::string &w : warnings)
    std::fprintf(stderr, "attn-tune: warning: %s\n", w.c_str());
  std::printf("%s: %zu entries (format %s version %lld)\n", path.c_str(),
              db.entries().size(), kDatabaseFormat,
              static_cast<long long>(kDatabaseVersion));
  for (const TuningEntry &e : db.entries())
    std::printf("%s -> %s %s ms (%zu candidates, tuned %s)\n",
                e.key.str().c_str(), e.winner.name().c_str(),
                fmtMs(e.timeMs).c_str(), e.candidates.size(),
                e.tunedAt.c_str());
  return 0;
}

int mergeDatabases(const Options &o) {
  int rc = 0;
  for (const std::string &file : o.inputs) {
    std::vector<std::string> warnings;
    TuningDatabase other = TuningDatabase::load(file, warnings);
    if (!isFile(file))
      warnings.push_back("'" + file + "' does not exist");
    for (const std::string &w : warnings)
      std::fprintf(stderr, "attn-tune: warning: %s\n", w.c_str());
    std::vector<std::string> updateWarnings;
    Status s = updateDatabase(o.db, other.entries(), updateWarnings);
    for (const std::string &w : updateWarnings)
      std::fprintf(stderr, "attn-tune: warning: %s\n", w.c_str());
    if (!s) {
      std::fprintf(stderr, "attn-tune: error: %s\n", s.message().c_str());
      rc = 2;
    }
  }
  return rc;
}

/// Parses argv into `o` (the database defaults to $ATTN_TUNING_DB). Returns
/// -1 to go on, else the exit status: --help and --version print and give
/// 0, a usage error prints its message and gives 2. A function of its own
/// so that the flag fuzzer (test/Fuzz/FuzzTuneFlags.cpp) can call it.
int parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string &slot) -> bool {
      if (i + 1 >= argc)
        return false;
      slot = argv[++i];
      return true;
    };
    auto intValue = [&](int64_t &slot, int64_t min) -> int {
      std::string v;
      if (!value(v))
        return usageError(a + " needs a value");
      char *end = nullptr;
      long long x = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || x < min)
        return usageError(a + " expects an integer >= " +
                          std::to_string(min) + ", got '" + v + "'");
      slot = x;
      return 0;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--version") {
      std::printf("%s\n", compilerVersion().c_str());
      return 0;
    }
    int rc = 0;
    if (a == "--db") {
      if (!value(o.db))
        return usageError("--db needs a value");
    } else if (a == "--table") {
      if (!value(o.table))
        return usageError("--table needs a value");
    } else if (a == "--results") {
      if (!value(o.results))
        return usageError("--results needs a value");
    } else if (a == "--warmup") {
      rc = intValue(o.warmup, 0);
    } else if (a == "--reps") {
      rc = intValue(o.reps, 1);
    } else if (a == "--check-rows") {
      rc = intValue(o.checkRows, 1);
    } else if (a == "--seed") {
      int64_t s = 0;
      rc = intValue(s, 0);
      o.seed = static_cast<uint64_t>(s);
    } else if (a == "--show") {
      o.show = true;
    } else if (a == "--merge") {
      o.merge = true;
    } else if (a.rfind("--", 0) == 0) {
      return usageError("unknown flag '" + a + "'");
    } else {
      o.inputs.push_back(a);
    }
    if (rc)
      return rc;
  }
  if (o.db.empty())
    if (const char *env = std::getenv("ATTN_TUNING_DB"))
      o.db = env;
  return -1;
}
} // namespace

int main(int argc, char **argv) {
  Options o;
  if (int rc = parseArgs(argc, argv, o); rc >= 0)
    return rc;
  if (o.db.empty())
    return usageError("no database: give --db <file> or set ATTN_TUNING_DB");
  if (o.show)
    return o.inputs.empty() ? showDatabase(o.db)
                            : usageError("--show takes no bundles");
  if (o.merge)
    return o.inputs.empty() ? usageError("--merge needs database files")
                            : mergeDatabases(o);
  if (o.inputs.empty())
    return usageError("no bundle directories given");

  std::vector<Bundle> bundles;
  size_t total = 0;
  for (const std::string &in : o.inputs) {
    if (!isDir(in))
      return usageError("'" + in + "' is not a directory");
    std::vector<std::string> dirs = findBundles(in);
    if (dirs.empty())
      return usageError("'" + in + "' holds no bundle.json (write one with "
                                   "attn-compile --tune-bundle)");
    for (const std::string &d : dirs) {
      Expected<Bundle> b = readBundle(d);
      if (!b) {
        std::fprintf(stderr, "attn-tune: error: %s\n", b.message().c_str());
        return 2;
      }
      total += b->candidates.size();
      bundles.push_back(b.take());
    }
  }

  std::FILE *results = nullptr;
  if (!o.results.empty() &&
      !(results = std::fopen(o.results.c_str(), "w"))) {
    std::fprintf(stderr, "attn-tune: error: cannot write '%s'\n",
                 o.results.c_str());
    return 2;
  }
  RunOptions ro;
  ro.seed = o.seed;
  ro.check = true;
  ro.checkRows = o.checkRows;
  ro.time = true;
  ro.warmup = o.warmup;
  ro.reps = o.reps;

  Progress progress;
  size_t done = 0;
  std::vector<Row> rows;
  int exitCode = 0;
  for (const Bundle &b : bundles) {
    auto start = std::chrono::steady_clock::now();
    TuningEntry entry;
    entry.key = TuningKey::forProblem(b.problem, b.chip, b.family, b.compiler);
    entry.batch = b.problem.batch;
    entry.headsQ = b.problem.headsQ;
    entry.headsKv = b.problem.headsKv;
    entry.seqQ = b.problem.seqQ;
    entry.seqKv = b.problem.seqKv;
    int ok = 0, wrong = 0, failed = 0;
    for (const BundleCandidate &c : b.candidates) {
      progress.draw(done, total, shapeLabel(b.problem) + " " + c.tile.name());
      CandidateResult cr;
      cr.tile = c.tile;
      cr.heuristic = c.heuristic;
      Expected<std::unique_ptr<Kernel>> k = Kernel::load(c.dir);
      RunResult res;
      if (!k) {
        cr.status = "failed";
        cr.note = k.message();
      } else {
        res.problem = (*k)->manifest().problem;
        entry.key.sms = (*k)->numSms();
        if (Status s = runKernel(**k, ro, res); !s) {
          cr.status = "failed";
          cr.note = s.message();
        } else {
          entry.key.gpu = res.device;
          if (res.check)
            cr.relErr = res.check->out.relErr;
          if (!res.ok()) {
            cr.status = "wrong";
            cr.note = "over tolerance or unwritten outputs";
          } else if (res.sameAcrossSets && !*res.sameAcrossSets) {
            cr.status = "wrong";
            cr.note = "outputs differ between identical input sets (a race)";
          } else {
            cr.status = "ok";
            cr.timeMs = res.timeMs.value_or(-1);
          }
        }
        if (results)
          std::fprintf(results, "%s\n",
                       runResultJson(ro, res, c.dir).c_str());
      }
      if (results && !k)
        std::fprintf(results, "{\"dir\":%s,\"ok\":false,\"error\":%s}\n",
                     jsonQuote(c.dir).c_str(), jsonQuote(cr.note).c_str());
      (cr.status == "ok" ? ok : cr.status == "wrong" ? wrong : failed)++;
      if (cr.status != "ok")
        std::fprintf(stderr, "%sattn-tune: %s %s rejected (%s): %s\n",
                     ::isatty(2) ? "\r\033[K" : "",
                     shapeLabel(b.problem).c_str(), c.tile.name().c_str(),
                     cr.status.c_str(), cr.note.c_str());
      entry.candidates.push_back(cr);
      ++done;
    }
    progress.draw(done, total, shapeLabel(b.problem) + " done");

    std::vector<const CandidateResult *> good;
    const CandidateResult *heuristic = nullptr;
    for (const CandidateResult &c : entry.candidates) {
      if (c.status == "ok")
        good.push_back(&c);
      if (c.heuristic)
        heuristic = &c;
    }
    std::sort(good.begin(), good.end(),
              [](const CandidateResult *a, const CandidateResult *b) {
                return a->timeMs < b->timeMs;
              });
    Row row;
    row.shape = shapeLabel(b.problem);
    row.counts = std::to_string(ok) + "/" + std::to_string(wrong) + "/" +
                 std::to_string(failed) + "/" + std::to_string(b.pruned);
    row.seconds = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
    if (good.empty()) {
      row.winner = "none correct";
      exitCode = 1;
      rows.push_back(row);
      continue;
    }
    entry.winner = good[0]->tile;
    entry.timeMs = good[0]->timeMs;
    entry.tunedAt = utcNow();
    row.winner = good[0]->tile.name() + (good[0]->heuristic ? "*" : "");
    row.time = fmtMs(good[0]->timeMs);
    row.runnerUp = good.size() > 1 ? good[1]->tile.name() + " " +
                                         fmtMs(good[1]->timeMs)
                                   : "-";
    if (heuristic && heuristic->status == "ok") {
      row.heuristic = heuristic->tile.name() + " " + fmtMs(heuristic->timeMs);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3fx",
                    heuristic->timeMs / good[0]->timeMs);
      row.speedup = buf;
    } else {
      row.heuristic = heuristic ? heuristic->tile.name() + " " +
                                      heuristic->status
                                : "not in bundle";
      row.speedup = "n/a";
    }
    rows.push_back(row);
    // One locked read-merge-write per bundle: a later crash keeps this one.
    std::vector<std::string> warnings;
    Status s = updateDatabase(o.db, {entry}, warnings);
    for (const std::string &w : warnings)
      std::fprintf(stderr, "attn-tune: warning: %s\n", w.c_str());
    if (!s) {
      std::fprintf(stderr, "attn-tune: error: %s\n", s.message().c_str());
      return 2;
    }
  }
  progress.finish();
  if (results)
    std::fclose(results);

  std::string gpu = "?";
  std::vector<std::string> w;
  TuningDatabase db = TuningDatabase::load(o.db, w);
  for (const TuningEntry &e : db.entries())
    if (!e.key.gpu.empty())
      gpu = e.key.gpu + ", " + std::to_string(e.key.sms) + " SMs";
  std::printf("attn-tune: %zu shapes on %s; * = the heuristic's choice; "
              "database %s\n%s",
              rows.size(), gpu.c_str(), o.db.c_str(),
              tableText(rows, false).c_str());
  if (!o.table.empty()) {
    std::ofstream t(o.table);
    t << tableText(rows, true);
    if (!t) {
      std::fprintf(stderr, "attn-tune: error: cannot write '%s'\n",
                   o.table.c_str());
      return 2;
    }
  }
  return exitCode;
}
