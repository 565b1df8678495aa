//===- TuneBundle.cpp - candidate kernels for the tuner -------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/TuneBundle.h"
#include "ManifestJson.h"
#include "attn/Compiler/BackwardCompiler.h"
#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Conversion/AttnToGPU/TuningSpace.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Tuning/TuningDatabase.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <mutex>

using namespace mlir;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

namespace {
struct Candidate {
  ForwardCandidate space;
  std::string dir;        // "" when pruned
  std::string stage;      // what pruned it: "static", "compile", "ptxas"
  std::string reason;
  int64_t registers = -1;
};
} // namespace

std::string mlir::attn::checkTuneShape(const ::attn::AttentionProblem &problem,
                                       const TuneShape &shape) {
  ::attn::AttentionProblem p = problem;
  p.batch = shape.batch;
  p.seqQ = shape.seqQ;
  p.seqKv = shape.seqKv ? shape.seqKv : shape.seqQ;
  std::string why = p.validate();
  if (why.empty())
    return "";
  return "tune shape " + std::to_string(p.batch) + "x" +
         std::to_string(p.seqQ) + "x" + std::to_string(p.seqKv) + ": " + why;
}

/// The problem's own launch shape first, then `bundle.shapes` (heads, head
/// dims, dtype and mask stay the problem's). Fails on a shape that is not a
/// valid problem with the rest of `problem` (attn-tune would divide by the
/// wrapped-around sizes).
static llvm::Expected<std::vector<TuneShape>>
launchShapes(const ::attn::AttentionProblem &problem,
             const TuneBundleOptions &bundle) {
  std::vector<TuneShape> shapes = {
      {problem.batch, problem.seqQ, problem.seqKv}};
  for (const TuneShape &sh : bundle.shapes) {
    TuneShape t = sh;
    if (!t.seqKv)
      t.seqKv = t.seqQ;
    if (std::string why = checkTuneShape(problem, t); !why.empty())
      return error(why);
    if (llvm::none_of(shapes, [&](const TuneShape &o) {
          return o.batch == t.batch && o.seqQ == t.seqQ && o.seqKv == t.seqKv;
        }))
      shapes.push_back(t);
  }
  return shapes;
}

static void writeShapes(llvm::json::OStream &j,
                        const std::vector<TuneShape> &shapes) {
  j.attributeArray("shapes", [&] {
    for (const TuneShape &sh : shapes)
      j.object([&] {
        j.attribute("batch", sh.batch);
        j.attribute("seq_q", sh.seqQ);
        j.attribute("seq_kv", sh.seqKv);
      });
  });
}

static void writeProblem(llvm::json::OStream &j,
                         const ::attn::AttentionProblem &problem) {
  j.attributeObject("problem", [&] { writeProblemShape(j, problem); });
}

/// Runs `body(i, module, diagnostics)` for candidates [first, end) on up to
/// `jobs` threads, each in its own MLIRContext with its own copy of
/// `module` (printed once, re-parsed per candidate: contexts are
/// independent, and ptxas runs as a child process); the copy is null when
/// it did not parse, `diagnostics` what the context reported.
static void forEachCandidateModule(
    ModuleOp module, size_t first, size_t end, unsigned jobs,
    llvm::function_ref<void(size_t, ModuleOp, const std::string &)> body) {
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    module.print(os);
  }
  DialectRegistry registry;
  module.getContext()->getDialectRegistry().appendTo(registry);
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(jobs));
  for (size_t i = first; i < end; ++i)
    pool.async([&, i] {
      MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
      std::string diags;
      ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
        llvm::raw_string_ostream os(diags);
        os << d << "\n";
        return success();
      });
      OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(text, &ctx);
      body(i, m ? *m : ModuleOp(), diags);
    });
  pool.wait();
}

static llvm::Error writeBundleJson(llvm::StringRef dir,
                                   const std::string &text) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "bundle.json");
  std::error_code ec;
  llvm::raw_fd_ostream f(path, ec);
  if (ec)
    return error("cannot write '" + path + "': " + ec.message());
  f << text;
  return llvm::Error::success();
}

