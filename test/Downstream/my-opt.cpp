//===- my-opt.cpp - a downstream compiler that embeds attn ----------------===//
//
// Part of the attn project's downstream example (test/Downstream).
//
// The driver of a compiler that is not attn: its registry holds its own
// dialects plus the attn dialect, and its PassManager runs attn's raising
// pass and attn-to-ptx pipeline on a module that holds its other code too.
// Prints the module and writes the PTX of the attention kernels.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPULaunch/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/InitAll.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Support/FileUtilities.h"

namespace cl = llvm::cl;

static cl::opt<std::string> input(cl::Positional, cl::desc("<input.mlir>"),
                                  cl::Required);
static cl::opt<std::string> chip("chip", cl::desc("GPU to compile for"),
                                 cl::init("sm_90a"));
static cl::opt<std::string> ptxFile("ptx", cl::desc("Write the PTX here"),
                                    cl::init(""));
static cl::opt<bool>
    host("host", cl::desc("Also lower the attentions to host code that "
                          "launches their kernels (convert-attn-to-gpu-launch)"),
         cl::init(false));
static cl::opt<std::string>
    pipeline("pipeline",
             cl::desc("Passes by name for the module, e.g. "
                      "'attn-raise-attention,attn-to-ptx{chip=sm_80}', "
                      "instead of the built-in pipeline"),
             cl::init(""));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "my-opt: embeds attn\n");

  // The downstream compiler's own dialects, and attn's.
  mlir::DialectRegistry registry;
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::gpu::GPUDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect,
                  mlir::tensor::TensorDialect>();
  mlir::attn::registerAttnDialect(registry);
  mlir::MLIRContext ctx(registry);

  llvm::SourceMgr sources;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(input, sources, &ctx);
  if (!module)
    return 1;

  mlir::PassManager pm(&ctx);
  if (!pipeline.empty()) {
    // By name, as registered by registerAttnPasses.
    mlir::attn::registerAttnPasses();
    if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, llvm::errs())))
      return 1;
  } else {
    // Built with attn's C++ API, in the downstream compiler's own pipeline.
    pm.addPass(mlir::attn::createAttnRaiseAttention());
    mlir::attn::AttnToPTXOptions options;
    options.chip = chip;
    mlir::attn::buildAttnToPTXPipeline(pm, options);
    // The host side: each attn.attention becomes bufferized host code and a
    // gpu.launch_func of its kernel, ready for upstream gpu-to-llvm.
    if (host)
      pm.addPass(mlir::attn::createConvertAttnToGPULaunch());
  }
  if (mlir::failed(pm.run(*module)))
    return 1;
  llvm::outs() << "// passes: ";
  pm.printAsTextualPipeline(llvm::outs());
  llvm::outs() << "\n";

  mlir::FailureOr<llvm::StringRef> ptx =
      mlir::attn::getAttnKernelsObject(*module);
  if (mlir::failed(ptx)) {
    llvm::errs() << "my-opt: no PTX in the module\n";
    return 1;
  }
  if (!ptxFile.empty()) {
    std::string error;
    auto out = mlir::openOutputFile(ptxFile, &error);
    if (!out) {
      llvm::errs() << error << "\n";
      return 1;
    }
    out->os() << *ptx;
    out->keep();
  }
  // The module, without the (long) PTX string.
  for (mlir::Operation &op : module->getBody()->getOperations()) {
    if (llvm::isa<mlir::gpu::BinaryOp>(op)) {
      llvm::outs() << "gpu.binary @" << mlir::attn::kAttnKernelModule << " ("
                   << ptx->size() << " bytes of PTX)\n";
      continue;
    }
    op.print(llvm::outs());
    llvm::outs() << "\n";
  }
  return 0;
}
