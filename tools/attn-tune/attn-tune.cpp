//===- attn-tune.cpp - run tuning bundles, record the winners -------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// MLIR-free: the GPU host's half of the split tuning flow (docs/tuning.md).
// For each bundle written by `attn-compile --tune-bundle` and each of its
// shapes, checks every candidate kernel against the float64 reference
// (poisoned outputs, sampled rows, a scan of the whole output), times it
// briefly (input sets rotating past the L2), times the fastest few and the
// heuristics' choices again in interleaved rounds, rejects wrong or racy
// ones, and records the fastest correct candidate and every candidate's
// timing in the tuning database. Inputs and the reference are made once
// per shape (ShapeBench).
//
//===----------------------------------------------------------------------===//

#include "BackwardBench.h"
#include "ShapeBench.h"

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
using attn::tune::BenchCheck;
using attn::tune::BenchOptions;
using attn::tune::BackwardBench;
using attn::tune::ShapeBench;
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
    "  --warmup N        launches before each timing (default 1)\n"
    "  --screen-reps N   timed launches per candidate in the first pass\n"
    "                    (default 5)\n"
    "  --finalists N     fastest candidates timed again, besides the\n"
    "                    heuristics' choices (default 3)\n"
    "  --reps N          timed launches per finalist, over --rounds\n"
    "                    interleaved rounds; the median counts (default 20)\n"
    "  --rounds N        rounds the finalists' launches are split into,\n"
    "                    each starting one finalist later (default 10:\n"
    "                    in 2 rounds the H200's clock swings put 5-10%\n"
    "                    between equal kernels)\n"
    "  --check-rows N    reference rows checked per candidate (default 256)\n"
    "  --skip NAMES      candidates not to run (comma-separated tile names,\n"
    "                    e.g. wg-m64n128s3); they are recorded as failed\n"
    "  --skip-tuned      shapes whose key the database already holds are\n"
    "                    not tuned again (to resume an interrupted run)\n"
    "  --seed N          random inputs' seed (default 0)\n"
    "  --table FILE      also write the summary table as Markdown\n"
    "  --results FILE    every candidate's JSON line (JSON Lines)\n"
    "  --show            print the database's entries\n"
    "  --merge FILE...   merge other databases' entries into --db\n"
    "  --version         the compiler version new bundles are keyed by\n"
    "\n"
    "Exit status: 0 done, 1 a bundle had no correct candidate, 2 usage or\n"
    "errors, 3 a candidate broke the CUDA context (a fault): its name is on\n"
    "the last line of stderr; rerun with --skip NAME --skip-tuned.\n";

struct Options {
  std::string db, table, results;
  std::vector<std::string> inputs;
  int64_t warmup = 1, reps = 20, checkRows = 256, screenReps = 5,
          finalists = 3, rounds = 10;
  uint64_t seed = 0;
  bool show = false, merge = false, skipTuned = false;
  std::vector<std::string> skip;
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
  bool heuristic = false, familyHeuristic = false;
};

