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
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  mlir::attn::registerAllPasses();
  mlir::attn::registerDebugOptions();
  // Deeply nested input must be a diagnostic, not a stack overflow.
  return attn::runOnLargeStack([&] {
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, "attn optimizer driver\n", registry));
  });
}
