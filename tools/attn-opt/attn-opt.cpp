//===- attn-opt.cpp - the attn optimizer driver ---------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// mlir-opt with the attn dialect, its passes and pipelines, and only the
// upstream dialects and passes those pipelines use.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAll.h"
#include "attn/Support/LargeStack.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  mlir::attn::registerAllPasses();
  mlir::attn::registerDebugOptions();
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "attn optimizer driver\n", registry);
  auto config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));

  // As MlirOptMain(argc, argv, ...), with the input looked at first: deeply
  // nested input must be a diagnostic, not a stack overflow or minutes of
  // parsing.
  std::string error;
  auto input = mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (attn::reportTooDeepNesting(*input))
    return 1;
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  return attn::runOnLargeStack([&] {
    if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry,
                                       config)))
      return 1;
    output->keep();
    return 0;
  });
}
