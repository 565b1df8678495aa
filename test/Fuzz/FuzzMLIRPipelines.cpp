//===- FuzzMLIRPipelines.cpp - libFuzzer: MLIR text through the pipelines -===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Parses the input as MLIR with every dialect attn-opt knows, verifies it,
// and runs what parses through attn-to-cpu (tiled and reference) and
// attn-to-ptx. Diagnostics are expected and swallowed: only a crash, a
// sanitizer report or a hang is a finding.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAll.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {
/// One pipeline run on a fresh clone of `module`; failures are fine.
template <typename Build>
void runPipeline(ModuleOp module, Build build) {
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext());
  build(pm);
  (void)pm.run(*copy);
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // Kernels are never looked up in a tuning database while fuzzing.
  setenv("ATTN_TUNING_DB", "none", 1);
  attn::registerAllPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Big inputs only make the parser slow, not the findings better.
  if (size > 16384)
    return 0;
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    attn::registerAllDialects(*r);
    return r;
  }();
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(false);
  ScopedDiagnosticHandler swallow(&context, [](Diagnostic &) {
    return success();
  });

  std::string text(reinterpret_cast<const char *>(data), size);
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config);
  if (!module || failed(verify(*module)))
    return 0;

  runPipeline(*module, [](PassManager &pm) {
    attn::AttnToCPUOptions o;
    attn::buildAttnToCPUPipeline(pm, o);
  });
  runPipeline(*module, [](PassManager &pm) {
    attn::AttnToCPUOptions o;
    o.tiled = false;
    attn::buildAttnToCPUPipeline(pm, o);
  });
  runPipeline(*module, [](PassManager &pm) {
    attn::AttnToPTXOptions o;
    o.tuningDb = "none";
    o.optLevel = 1;
    attn::buildAttnToPTXPipeline(pm, o);
  });
  return 0;
}