struct Bundle {
  std::string dir, compiler, chip, family;
  /// Version 3: "backward" bundles hold backward kernel directories and a
  /// forward kernel (`forward`) that makes O and the LSE.
  bool backward = false, deterministic = false;
  std::string forward;
  AttentionProblem problem;
  /// The launch shapes to tune at: the problem with these batch and
  /// sequence lengths (version 2 "shapes"; else the problem's own).
  std::vector<AttentionProblem> shapes;
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
  int64_t version = num(*doc, "version");
  if (version < 1 || version > 3)
    return Status::error(dir + "/bundle.json: bundle version " +
                         std::to_string(version) +
                         ", this attn-tune reads versions 1 to 3");
  std::string direction = str(*doc, "direction");
  if (!direction.empty() && direction != "forward" && direction != "backward")
    return Status::error(dir + "/bundle.json: \"direction\" must be forward "
                               "or backward, got '" +
                         direction + "'");
  b.backward = direction == "backward";
  if (const JsonValue *v = doc->get("deterministic"); v && v->isBool())
    b.deterministic = v->asBool();
  if (b.backward) {
    if (str(*doc, "forward").empty())
      return Status::error(dir + "/bundle.json: a backward bundle needs "
                                 "\"forward\" (the kernel that makes O and "
                                 "the LSE)");
    b.forward = dir + "/" + str(*doc, "forward");
  }
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
    bc.tile.family = str(c, "family");
    if (bc.tile.family.empty()) // version 1: the bundle's one family
      bc.tile.family = b.family;
    bc.tile.schedule = str(c, "schedule");
    auto flag = [&](const char *k) {
      const JsonValue *v = c.get(k);
      return v && v->isBool() && v->asBool();
    };
    bc.tile.persistent = flag("persistent");
    bc.heuristic = flag("heuristic");
    bc.familyHeuristic = flag("family_heuristic") ||
                         (version == 1 && bc.heuristic);
    b.candidates.push_back(bc);
  }
  if (const JsonValue *p = doc->get("pruned"); p && p->isArray())
    b.pruned = static_cast<int64_t>(p->asArray().size());
  // The problem, exactly as compiled: the first candidate's manifest.
  Expected<KernelManifest> man = readManifest(b.candidates.front().dir);
  if (!man)
    return man.status();
  b.problem = man->problem;
  if (const JsonValue *sh = doc->get("shapes"); sh && sh->isArray())
    for (const JsonValue &v : sh->asArray()) {
      AttentionProblem p = b.problem;
      p.batch = num(v, "batch");
      p.seqQ = num(v, "seq_q");
      p.seqKv = num(v, "seq_kv");
      if (p.batch <= 0 || p.seqQ <= 0 || p.seqKv <= 0)
        return Status::error(dir + "/bundle.json: a shape needs a positive "
                                   "batch, seq_q and seq_kv");
      // A hand-made or stale bundle: sizes the runtime's arithmetic (and
      // the kernels' i32) cannot hold.
      if (std::string why = p.validate(); !why.empty())
        return Status::error(dir + "/bundle.json: shape " +
                             std::to_string(p.batch) + "x" +
                             std::to_string(p.seqQ) + "x" +
                             std::to_string(p.seqKv) + " is invalid: " + why);
      b.shapes.push_back(p);
    }
  if (b.shapes.empty())
    b.shapes.push_back(b.problem);
  return b;
}

/// A bundle's kernels, loaded once for all of its shapes: forward
/// candidates, or backward candidates plus the forward kernel that makes
/// their O and LSE.
struct BundleKernels {
  bool isBackward = false;
  std::vector<std::unique_ptr<Kernel>> forward;
  std::vector<std::unique_ptr<BackwardKernel>> backward;
  std::unique_ptr<Kernel> makeOutputs;
  std::string makeOutputsError;
  std::vector<std::string> errors; // per candidate: why it did not load

  bool loaded(size_t i) const {
    return isBackward ? backward[i] != nullptr : forward[i] != nullptr;
  }
  /// A loaded kernel (for the driver and the SM count), or null.
  const Kernel *any() const {
    for (size_t i = 0; i < errors.size(); ++i)
      if (loaded(i))
        return isBackward ? &backward[i]->mainKernel() : forward[i].get();
    return nullptr;
  }
};

BundleKernels loadBundleKernels(const Bundle &b) {
  BundleKernels k;
  k.isBackward = b.backward;
  size_t n = b.candidates.size();
  k.forward.resize(n);
  k.backward.resize(n);
  k.errors.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (b.backward) {
      Expected<std::unique_ptr<BackwardKernel>> bk =
          BackwardKernel::load(b.candidates[i].dir);
      if (bk)
        k.backward[i] = bk.take();
      else
        k.errors[i] = bk.message();
    } else {
      Expected<std::unique_ptr<Kernel>> fk = Kernel::load(b.candidates[i].dir);
      if (fk)
        k.forward[i] = fk.take();
      else
        k.errors[i] = fk.message();
    }
  }
  if (b.backward) {
    Expected<std::unique_ptr<Kernel>> fk = Kernel::load(b.forward);
    if (fk)
      k.makeOutputs = fk.take();
    else
      k.makeOutputsError = "the bundle's forward kernel: " + fk.message();
  }
  return k;
}

/// One shape's inputs and reference, and the candidates run on them.
class ShapeRunner {
public:
  virtual ~ShapeRunner() = default;
  virtual Status check(size_t i, BenchCheck &out) = 0;
  virtual Status time(size_t i, int64_t warmup, int64_t reps,
                      std::vector<float> &samples) = 0;
  virtual Status repeatable(size_t i, bool &same) = 0;
  virtual bool healthy() = 0;
  virtual int64_t sets() const = 0;
  virtual double inputSeconds() const = 0;
  virtual double referenceSeconds() const = 0;
};

