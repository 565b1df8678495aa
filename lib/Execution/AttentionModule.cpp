//===- AttentionModule.cpp - build IR for one attention problem -----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/AttentionModule.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;

static Type elementType(OpBuilder &b, ::attn::DType t) {
  switch (t) {
  case ::attn::DType::f16:
    return b.getF16Type();
  case ::attn::DType::bf16:
    return b.getBF16Type();
  case ::attn::DType::f32:
    return b.getF32Type();
  }
  return b.getF32Type();
}

OwningOpRef<ModuleOp>
mlir::attn::buildAttentionModule(MLIRContext &ctx,
                                 const ::attn::AttentionProblem &p) {
  ctx.loadDialect<AttnDialect, func::FuncDialect,
                  bufferization::BufferizationDialect>();
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  Type elt = elementType(b, p.dtype);
  SmallVector<int64_t> qShape = {p.batch, p.headsQ, p.seqQ, p.headDim};
  SmallVector<int64_t> kShape = {p.batch, p.headsKv, p.seqKv, p.headDim};
  SmallVector<int64_t> vShape = {p.batch, p.headsKv, p.seqKv, p.vDim()};
  SmallVector<int64_t> oShape = {p.batch, p.headsQ, p.seqQ, p.vDim()};
  SmallVector<int64_t> lseShape = {p.batch, p.headsQ, p.seqQ};
  SmallVector<Type> argTypes = {MemRefType::get(qShape, elt),
                                MemRefType::get(kShape, elt),
                                MemRefType::get(vShape, elt),
                                MemRefType::get(oShape, elt)};
  if (p.withLse)
    argTypes.push_back(MemRefType::get(lseShape, b.getF32Type()));

  auto func = func::FuncOp::create(b, loc, kAttentionEntry,
                                   b.getFunctionType(argTypes, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);

  auto toTensor = [&](Value m) -> Value {
    auto mt = cast<MemRefType>(m.getType());
    return bufferization::ToTensorOp::create(
        b, loc, RankedTensorType::get(mt.getShape(), mt.getElementType()), m,
        /*restrict=*/true, /*writable=*/false);
  };
  Value q = toTensor(body->getArgument(0));
  Value k = toTensor(body->getArgument(1));
  Value v = toTensor(body->getArgument(2));
  SmallVector<Type> resultTypes = {RankedTensorType::get(oShape, elt)};
  if (p.withLse)
    resultTypes.push_back(RankedTensorType::get(lseShape, b.getF32Type()));
  FloatAttr scale =
      p.scale ? b.getF32FloatAttr(static_cast<float>(*p.scale)) : FloatAttr();
  auto attention = AttentionOp::create(
      b, loc, resultTypes, q, k, v,
      p.causal ? MaskKind::causal : MaskKind::none, scale);
  for (unsigned i = 0; i < attention->getNumResults(); ++i) {
    auto store = bufferization::MaterializeInDestinationOp::create(
        b, loc, attention->getResult(i), body->getArgument(3 + i));
    store.setWritable(true);
  }
  func::ReturnOp::create(b, loc);
  return module;
}

OwningOpRef<ModuleOp>
mlir::attn::buildAttentionBackwardModule(MLIRContext &ctx,
                                         const ::attn::AttentionProblem &p) {
  ctx.loadDialect<AttnDialect, func::FuncDialect,
                  bufferization::BufferizationDialect>();
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  Type elt = elementType(b, p.dtype);
  SmallVector<int64_t> qShape = {p.batch, p.headsQ, p.seqQ, p.headDim};
  SmallVector<int64_t> kShape = {p.batch, p.headsKv, p.seqKv, p.headDim};
  SmallVector<int64_t> vShape = {p.batch, p.headsKv, p.seqKv, p.vDim()};
  SmallVector<int64_t> oShape = {p.batch, p.headsQ, p.seqQ, p.vDim()};
  SmallVector<int64_t> lseShape = {p.batch, p.headsQ, p.seqQ};
  Type f32 = b.getF32Type();
  SmallVector<Type> argTypes = {
      MemRefType::get(qShape, elt),   MemRefType::get(kShape, elt),
      MemRefType::get(vShape, elt),   MemRefType::get(oShape, elt),
      MemRefType::get(oShape, elt),   MemRefType::get(lseShape, f32),
      MemRefType::get(qShape, elt),   MemRefType::get(kShape, elt),
      MemRefType::get(vShape, elt)};
  auto func = func::FuncOp::create(b, loc, kAttentionBackwardEntry,
                                   b.getFunctionType(argTypes, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);

  auto toTensor = [&](Value m) -> Value {
    auto mt = cast<MemRefType>(m.getType());
    return bufferization::ToTensorOp::create(
        b, loc, RankedTensorType::get(mt.getShape(), mt.getElementType()), m,
        /*restrict=*/true, /*writable=*/false);
  };
  Value q = toTensor(body->getArgument(0));
  Value k = toTensor(body->getArgument(1));
  Value v = toTensor(body->getArgument(2));
  Value dO = toTensor(body->getArgument(3));
  FloatAttr scale =
      p.scale ? b.getF32FloatAttr(static_cast<float>(*p.scale)) : FloatAttr();
  MaskKind mask = p.causal ? MaskKind::causal : MaskKind::none;
  SmallVector<Type> fwdTypes = {RankedTensorType::get(oShape, elt),
                                RankedTensorType::get(lseShape, f32)};
  auto attention =
      AttentionOp::create(b, loc, fwdTypes, q, k, v, mask, scale);
  SmallVector<Type> gradTypes = {RankedTensorType::get(qShape, elt),
                                 RankedTensorType::get(kShape, elt),
                                 RankedTensorType::get(vShape, elt)};
  auto grad = AttentionGradOp::create(
      b, loc, gradTypes, q, k, v, attention.getOutput(), dO, attention.getLse(), mask, scale);
  SmallVector<Value> results = {attention.getOutput(), attention.getLse()};
  llvm::append_range(results, grad.getResults());
  for (auto [i, r] : llvm::enumerate(results)) {
    auto store = bufferization::MaterializeInDestinationOp::create(
        b, loc, r, body->getArgument(4 + i));
    store.setWritable(true);
  }
  func::ReturnOp::create(b, loc);
  return module;
}
