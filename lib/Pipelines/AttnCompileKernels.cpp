//===- AttnCompileKernels.cpp - lower and serialise @attn_kernels ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Lowers and serialises only attn's own gpu.module, so that attn-to-ptx can
// run inside another compiler's pipeline on a module that also holds that
// compiler's kernels: upstream's pass nesting, nvvm-attach-target (without a
// matcher) and gpu-module-to-binary would act on every gpu.module.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Support/Chip.h"
#include "attn/Support/OptionLimits.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCOMPILEKERNELS
#include "attn/Pipelines/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Inside the kernels: the mid-level kernel IR (attn_gpu: its fragments to
/// registers, then its ops to NVVM), then structured control flow and the
/// GPU/arith ops to NVVM + LLVM. 32-bit indices match the kernels' i32
/// arithmetic.
void buildKernelLowering(OpPassManager &pm) {
  pm.addPass(createLowerAttnGPUTiles());
  pm.addPass(createConvertAttnGPUToNVVM());
  pm.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.indexBitwidth = 32;
  pm.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

} // namespace

void mlir::attn::buildKernelSerialisationPipeline(OpPassManager &pm,
                                                  StringRef format) {
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVVMToLLVMPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = format.str();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

namespace {
struct AttnCompileKernelsPass
    : mlir::attn::impl::AttnCompileKernelsBase<AttnCompileKernelsPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    OpPassManager lowering(gpu::GPUModuleOp::getOperationName());
    buildKernelLowering(lowering);
    lowering.getDependentDialects(registry);
    // convert-gpu-to-nvvm lowers the ops of every dialect that has a
    // ConvertToLLVM interface, and serialising needs the NVVM target and the
    // translations to LLVM IR: registered here, so that a caller's registry
    // needs only the attn dialect (attn-opt's registerAllDialects has them
    // anyway; test/Downstream checks a registry without them).
    arith::registerConvertArithToLLVMInterface(registry);
    cf::registerConvertControlFlowToLLVMInterface(registry);
    registerConvertFuncToLLVMInterface(registry);
    index::registerConvertIndexToLLVMInterface(registry);
    registerConvertMathToLLVMInterface(registry);
    registerConvertMemRefToLLVMInterface(registry);
    NVVM::registerNVVMTargetInterfaceExternalModels(registry);
    registerBuiltinDialectTranslation(registry);
    registerGPUDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    registerNVVMDialectTranslation(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kAttnKernelModule);
    if (!kernels)
      return;
    bool serialise = format != "none";
    if (!llvm::is_contained({"isa", "llvm", "bin", "fatbin", "none"},
                            StringRef(format))) {
      module.emitError() << "attn-compile-kernels: format must be isa, llvm, "
                            "bin, fatbin or none (got '"
                         << format << "')";
      return signalPassFailure();
    }

    // LLVM's NVPTX back end aborts on a processor it does not know or an
    // intrinsic the chip lacks: only the table's chips get that far.
    const ::attn::ChipInfo *info = ::attn::lookupChip(chip);
    if (!info) {
      module.emitError() << ::attn::checkChip("attn-compile-kernels: chip",
                                              chip);
      return signalPassFailure();
    }
    if (std::string why = ::attn::checkRange("attn-compile-kernels: O",
                                             optLevel, 0, ::attn::kMaxOptLevel);
        !why.empty()) {
      module.emitError() << why;
      return signalPassFailure();
    }

    OpPassManager lowering(gpu::GPUModuleOp::getOperationName());
    buildKernelLowering(lowering);
    if (failed(runPipeline(lowering, kernels)))
      return signalPassFailure();

    // Target and serialisation run on a scratch module that holds only
    // @attn_kernels; whatever they leave (the gpu.module or the gpu.binary
    // that replaced it) moves back to where @attn_kernels was.
    OpBuilder b(kernels);
    auto scratch = ModuleOp::create(b, kernels.getLoc());
    kernels->moveBefore(scratch.getBody(), scratch.getBody()->end());
    OpPassManager finish(ModuleOp::getOperationName());
    GpuNVVMAttachTargetOptions target;
    target.chip = chip;
    // The chip's PTX ISA unless the caller gives features (ChipInfo).
    target.features = ::attn::chipPtxFeatures(*info, features);
    target.optLevel = optLevel;
    finish.addPass(createGpuNVVMAttachTarget(target));
    if (serialise)
      buildKernelSerialisationPipeline(finish, format);
    LogicalResult result = runPipeline(finish, scratch);
    for (Operation &op : llvm::make_early_inc_range(*scratch.getBody()))
      op.moveBefore(scratch);
    scratch.erase();
    if (failed(result))
      signalPassFailure();
  }
};
} // namespace
