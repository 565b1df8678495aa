//===- WgmmaHelpers.cpp - Hopper (sm_90a) building blocks -----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "WgmmaHelpers.h"

#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::attn::nvvm;

Value mlir::attn::nvvm::sharedAddress(KernelBuilder &kb, Value sharedPtr) {
  return LLVM::PtrToIntOp::create(kb.builder(), kb.location(),
                                  kb.builder().getI32Type(), sharedPtr);
}

void mlir::attn::nvvm::mbarrierInit(KernelBuilder &kb, Value barrier,
                                    int64_t count) {
  attn_gpu::MBarrierInitOp::create(kb.builder(), kb.location(), barrier,
                                   count);
}

void mlir::attn::nvvm::mbarrierInitFence(KernelBuilder &kb) {
  attn_gpu::MBarrierInitFenceOp::create(kb.builder(), kb.location());
}

void mlir::attn::nvvm::fenceProxyAsyncShared(KernelBuilder &kb) {
  NVVM::FenceProxyOp::create(
      kb.builder(), kb.location(), NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(kb.builder().getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

void mlir::attn::nvvm::mbarrierArriveExpectTx(KernelBuilder &kb, Value barrier,
                                              int64_t bytes) {
  attn_gpu::MBarrierArriveExpectTxOp::create(kb.builder(), kb.location(),
                                             barrier, bytes);
}

void mlir::attn::nvvm::mbarrierArrive(KernelBuilder &kb, Value barrier) {
  attn_gpu::MBarrierArriveOp::create(kb.builder(), kb.location(), barrier);
}

void mlir::attn::nvvm::mbarrierWait(KernelBuilder &kb, Value barrier,
                                    Value parity) {
  attn_gpu::MBarrierWaitOp::create(kb.builder(), kb.location(), barrier,
                                   parity);
}

void mlir::attn::nvvm::tmaLoad4d(KernelBuilder &kb, Value sharedDst,
                                 Value tensorMap, ArrayRef<Value> coords,
                                 Value barrier) {
  attn_gpu::TmaLoadOp::create(kb.builder(), kb.location(), sharedDst,
                              tensorMap, coords, barrier);
}

void mlir::attn::nvvm::setMaxRegisters(KernelBuilder &kb, int64_t count,
                                       bool increase) {
  NVVM::SetMaxRegisterOp::create(
      kb.builder(), kb.location(), static_cast<int32_t>(count),
      increase ? NVVM::SetMaxRegisterAction::increase
               : NVVM::SetMaxRegisterAction::decrease);
}

void mlir::attn::nvvm::namedBarrierSync(KernelBuilder &kb, Value id,
                                        int64_t threads) {
  attn_gpu::NamedBarrierSyncOp::create(kb.builder(), kb.location(), id,
                                       threads);
}

void mlir::attn::nvvm::namedBarrierArrive(KernelBuilder &kb, Value id,
                                          int64_t threads) {
  attn_gpu::NamedBarrierArriveOp::create(kb.builder(), kb.location(), id,
                                         threads);
}

Value mlir::attn::nvvm::wgmmaDescriptor(KernelBuilder &kb, Value sharedTile,
                                        int64_t leadingBytes,
                                        int64_t strideBytes) {
  return attn_gpu::WgmmaDescriptorOp::create(kb.builder(), kb.location(),
                                             sharedTile, leadingBytes,
                                             strideBytes);
}

Value mlir::attn::nvvm::wgmmaDescriptorAdvance(KernelBuilder &kb, Value desc,
                                               int64_t bytes) {
  if (bytes == 0)
    return desc;
  return kb.add(desc, kb.i64(bytes >> 4));
}

SmallVector<Value> mlir::attn::nvvm::wgmmaFence(KernelBuilder &kb,
                                                ValueRange values) {
  auto op = attn_gpu::WgmmaFenceOp::create(kb.builder(), kb.location(),
                                           values.getTypes(), values);
  return SmallVector<Value>(op.getResults());
}

void mlir::attn::nvvm::wgmmaCommitGroup(KernelBuilder &kb) {
  attn_gpu::WgmmaCommitGroupOp::create(kb.builder(), kb.location());
}

SmallVector<Value> mlir::attn::nvvm::wgmmaWaitGroup(KernelBuilder &kb,
                                                    int64_t pending,
                                                    ValueRange values) {
  auto op = attn_gpu::WgmmaWaitGroupOp::create(
      kb.builder(), kb.location(), values.getTypes(), pending, values);
  return SmallVector<Value>(op.getResults());
}

Value mlir::attn::nvvm::ringView(KernelBuilder &kb, Value base,
                                 int64_t stages, int64_t rows, int64_t cols,
                                 Type elementType) {
  OpBuilder &b = kb.builder();
  return attn_gpu::RingViewOp::create(
      b, kb.location(),
      attn_gpu::RingType::get(b.getContext(), stages, rows, cols, elementType),
      base);
}

Value mlir::attn::nvvm::ringTile(KernelBuilder &kb, Value ring, Value stage,
                                 std::optional<int64_t> panel) {
  OpBuilder &b = kb.builder();
  return attn_gpu::RingTileOp::create(
      b, kb.location(), ring, stage,
      panel ? b.getI64IntegerAttr(*panel) : IntegerAttr());
}

Value mlir::attn::nvvm::ringDescriptor(KernelBuilder &kb, Value ring,
                                       Value stage, bool mnMajor) {
  return attn_gpu::RingDescriptorOp::create(kb.builder(), kb.location(), ring,
                                            stage, mnMajor);
}

Value mlir::attn::nvvm::warpgroupMma(KernelBuilder &kb, Value a, Value descB,
                                     Value acc, bool accumulate,
                                     bool transposeB, Type elementType,
                                     int64_t aKStep, bool transposeA) {
  OpBuilder &b = kb.builder();
  return attn_gpu::WarpgroupMmaOp::create(
      b, kb.location(), a, descB, acc,
      elementType ? TypeAttr::get(elementType) : TypeAttr(), accumulate,
      transposeA, transposeB, aKStep);
}

LLVM::LLVMFuncOp mlir::attn::nvvm::createHopperKernelFunc(
    OpBuilder &builder, Location loc, StringRef name,
    const KernelSignature &params, int64_t threads) {
  MLIRContext *ctx = builder.getContext();
  auto func = LLVM::LLVMFuncOp::create(
      builder, loc, name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                  params.types(ctx)));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  for (unsigned i : params.tensorMapPositions()) {
    func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(LLVM::LLVMArrayType::get(
                        builder.getI8Type(), 128)));
    func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                    builder.getI64IntegerAttr(64));
    func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                    builder.getUnitAttr());
  }
  func->setAttr("nvvm.maxntid", builder.getDenseI32ArrayAttr(
                                    {static_cast<int32_t>(threads), 1, 1}));
  func->setAttr("nvvm.minctasm", builder.getI32IntegerAttr(1));
  func.addEntryBlock(builder);
  return func;
}