class ForwardRunner : public ShapeRunner {
public:
  ForwardRunner(std::unique_ptr<ShapeBench> b, const BundleKernels &k)
      : bench(std::move(b)), kernels(k) {}
  Status check(size_t i, BenchCheck &out) override {
    return bench->check(*kernels.forward[i], out);
  }
  Status time(size_t i, int64_t warmup, int64_t reps,
              std::vector<float> &samples) override {
    return bench->time(*kernels.forward[i], warmup, reps, samples);
  }
  Status repeatable(size_t i, bool &same) override {
    return bench->repeatable(*kernels.forward[i], same);
  }
  bool healthy() override { return bench->healthy(); }
  int64_t sets() const override { return bench->sets(); }
  double inputSeconds() const override { return bench->inputSeconds; }
  double referenceSeconds() const override { return bench->referenceSeconds; }

private:
  std::unique_ptr<ShapeBench> bench;
  const BundleKernels &kernels;
};

class BackwardRunner : public ShapeRunner {
public:
  BackwardRunner(std::unique_ptr<BackwardBench> b, const BundleKernels &k,
                 bool deterministic)
      : bench(std::move(b)), kernels(k), deterministic(deterministic) {}
  Status check(size_t i, BenchCheck &out) override {
    return bench->check(*kernels.backward[i], out);
  }
  Status time(size_t i, int64_t warmup, int64_t reps,
              std::vector<float> &samples) override {
    return bench->time(*kernels.backward[i], warmup, reps, samples);
  }
  Status repeatable(size_t i, bool &same) override {
    return bench->repeatable(*kernels.backward[i], deterministic, same);
  }
  bool healthy() override { return bench->healthy(); }
  int64_t sets() const override { return bench->sets(); }
  double inputSeconds() const override { return bench->inputSeconds; }
  double referenceSeconds() const override { return bench->referenceSeconds; }

private:
  std::unique_ptr<BackwardBench> bench;
  const BundleKernels &kernels;
  bool deterministic;
};

Expected<std::unique_ptr<ShapeRunner>>
makeRunner(const CudaDriver &d, const AttentionProblem &problem,
           const Bundle &b, const BundleKernels &k, const BenchOptions &bo) {
  if (!b.backward) {
    Expected<std::unique_ptr<ShapeBench>> sb =
        ShapeBench::create(d, problem, bo);
    if (!sb)
      return sb.status();
    return std::unique_ptr<ShapeRunner>(new ForwardRunner(sb.take(), k));
  }
  if (!k.makeOutputs)
    return Status::error(k.makeOutputsError);
  // Every candidate gets the largest workspace any of them needs.
  uint64_t workspace = 16;
  BackwardArgs args = BackwardArgs::dense(problem);
  for (const auto &bk : k.backward)
    if (bk)
      workspace = std::max(workspace, bk->workspaceBytes(args));
  Expected<std::unique_ptr<BackwardBench>> bb =
      BackwardBench::create(d, problem, *k.makeOutputs, workspace, bo);
  if (!bb)
    return bb.status();
  return std::unique_ptr<ShapeRunner>(
      new BackwardRunner(bb.take(), k, b.deterministic));
}

