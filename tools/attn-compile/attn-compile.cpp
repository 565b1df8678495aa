//===- attn-compile.cpp - attention kernels for given shapes --------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Shape flags (as attn-run) or an MLIR file holding one attn.attention ->
// a directory with kernel.ptx, kernel.cubin and manifest.json
// (docs/kernel-abi.md), or one stage on stdout with --emit.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/BackwardCompiler.h"
#include "attn/Compiler/KernelCompiler.h"
#include "attn/Compiler/TuneBundle.h"
#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Conversion/AttnToGPU/TuningSpace.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Execution/AttentionModule.h"
#include "attn/Execution/ProblemFlags.h"
#include "attn/InitAll.h"
#include "attn/Support/Chip.h"
#include "attn/Support/LargeStack.h"
#include "attn/Support/OptionLimits.h"
#include "attn/Support/ToolCommandLine.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("attn-compile options");
// (GPU kernels only: --dtype defaults to bf16, as no kernel takes f32.)
static mlir::attn::ProblemFlags problemFlags(category, ::attn::DType::bf16);
static cl::opt<std::string>
    inputFile(cl::Positional,
              cl::desc("[input.mlir with one attn.attention; default: build "
                       "it from the shape flags]"),
              cl::init(""), cl::cat(category));
static cl::opt<std::string>
    output("o", cl::desc("Output directory (or file with --emit)"),
           cl::value_desc("path"), cl::init(""), cl::cat(category));
static cl::opt<std::string>
    emit("emit",
         cl::desc("Print one stage instead of writing a kernel directory: "
                  "mlir (the kernel in NVVM/LLVM dialects), llvm (LLVM IR), "
                  "ptx, cubin (needs -o), manifest"),
         cl::init(""), cl::cat(category));
static cl::opt<std::string> chip("chip", cl::desc("Target chip"),
                                 cl::init("sm_90a"), cl::cat(category));
static cl::opt<std::string> features("features",
                                     cl::desc("PTX features, e.g. +ptx80"),
                                     cl::init(""), cl::cat(category));
static cl::opt<unsigned> optLevel("opt-level",
                                  cl::desc("LLVM optimisation level"),
                                  cl::init(3), cl::cat(category));
static cl::opt<int64_t> blockM("block-m",
                               cl::desc("Query rows per block; 0 = heuristic"),
                               cl::init(0), cl::cat(category));
static cl::opt<int64_t> blockN("block-n",
                               cl::desc("Keys per K/V tile; 0 = heuristic"),
                               cl::init(0), cl::cat(category));
static cl::opt<int64_t> warpRows("warp-rows",
                                 cl::desc("Query rows per warp: 16 or 32; "
                                          "0 = heuristic"),
                                 cl::init(0), cl::cat(category));
static cl::opt<int64_t> stages("stages",
                               cl::desc("K/V ring depth (with --backward "
                                        "and sm90a: the Q/dO ring's)"),
                               cl::init(2), cl::cat(category));
static cl::opt<std::string> family("family",
                                   cl::desc("Kernel family: auto (sm90a on "
                                            "sm_90a where the attention "
                                            "allows, else sm80), sm80 or "
                                            "sm90a (wgmma/TMA)"),
                                   cl::init("auto"), cl::cat(category));
static cl::opt<std::string> sm90Schedule(
    "sm90-schedule",
    cl::desc("sm90a-wgmma consumer schedule: pingpong, overlap (no "
             "ping-pong) or serial, optionally +persistent (persistent "
             "query blocks); with --backward the dQ schedule: dq-pipelined, "
             "dq-first or dk-first (head-split above head dim 128); default: "
             "the tuned or heuristic one"),
    cl::init(""), cl::cat(category));
static cl::opt<int64_t> exp2Emulated(
    "exp2-emulated",
    cl::desc("sm90a forward: exp2 of this many of every 8 columns of 8 keys "
             "on the FMA pipe (0 to 8; an experiment); default: none"),
    cl::init(-1), cl::cat(category));
static cl::opt<bool> wideProducer(
    "wide-producer",
    cl::desc("sm90a forward: the 40/232 setmaxnreg split on the plain grid "
             "too (an experiment)"),
    cl::init(false), cl::cat(category));
