//===- AttnCompilerModule.cpp - attn._compiler, the Python bindings -------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// pybind11 bindings over the same C++ builders attn-opt, attn-compile and
// the C API use (InitAll, buildAttentionModule, compileAttentionKernel,
// writeKernelDirectory, writeTuneBundle). Debian's MLIR has no Python
// bindings of its own, so IR crosses this boundary as text. Failures raise
// attn.CompileError (defined in Python, python/attn/_errors.py) with the
// diagnostics as MLIR prints them: "<input>:LINE:COL: error: ...".
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/KernelCompiler.h"
#include "attn/Compiler/TuneBundle.h"
#include "attn/Execution/AttentionModule.h"
#include "attn/InitAll.h"
#include "attn/Support/AttentionProblem.h"
#include "attn/Tuning/TuningDatabase.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>

namespace py = pybind11;
using namespace mlir;

namespace {

/// Raises attn.CompileError(message).
[[noreturn]] void raiseCompileError(const std::string &message) {
  py::object cls = py::module_::import("attn._errors").attr("CompileError");
  PyErr_SetString(cls.ptr(), message.c_str());
  throw py::error_already_set();
}

/// One-time process set-up: pass registration is global in MLIR.
void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::attn::registerAllPasses();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

/// A context with every dialect attn reads or produces, and a source
/// manager whose diagnostic handler prints into `diagnostics` (with the
/// input's line:col and the offending line) instead of stderr.
struct CompileSession {
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> ctx;
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  llvm::raw_string_ostream diagStream{diagnostics};
  std::unique_ptr<SourceMgrDiagnosticHandler> handler;

  CompileSession() {
    initializeOnce();
    mlir::attn::registerAllDialects(registry);
    // Threads are the caller's business (Python); compile single-threaded.
    ctx = std::make_unique<MLIRContext>(registry,
                                        MLIRContext::Threading::DISABLED);
    handler = std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr,
                                                           ctx.get(),
                                                           diagStream);
  }

  OwningOpRef<ModuleOp> parse(const std::string &text) {
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, "<input>"), llvm::SMLoc());
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr,
                                                             ctx.get());
    if (!module)
      fail("cannot parse the MLIR input");
    return module;
  }

  /// Raises CompileError with `summary` and every diagnostic collected.
  [[noreturn]] void fail(const std::string &summary) {
    diagStream.flush();
    std::string message = summary;
    if (!diagnostics.empty())
      message += ":\n" + diagnostics;
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    raiseCompileError(message);
  }
};

std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

/// attn.opt: runs a textual pass pipeline, anchored on builtin.module
/// unless it names its own anchor.
std::string runPipeline(const std::string &text, const std::string &pipeline) {
  CompileSession session;
  OwningOpRef<ModuleOp> module = session.parse(text);
  std::string anchored = llvm::StringRef(pipeline).trim().str();
  if (!llvm::StringRef(anchored).starts_with("builtin.module("))
    anchored = "builtin.module(" + anchored + ")";
  std::string pipelineErrors;
  llvm::raw_string_ostream errs(pipelineErrors);
  FailureOr<OpPassManager> parsed = parsePassPipeline(anchored, errs);
  if (failed(parsed)) {
    errs.flush();
    raiseCompileError("invalid pass pipeline '" + pipeline + "': " +
                      llvm::StringRef(pipelineErrors).trim().str());
  }
  PassManager pm(session.ctx.get(), ModuleOp::getOperationName());
  static_cast<OpPassManager &>(pm) = *parsed;
  if (failed(pm.run(*module)))
    session.fail("pipeline '" + pipeline + "' failed");
  return printModule(*module);
}

