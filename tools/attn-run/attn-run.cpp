//===- attn-run.cpp - run one attention and check it ----------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Builds attn.attention for the shape given by flags, compiles it for the
// chosen target, runs it on fresh random inputs (outputs poisoned first),
// compares with a float64 host reference and prints one JSON line. Exits 1
// when the error is over the dtype's tolerance.
//
//===----------------------------------------------------------------------===//

#include "HostLoweringRun.h"

#include "attn/Compiler/BackwardCompiler.h"
#include "attn/Compiler/KernelCompiler.h"
#include "attn/Execution/AttentionModule.h"
#include "attn/Execution/CPUExecutor.h"
#include "attn/Execution/ProblemFlags.h"
#include "attn/InitAll.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Runtime/BackwardRun.h"
#include "attn/Runtime/KernelRun.h"
#include "attn/Support/Chip.h"
#include "attn/Support/HiddenKeyLeaks.h"
#include "attn/Support/HostReference.h"
#include "attn/Support/JsonNumber.h"
#include "attn/Support/OptionLimits.h"
#include "attn/Support/SpecialValues.h"
#include "attn/Support/ToolCommandLine.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("attn-run options");
static cl::opt<std::string> target("target", cl::desc("cpu or cuda"),
                                   cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    pipeline("pipeline",
             cl::desc("Algorithm: tiled (FlashAttention, default) or "
                      "reference (plain linalg)"),
             cl::init("tiled"), cl::cat(category));
static mlir::attn::ProblemFlags problemFlags(category);
static cl::opt<uint64_t> seed("seed", cl::init(0), cl::cat(category));
static cl::opt<double>
    inputRange("input-range",
               cl::desc("Q and K are drawn from U(-r, r); large r gives "
                        "large logits"),
               cl::init(1.0), cl::cat(category));
static cl::opt<int64_t> blockM("block-m", cl::desc("0 = heuristic"),
                               cl::init(0), cl::cat(category));
static cl::opt<int64_t> blockN("block-n", cl::desc("0 = heuristic"),
                               cl::init(0), cl::cat(category));
static cl::opt<int64_t> warpRows("warp-rows",
                                 cl::desc("cuda: query rows per warp (16 or "
                                          "32); 0 = heuristic"),
                                 cl::init(0), cl::cat(category));
static cl::opt<std::string> chip("chip",
                                 cl::desc("cuda: the chip to compile for"),
                                 cl::init("sm_90a"), cl::cat(category));
static cl::opt<int64_t> reps("reps",
                             cl::desc("cuda: timed launches (median reported; "
                                      "0 = no timing)"),
                             cl::init(20), cl::cat(category));
static cl::opt<int64_t> checkRows("check-rows",
                                  cl::desc("cuda: reference rows to check "
                                           "(0 = all when cheap, else a "
                                           "sample)"),
                                  cl::init(0), cl::cat(category));
static cl::opt<bool>
    backward("backward",
             cl::desc("cpu: run attn.attention then attn.attention_grad on "
                      "a random output gradient and check dQ, dK, dV"),
             cl::init(false), cl::cat(category));
static cl::opt<bool>
    deterministic("deterministic",
                  cl::desc("--backward, tiled: dQ in its own pass over "
                           "query blocks (no in-place accumulation)"),
                  cl::init(false), cl::cat(category));
static cl::opt<bool> hostLowering(
    "host-lowering",
    cl::desc("cuda: launch through host code lowered by MLIR "
             "(convert-attn-to-gpu-launch, gpu-to-llvm, JIT, attn's mgpu* "
             "functions) instead of the runtime's manifest launch"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> printIR("print-ir",
                             cl::desc("Print the IR before compiling"),
                             cl::init(false), cl::cat(category));
static cl::list<std::string>
    specials("special",
             cl::desc("cpu: overwrite input elements after the random fill, "
                      "TENSOR:INDEX=VALUE with TENSOR q, k or v, INDEX a flat "
                      "element index or * (all), VALUE nan, inf, -inf or a "
                      "number (rounded to the dtype); repeatable. Non-finite "
                      "outputs must then sit where the float64 reference "
                      "has the same non-finite value"),
             cl::cat(category));

using ::attn::jsonNumber;

/// --reps beyond this is a hang, not a measurement.
static constexpr int64_t kMaxReps = 100000;

namespace {
int fail(const std::string &msg) {
  llvm::errs() << "attn-run: error: " << msg << "\n";
  return 2;
}

/// Random values rounded to the storage type, kept both as storage bytes
/// (for the kernel) and as doubles (for the reference).
void fillRandom(std::mt19937_64 &rng, double range, ::attn::DType t,
                size_t n, std::vector<uint8_t> &bytes,
                std::vector<double> &values) {
  std::uniform_real_distribution<double> dist(-range, range);
  bytes.assign(n * ::attn::dtypeBytes(t), 0);
  values.resize(n);
  for (size_t i = 0; i < n; ++i) {
    float f = static_cast<float>(dist(rng));
    switch (t) {
    case ::attn::DType::f32:
      std::memcpy(&bytes[4 * i], &f, 4);
      values[i] = f;
      break;
    case ::attn::DType::bf16: {
      uint16_t b = ::attn::floatToBf16Bits(f);
      std::memcpy(&bytes[2 * i], &b, 2);
      values[i] = ::attn::bf16BitsToFloat(b);
      break;
    }
    case ::attn::DType::f16: {
      uint16_t h = ::attn::floatToF16Bits(f);
      std::memcpy(&bytes[2 * i], &h, 2);
      values[i] = ::attn::f16BitsToFloat(h);
      break;
    }
    }
  }
}

std::vector<double> decode(const std::vector<uint8_t> &bytes,
                           ::attn::DType t) {
  size_t n = bytes.size() / ::attn::dtypeBytes(t);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (t == ::attn::DType::f32) {
      float f;
      std::memcpy(&f, &bytes[4 * i], 4);
      out[i] = f;
    } else {
      uint16_t h;
      std::memcpy(&h, &bytes[2 * i], 2);
      out[i] = t == ::attn::DType::bf16 ? ::attn::bf16BitsToFloat(h)
                                        : ::attn::f16BitsToFloat(h);
    }
  }
  return out;
}

/// Applies one --special TENSOR:INDEX=VALUE to the inputs (storage bytes
/// and the reference's doubles alike); an error names what is wrong.
std::string applySpecial(const std::string &spec, ::attn::DType t,
                         mlir::attn::HostTensors &h, std::vector<double> &qv,
                         std::vector<double> &kv, std::vector<double> &vv) {
  ::attn::SpecialValue sv;
  if (std::string why = ::attn::parseSpecialValue(spec, sv); !why.empty())
    return why;
  if (sv.tensor == 'q')
    return ::attn::applySpecialValue(sv, t, h.q, &qv);
  if (sv.tensor == 'k')
    return ::attn::applySpecialValue(sv, t, h.k, &kv);
  return ::attn::applySpecialValue(sv, t, h.v, &vv);
}

/// Records the block sizes attn-tile chose right after that pass: the
/// canonicalizer later folds a one-iteration scf.forall, and the attn.tile
/// attribute with it.
struct TileConfigRecorder : PassInstrumentation {
  TileConfigRecorder(std::string &json, ::attn::KeyTiling &tiling)
      : json(json), tiling(tiling) {}

  void runAfterPass(Pass *pass, Operation *root) override {
    if (pass->getArgument() != "attn-tile")
      return;
    root->walk([&](Operation *op) {
      auto tile = op->getAttrOfType<DictionaryAttr>("attn.tile");
      if (!tile)
        return;
      auto bm = tile.getAs<IntegerAttr>("block_m");
      auto bn = tile.getAs<IntegerAttr>("block_n");
      auto src = tile.getAs<StringAttr>("source");
      if (!bm || !bn || !src)
        return;
      json = ",\"block_m\":" + std::to_string(bm.getInt()) +
             ",\"block_n\":" + std::to_string(bn.getInt()) +
             ",\"tile_source\":\"" + src.getValue().str() + "\"";
      tiling = {bm.getInt(), bn.getInt()};
    });
  }

  std::string &json;
  ::attn::KeyTiling &tiling;
};

} // namespace

/// The kernel directory of a --target cuda run, removed on scope exit.
struct TemporaryKernelDir {
  llvm::SmallString<128> path;
  /// "" on success, else the message.
  std::string create() {
    if (auto ec = llvm::sys::fs::createUniqueDirectory("attn-run-kernel", path))
      return "cannot create a temporary directory: " + ec.message();
    return "";
  }
  ~TemporaryKernelDir() {
    if (!path.empty())
      (void)llvm::sys::fs::remove_directories(path);
  }
};

/// --target cuda --backward: compile the backward kernels (as attn-compile
/// --backward does) into a temporary kernel directory, load them through
/// the runtime and run, check and time them (as attn-launch does).
static int runBackwardOnGPU(const ::attn::AttentionProblem &p) {
  if (p.dtype == ::attn::DType::f32)
    return fail("--dtype f32 has no GPU kernel: use f16 or bf16");
  DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.printOpOnDiagnostic(false); // no out-of-context op dump in errors
  auto built = mlir::attn::buildAttentionGradModule(ctx, p);
  if (!built)
    return fail(llvm::toString(built.takeError()));
  OwningOpRef<ModuleOp> module = std::move(*built);
  mlir::attn::KernelCompileOptions options;
  options.chip = chip;
  options.blockM = blockM;
  options.blockN = blockN;
  options.deterministic = deterministic;
  auto kernels = mlir::attn::compileAttentionGradKernels(*module, options);
  if (!kernels)
    return fail(llvm::toString(kernels.takeError()));
  TemporaryKernelDir dir;
  if (std::string err = dir.create(); !err.empty())
    return fail(err);
  if (auto e = mlir::attn::writeBackwardDirectory(*kernels, dir.path))
    return fail(llvm::toString(std::move(e)));
  auto loaded = ::attn::runtime::BackwardKernel::load(dir.path.str().str());
  if (!loaded)
    return fail("--target cuda: " + loaded.message());
  ::attn::runtime::RunOptions run;
  run.seed = seed;
  run.inputRange = inputRange;
  run.check = true;
  run.time = reps > 0;
  run.reps = std::max<int64_t>(reps, 1);
  ::attn::runtime::BackwardRunResult result;
  result.problem = p;
  if (auto s = ::attn::runtime::runBackwardKernel(
          **loaded, run, /*repeats=*/deterministic ? 2 : 0, result);
      !s)
    return fail("--target cuda: " + s.message());
  llvm::outs() << ::attn::runtime::backwardRunResultJson(
                      run, result, kernels->main().entry)
               << "\n";
  bool reproducible = !deterministic || result.repeatable.value_or(false);
  return result.ok() && reproducible ? 0 : 1;
}

/// --target cuda: compile the kernel (as attn-compile does) into a
/// temporary kernel directory, load it through the runtime, and run, check
/// and time it (as attn-launch does). Exit 0 ok, 1 over tolerance, 2 errors.
static int runOnGPU(const ::attn::AttentionProblem &p) {
  if (pipeline != "tiled")
    return fail("--pipeline reference runs on the CPU only; the GPU kernel "
                "is the tiled algorithm");
  if (p.dtype == ::attn::DType::f32)
    return fail("--dtype f32 has no GPU kernel: use f16 or bf16");
  if (hostLowering) {
    ::attn::tools::HostLoweringRunOptions o;
    o.chip = chip;
    o.blockM = blockM;
    o.blockN = blockN;
    o.warpRows = warpRows;
    o.seed = seed;
    o.inputRange = inputRange;
    o.checkRows = checkRows;
    auto run = ::attn::tools::runThroughHostLowering(p, o);
    if (!run)
      return fail(llvm::toString(run.takeError()));
    llvm::outs() << run->json << "\n";
    return run->ok ? 0 : 1;
  }
  DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.printOpOnDiagnostic(false); // no out-of-context op dump in errors
  OwningOpRef<ModuleOp> module = mlir::attn::buildAttentionModule(ctx, p);
  mlir::attn::KernelCompileOptions options;
  options.chip = chip;
  options.blockM = blockM;
  options.blockN = blockN;
  options.warpRows = warpRows;
  auto kernel = mlir::attn::compileAttentionKernel(*module, options);
  if (!kernel)
    return fail(llvm::toString(kernel.takeError()));
  TemporaryKernelDir dir;
  if (std::string err = dir.create(); !err.empty())
    return fail(err);
  if (auto e = mlir::attn::writeKernelDirectory(*kernel, dir.path))
    return fail(llvm::toString(std::move(e)));

  auto loaded = ::attn::runtime::Kernel::load(dir.path.str().str());
  if (!loaded)
    return fail("--target cuda: " + loaded.message());
  ::attn::runtime::RunOptions run;
  run.seed = seed;
  run.inputRange = inputRange;
  run.check = true;
  run.checkRows = checkRows;
  run.time = reps > 0;
  run.reps = std::max<int64_t>(reps, 1);
  ::attn::runtime::RunResult result;
  result.problem = p;
  if (auto s = ::attn::runtime::runKernel(**loaded, run, result); !s)
    return fail("--target cuda: " + s.message());
  llvm::outs() << ::attn::runtime::runResultJson(run, result, kernel->entry)
               << "\n";
  return result.ok() ? 0 : 1;
}

/// --backward on the CPU: O and LSE from attn.attention, then dQ, dK, dV
/// from attn.attention_grad, each checked against float64. Exit 0 ok, 1
/// over tolerance, 2 errors.
static int runBackwardOnCPU(const ::attn::AttentionProblem &p) {
  DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.printOpOnDiagnostic(false); // no out-of-context op dump in errors
  OwningOpRef<ModuleOp> module =
      mlir::attn::buildAttentionBackwardModule(ctx, p);
  if (failed(module->verify()))
    return fail("the generated attention backward does not verify");
  mlir::attn::AttnToCPUOptions options;
  options.tiled = pipeline == "tiled";
  options.blockM = blockM;
  options.blockN = blockN;
  options.deterministic = deterministic;
  PassManager algorithm(&ctx);
  mlir::attn::buildAttnAlgorithmPipeline(algorithm, options);
  if (failed(algorithm.run(*module)))
    return fail("the algorithm pipeline failed");
  if (printIR)
    module->print(llvm::errs());
  PassManager lowering(&ctx);
  mlir::attn::buildHostLoweringPipeline(lowering);
  if (failed(lowering.run(*module)))
    return fail("lowering to LLVM failed");

  std::mt19937_64 rng(seed);
  mlir::attn::BackwardHostTensors t;
  std::vector<double> qv, kv, vv, dov;
  int64_t qN = p.batch * p.headsQ * p.seqQ * p.headDim;
  int64_t kN = p.batch * p.headsKv * p.seqKv * p.headDim;
  int64_t vN = p.batch * p.headsKv * p.seqKv * p.vDim();
  int64_t oN = p.batch * p.headsQ * p.seqQ * p.vDim();
  fillRandom(rng, inputRange, p.dtype, qN, t.q, qv);
  fillRandom(rng, inputRange, p.dtype, kN, t.k, kv);
  fillRandom(rng, 1.0, p.dtype, vN, t.v, vv);
  fillRandom(rng, 1.0, p.dtype, oN, t.dout, dov);
  int64_t bytes = ::attn::dtypeBytes(p.dtype);
  t.out.assign(oN * bytes, 0xff); // NaN in every type
  t.dq.assign(qN * bytes, 0xff);
  t.dk.assign(kN * bytes, 0xff);
  t.dv.assign(vN * bytes, 0xff);
  t.lse.assign(p.batch * p.headsQ * p.seqQ,
               std::numeric_limits<float>::quiet_NaN());

  llvm::Expected<double> seconds =
      mlir::attn::runBackwardOnHost(*module, p, t);
  if (!seconds)
    return fail("execution failed: " + llvm::toString(seconds.takeError()));

  std::vector<double> refDq, refDk, refDv;
  ::attn::referenceAttentionBackward(p, qv, kv, vv, dov, refDq, refDk, refDv);
  // The bar: f32 gradients within 1e-4, 16-bit ones within 1e-2.
  double tol = p.dtype == ::attn::DType::f32 ? 1e-4 : 1e-2;
  bool ok = true;
  std::string errJson;
  struct Grad {
    const char *name;
    const std::vector<uint8_t> *got;
    const std::vector<double> *want;
  } grads[] = {{"dq", &t.dq, &refDq}, {"dk", &t.dk, &refDk},
               {"dv", &t.dv, &refDv}};
  for (const Grad &g : grads) {
    const char *name = g.name;
    const std::vector<uint8_t> *got = g.got;
    const std::vector<double> *want = g.want;
    ::attn::ErrorStats e =
        ::attn::compareToReference(decode(*got, p.dtype), *want);
    ok = ok && e.relErr <= tol;
    errJson += std::string(",\"") + name +
               "_rel_err\":" + jsonNumber(e.relErr) + ",\"" + name +
               "_max_abs_err\":" + jsonNumber(e.maxAbsErr);
  }
  llvm::outs() << "{\"target\":\"" << target << "\",\"pipeline\":\""
               << pipeline << "\",\"backward\":true,\"deterministic\":"
               << (deterministic ? "true" : "false")
               << ",\"shape\":" << p.shapeJson()
               << ",\"scale\":" << jsonNumber(p.effectiveScale())
               << ",\"seed\":" << seed << errJson
               << ",\"tolerance\":" << jsonNumber(tol)
               << ",\"time_s\":" << jsonNumber(*seconds)
               << ",\"ok\":" << (ok ? "true" : "false") << "}\n";
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  ::attn::parseToolCommandLine(argc, argv, "attn-run",
                               "attn-run: run one attention and check it "
                               "against a float64 reference\n",
                               /*errorStatus=*/2);
  for (const std::string &why :
       ::attn::checkKernelFlags(chip, blockM, blockN, warpRows))
    if (!why.empty())
      return fail(why);
  for (const std::string &why :
       {::attn::checkRange("--reps", reps, 0, kMaxReps, " (0 = no timing)"),
        ::attn::checkRange("--check-rows", checkRows, 0, INT32_MAX,
                           " (0 = all when cheap, else a sample)")})
    if (!why.empty())
      return fail(why);

  llvm::Expected<::attn::AttentionProblem> parsed = problemFlags.get();
  if (!parsed)
    return fail(llvm::toString(parsed.takeError()));
  ::attn::AttentionProblem p = *parsed;
  if (!specials.empty() && (backward || target != "cpu"))
    return fail("--special applies to the CPU forward run only");
  if (pipeline != "tiled" && pipeline != "reference")
    return fail("--pipeline must be tiled or reference (got '" + pipeline +
                "')");
  if (!(inputRange > 0) || !std::isfinite(inputRange))
    return fail("--input-range must be positive and finite");
  if (deterministic && !backward)
    return fail("--deterministic needs --backward");
  if (backward && (p.isVarlen() || p.bias))
    return fail("--backward does not support variable length "
                "(--seq-lens-q) or --bias: attn.attention_grad has no "
                "cu_seqlens or bias operand");
  if (!specials.empty() && (p.isVarlen() || p.bias))
    return fail("--special applies to dense runs without --bias");
  if (backward && !p.withLse)
    return fail("--backward needs the forward's LSE (drop --no-lse)");
  if (hostLowering && (target != "cuda" || backward))
    return fail("--host-lowering applies to the forward --target cuda run");
  if (backward && target == "cuda")
    return runBackwardOnGPU(p);
  if (backward && target == "cpu")
    return runBackwardOnCPU(p);
  if (target == "cuda")
    return runOnGPU(p);
  if (target != "cpu")
    return fail("--target must be cpu or cuda (got '" + target + "')");

  DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  MLIRContext ctx(registry);
  ctx.printOpOnDiagnostic(false); // no out-of-context op dump in errors
  OwningOpRef<ModuleOp> module = mlir::attn::buildAttentionModule(ctx, p);
  if (failed(module->verify()))
    return fail("the generated attention does not verify");

  mlir::attn::AttnToCPUOptions options;
  options.tiled = pipeline == "tiled";
  options.blockM = blockM;
  options.blockN = blockN;
  PassManager algorithm(&ctx);
  mlir::attn::buildAttnAlgorithmPipeline(algorithm, options);
  std::string tileJson;
  // The reference lowering is one tile: every row times every key.
  ::attn::KeyTiling tiling;
  algorithm.addInstrumentation(
      std::make_unique<TileConfigRecorder>(tileJson, tiling));
  if (failed(algorithm.run(*module)))
    return fail("the algorithm pipeline failed");
  if (printIR)
    module->print(llvm::errs());
  PassManager lowering(&ctx);
  mlir::attn::buildHostLoweringPipeline(lowering);
  if (failed(lowering.run(*module)))
    return fail("lowering to LLVM failed");

  // Fresh random inputs; outputs poisoned with NaN so unwritten elements
  // show up as errors.
  std::mt19937_64 rng(seed);
  mlir::attn::HostTensors t;
  std::vector<double> qv, kv, vv, biasv;
  // Dense [B, H, N, D] or packed [T, H, D] (variable length).
  int64_t qN = p.totalQ() * p.headsQ * p.headDim;
  int64_t kN = p.totalKv() * p.headsKv * p.headDim;
  int64_t vN = p.totalKv() * p.headsKv * p.vDim();
  int64_t oN = p.totalQ() * p.headsQ * p.vDim();
  fillRandom(rng, inputRange, p.dtype, qN, t.q, qv);
  fillRandom(rng, inputRange, p.dtype, kN, t.k, kv);
  fillRandom(rng, 1.0, p.dtype, vN, t.v, vv);
  if (p.bias) {
    // U(-2, 2) with one entry in 16 at -inf: the bias also masks.
    int64_t n = p.biasBatch() * p.biasHeads() * p.seqQ * p.seqKv;
    fillRandom(rng, 2.0, p.dtype, n, t.bias, biasv);
    std::uniform_int_distribution<int> pick(0, 15);
    uint16_t negInf16 = p.dtype == ::attn::DType::bf16 ? 0xff80 : 0xfc00;
    float negInf32 = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) {
      if (pick(rng) != 0)
        continue;
      biasv[i] = -std::numeric_limits<double>::infinity();
      if (p.dtype == ::attn::DType::f32)
        std::memcpy(&t.bias[4 * i], &negInf32, 4);
      else
        std::memcpy(&t.bias[2 * i], &negInf16, 2);
    }
  }
  for (const std::string &spec : specials)
    if (std::string why = applySpecial(spec, p.dtype, t, qv, kv, vv);
        !why.empty())
      return fail(why);
  t.out.assign(oN * ::attn::dtypeBytes(p.dtype), 0xff); // NaN in every type
  t.lse.assign(p.totalQ() * p.headsQ,
               std::numeric_limits<float>::quiet_NaN());

  llvm::Expected<double> seconds = mlir::attn::runOnHost(*module, p, t);
  if (!seconds)
    return fail("execution failed: " + llvm::toString(seconds.takeError()));

  std::vector<double> refOut, refLse;
  ::attn::referenceAttention(p, qv, kv, vv, refOut, refLse, &biasv);
  // NaN that a non-finite V may put behind a hidden key (the contract in
  // HiddenKeyLeaks.h), per element of O [B, Hq, Nq, Dv].
  std::vector<char> mayBeNaN;
  if (!specials.empty()) {
    ::attn::HiddenKeyLeaks leaks(p, tiling, [&](size_t n) { return vv[n]; });
    if (leaks.any()) {
      mayBeNaN.assign(refOut.size(), 0);
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t h = 0; h < p.headsQ; ++h)
          for (int64_t i = 0; i < p.seqQ; ++i)
            leaks.markRow(
                b, h, i,
                &mayBeNaN[((b * p.headsQ + h) * p.seqQ + i) * p.vDim()]);
    }
  }
  ::attn::ErrorStats outErr = ::attn::compareToReference(
      decode(t.out, p.dtype), refOut, mayBeNaN.empty() ? nullptr : &mayBeNaN);
  double tol = ::attn::toleranceFor(p.dtype);
  bool ok = outErr.relErr <= tol;
  std::string lseJson;
  if (p.withLse) {
    std::vector<double> lse(t.lse.begin(), t.lse.end());
    ::attn::ErrorStats lseErr = ::attn::compareToReference(lse, refLse);
    // LSE is f32 whatever the input type: hold it to the f32-accumulation
    // tolerance scaled by the input rounding (same bound as the output).
    ok = ok && lseErr.relErr <= tol;
    lseJson = ",\"lse_rel_err\":" + jsonNumber(lseErr.relErr) +
              ",\"lse_max_abs_err\":" + jsonNumber(lseErr.maxAbsErr);
  }
  llvm::outs() << "{\"target\":\"" << target << "\",\"pipeline\":\""
               << pipeline << "\",\"shape\":" << p.shapeJson()
               << ",\"scale\":" << jsonNumber(p.effectiveScale())
               << ",\"seed\":" << seed << tileJson
               << ",\"rel_err\":" << jsonNumber(outErr.relErr)
               << ",\"max_abs_err\":" << jsonNumber(outErr.maxAbsErr)
               << lseJson
               << (specials.empty() ? std::string()
                                    : ",\"hidden_key_nan\":" +
                                          std::to_string(outErr.hiddenKeyNaN))
               << ",\"tolerance\":" << jsonNumber(tol)
               << ",\"time_s\":" << jsonNumber(*seconds)
               << ",\"ok\":" << (ok ? "true" : "false") << "}\n";
  return ok ? 0 : 1;
}
