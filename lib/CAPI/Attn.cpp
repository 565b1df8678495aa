//===- Attn.cpp - C API of the attn compiler ------------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Attn.h"
#include "attn/Compiler/KernelCompiler.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/InitAll.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <string>

using namespace mlir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Attn, attn, mlir::attn::AttnDialect)

void attnRegisterAllDialects(MlirDialectRegistry registry) {
  mlir::attn::registerAllDialects(*unwrap(registry));
}

void attnRegisterPasses(void) { mlir::attn::registerAttnPasses(); }

AttnPTXOptions attnPTXOptionsGetDefault(void) {
  AttnPTXOptions options;
  options.chip = "sm_90a";
  options.features = "";
  options.optLevel = 3;
  options.blockM = 0;
  options.blockN = 0;
  options.stages = 2;
  options.raiseAttention = false;
  return options;
}

static void buildPipeline(OpPassManager &pm, const AttnPTXOptions &c) {
  if (c.raiseAttention)
    pm.addPass(mlir::attn::createAttnRaiseAttention());
  mlir::attn::AttnToPTXOptions options;
  options.chip = c.chip ? c.chip : "sm_90a";
  options.features = c.features ? c.features : "";
  options.optLevel = c.optLevel;
  options.blockM = c.blockM;
  options.blockN = c.blockN;
  options.stages = c.stages;
  // The passes read no environment: the C API passes $ATTN_TUNING_DB and
  // $ATTN_TUNING_GPU down, as attn-compile does.
  options.tuningDb = mlir::attn::resolveTuningDatabasePath("");
  options.tuningGpu = mlir::attn::resolveTuningGpu("");
  mlir::attn::buildAttnToPTXPipeline(pm, options);
}

void attnAddAttnToPTXPipeline(MlirOpPassManager passManager,
                              const AttnPTXOptions *options) {
  AttnPTXOptions defaults = attnPTXOptionsGetDefault();
  buildPipeline(*unwrap(passManager), options ? *options : defaults);
}

static void report(MlirStringCallback onError, void *userData,
                   const std::string &message) {
  if (onError)
    onError(mlirStringRefCreate(message.data(), message.size()), userData);
}

MlirLogicalResult attnCompileToPTX(MlirModule module,
                                   const AttnPTXOptions *options,
                                   MlirStringCallback onError,
                                   void *userData) {
  ModuleOp op = unwrap(module);
  MLIRContext *ctx = op.getContext();
  // Errors and warnings are collected (not printed) and returned on
  // failure; remarks and notes attached to errors come along.
  std::string messages;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Remark)
      return success();
    llvm::raw_string_ostream os(messages);
    os << diag.getLocation()
       << (diag.getSeverity() == DiagnosticSeverity::Error ? ": error: "
                                                           : ": warning: ")
       << diag << "\n";
    // (Not the "see current operation" dump that MLIR attaches.)
    for (Diagnostic &note : diag.getNotes())
      if (!StringRef(note.str()).starts_with("see current operation"))
        os << note.getLocation() << ": note: " << note << "\n";
    return success();
  });
  PassManager pm(ctx, ModuleOp::getOperationName());
  AttnPTXOptions defaults = attnPTXOptionsGetDefault();
  buildPipeline(pm, options ? *options : defaults);
  if (failed(pm.run(op))) {
    report(onError, userData,
           messages.empty() ? "attn-to-ptx failed\n" : messages);
    return mlirLogicalResultFailure();
  }
  return mlirLogicalResultSuccess();
}

MlirLogicalResult attnModuleGetPTX(MlirModule module, MlirStringRef *ptx,
                                   MlirStringCallback onError,
                                   void *userData) {
  FailureOr<StringRef> object = mlir::attn::getAttnKernelsObject(unwrap(module));
  if (failed(object)) {
    report(onError, userData,
           "the module holds no gpu.binary @attn_kernels: run attn-to-ptx "
           "first (and give it an attention to compile)\n");
    return mlirLogicalResultFailure();
  }
  *ptx = mlirStringRefCreate(object->data(), object->size());
  return mlirLogicalResultSuccess();
}

int64_t attnRaiseAttention(MlirOperation op) {
  IRRewriter rewriter(unwrap(op)->getContext());
  return mlir::attn::raiseAttention(rewriter, unwrap(op));
}