llvm::Expected<TuneBundleSummary>
mlir::attn::writeTuneBundle(ModuleOp module,
                            const KernelCompileOptions &options,
                            llvm::StringRef dir, unsigned jobs,
                            llvm::ArrayRef<std::string> only,
                            llvm::raw_ostream &log,
                            const TuneBundleOptions &bundle) {
  SmallVector<AttentionOp> ops;
  module.walk([&](AttentionOp op) { ops.push_back(op); });
  if (ops.size() != 1)
    return error("expected exactly one attn.attention, found " +
                 llvm::Twine(ops.size()));
  if (!llvm::is_contained({"sm80", "sm90a", "auto"},
                          StringRef(options.family)))
    return error("--family must be sm80, sm90a or auto, got '" +
                 options.family + "'");
  FlashKernelSpec spec = FlashKernelSpec::fromOp(ops.front());
  if (std::string why = validateFlashKernel(
          spec, chooseFlashKernelConfig(spec, options.chip), options.chip);
      !why.empty() && why.find("block-") == std::string::npos &&
      why.find("shared memory") == std::string::npos)
    return error("no GPU kernel for this attention: " + why);
  if (options.family == "sm90a")
    if (std::string why = hopperFamilySupports(spec, options.chip);
        !why.empty())
      return error("--family sm90a: " + why);
  std::vector<std::string> families =
      allowedKernelFamilies(spec, options.chip, options.family);
  std::string keyFamily = tuningKeyFamily(families);

  std::vector<ForwardCandidate> space = enumerateForwardCandidates(
      spec, options.chip, options.family, bundle.defaultFamily);
  auto wanted = [&](const ForwardCandidate &c) {
    return only.empty() || c.heuristic || c.familyHeuristic ||
           llvm::is_contained(only, c.tile.name());
  };
  for (const std::string &name : only)
    if (llvm::none_of(space, [&](auto &c) { return c.tile.name() == name; }))
      return error("'" + name + "' is not in the tuning space of " +
                   keyFamily +
                   " (sm80-mma: block-m 64/128/256, block-n 32/64/128, "
                   "warp-rows 16/32, stages 2, e.g. m128n64r32s2; "
                   "sm90a-wgmma: e.g. wg-m128n128s2, wg-m192n128s2, "
                   "wg-m128n176s2-p, wg-m128n128s2-nopp)");
  std::vector<Candidate> results;
  for (const ForwardCandidate &c : space)
    if (wanted(c) && !c.pruned.empty()) {
      results.push_back({c, "", "static", c.pruned});
      log << "  " << c.tile.name() << "  pruned (static): " << c.pruned
          << "\n";
    }
  size_t firstCompiled = results.size();
  for (const ForwardCandidate &c : space)
    if (wanted(c) && c.pruned.empty())
      results.push_back({c, "", "", ""});

  if (auto ec = llvm::sys::fs::create_directories(dir))
    return error("cannot create directory '" + dir + "': " + ec.message());

  ::attn::AttentionProblem problem;
  std::mutex logMutex;
  forEachCandidateModule(
      module, firstCompiled, results.size(), jobs,
      [&](size_t i, ModuleOp m, const std::string &diags) {
        Candidate &c = results[i];
        const ::attn::tuning::TileChoice &t = c.space.tile;
        std::string name = t.name();
        if (!m) {
          c.stage = "compile";
          c.reason = "cannot re-parse the module: " + diags;
        } else {
          KernelCompileOptions o = options;
          o.family = t.isSm90a() ? "sm90a" : "sm80";
          o.blockM = t.blockM;
          o.blockN = t.blockN;
          o.warpRows = t.isSm90a() ? 0 : t.warpRows;
          o.stages = t.stages;
          o.sm90Schedule = t.isSm90a() ? hopperScheduleOption(t) : "";
          o.tuningDb = "none";
          o.assemble = true;
          o.emitLLVMIR = false;
          auto kernel = compileAttentionKernel(m, o);
          if (!kernel) {
            c.stage = "compile";
            c.reason = llvm::toString(kernel.takeError()) +
                       (diags.empty() ? "" : ": " + diags);
          } else if (!kernel->ptxas) {
            c.stage = "ptxas";
            c.reason = "no ptxas report";
          } else if (kernel->ptxas->spillStores || kernel->ptxas->spillLoads ||
                     kernel->ptxas->stackFrame) {
            c.stage = "ptxas";
            c.reason = "spills (" + std::to_string(kernel->ptxas->spillStores) +
                       " bytes stored, " +
                       std::to_string(kernel->ptxas->spillLoads) +
                       " loaded, " + std::to_string(kernel->ptxas->stackFrame) +
                       " bytes of stack)";
            c.registers = kernel->ptxas->registers;
          } else {
            kernel->tileSource = "tune-candidate";
            llvm::SmallString<256> path(dir);
            llvm::sys::path::append(path, name);
            if (auto e = writeKernelDirectory(*kernel, path)) {
              c.stage = "compile";
              c.reason = llvm::toString(std::move(e));
            } else {
              c.dir = name;
              c.registers = kernel->ptxas->registers;
              std::lock_guard<std::mutex> lock(logMutex);
              problem = kernel->problem;
            }
          }
        }
        std::lock_guard<std::mutex> lock(logMutex);
        log << "  " << name << (c.space.heuristic ? "*" : " ")
            << " " << (c.dir.empty() ? "pruned (" + c.stage + "): " + c.reason
                                     : "ok, " + std::to_string(c.registers) +
                                           " registers")
            << "\n";
        log.flush();
      });

  TuneBundleSummary summary;
  for (const Candidate &c : results)
    (c.dir.empty() ? summary.pruned : summary.candidates)++;
  if (summary.candidates == 0)
    return error("every candidate configuration was pruned");

  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os, 2);
  auto tile = [&](const ForwardCandidate &c) {
    j.attribute("family", c.tile.family);
    j.attribute("block_m", c.tile.blockM);
    j.attribute("block_n", c.tile.blockN);
    j.attribute("warp_rows", c.tile.warpRows);
    j.attribute("stages", c.tile.stages);
    if (c.tile.isSm90a()) {
      j.attribute("schedule", c.tile.schedule);
      j.attribute("persistent", c.tile.persistent);
    }
    j.attribute("heuristic", c.heuristic);
    j.attribute("family_heuristic", c.familyHeuristic);
  };
  ::attn::tuning::TuningKey key = ::attn::tuning::TuningKey::forProblem(
      problem, options.chip, keyFamily, ::attn::tuning::compilerVersion());
  llvm::Expected<std::vector<TuneShape>> shapes = launchShapes(problem, bundle);
  if (!shapes)
    return shapes.takeError();
  j.object([&] {
    j.attribute("format", kTuneBundleFormat);
    j.attribute("version", kTuneBundleVersion);
    j.attribute("direction", "forward");
    j.attribute("compiler", key.compiler);
    j.attribute("chip", options.chip);
    j.attribute("family", keyFamily);
    j.attribute("key", key.shapeString());
    writeProblem(j, problem);
    writeShapes(j, *shapes);
    j.attributeArray("candidates", [&] {
      for (const Candidate &c : results)
        if (!c.dir.empty())
          j.object([&] {
            j.attribute("dir", c.dir);
            tile(c.space);
            j.attribute("registers", c.registers);
          });
    });
    j.attributeArray("pruned", [&] {
      for (const Candidate &c : results)
        if (c.dir.empty())
          j.object([&] {
            tile(c.space);
            j.attribute("stage", c.stage);
            j.attribute("reason", c.reason);
          });
    });
  });
  os << "\n";
  if (auto e = writeBundleJson(dir, out))
    return std::move(e);
  return summary;
}