static cl::opt<int64_t> sectionMb(
    "section-mb",
    cl::desc("sm90a causal backward: MiB of Q and dO per section of the "
             "longest-first walk (deterministic: shortest first; 0 = "
             "head-major; an experiment); default 32, deterministic 0"),
    cl::init(-1), cl::cat(category));
static cl::opt<std::string> ptxas("ptxas",
                                  cl::desc("ptxas to use (default: "
                                           "$CUDA_HOME/bin, /usr/local/cuda/"
                                           "bin, PATH)"),
                                  cl::init(""), cl::cat(category));
static cl::opt<bool> noCubin("no-cubin",
                             cl::desc("Stop at PTX (do not run ptxas)"),
                             cl::init(false), cl::cat(category));
static cl::opt<bool> explain("explain",
                             cl::desc("Print the tile configuration chosen "
                                      "and why"),
                             cl::init(false), cl::cat(category));

static cl::opt<std::string>
    tuningDb("tuning-db",
             cl::desc("Tuning database to look the shape up in first "
                      "(docs/tuning.md); default $ATTN_TUNING_DB; 'none' = "
                      "heuristic only"),
             cl::value_desc("path"), cl::init(""), cl::cat(category));
static cl::opt<std::string>
    tuningGpu("tuning-gpu",
              cl::desc("GPU to look up in the tuning database, e.g. "
                       "'NVIDIA H200' (default $ATTN_TUNING_GPU, else any)"),
              cl::init(""), cl::cat(category));
static cl::opt<std::string>
    tuneBundle("tune-bundle",
               cl::desc("Write a tuning bundle instead of one kernel: every "
                        "candidate configuration that passes the static "
                        "checks and does not spill, plus bundle.json, for "
                        "attn-tune on a GPU host"),
               cl::value_desc("dir"), cl::init(""), cl::cat(category));
static cl::list<std::string> tuneShapes(
    "tune-shapes",
    cl::desc("With --tune-bundle: more launch shapes to tune the same "
             "kernels at, BATCHxSEQ or BATCHxSEQ_QxSEQ_KV (one database "
             "entry each), e.g. 32x512,16x1024"),
    cl::CommaSeparated, cl::cat(category));
static cl::list<std::string>
    tuneOnly("tune-only",
             cl::desc("With --tune-bundle: only these configurations (and "
                      "the heuristic's), e.g. m128n64r32s2,m64n64r16s2"),
             cl::CommaSeparated, cl::cat(category));
static cl::opt<bool>
    backward("backward",
             cl::desc("Compile the backward pass (attn.attention_grad: "
                      "dQ, dK, dV from Q, K, V, O, dO and the LSE) instead "
                      "of the forward; implied by an input file holding an "
                      "attn.attention_grad"),
             cl::init(false), cl::cat(category));
static cl::opt<bool> deterministic(
    "deterministic",
    cl::desc("With --backward: repeated runs give bit-identical gradients "
             "(sm80: dQ from a separate kernel; sm90a: dQ added in "
             "key-block order)"),
    cl::init(false), cl::cat(category));
static cl::opt<unsigned>
    jobs("j", cl::desc("Candidates compiled at once (default: one per core)"),
         cl::init(0), cl::cat(category));

/// -j beyond this only exhausts the machine's threads.
static constexpr int64_t kMaxJobs = 1024;

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "attn-compile: error: " << msg << "\n";
  return 2;
}