double median(std::vector<float> v) {
  if (v.empty())
    return -1;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string fmtErr(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", e);
  return buf;
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
  std::string shape, winner, runnerUp, heuristic, speedup, other, counts;
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
  std::vector<std::string> head = {"shape",
                                   "winner",
                                   "time ms",
                                   "runner-up",
                                   "heuristic",
                                   "vs heuristic",
                                   "other family's heuristic (vs)",
                                   "ok/wrong/failed/pruned",
                                   "tune s"};
  std::vector<std::vector<std::string>> cells;
  for (const Row &r : rows) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", r.seconds);
    cells.push_back({r.shape, r.winner, r.time, r.runnerUp, r.heuristic,
                     r.speedup, r.other.empty() ? "-" : r.other, r.counts,
                     secs});
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

/// A launch or copy failed after the candidate loaded: the context holds
/// a sticky error (a fault), so nothing later in this process can be
/// trusted. Entries written so far stay; the caller reruns without it.
[[noreturn]] void contextBroken(const std::string &shape,
                                const std::string &tile, const Status &s) {
  std::fprintf(stderr,
               "%sattn-tune: fatal: %s %s broke the CUDA context: %s\n"
               "attn-tune: rerun with --skip %s --skip-tuned\n",
               ::isatty(2) ? "\r\033[K" : "", shape.c_str(), tile.c_str(),
               s.message().c_str(), tile.c_str());
  std::fflush(stderr);
  std::_Exit(3);
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
/// so that the flag fuzzer (test/Fuzz/FuzzToolFlags.cpp) can call it.
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
    } else if (a == "--screen-reps") {
      rc = intValue(o.screenReps, 1);
    } else if (a == "--finalists") {
      rc = intValue(o.finalists, 1);
    } else if (a == "--rounds") {
      rc = intValue(o.rounds, 1);
    } else if (a == "--seed") {
      int64_t s = 0;
      rc = intValue(s, 0);
      o.seed = static_cast<uint64_t>(s);
    } else if (a == "--skip") {
      std::string v;
      if (!value(v))
        return usageError("--skip needs a value");
      std::stringstream ss(v);
      for (std::string name; std::getline(ss, name, ',');)
        if (!name.empty())
          o.skip.push_back(name);
    } else if (a == "--skip-tuned") {
      o.skipTuned = true;
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
  BenchOptions bo;
  bo.seed = o.seed;
  bo.checkRows = o.checkRows;

  Progress progress;
  size_t done = 0, steps = 0;
  for (const Bundle &b : bundles)
    steps += b.candidates.size() * b.shapes.size();
  total = steps;
  std::vector<Row> rows;
  int exitCode = 0;
  for (const Bundle &b : bundles) {
    // Load every candidate once for all of the bundle's shapes.
    auto loadStart = std::chrono::steady_clock::now();
    BundleKernels kernels = loadBundleKernels(b);
    double loadSeconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - loadStart)
                             .count() /
                         b.shapes.size();
    for (const AttentionProblem &problem : b.shapes) {
      auto start = std::chrono::steady_clock::now();
      std::string label = shapeLabel(problem);
      if (b.backward)
        label += b.deterministic ? " bwd det" : " bwd";
      TuningEntry entry;
      entry.key = TuningKey::forProblem(problem, b.chip, b.family, b.compiler);
      if (b.backward) {
        entry.key.direction = "bwd";
        entry.key.deterministic = b.deterministic;
      }
      entry.batch = problem.batch;
      entry.headsQ = problem.headsQ;
      entry.headsKv = problem.headsKv;
      entry.seqQ = problem.seqQ;
      entry.seqKv = problem.seqKv;
      for (const BundleCandidate &c : b.candidates) {
        CandidateResult cr;
        cr.tile = c.tile;
        cr.heuristic = c.heuristic;
        cr.familyHeuristic = c.familyHeuristic;
        entry.candidates.push_back(cr);
      }
      const CudaDriver *driver = nullptr;
      if (const Kernel *k = kernels.any()) {
        driver = &k->driver();
        entry.key.sms = k->numSms();
      }
      std::unique_ptr<ShapeRunner> bench;
      std::string benchError = "no candidate loaded";
      if (driver) {
        char name[256] = {0};
        cu::Device dev;
        if (driver->CtxGetDevice(&dev) == cu::kSuccess &&
            driver->DeviceGetName(name, sizeof(name) - 1, dev) == cu::kSuccess)
          entry.key.gpu = name;
        if (o.skipTuned) {
          std::vector<std::string> w;
          TuningKey want = entry.key;
          if (TuningDatabase::load(o.db, w).lookup(want).entry) {
            std::fprintf(stderr, "attn-tune: %s: already in %s, skipped\n",
                         label.c_str(), o.db.c_str());
            done += b.candidates.size();
            continue;
          }
        }
        Expected<std::unique_ptr<ShapeRunner>> sb =
            makeRunner(*driver, problem, b, kernels, bo);
        if (sb)
          bench = sb.take();
        else
          benchError = sb.message();
      }

      // Pass 1: check each candidate and time it briefly.
      std::vector<double> screenMs(b.candidates.size(), -1);
      auto screenStart = std::chrono::steady_clock::now();
      for (size_t i = 0; i < b.candidates.size(); ++i) {
        const BundleCandidate &c = b.candidates[i];
        CandidateResult &cr = entry.candidates[i];
        progress.draw(done, total, label + " " + c.tile.name());
        bool skipped =
            std::find(o.skip.begin(), o.skip.end(), c.tile.name()) !=
            o.skip.end();
        if (skipped) {
          cr.status = "failed";
          cr.note = "skipped (--skip)";
        } else if (!kernels.loaded(i) || !bench) {
          cr.status = "failed";
          cr.note = kernels.loaded(i) ? benchError : kernels.errors[i];
        } else {
          BenchCheck chk;
          std::vector<float> samples;
          Status st = bench->check(i, chk);
          if (st && chk.ok)
            st = bench->time(i, o.warmup, o.screenReps, samples);
          if (!st && !bench->healthy())
            contextBroken(label, c.tile.name(), st);
          if (!st) { // e.g. a launch refused for its resources
            cr.status = "failed";
            cr.note = st.message();
          } else {
            cr.relErr = chk.relErr;
            if (!chk.ok) {
              cr.status = "wrong";
              cr.note = "over tolerance or unwritten outputs (" +
                        (chk.detail.empty()
                             ? "rel_err " + fmtErr(chk.relErr) +
                                   ", lse rel_err " + fmtErr(chk.lseRelErr) +
                                   ", " + std::to_string(chk.nonFiniteOut) +
                                   " non-finite, " +
                                   std::to_string(chk.badLse) + " bad LSE"
                             : chk.detail) +
                        ")";
            } else {
              cr.status = "ok";
              screenMs[i] = median(samples);
              cr.timeMs = screenMs[i];
              cr.note = "screened: median of " +
                        std::to_string(o.screenReps);
            }
          }
        }
        if (cr.status != "ok")
          std::fprintf(stderr, "%sattn-tune: %s %s rejected (%s): %s\n",
                       ::isatty(2) ? "\r\033[K" : "", label.c_str(),
                       c.tile.name().c_str(), cr.status.c_str(),
                       cr.note.c_str());
        ++done;
      }
      double screenSeconds = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - screenStart)
                                 .count();

      // Pass 2: the fastest few and the heuristics' choices, in
      // interleaved rounds so that drift hits them alike; each must give
      // the same output twice.
      auto finalStart = std::chrono::steady_clock::now();
      std::vector<size_t> order;
      for (size_t i = 0; i < b.candidates.size(); ++i)
        if (entry.candidates[i].status == "ok")
          order.push_back(i);
      std::sort(order.begin(), order.end(),
                [&](size_t x, size_t y) { return screenMs[x] < screenMs[y]; });
      std::vector<size_t> finals;
      for (size_t i : order)
        if (static_cast<int64_t>(finals.size()) < o.finalists ||
            b.candidates[i].heuristic || b.candidates[i].familyHeuristic)
          finals.push_back(i);
      std::vector<std::vector<float>> finalSamples(b.candidates.size());
      // No more rounds than launches: --reps 4 times four launches.
      int64_t rounds = std::min(o.rounds, o.reps);
      int64_t perRound = std::max<int64_t>(1, o.reps / rounds);
      // Each round starts one finalist later, so that no candidate is
      // always timed first or last in a round.
      for (int64_t r = 0; r < rounds; ++r)
        for (size_t j = 0; j < finals.size(); ++j) {
          size_t i = finals[(j + r) % finals.size()];
          CandidateResult &cr = entry.candidates[i];
          if (cr.status != "ok")
            continue;
          if (Status st = bench->time(i, o.warmup, perRound,
                                      finalSamples[i]);
              !st)
            contextBroken(label, cr.tile.name(), st);
        }
      for (size_t i : finals) {
        CandidateResult &cr = entry.candidates[i];
        if (cr.status == "ok" && !finalSamples[i].empty()) {
          cr.timeMs = median(finalSamples[i]);
          cr.note = "final: median of " +
                    std::to_string(finalSamples[i].size()) + " in " +
                    std::to_string(rounds) + " rounds";
        }
      }
      // The winner must give the same output twice on the same inputs (a
      // cheap race detector); a racy one is wrong and the next one tried.
      std::sort(finals.begin(), finals.end(), [&](size_t x, size_t y) {
        return entry.candidates[x].timeMs < entry.candidates[y].timeMs;
      });
      for (size_t i : finals) {
        CandidateResult &cr = entry.candidates[i];
        if (cr.status != "ok")
          continue;
        bool same = false;
        if (Status st = bench->repeatable(i, same); !st) {
          contextBroken(label, cr.tile.name(), st);
        } else if (!same) {
          cr.status = "wrong";
          cr.note = "outputs differ between two runs on the same inputs (a "
                    "race)";
        } else {
          cr.note += ", repeatable";
          break;
        }
        std::fprintf(stderr, "%sattn-tune: %s %s rejected (%s): %s\n",
                     ::isatty(2) ? "\r\033[K" : "", label.c_str(),
                     cr.tile.name().c_str(), cr.status.c_str(),
                     cr.note.c_str());
      }
      double finalSeconds = std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - finalStart)
                                .count();
      progress.draw(done, total, label + " done");

      int ok = 0, wrong = 0, failed = 0;
      for (const CandidateResult &c : entry.candidates)
        (c.status == "ok" ? ok : c.status == "wrong" ? wrong : failed)++;
      // Only finalists compete: their times come from the same rounds.
      std::vector<const CandidateResult *> good;
      const CandidateResult *heuristic = nullptr, *otherHeuristic = nullptr;
      for (size_t i : finals)
        if (entry.candidates[i].status == "ok")
          good.push_back(&entry.candidates[i]);
      for (const CandidateResult &c : entry.candidates)
        if (c.heuristic)
          heuristic = &c;
      for (const CandidateResult &c : entry.candidates)
        if (c.familyHeuristic && !c.heuristic &&
            (!heuristic || c.tile.family != heuristic->tile.family))
          otherHeuristic = &c;
      std::sort(good.begin(), good.end(),
                [](const CandidateResult *x, const CandidateResult *y) {
                  return x->timeMs < y->timeMs;
                });
      Row row;
      row.shape = label;
      row.counts = std::to_string(ok) + "/" + std::to_string(wrong) + "/" +
                   std::to_string(failed) + "/" + std::to_string(b.pruned);
      row.seconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count() +
                    loadSeconds;
      std::fprintf(stderr,
                   "%sattn-tune: %s: %.2f s (load %.2f, inputs %.2f, "
                   "reference %.2f, check+screen %.2f for %zu, finals %.2f "
                   "for %zu, %lld buffer sets)\n",
                   ::isatty(2) ? "\r\033[K" : "", label.c_str(), row.seconds,
                   loadSeconds, bench ? bench->inputSeconds() : 0.0,
                   bench ? bench->referenceSeconds() : 0.0, screenSeconds,
                   b.candidates.size(), finalSeconds, finals.size(),
                   static_cast<long long>(bench ? bench->sets() : 0));
      if (results)
        for (size_t i = 0; i < entry.candidates.size(); ++i) {
          const CandidateResult &c = entry.candidates[i];
          std::fprintf(
              results,
              "{\"shape\":%s,\"dir\":%s,\"tile\":%s,\"family\":%s,"
              "\"status\":%s,\"time_ms\":%s,\"screen_ms\":%s,\"final\":%s,"
              "\"rel_err\":%s,\"heuristic\":%s,\"family_heuristic\":%s,"
              "\"note\":%s}\n",
              jsonQuote(label).c_str(), jsonQuote(b.candidates[i].dir).c_str(),
              jsonQuote(c.tile.name()).c_str(),
              jsonQuote(c.tile.family).c_str(), jsonQuote(c.status).c_str(),
              fmtMs(c.timeMs).c_str(), fmtMs(screenMs[i]).c_str(),
              finalSamples[i].empty() ? "false" : "true",
              fmtErr(c.relErr).c_str(), c.heuristic ? "true" : "false",
              c.familyHeuristic ? "true" : "false",
              jsonQuote(c.note).c_str());
        }
      bench.reset(); // free the shape's buffers before the next one
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
      auto versus = [&](const CandidateResult *h, std::string &name,
                        std::string &speedup) {
        if (h && h->status == "ok") {
          name = h->tile.name() + " " + fmtMs(h->timeMs);
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.3fx", h->timeMs / good[0]->timeMs);
          speedup = buf;
        } else {
          name = h ? h->tile.name() + " " + h->status : "not in bundle";
          speedup = "n/a";
        }
      };
      versus(heuristic, row.heuristic, row.speedup);
      if (otherHeuristic) {
        std::string name, speedup;
        versus(otherHeuristic, name, speedup);
        row.other = name + " (" + speedup + ")";
      } else {
        row.other = "-";
      }
      rows.push_back(row);
      // One locked read-merge-write per shape: a later crash keeps this one.
      std::vector<std::string> warnings;
      Status st = updateDatabase(o.db, {entry}, warnings);
      for (const std::string &w : warnings)
        std::fprintf(stderr, "attn-tune: warning: %s\n", w.c_str());
      if (!st) {
        std::fprintf(stderr, "attn-tune: error: %s\n", st.message().c_str());
        return 2;
      }
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
