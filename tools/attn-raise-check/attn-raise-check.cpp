//===- attn-raise-check.cpp - raised == original, executed ----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Runs a function of an MLIR file (written on tensors, e.g. a front end's
// linalg attention) on fresh random inputs twice on the CPU: as written, and
// after attn-raise-attention and attn's algorithm pipeline. Prints one JSON
// line comparing the two and exits 1 when nothing was raised or the outputs
// differ by more than the output dtype's tolerance.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/JsonNumber.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Execution/TensorFunctionRunner.h"
#include "attn/InitAll.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Support/HostReference.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("attn-raise-check options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> entry("entry",
                                  cl::desc("The function to run (on tensors)"),
                                  cl::init("attention"), cl::cat(category));
static cl::opt<std::string>
    pipeline("pipeline",
             cl::desc("attn's algorithm after raising: tiled (default) or "
                      "reference"),
             cl::init("tiled"), cl::cat(category));
static cl::opt<int64_t> blockM("block-m", cl::desc("0 = heuristic"),
                               cl::init(0), cl::cat(category));
static cl::opt<int64_t> blockN("block-n", cl::desc("0 = heuristic"),
                               cl::init(0), cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::init(0), cl::cat(category));
static cl::opt<double> inputRange("input-range",
                                  cl::desc("Inputs are drawn from U(-r, r)"),
                                  cl::init(1.0), cl::cat(category));

using ::attn::jsonNumber;

namespace {
int fail(const llvm::Twine &msg) {
  llvm::errs() << "attn-raise-check: error: " << msg << "\n";
  return 2;
}

void fillRandom(std::mt19937_64 &rng, mlir::attn::HostTensor &t) {
  std::uniform_real_distribution<double> dist(-inputRange, inputRange);
  for (int64_t i = 0, e = t.numElements(); i < e; ++i) {
    float f = static_cast<float>(dist(rng));
    if (t.dtype == ::attn::DType::f32) {
      std::memcpy(&t.bytes[4 * i], &f, 4);
    } else {
      uint16_t h = t.dtype == ::attn::DType::bf16 ? ::attn::floatToBf16Bits(f)
                                                  : ::attn::floatToF16Bits(f);
      std::memcpy(&t.bytes[2 * i], &h, 2);
    }
  }
}

/// Lowers `module` and runs `entry` on copies of `args`; the output starts
/// as NaN so that unwritten elements show.
llvm::Expected<std::vector<double>>
lowerAndRun(ModuleOp module, std::vector<mlir::attn::HostTensor> args,
            mlir::attn::HostTensor result) {
  if (llvm::Error e = mlir::attn::lowerTensorFunctionForHost(module, entry))
    return std::move(e);
  std::fill(result.bytes.begin(), result.bytes.end(), 0xff);
  if (llvm::Error e = mlir::attn::runTensorFunction(module, entry, args, result))
    return std::move(e);
  return result.toDoubles();
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-raise-check: run a function before and after "
      "attn-raise-attention and compare\n");
  if (pipeline != "tiled" && pipeline != "reference")
    return fail("--pipeline must be tiled or reference (got '" + pipeline +
                "')");
  if (!(inputRange > 0) || !std::isfinite(inputRange))
    return fail("--input-range must be positive and finite");

  DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  MLIRContext ctx(registry);
  llvm::SourceMgr sources;
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sources, &ctx);
  if (!module)
    return fail("cannot parse '" + inputFile + "'");

  std::vector<mlir::attn::HostTensor> args;
  mlir::attn::HostTensor result;
  if (llvm::Error e = mlir::attn::getTensorFunctionSignature(*module, entry,
                                                             args, result))
    return fail(llvm::toString(std::move(e)));
  std::mt19937_64 rng(seed);
  for (mlir::attn::HostTensor &t : args)
    fillRandom(rng, t);

  // As written.
  OwningOpRef<ModuleOp> original = module->clone();
  auto want = lowerAndRun(*original, args, result);
  if (!want)
    return fail("the original: " + llvm::toString(want.takeError()));

  // Raised, then attn's algorithm.
  IRRewriter rewriter(&ctx);
  int64_t raised = mlir::attn::raiseAttention(rewriter, *module);
  if (raised == 0)
    return fail("nothing in @" + entry +
                " was raised to attn.attention (attn-opt "
                "--attn-raise-attention=emit-remarks says why)");
  mlir::attn::AttnToCPUOptions options;
  options.tiled = pipeline == "tiled";
  options.blockM = blockM;
  options.blockN = blockN;
  PassManager algorithm(&ctx);
  mlir::attn::buildAttnAlgorithmPipeline(algorithm, options);
  if (failed(algorithm.run(*module)))
    return fail("the " + pipeline + " pipeline failed");
  auto got = lowerAndRun(*module, args, result);
  if (!got)
    return fail("the raised: " + llvm::toString(got.takeError()));

  ::attn::ErrorStats err = ::attn::compareToReference(*got, *want);
  double tol = ::attn::toleranceFor(result.dtype);
  bool ok = err.relErr <= tol;
  llvm::outs() << "{\"input\":\"" << llvm::sys::path::filename(inputFile)
               << "\",\"entry\":\"" << entry << "\",\"raised\":" << raised
               << ",\"pipeline\":\"" << pipeline
               << "\",\"dtype\":\"" << ::attn::dtypeName(result.dtype)
               << "\",\"seed\":" << seed
               << ",\"rel_err\":" << jsonNumber(err.relErr)
               << ",\"max_abs_err\":" << jsonNumber(err.maxAbsErr)
               << ",\"tolerance\":" << jsonNumber(tol)
               << ",\"ok\":" << (ok ? "true" : "false") << "}\n";
  return ok ? 0 : 1;
}
