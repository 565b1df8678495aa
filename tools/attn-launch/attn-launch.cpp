//===- attn-launch.cpp - run one compiled kernel on a GPU and check it ----===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// MLIR-free: loads a kernel directory (manifest.json + PTX/cubin) through
// the runtime, runs it on fresh random inputs with poisoned outputs, checks
// it against the float64 host reference, times it with CUDA events
// (rotating among input sets so the L2 cache does not flatter small
// shapes) and prints one JSON line, as attn-run does. Exit status: 0 ok,
// 1 over tolerance, 2 usage, loading or CUDA errors.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/BackwardRun.h"
#include "attn/Runtime/Json.h"
#include "attn/Runtime/KernelRun.h"
#include "attn/Support/SpecialValues.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace attn::runtime;
using attn::AttentionProblem;
using attn::DType;

namespace {
const char *kUsage =
    "usage: attn-launch <kernel-dir> [options]\n"
    "\n"
    "Runs the kernel in <kernel-dir> (manifest.json + PTX/cubin) on random\n"
    "inputs and prints one JSON line.\n"
    "\n"
    "  --batch N --heads-q N --heads-kv N --seq-q N --seq-kv N\n"
    "                    launch shape (default: the manifest's problem);\n"
    "                    --batch 0: an empty problem, nothing is launched\n"
    "  --key-starts L,.. --key-ends L,..\n"
    "                    key_range kernels: each batch entry's keys\n"
    "                    [start, end) (default: the manifest problem's)\n"
    "  --scale S         softmax scale of the launch (a kernel argument;\n"
    "                    default: the manifest problem's)\n"
    "  --seed N          random inputs' seed (default 0)\n"
    "  --input-range R   Q and K drawn from U(-R, R) (default 1; V is U(-1,1))\n"
    "  --special TENSOR:INDEX=VALUE\n"
    "                    forward: overwrite input elements after the random\n"
    "                    fill (TENSOR q, k or v; INDEX a flat element index\n"
    "                    or *; VALUE nan, inf, -inf or a number, rounded to\n"
    "                    the dtype); repeatable. --check then compares every\n"
    "                    row, non-finite outputs where the float64 reference\n"
    "                    has them\n"
    "  --check           compare O and LSE with the float64 host reference\n"
    "  --check-rows N    reference rows to check (default: all rows when\n"
    "                    cheap, else a random sample)\n"
    "  --time            time with CUDA events: median of --reps launches\n"
    "  --warmup N        launches before timing (default 5)\n"
    "  --reps N          timed launches (default 20)\n"
    "  --ptx             load the PTX even when a cubin is present\n"
    "  --device N        CUDA device ordinal (default 0)\n"
    "  --repeats N       backward kernels: rerun N times on the same inputs\n"
    "                    and report whether the gradients are bit-identical\n"
    "\n"
    "A backward kernel directory (attn-compile --backward) is run on random\n"
    "Q, K, V, dO with O and LSE from the float64 reference; --check compares\n"
    "dQ, dK, dV with the float64 gradients (every row).\n"
    "\n"
    "Exit status: 0 ok, 1 over tolerance, 2 usage, loading or CUDA errors.\n";

struct Options {
  std::string dir;
  std::optional<int64_t> batch, headsQ, headsKv, seqQ, seqKv;
  uint64_t seed = 0;
  double inputRange = 1.0;
  std::optional<double> scale;
  std::optional<std::vector<int64_t>> keyStarts, keyEnds;
  std::vector<attn::SpecialValue> specials;
  bool check = false, time = false, preferPtx = false;
  int64_t checkRows = 0, warmup = 5, reps = 20, device = 0, repeats = 0;
};

/// Parses argv; an error names the flag at fault.
Expected<Options> parseArgs(int argc, char **argv) {
  Options o;
  auto integer = [](const std::string &flag,
                    const std::string &text) -> Expected<int64_t> {
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end || errno == ERANGE)
      return Status::error(flag + " expects an integer, got '" + text + "'");
    return static_cast<int64_t>(v);
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help")
      return Status::error("help");
    if (arg.rfind("--", 0) != 0) {
      if (!o.dir.empty())
        return Status::error("more than one kernel directory ('" + o.dir +
                             "' and '" + arg + "')");
      o.dir = arg;
      continue;
    }
    std::string flag = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    auto boolFlag = [&](bool &slot) -> Status {
      if (hasValue)
        return Status::error(flag + " takes no value");
      slot = true;
      return Status::success();
    };
    auto takeValue = [&]() -> Status {
      if (hasValue)
        return Status::success();
      if (i + 1 >= argc)
        return Status::error(flag + " needs a value");
      value = argv[++i];
      return Status::success();
    };
    // A positive, finite number (--scale, --input-range).
    auto positiveNumber = [&](double &slot) -> Status {
      char *end = nullptr;
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !(v > 0) || !std::isfinite(v))
        return Status::error(flag + " expects a positive number, got '" +
                             value + "'");
      slot = v;
      return Status::success();
    };
    struct IntFlag {
      const char *name;
      std::optional<int64_t> *opt;
      int64_t *plain;
      int64_t min;
    };
    const IntFlag ints[] = {
        {"--batch", &o.batch, nullptr, 0},
        {"--heads-q", &o.headsQ, nullptr, 1},
        {"--heads-kv", &o.headsKv, nullptr, 1},
        {"--seq-q", &o.seqQ, nullptr, 1},
        {"--seq-kv", &o.seqKv, nullptr, 1},
        {"--check-rows", nullptr, &o.checkRows, 1},
        {"--warmup", nullptr, &o.warmup, 0},
        {"--reps", nullptr, &o.reps, 1},
        {"--device", nullptr, &o.device, 0},
        {"--repeats", nullptr, &o.repeats, 0},
    };
    bool done = false;
    for (const IntFlag &f : ints) {
      if (flag != f.name)
        continue;
      if (Status s = takeValue(); !s)
        return s;
      Expected<int64_t> v = integer(flag, value);
      if (!v)
        return v.status();
      if (*v < f.min)
        return Status::error(flag + " must be at least " +
                             std::to_string(f.min) + " (got " + value + ")");
      if (f.opt)
        *f.opt = *v;
      else
        *f.plain = *v;
      done = true;
    }
    if (done)
      continue;
    Status s = Status::success();
    if (flag == "--check")
      s = boolFlag(o.check);
    else if (flag == "--time")
      s = boolFlag(o.time);
    else if (flag == "--ptx")
      s = boolFlag(o.preferPtx);
    else if (flag == "--seed") {
      if (s = takeValue(); s) {
        Expected<int64_t> v = integer(flag, value);
        if (!v || *v < 0)
          return Status::error("--seed expects a non-negative integer, got '" +
                               value + "'");
        o.seed = static_cast<uint64_t>(*v);
      }
    } else if (flag == "--special") {
      if (s = takeValue(); s) {
        attn::SpecialValue sv;
        if (std::string why = attn::parseSpecialValue(value, sv); !why.empty())
          return Status::error(why);
        o.specials.push_back(sv);
      }
    } else if (flag == "--scale") {
      double v = 0;
      if (s = takeValue(); s && (s = positiveNumber(v)))
        o.scale = v;
    } else if (flag == "--key-starts" || flag == "--key-ends") {
      if (s = takeValue(); s) {
        std::vector<int64_t> xs;
        size_t at = 0;
        while (s && at <= value.size()) {
          size_t comma = std::min(value.find(',', at), value.size());
          Expected<int64_t> v = integer(flag, value.substr(at, comma - at));
          if (!v)
            s = v.status();
          else
            xs.push_back(*v);
          at = comma + 1;
        }
        (flag == "--key-starts" ? o.keyStarts : o.keyEnds) = xs;
      }
    } else if (flag == "--input-range") {
      if (s = takeValue(); s)
        s = positiveNumber(o.inputRange);
    } else {
      return Status::error("unknown flag '" + flag + "' (see --help)");
    }
    if (!s)
      return s;
  }
  if (o.dir.empty())
    return Status::error("no kernel directory given");
  return o;
}