::attn::AttentionProblem makeProblem(int64_t batch, int64_t headsQ,
                                     int64_t headsKv, int64_t seqQ,
                                     int64_t seqKv, int64_t headDim,
                                     int64_t valueHeadDim,
                                     const std::string &dtype, bool causal,
                                     std::optional<double> scale,
                                     bool withLse, bool topLeft,
                                     int64_t windowLeft, int64_t windowRight,
                                     double softcap, bool alibi) {
  ::attn::AttentionProblem p;
  p.batch = batch;
  p.headsQ = headsQ;
  p.headsKv = headsKv;
  p.seqQ = seqQ;
  p.seqKv = seqKv;
  p.headDim = headDim;
  p.valueHeadDim = valueHeadDim;
  std::optional<::attn::DType> t = ::attn::parseDType(dtype);
  if (!t)
    raiseCompileError("dtype: expected 'f16' or 'bf16', got '" + dtype + "'");
  if (*t == ::attn::DType::f32)
    raiseCompileError("dtype 'f32' has no GPU kernel: use 'f16' or 'bf16'");
  p.dtype = *t;
  p.causal = causal;
  p.scale = scale;
  p.withLse = withLse;
  p.topLeft = topLeft;
  p.windowLeft = windowLeft;
  p.windowRight = windowRight;
  p.softcap = softcap;
  p.alibi = alibi;
  std::string why = p.validate();
  if (!why.empty())
    raiseCompileError("invalid attention problem: " + why);
  return p;
}

void checkFamily(const char *what, const std::string &family) {
  if (family != "sm80" && family != "sm90a" && family != "auto")
    raiseCompileError(std::string(what) +
                      ": expected 'sm80', 'sm90a' or 'auto', got '" + family +
                      "'");
}

mlir::attn::KernelCompileOptions
makeOptions(const std::string &chip, const std::string &features,
            unsigned optLevel, int64_t blockM, int64_t blockN,
            int64_t warpRows, int64_t stages, const std::string &tuningDb,
            const std::string &tuningGpu, const std::string &ptxas,
            bool assemble, const std::string &family,
            const std::string &sm90Schedule) {
  checkFamily("family", family);
  mlir::attn::KernelCompileOptions o;
  o.family = family;
  o.sm90Schedule = sm90Schedule;
  o.chip = chip;
  o.features = features;
  o.optLevel = optLevel;
  o.blockM = blockM;
  o.blockN = blockN;
  o.warpRows = warpRows;
  o.stages = stages;
  o.tuningDb = tuningDb;
  o.tuningGpu = tuningGpu;
  o.ptxasPath = ptxas;
  o.assemble = assemble;
  return o;
}

/// Compiles `module` (from text or built from a problem) to a kernel.
mlir::attn::CompiledKernel
compileModule(CompileSession &session, ModuleOp module,
              const mlir::attn::KernelCompileOptions &options) {
  llvm::Expected<mlir::attn::CompiledKernel> kernel =
      mlir::attn::compileAttentionKernel(module, options);
  if (!kernel)
    session.fail(llvm::toString(kernel.takeError()));
  return std::move(*kernel);
}

py::dict problemDict(const ::attn::AttentionProblem &p) {
  py::dict d;
  d["batch"] = p.batch;
  d["heads_q"] = p.headsQ;
  d["heads_kv"] = p.headsKv;
  d["seq_q"] = p.seqQ;
  d["seq_kv"] = p.seqKv;
  d["head_dim"] = p.headDim;
  d["value_head_dim"] = p.vDim();
  d["dtype"] = ::attn::dtypeName(p.dtype);
  d["causal"] = p.causal;
  d["scale"] = p.effectiveScale();
  d["with_lse"] = p.withLse;
  d["mask_align"] = p.topLeft ? "top_left" : "bottom_right";
  d["window_left"] = p.windowLeft;
  d["window_right"] = p.windowRight;
  d["softcap"] = p.softcap;
  d["alibi"] = p.alibi;
  return d;
}

} // namespace

