//===- TuneBundle.cpp - candidate kernels for the tuner -------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/TuneBundle.h"
#include "attn/Conversion/AttnToGPU/FlashKernel.h"
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
  FlashKernelConfig config;
  std::string dir;        // "" when pruned
  std::string stage;      // what pruned it: "static", "compile", "ptxas"
  std::string reason;
  int64_t registers = -1;
};

std::string candidateName(const FlashKernelConfig &c) {
  ::attn::tuning::TileChoice t{c.blockM, c.blockN, c.warpRows, c.stages};
  return t.name();
}
} // namespace

llvm::Expected<TuneBundleSummary>
mlir::attn::writeTuneBundle(ModuleOp module,
                            const KernelCompileOptions &options,
                            llvm::StringRef dir, unsigned jobs,
                            llvm::ArrayRef<std::string> only,
                            llvm::raw_ostream &log) {
  SmallVector<AttentionOp> ops;
  module.walk([&](AttentionOp op) { ops.push_back(op); });
  if (ops.size() != 1)
    return error("expected exactly one attn.attention, found " +
                 llvm::Twine(ops.size()));
  FlashKernelSpec spec = FlashKernelSpec::fromOp(ops.front());
  if (std::string why = validateFlashKernel(
          spec, chooseFlashKernelConfig(spec, options.chip), options.chip);
      !why.empty() && why.find("block-") == std::string::npos &&
      why.find("shared memory") == std::string::npos)
    return error("no GPU kernel for this attention: " + why);

  std::vector<PrunedFlashKernelConfig> staticPruned;
  std::vector<FlashKernelConfig> configs =
      enumerateFlashKernelConfigs(spec, options.chip, &staticPruned);
  auto wanted = [&](const FlashKernelConfig &c) {
    return only.empty() || c.source == "heuristic" ||
           llvm::is_contained(only, candidateName(c));
  };
  for (const std::string &name : only)
    if (llvm::none_of(configs, [&](auto &c) { return candidateName(c) == name; }) &&
        llvm::none_of(staticPruned,
                      [&](auto &p) { return candidateName(p.config) == name; }))
      return error("'" + name + "' is not in the " + kFlashKernelFamily +
                   " tuning space (block-m 64/128/256, block-n 32/64/128, "
                   "warp-rows 16/32, stages 2: e.g. m128n64r32s2)");
  std::vector<Candidate> results;
  for (const PrunedFlashKernelConfig &p : staticPruned)
    if (wanted(p.config)) {
      results.push_back({p.config, "", "static", p.reason});
      log << "  " << candidateName(p.config) << "  pruned (static): "
          << p.reason << "\n";
    }
  size_t firstCompiled = results.size();
  for (const FlashKernelConfig &c : configs)
    if (wanted(c))
      results.push_back({c, "", "", ""});

  if (auto ec = llvm::sys::fs::create_directories(dir))
    return error("cannot create directory '" + dir + "': " + ec.message());

  // Each candidate compiles in its own context from the printed module:
  // contexts are independent, and ptxas runs as a child process.
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    module.print(os);
  }
  DialectRegistry registry;
  module.getContext()->getDialectRegistry().appendTo(registry);
  ::attn::AttentionProblem problem;
  std::mutex logMutex;
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(jobs));
    for (size_t i = firstCompiled; i < results.size(); ++i) {
      pool.async([&, i] {
        Candidate &c = results[i];
        MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
        std::string diags;
        ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
          llvm::raw_string_ostream os(diags);
          os << d << "\n";
          return success();
        });
        OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(text, &ctx);
        std::string name = candidateName(c.config);
        if (!m) {
          c.stage = "compile";
          c.reason = "cannot re-parse the module: " + diags;
        } else {
          KernelCompileOptions o = options;
          o.blockM = c.config.blockM;
          o.blockN = c.config.blockN;
          o.warpRows = c.config.warpRows;
          o.stages = c.config.stages;
          o.tuningDb = "none";
          o.assemble = true;
          o.emitLLVMIR = false;
          auto kernel = compileAttentionKernel(*m, o);
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
        log << "  " << name << (c.config.source == "heuristic" ? "*" : " ")
            << " " << (c.dir.empty() ? "pruned (" + c.stage + "): " + c.reason
                                     : "ok, " + std::to_string(c.registers) +
                                           " registers")
            << "\n";
        log.flush();
      });
    }
    pool.wait();
  }

  TuneBundleSummary summary;
  for (const Candidate &c : results)
    (c.dir.empty() ? summary.pruned : summary.candidates)++;
  if (summary.candidates == 0)
    return error("every candidate configuration was pruned");

  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os, 2);
  auto tile = [&](const FlashKernelConfig &c) {
    j.attribute("block_m", c.blockM);
    j.attribute("block_n", c.blockN);
    j.attribute("warp_rows", c.warpRows);
    j.attribute("stages", c.stages);
    j.attribute("heuristic", c.source == "heuristic");
  };
  ::attn::tuning::TuningKey key = ::attn::tuning::TuningKey::forProblem(
      problem, options.chip, kFlashKernelFamily,
      ::attn::tuning::compilerVersion());
  j.object([&] {
    j.attribute("format", kTuneBundleFormat);
    j.attribute("version", kTuneBundleVersion);
    j.attribute("compiler", key.compiler);
    j.attribute("chip", options.chip);
    j.attribute("family", kFlashKernelFamily);
    j.attribute("key", key.shapeString());
    j.attributeObject("problem", [&] {
      j.attribute("batch", problem.batch);
      j.attribute("heads_q", problem.headsQ);
      j.attribute("heads_kv", problem.headsKv);
      j.attribute("seq_q", problem.seqQ);
      j.attribute("seq_kv", problem.seqKv);
      j.attribute("head_dim", problem.headDim);
      j.attribute("value_head_dim", problem.vDim());
      j.attribute("dtype", ::attn::dtypeName(problem.dtype));
      j.attribute("causal", problem.causal);
    });
    j.attributeArray("candidates", [&] {
      for (const Candidate &c : results)
        if (!c.dir.empty())
          j.object([&] {
            j.attribute("dir", c.dir);
            tile(c.config);
            j.attribute("registers", c.registers);
          });
    });
    j.attributeArray("pruned", [&] {
      for (const Candidate &c : results)
        if (c.dir.empty())
          j.object([&] {
            tile(c.config);
            j.attribute("stage", c.stage);
            j.attribute("reason", c.reason);
          });
    });
  });
  os << "\n";
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "bundle.json");
  std::error_code ec;
  llvm::raw_fd_ostream f(path, ec);
  if (ec)
    return error("cannot write '" + path + "': " + ec.message());
  f << out;
  return summary;
}