/// attn-compile --backward: the three backward kernels in one directory.
static int compileBackward(mlir::ModuleOp module,
                           mlir::attn::KernelCompileOptions options) {
  // attn-select-kernel-config looks the tile up in the tuning database
  // (docs/tuning.md) unless the tile options are given.
  auto kernels = mlir::attn::compileAttentionGradKernels(module, options);
  if (!kernels)
    return fail(llvm::toString(kernels.takeError()));
  if (explain)
    llvm::errs() << "attn-compile: " << kernels->main().entry << ": block_n "
                 << kernels->blockN << " keys per thread block ("
                 << kernels->threads / 32 << " warps, 16 keys each), block_m "
                 << kernels->blockM << " query rows per step, from "
                 << kernels->tileSource << "; "
                 << kernels->main().dynamicSharedMemory
                 << " bytes of shared memory\n"
                 << "attn-compile: why: " << kernels->tileReason << "\n";
  if (emit.empty()) {
    if (auto e = mlir::attn::writeBackwardDirectory(*kernels, output))
      return fail(llvm::toString(std::move(e)));
    llvm::outs() << "wrote " << output << "/{kernel.ptx"
                 << (kernels->cubin.empty() ? "" : ",kernel.cubin")
                 << ",manifest.json}:";
    for (const auto &l : kernels->launches) {
      llvm::outs() << " " << l.entry;
      if (l.ptxas)
        llvm::outs() << " (" << l.ptxas->registers << " registers, "
                     << l.ptxas->spillStores << " bytes spilled)";
    }
    llvm::outs() << "\n";
    return 0;
  }
  if (emit == "llvm")
    return fail("--emit llvm is not available with --backward");
  std::string text = emit == "mlir"       ? kernels->kernelMLIR
                     : emit == "ptx"      ? kernels->ptx
                     : emit == "manifest" ? kernels->manifestJSON()
                                          : kernels->cubin;
  std::string err;
  auto out = mlir::openOutputFile(output.empty() ? "-" : output.getValue(),
                                  &err);
  if (!out)
    return fail(err);
  out->os() << text;
  out->keep();
  return 0;
}

