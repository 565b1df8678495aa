//===- InitAll.cpp - register everything attn provides --------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAll.h"
#include "attn/Conversion/AttnToGPULaunch/Passes.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Debug.h"

// With NDEBUG these are macros that do nothing; libLLVM has the functions.
#ifdef setCurrentDebugTypes
#undef setCurrentDebugTypes
#endif
namespace llvm {
void setCurrentDebugTypes(const char **types, unsigned count);
} // namespace llvm

using namespace mlir;

void mlir::attn::registerAttnDialect(DialectRegistry &registry) {
  registry.insert<AttnDialect>();
}

void mlir::attn::registerAttnPasses() {
  registerAttnTransformsPasses();
  registerAttnConversionPasses();
  registerAttnToGPULaunchPasses();
  registerAttnPipelines();
}

void mlir::attn::registerAllDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect, attn_gpu::AttnGPUDialect, affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, index::IndexDialect, LLVM::LLVMDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect, gpu::GPUDialect,
                  NVVM::NVVMDialect>();
  // Serialising kernels: NVVM target and translations to LLVM IR.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  func::registerInlinerExtension(registry);
  // convert-to-llvm interfaces, so users can also lower with that pass.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
}

void mlir::attn::registerAllPasses() {
  registerAttnPasses();

  // Upstream passes the pipelines use, so each step can be run on its own.
  registerCanonicalizerPass();
  registerCSEPass();
  registerConversionPasses();
  registerLinalgPasses();
  bufferization::registerBufferizationPasses();
  bufferization::registerBufferizationPipelines();
  arith::registerArithPasses();
  memref::registerMemRefPasses();
  registerSCFPasses();
  registerGPUPasses();
}

void mlir::attn::registerDebugOptions() {
  namespace cl = llvm::cl;
  if (cl::getRegisteredOptions().count("debug-only"))
    return;
  static std::vector<std::string> types;
  static cl::opt<bool, /*ExternalStorage=*/true> debug(
      "debug", cl::desc("Enable debug output"), cl::Hidden,
      cl::location(llvm::DebugFlag));
  static cl::list<std::string> debugOnly(
      "debug-only",
      cl::desc("Enable debug output of the given types only (comma "
               "separated)"),
      cl::Hidden, cl::CommaSeparated, cl::value_desc("debug string"),
      cl::cb<void, std::string>([](const std::string &type) {
        types.push_back(type);
        std::vector<const char *> names;
        for (const std::string &t : types)
          names.push_back(t.c_str());
        llvm::DebugFlag = true;
        llvm::setCurrentDebugTypes(names.data(), names.size());
      }));
}