PYBIND11_MODULE(_compiler, m) {
  m.doc() = "attn's compiler (MLIR) bindings; use the `attn` package instead";

  m.def("version", &::attn::tuning::compilerVersion,
        "The compiler version kernels and tuning entries are keyed by.");

  m.def("opt", &runPipeline, py::arg("text"), py::arg("pipeline"),
        "Runs a pass pipeline on MLIR text and returns the result as text.");

  py::class_<mlir::attn::CompiledKernel>(m, "CompiledKernel")
      .def_readonly("entry", &mlir::attn::CompiledKernel::entry)
      .def_readonly("family", &mlir::attn::CompiledKernel::family)
      .def_readonly("chip", &mlir::attn::CompiledKernel::chip)
      .def_readonly("block_m", &mlir::attn::CompiledKernel::blockM)
      .def_readonly("block_n", &mlir::attn::CompiledKernel::blockN)
      .def_readonly("stages", &mlir::attn::CompiledKernel::stages)
      .def_readonly("warp_rows", &mlir::attn::CompiledKernel::warpRows)
      .def_readonly("threads", &mlir::attn::CompiledKernel::threads)
      .def_readonly("dynamic_shared_memory",
                    &mlir::attn::CompiledKernel::dynamicSharedMemory)
      .def_readonly("tile_source", &mlir::attn::CompiledKernel::tileSource)
      .def_readonly("tile_reason", &mlir::attn::CompiledKernel::tileReason)
      .def_readonly("kernel_mlir", &mlir::attn::CompiledKernel::kernelMLIR)
      .def_readonly("ptx", &mlir::attn::CompiledKernel::ptx)
      .def_property_readonly("cubin",
                             [](const mlir::attn::CompiledKernel &k) {
                               return py::bytes(k.cubin);
                             })
      .def_property_readonly(
          "problem",
          [](const mlir::attn::CompiledKernel &k) {
            return problemDict(k.problem);
          })
      .def_property_readonly(
          "ptxas_log",
          [](const mlir::attn::CompiledKernel &k) {
            return k.ptxas ? k.ptxas->log : std::string();
          })
      .def("manifest_json", &mlir::attn::CompiledKernel::manifestJSON)
      .def(
          "write",
          [](const mlir::attn::CompiledKernel &k, const std::string &dir) {
            if (llvm::Error e = mlir::attn::writeKernelDirectory(k, dir))
              raiseCompileError(llvm::toString(std::move(e)));
          },
          py::arg("dir"),
          "Writes manifest.json, kernel.ptx and kernel.cubin into `dir`.");

  m.def(
      "compile_problem",
      [](int64_t batch, int64_t headsQ, int64_t headsKv, int64_t seqQ,
         int64_t seqKv, int64_t headDim, int64_t valueHeadDim,
         const std::string &dtype, bool causal, std::optional<double> scale,
         bool withLse, const std::string &chip, const std::string &features,
         unsigned optLevel, int64_t blockM, int64_t blockN, int64_t warpRows,
         int64_t stages, const std::string &tuningDb,
         const std::string &tuningGpu, const std::string &ptxas,
         bool assemble, bool topLeft, int64_t windowLeft,
         int64_t windowRight, double softcap, bool alibi,
         const std::string &family, const std::string &sm90Schedule) {
        ::attn::AttentionProblem p = makeProblem(
            batch, headsQ, headsKv, seqQ, seqKv, headDim, valueHeadDim,
            dtype, causal, scale, withLse, topLeft, windowLeft, windowRight,
            softcap, alibi);
        auto options = makeOptions(chip, features, optLevel, blockM, blockN,
                                   warpRows, stages, tuningDb, tuningGpu,
                                   ptxas, assemble, family, sm90Schedule);
        CompileSession session;
        OwningOpRef<ModuleOp> module =
            mlir::attn::buildAttentionModule(*session.ctx, p);
        if (!module)
          session.fail("cannot build the attention module");
        return compileModule(session, *module, options);
      },
      py::arg("batch"), py::arg("heads_q"), py::arg("heads_kv"),
      py::arg("seq_q"), py::arg("seq_kv"), py::arg("head_dim"),
      py::arg("value_head_dim"), py::arg("dtype"), py::arg("causal"),
      py::arg("scale"), py::arg("with_lse"), py::arg("chip"),
      py::arg("features"), py::arg("opt_level"), py::arg("block_m"),
      py::arg("block_n"), py::arg("warp_rows"), py::arg("stages"),
      py::arg("tuning_db"), py::arg("tuning_gpu"), py::arg("ptxas"),
      py::arg("assemble"), py::arg("top_left") = false,
      py::arg("window_left") = -1, py::arg("window_right") = -1,
      py::arg("softcap") = 0.0, py::arg("alibi") = false,
      py::arg("family") = "sm80", py::arg("sm90_schedule") = "",
      "Builds attn.attention for a problem and compiles it (as attn-compile).");

  m.def(
      "compile_mlir",
      [](const std::string &text, const std::string &chip,
         const std::string &features, unsigned optLevel, int64_t blockM,
         int64_t blockN, int64_t warpRows, int64_t stages,
         const std::string &tuningDb, const std::string &tuningGpu,
         const std::string &ptxas, bool assemble, const std::string &family,
         const std::string &sm90Schedule) {
        auto options = makeOptions(chip, features, optLevel, blockM, blockN,
                                   warpRows, stages, tuningDb, tuningGpu,
                                   ptxas, assemble, family, sm90Schedule);
        CompileSession session;
        OwningOpRef<ModuleOp> module = session.parse(text);
        return compileModule(session, *module, options);
      },
      py::arg("text"), py::arg("chip"), py::arg("features"),
      py::arg("opt_level"), py::arg("block_m"), py::arg("block_n"),
      py::arg("warp_rows"), py::arg("stages"), py::arg("tuning_db"),
      py::arg("tuning_gpu"), py::arg("ptxas"), py::arg("assemble"),
      py::arg("family") = "sm80", py::arg("sm90_schedule") = "",
      "Compiles the single attn.attention of an MLIR module.");

  m.def(
      "write_tune_bundle",
      [](const std::string &text, const std::string &dir,
         const std::string &chip, const std::string &ptxas, unsigned optLevel,
         unsigned jobs, const std::vector<std::string> &only,
         const std::string &family, const std::string &defaultFamily) {
        // The family's space, as attn-compile --tune-bundle --family: auto
        // tunes both where the chip and the problem allow (the database key
        // family is then "auto", what attn.tuning looks family auto up by).
        checkFamily("family", family);
        mlir::attn::KernelCompileOptions options;
        options.chip = chip;
        options.ptxasPath = ptxas;
        options.optLevel = optLevel;
        options.family = family;
        mlir::attn::TuneBundleOptions bundle;
        // The candidate marked "heuristic": what the caller compiles without
        // a database (the PyTorch op's asked family).
        bundle.defaultFamily = defaultFamily.empty() ? family : defaultFamily;
        checkFamily("default_family", bundle.defaultFamily);
        CompileSession session;
        OwningOpRef<ModuleOp> module = session.parse(text);
        std::string log;
        llvm::raw_string_ostream logStream(log);
        auto summary = mlir::attn::writeTuneBundle(
            *module, options, dir, jobs, only, logStream, bundle);
        if (!summary)
          session.fail(llvm::toString(summary.takeError()));
        logStream.flush();
        py::dict d;
        d["candidates"] = summary->candidates;
        d["pruned"] = summary->pruned;
        d["log"] = log;
        return d;
      },
      py::arg("text"), py::arg("dir"), py::arg("chip"), py::arg("ptxas"),
      py::arg("opt_level"), py::arg("jobs"), py::arg("only"),
      py::arg("family") = "sm80", py::arg("default_family") = "",
      "Writes a tuning bundle (every candidate tile configuration of "
      "`family`: sm80, sm90a, or auto = both where allowed) for attn-tune "
      "on a GPU host; `default_family` ('' = `family`) marks the "
      "heuristic's candidate.");

  m.def(
      "attention_module",
      [](int64_t batch, int64_t headsQ, int64_t headsKv, int64_t seqQ,
         int64_t seqKv, int64_t headDim, int64_t valueHeadDim,
         const std::string &dtype, bool causal, std::optional<double> scale,
         bool withLse, bool topLeft, int64_t windowLeft, int64_t windowRight,
         double softcap, bool alibi) {
        ::attn::AttentionProblem p = makeProblem(
            batch, headsQ, headsKv, seqQ, seqKv, headDim, valueHeadDim,
            dtype, causal, scale, withLse, topLeft, windowLeft, windowRight,
            softcap, alibi);
        CompileSession session;
        OwningOpRef<ModuleOp> module =
            mlir::attn::buildAttentionModule(*session.ctx, p);
        if (!module)
          session.fail("cannot build the attention module");
        return printModule(*module);
      },
      py::arg("batch"), py::arg("heads_q"), py::arg("heads_kv"),
      py::arg("seq_q"), py::arg("seq_kv"), py::arg("head_dim"),
      py::arg("value_head_dim"), py::arg("dtype"), py::arg("causal"),
      py::arg("scale"), py::arg("with_lse"), py::arg("top_left") = false,
      py::arg("window_left") = -1, py::arg("window_right") = -1,
      py::arg("softcap") = 0.0, py::arg("alibi") = false,
      "The MLIR text of attn.attention for a problem (what compile builds).");
}