static int compileMain(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  ::attn::parseToolCommandLine(argc, argv, "attn-compile",
                               "attn-compile: FlashAttention kernels (PTX, "
                               "cubin, launch manifest) for given shapes\n",
                               /*errorStatus=*/2);
  for (const std::string &why :
       ::attn::checkKernelFlags(chip, blockM, blockN, warpRows))
    if (!why.empty())
      return fail(why);
  for (const std::string &why :
       {::attn::checkRange("--opt-level", optLevel, 0, ::attn::kMaxOptLevel),
        ::attn::checkRange("-j", jobs, 0, kMaxJobs, " (0 = one per core)")})
    if (!why.empty())
      return fail(why);
  static const char *stagesKnown[] = {"", "mlir", "llvm", "ptx", "cubin",
                                      "manifest"};
  if (!llvm::is_contained(stagesKnown, emit.getValue()))
    return fail("--emit must be mlir, llvm, ptx, cubin or manifest (got '" +
                emit + "')");
  if (!tuneBundle.empty() && (!emit.empty() || !output.empty()))
    return fail("--tune-bundle writes its own directory: drop -o/--emit");
  if (!tuneBundle.empty() && noCubin)
    return fail("--tune-bundle needs ptxas (its report prunes spilling "
                "candidates): drop --no-cubin");
  if (!tuneBundle.empty() && (blockM || blockN || warpRows))
    return fail("--tune-bundle tries every tile configuration: drop "
                "--block-m/--block-n/--warp-rows");
  if (tuneBundle.empty() && !tuneOnly.empty())
    return fail("--tune-only needs --tune-bundle");
  if (tuneBundle.empty() && !tuneShapes.empty())
    return fail("--tune-shapes needs --tune-bundle");
  if (!tuneBundle.empty() && !sm90Schedule.empty())
    return fail("--tune-bundle tries every schedule: drop --sm90-schedule");
  if (emit.empty() && output.empty() && tuneBundle.empty())
    return fail("-o <directory> is required (or use --emit)");
  if (emit == "cubin" && output.empty())
    return fail("--emit cubin needs -o <file>");
  if (emit == "cubin" && noCubin)
    return fail("--emit cubin and --no-cubin contradict each other");

  DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  MLIRContext ctx(registry);
  // An error names the op and its file:line; MLIR's "see current operation"
  // note would add a dump of the op out of context (<<UNKNOWN SSA VALUE>>).
  ctx.printOpOnDiagnostic(false);
  llvm::InitializeAllTargets();
  llvm::InitializeAllTargetMCs();
  llvm::InitializeAllAsmPrinters();

  OwningOpRef<ModuleOp> module;
  std::optional<::attn::AttentionProblem> flagProblem; // without an input
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &ctx);
  if (!inputFile.empty()) {
    std::string err;
    auto file = openInputFile(inputFile, &err);
    if (!file)
      return fail(err);
    if (::attn::reportTooDeepNesting(*file))
      return fail("cannot parse '" + inputFile + "'");
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &ctx);
    if (!module)
      return fail("cannot parse '" + inputFile + "'");
  } else {
    auto problem = problemFlags.get();
    if (!problem)
      return fail(llvm::toString(problem.takeError()));
    if (problem->dtype == ::attn::DType::f32)
      return fail("--dtype f32 has no GPU kernel: use f16 or bf16");
    flagProblem = *problem;
    if (backward && (problem->isVarlen() || problem->bias))
      return fail("--backward does not support variable length "
                  "(--seq-lens-q) or --bias: attn.attention_grad has no "
                  "cu_seqlens or bias operand");
    if (backward) {
      auto built = mlir::attn::buildAttentionGradModule(ctx, *problem);
      if (!built)
        return fail(llvm::toString(built.takeError()));
      module = std::move(*built);
    } else {
      module = mlir::attn::buildAttentionModule(ctx, *problem);
    }
  }

  mlir::attn::KernelCompileOptions options;
  options.chip = chip;
  options.features = features;
  options.optLevel = optLevel;
  options.blockM = blockM;
  options.blockN = blockN;
  options.warpRows = warpRows;
  options.stages = stages;
  options.family = family;
  options.sm90Schedule = sm90Schedule;
  options.ptxasPath = ptxas;
  options.tuningDb = tuningDb;
  options.tuningGpu = tuningGpu;
  options.exp2Emulated = exp2Emulated;
  options.wideProducer = wideProducer;
  options.sectionMb = sectionMb;
  options.assemble = !noCubin && (emit.empty() || emit == "cubin" ||
                                  emit == "manifest");
  options.emitLLVMIR = emit == "llvm";
  bool hasGrad = false;
  module->walk([&](mlir::attn::AttentionGradOp) { hasGrad = true; });
  if (deterministic && !(backward || hasGrad))
    return fail("--deterministic applies to the backward kernels: add "
                "--backward");
  if (sectionMb >= 0 && !(backward || hasGrad))
    return fail("--section-mb applies to the sm90a backward kernels: add "
                "--backward");
  if (backward || hasGrad)
    for (auto [given, flag] : {std::pair<bool, const char *>{
                                   exp2Emulated >= 0, "--exp2-emulated"},
                               {wideProducer, "--wide-producer"}})
      if (given)
        return fail(std::string(flag) +
                    " applies to the sm90a forward kernel, not to the "
                    "backward kernels: drop it");
  mlir::attn::TuneBundleOptions bundle;
  for (const std::string &s : tuneShapes) {
    llvm::SmallVector<llvm::StringRef, 3> parts;
    llvm::StringRef(s).split(parts, 'x');
    mlir::attn::TuneShape shape;
    int64_t *slots[] = {&shape.batch, &shape.seqQ, &shape.seqKv};
    bool bad = parts.size() < 2 || parts.size() > 3;
    for (size_t i = 0; !bad && i < parts.size(); ++i)
      bad = parts[i].getAsInteger(10, *slots[i]) || *slots[i] <= 0;
    if (bad)
      return fail("--tune-shapes expects BATCHxSEQ or BATCHxSEQ_QxSEQ_KV "
                  "with positive numbers, got '" + s + "'");
    if (llvm::any_of(slots, [](int64_t *v) { return *v > INT32_MAX; }))
      return fail("--tune-shapes: batch and sequence lengths must be at most "
                  "2147483647 (the kernels take them as i32), got '" +
                  s + "'");
    // Shape flags: the whole problem is known, so check each shape now
    // rather than after compiling every candidate (writeTuneBundle does).
    if (flagProblem)
      if (std::string why = mlir::attn::checkTuneShape(*flagProblem, shape);
          !why.empty())
        return fail("--tune-shapes: " + why);
    bundle.shapes.push_back(shape);
  }
  std::vector<std::string> only(tuneOnly.begin(), tuneOnly.end());
  if (backward || hasGrad) {
    if (warpRows)
      return fail("--warp-rows does not apply to the backward kernels (16 "
                  "keys per warp): drop it");
    options.deterministic = deterministic;
    if (tuneBundle.empty())
      return compileBackward(*module, options);
    llvm::outs() << "attn-compile: compiling backward tuning candidates ("
                 << (deterministic ? "deterministic" : "atomic")
                 << " dQ) into " << tuneBundle
                 << " (* = the heuristic's choice)\n";
    auto summary = mlir::attn::writeBackwardTuneBundle(
        *module, options, tuneBundle, jobs, only, llvm::outs(), bundle,
        [](MLIRContext &c, const ::attn::AttentionProblem &p) {
          return mlir::attn::buildAttentionModule(c, p);
        });
    if (!summary)
      return fail(llvm::toString(summary.takeError()));
    llvm::outs() << "wrote " << tuneBundle << "/bundle.json: "
                 << summary->candidates << " candidates, " << summary->pruned
                 << " pruned\n";
    return 0;
  }
  if (!tuneBundle.empty()) {
    llvm::outs() << "attn-compile: compiling tuning candidates into "
                 << tuneBundle << " (* = the heuristic's choice)\n";
    // "heuristic" marks what attn-compile picks without a database with
    // these flags: the --family given, else its default.
    bundle.defaultFamily = family.getNumOccurrences()
                               ? family.getValue()
                               : family.getDefault().getValue();
    // The family is a tuning choice too unless --family fixes it.
    if (!family.getNumOccurrences())
      options.family = "auto";
    auto summary = mlir::attn::writeTuneBundle(
        *module, options, tuneBundle, jobs, only, llvm::outs(), bundle);
    if (!summary)
      return fail(llvm::toString(summary.takeError()));
    llvm::outs() << "wrote " << tuneBundle << "/bundle.json: "
                 << summary->candidates << " candidates, " << summary->pruned
                 << " pruned\n";
    return 0;
  }
  auto kernel = mlir::attn::compileAttentionKernel(*module, options);
  if (!kernel)
    return fail(llvm::toString(kernel.takeError()));

  bool sm90a = kernel->family != "sm80-mma";
  if (explain)
    llvm::errs() << "attn-compile: " << kernel->entry << ": family "
                 << kernel->family << ", block_m " << kernel->blockM
                 << ", block_n " << kernel->blockN << ", stages "
                 << kernel->stages << " from " << kernel->tileSource
                 << (kernel->tileSource == "heuristic" && !sm90a
                         ? " (head dims <= 128: 128 query rows, 32 per "
                           "warp, 64 keys; wider heads: 64 rows, 16 per "
                           "warp, 32 keys; keys halve until the tiles fit "
                           "the chip's shared memory)"
                     : kernel->tileSource == "heuristic"
                         ? " (sm90a-wgmma: one producer and block_m / 64 "
                           "consumer warpgroups, block_n and stages by head "
                           "dim)"
                     : kernel->tileSource == "option"
                         ? " (--block-m/--block-n/--warp-rows)"
                         : "")
                 << "; " << kernel->dynamicSharedMemory
                 << " bytes of shared memory\n"
                 << "attn-compile: why: " << kernel->tileReason << "\n";

  if (emit.empty()) {
    if (auto e = mlir::attn::writeKernelDirectory(*kernel, output))
      return fail(llvm::toString(std::move(e)));
    llvm::outs() << "wrote " << output << "/{kernel.ptx"
                 << (kernel->cubin.empty() ? "" : ",kernel.cubin")
                 << ",manifest.json}: " << kernel->entry;
    if (kernel->ptxas)
      llvm::outs() << " (" << kernel->ptxas->registers << " registers, "
                   << kernel->ptxas->spillStores << " bytes spilled)";
    llvm::outs() << "\n";
    return 0;
  }
  std::string text = emit == "mlir"       ? kernel->kernelMLIR
                     : emit == "llvm"     ? kernel->llvmIR
                     : emit == "ptx"      ? kernel->ptx
                     : emit == "manifest" ? kernel->manifestJSON()
                                          : kernel->cubin;
  std::string err;
  auto out = openOutputFile(output.empty() ? "-" : output.getValue(), &err);
  if (!out)
    return fail(err);
  out->os() << text;
  out->keep();
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Deeply nested input must be a diagnostic, not a stack overflow.
  return ::attn::runOnLargeStack([&] { return compileMain(argc, argv); });
}