//===----------------------------------------------------------------------===//
// Backward bundles
//===----------------------------------------------------------------------===//

namespace {
struct BackwardResult {
  BackwardCandidate space;
  std::string dir;   // "" when pruned
  std::string stage; // what pruned it: "static", "compile", "ptxas"
  std::string reason;
  int64_t registers = -1;  // the most any of its kernels uses
  int64_t spillBytes = 0;  // stores + loads + stack over its kernels
};
} // namespace

llvm::Expected<TuneBundleSummary> mlir::attn::writeBackwardTuneBundle(
    ModuleOp module, const KernelCompileOptions &options, llvm::StringRef dir,
    unsigned jobs, llvm::ArrayRef<std::string> only, llvm::raw_ostream &log,
    const TuneBundleOptions &bundle, const ForwardModuleBuilder &buildForward) {
  SmallVector<AttentionGradOp> ops;
  module.walk([&](AttentionGradOp op) { ops.push_back(op); });
  if (ops.size() != 1)
    return error("expected exactly one attn.attention_grad, found " +
                 llvm::Twine(ops.size()));
  AttentionGradOp op = ops.front();
  if (op.getWindow() ||
      (op.getMask() != MaskKind::none && op.getMask() != MaskKind::causal))
    return error("no GPU backward kernel for this attention: the backward "
                 "kernels take no mask or a bottom-right causal mask");
  FlashBackwardSpec spec = FlashBackwardSpec::fromOp(op);
  std::vector<std::string> families =
      allowedBackwardFamilies(spec, options.chip, options.family);
  if (families.empty())
    return error("no GPU backward kernel for this attention with family " +
                 options.family + ": " +
                 hopperBackwardSupports(spec, options.chip));
  std::vector<BackwardCandidate> space = enumerateBackwardCandidates(
      spec, options.chip, options.deterministic, options.family);
  for (const BackwardCandidate &c : space)
    if (c.heuristic && !c.pruned.empty())
      return error("no GPU backward kernel for this attention: " + c.pruned);
  auto wanted = [&](const BackwardCandidate &c) {
    return only.empty() || c.heuristic ||
           llvm::is_contained(only, c.tile.name());
  };
  for (const std::string &name : only)
    if (llvm::none_of(space, [&](auto &c) { return c.tile.name() == name; }))
      return error("'" + name +
                   "' is not in the backward tuning space (sm80-mma: block-m "
                   "32/64, block-n 32/64/128, e.g. m64n128r16s2; "
                   "sm90a-wgmma: block-m 64 (and 128 at head dim 64 or "
                   "less), stages 2-4 and a dQ schedule, e.g. "
                   "wg-m64n128s3-dqpipe)");
  std::vector<BackwardResult> results;
  for (const BackwardCandidate &c : space)
    if (wanted(c) && !c.pruned.empty()) {
      results.push_back({c, "", "static", c.pruned});
      log << "  " << c.tile.name() << "  pruned (static): " << c.pruned
          << "\n";
    }
  size_t firstCompiled = results.size();
  for (const BackwardCandidate &c : space)
    if (wanted(c) && c.pruned.empty())
      results.push_back({c, "", "", ""});

  if (auto ec = llvm::sys::fs::create_directories(dir))
    return error("cannot create directory '" + dir + "': " + ec.message());
  ::attn::AttentionProblem problem;
  bool haveProblem = false;
  std::string forwardError, forwardEntry;
  std::mutex logMutex;
  forEachCandidateModule(
      module, firstCompiled, results.size(), jobs,
      [&](size_t i, ModuleOp m, const std::string &diags) {
        BackwardResult &c = results[i];
        const ::attn::tuning::TileChoice &t = c.space.tile;
        std::string name = t.name();
        std::string spillNote;
        if (!m) {
          c.stage = "compile";
          c.reason = "cannot re-parse the module: " + diags;
        } else {
          KernelCompileOptions o = options;
          // The tile's own family (a default family of "auto" could pick
          // another backward kernel for the same block sizes).
          o.family = t.isSm90a() ? "sm90a" : "sm80";
          o.blockM = t.blockM;
          o.blockN = t.blockN;
          o.stages = t.isSm90a() ? t.stages : 2;
          o.sm90Schedule = t.isSm90a() ? t.schedule : "";
          o.warpRows = 0;
          o.tuningDb = "none";
          o.assemble = true;
          o.emitLLVMIR = false;
          auto kernels = compileAttentionGradKernels(m, o);
          if (!kernels) {
            c.stage = "compile";
            c.reason = llvm::toString(kernels.takeError()) +
                       (diags.empty() ? "" : ": " + diags);
          } else {
            bool reported = true;
            std::string spills;
            for (const CompiledBackward::Launch &l : kernels->launches) {
              if (!l.ptxas) {
                reported = false;
                continue;
              }
              c.registers = std::max(c.registers, l.ptxas->registers);
              int64_t bytes = l.ptxas->spillStores + l.ptxas->spillLoads +
                              l.ptxas->stackFrame;
              c.spillBytes += bytes;
              if (bytes)
                spills += (spills.empty() ? "" : ", ") + l.role + " " +
                          std::to_string(l.ptxas->spillStores) +
                          " bytes stored, " +
                          std::to_string(l.ptxas->spillLoads) + " loaded, " +
                          std::to_string(l.ptxas->stackFrame) +
                          " bytes of stack";
            }
            if (!reported) {
              c.stage = "ptxas";
              c.reason = "no ptxas report";
            } else if (!spills.empty() && !c.space.heuristic) {
              c.stage = "ptxas";
              c.reason = "spills (" + spills + ")";
            } else {
              if (!spills.empty())
                spillNote = ", kept as the baseline although it spills (" +
                            spills + ")";
              kernels->tileSource = "tune-candidate";
              llvm::SmallString<256> path(dir);
              llvm::sys::path::append(path, name);
              if (auto e = writeBackwardDirectory(*kernels, path)) {
                c.stage = "compile";
                c.reason = llvm::toString(std::move(e));
              } else {
                c.dir = name;
                std::lock_guard<std::mutex> lock(logMutex);
                problem = kernels->problem;
                haveProblem = true;
              }
            }
          }
        }
        std::lock_guard<std::mutex> lock(logMutex);
        log << "  " << name << (c.space.heuristic ? "*" : " ") << " "
            << (c.dir.empty() ? "pruned (" + c.stage + "): " + c.reason
                              : "ok, " + std::to_string(c.registers) +
                                    " registers" + spillNote)
            << "\n";
        log.flush();
      });
  TuneBundleSummary summary;
  for (const BackwardResult &c : results)
    (c.dir.empty() ? summary.pruned : summary.candidates)++;
  if (summary.candidates == 0 || !haveProblem)
    return error("every candidate configuration was pruned");

  // The forward kernel that makes O and the LSE for attn-tune: the
  // heuristic's tile of the default family, no database.
  {
    DialectRegistry registry;
    module.getContext()->getDialectRegistry().appendTo(registry);
    MLIRContext ctx(registry);
    ::attn::AttentionProblem fp = problem;
    fp.withLse = true;
    OwningOpRef<ModuleOp> fm = buildForward(ctx, fp);
    if (!fm)
      return error("cannot build the forward module for the backward "
                   "bundle");
    KernelCompileOptions o = options;
    o.blockM = o.blockN = o.warpRows = 0;
    o.stages = 2;
    o.tuningDb = "none";
    o.assemble = true;
    o.emitLLVMIR = false;
    auto fwd = compileAttentionKernel(*fm, o);
    if (!fwd)
      return error("the backward bundle's forward kernel: " +
                   llvm::toString(fwd.takeError()));
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, "forward");
    if (auto e = writeKernelDirectory(*fwd, path))
      return std::move(e);
    log << "  forward: " << fwd->entry << " (makes O and the LSE)\n";
  }

  ::attn::tuning::TuningKey key = ::attn::tuning::TuningKey::forProblem(
      problem, options.chip, tuningKeyFamily(families),
      ::attn::tuning::compilerVersion());
  key.direction = "bwd";
  key.deterministic = options.deterministic;
  llvm::Expected<std::vector<TuneShape>> shapes = launchShapes(problem, bundle);
  if (!shapes)
    return shapes.takeError();
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os, 2);
  auto tile = [&](const BackwardCandidate &c) {
    j.attribute("family", c.tile.family);
    j.attribute("block_m", c.tile.blockM);
    j.attribute("block_n", c.tile.blockN);
    j.attribute("warp_rows", c.tile.warpRows);
    j.attribute("stages", c.tile.stages);
    if (!c.tile.schedule.empty())
      j.attribute("schedule", c.tile.schedule);
    j.attribute("heuristic", c.heuristic);
    j.attribute("family_heuristic", c.familyHeuristic);
  };
  j.object([&] {
    j.attribute("format", kTuneBundleFormat);
    j.attribute("version", kTuneBundleVersion);
    j.attribute("direction", "backward");
    j.attribute("deterministic", options.deterministic);
    j.attribute("compiler", key.compiler);
    j.attribute("chip", options.chip);
    j.attribute("family", key.family);
    j.attribute("key", key.shapeString());
    writeProblem(j, problem);
    writeShapes(j, *shapes);
    j.attribute("forward", "forward");
    j.attributeArray("candidates", [&] {
      for (const BackwardResult &c : results)
        if (!c.dir.empty())
          j.object([&] {
            j.attribute("dir", c.dir);
            tile(c.space);
            j.attribute("registers", c.registers);
            j.attribute("spill_bytes", c.spillBytes);
          });
    });
    j.attributeArray("pruned", [&] {
      for (const BackwardResult &c : results)
        if (c.dir.empty())
          j.object([&] {
            tile(c.space);
            j.attribute("stage", c.stage);
            j.attribute("reason", c.reason);
          });
    });
  });
  os << "\n";
  if (auto e = writeBundleJson(dir, out))
    return std::move(e);
  return summary;
}