/// Exit 2 with the message on stderr, and a JSON line on stdout so that
/// scripts collecting results see the failure too.
int fail(const Options *o, const std::string &msg) {
  std::fprintf(stderr, "attn-launch: error: %s\n", msg.c_str());
  if (o && !o->dir.empty())
    std::printf("{\"target\":\"cuda\",\"dir\":%s,\"ok\":false,\"error\":%s}\n",
                jsonQuote(o->dir).c_str(), jsonQuote(msg).c_str());
  return 2;
}
} // namespace

int main(int argc, char **argv) {
  Expected<Options> parsed = parseArgs(argc, argv);
  if (!parsed) {
    if (parsed.message() == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (argc == 1)
      std::fputs(kUsage, stderr);
    else
      std::fprintf(stderr,
                   "attn-launch: error: %s\nrun 'attn-launch --help' for "
                   "usage\n",
                   parsed.message().c_str());
    return 2;
  }
  const Options &opts = *parsed;

  // The manifest first: its errors need no GPU.
  Expected<KernelManifest> man = readManifest(opts.dir);
  if (!man)
    return fail(&opts, man.message());
  RunResult res;
  res.problem = man->problem;
  AttentionProblem &p = res.problem;
  if (opts.batch)
    p.batch = *opts.batch;
  if (opts.headsQ)
    p.headsQ = *opts.headsQ;
  if (opts.headsKv)
    p.headsKv = *opts.headsKv;
  if (opts.seqQ)
    p.seqQ = *opts.seqQ;
  if (opts.seqKv)
    p.seqKv = *opts.seqKv;
  if (opts.scale)
    p.scale = *opts.scale;
  if ((opts.keyStarts || opts.keyEnds) && !p.hasKeyRanges())
    return fail(&opts, "--key-starts/--key-ends apply to key_range kernels "
                       "only (attn-compile --key-starts/--key-ends)");
  if (opts.keyStarts)
    p.keyStarts = *opts.keyStarts;
  if (opts.keyEnds)
    p.keyEnds = *opts.keyEnds;
  // Batch 0 is an empty problem (the runtime launches nothing); the rest of
  // the shape must still be valid.
  AttentionProblem shape = p;
  shape.batch = std::max<int64_t>(p.batch, 1);
  if (std::string why = shape.validate(); !why.empty())
    return fail(&opts, why);
  if (opts.check && p.customScoreMod)
    return fail(&opts, "--check cannot verify this kernel: its score_mod is "
                       "a custom region the host reference does not know "
                       "(the softcap and ALiBi are reproduced, regions are not)");

  if (man->direction != "backward" && opts.repeats)
    return fail(&opts, "--repeats applies to backward kernels only");
  if (man->direction == "backward" && !opts.specials.empty())
    return fail(&opts, "--special applies to forward kernels only");
  if (man->direction == "backward" && p.batch == 0)
    return fail(&opts, "--batch 0 applies to forward kernels only");

  LoadOptions lo;
  lo.preferPtx = opts.preferPtx;
  lo.deviceOrdinal = static_cast<int>(opts.device);
  Expected<std::unique_ptr<Kernel>> kernel = Kernel::load(opts.dir, lo);
  if (!kernel)
    return fail(&opts, kernel.message());
  RunOptions ro;
  ro.seed = opts.seed;
  ro.inputRange = opts.inputRange;
  ro.check = opts.check;
  ro.checkRows = opts.checkRows;
  ro.time = opts.time;
  ro.warmup = opts.warmup;
  ro.reps = opts.reps;
  ro.specials = opts.specials;
  if (man->direction == "backward") {
    Expected<std::unique_ptr<BackwardKernel>> bwd =
        BackwardKernel::adopt(kernel.take());
    if (!bwd)
      return fail(&opts, bwd.message());
    BackwardRunResult br;
    br.problem = p;
    if (Status s = runBackwardKernel(**bwd, ro, opts.repeats, br); !s)
      return fail(&opts, s.message());
    std::printf("%s\n", backwardRunResultJson(ro, br, opts.dir).c_str());
    return br.ok() ? 0 : 1;
  }
  if (Status s = runKernel(**kernel, ro, res); !s)
    return fail(&opts, s.message());
  std::printf("%s\n", runResultJson(ro, res, opts.dir).c_str());
  return res.ok() ? 0 : 1;
}
