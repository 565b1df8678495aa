//===- AttentionModule.cpp - build IR for one attention problem -----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/AttentionModule.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Q, K, V, O and LSE shapes of a dense (not variable-length) problem.
struct DenseShapes {
  SmallVector<int64_t> q, k, v, o, lse;
};
} // namespace

static DenseShapes denseShapes(const ::attn::AttentionProblem &p) {
  return {{p.batch, p.headsQ, p.seqQ, p.headDim},
          {p.batch, p.headsKv, p.seqKv, p.headDim},
          {p.batch, p.headsKv, p.seqKv, p.vDim()},
          {p.batch, p.headsQ, p.seqQ, p.vDim()},
          {p.batch, p.headsQ, p.seqQ}};
}

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

/// The mask kind and window of `p`.
static std::pair<MaskKind, DenseI64ArrayAttr>
maskOf(OpBuilder &b, const ::attn::AttentionProblem &p) {
  if (p.windowLeft >= 0 || p.windowRight >= 0)
    return {p.topLeft ? MaskKind::sliding_top_left : MaskKind::sliding,
            b.getDenseI64ArrayAttr({p.windowLeft, p.rightBound()})};
  if (p.causal)
    return {p.topLeft ? MaskKind::causal_top_left : MaskKind::causal, {}};
  return {MaskKind::none, {}};
}

/// ALiBi's slopes argument: f32 [B, Hq] (attn.attention also takes [Hq];
/// the modules take one form, callers broadcast).
static MemRefType alibiSlopesType(OpBuilder &b,
                                  const ::attn::AttentionProblem &p) {
  return MemRefType::get({p.batch, p.headsQ}, b.getF32Type());
}

/// The scale attribute of `p` (none: 1/sqrt(D)), unless the scale is the
/// run-time `runtimeScale`.
static FloatAttr scaleAttr(OpBuilder &b, const ::attn::AttentionProblem &p,
                           Value runtimeScale) {
  if (runtimeScale || !p.scale)
    return {};
  return b.getF32FloatAttr(static_cast<float>(*p.scale));
}

/// The f32 in the memref<f32> `arg`.
static Value loadScale(OpBuilder &b, Location loc, Value arg) {
  return memref::LoadOp::create(b, loc, arg, ValueRange{});
}

/// attn.attention for `p`: its mask, window, score modification, and the
/// bias / cu_seqlens / run-time scale operands when given.
static AttentionOp createAttention(OpBuilder &b, Location loc, TypeRange types,
                                   Value q, Value k, Value v,
                                   const ::attn::AttentionProblem &p,
                                   Value bias = Value(), Value cuQ = Value(),
                                   Value cuKv = Value(),
                                   Value runtimeScale = Value(),
                                   Value keyStart = Value(),
                                   Value keyEnd = Value(),
                                   Value alibiSlopes = Value()) {
  FloatAttr scale = scaleAttr(b, p, runtimeScale);
  auto [mask, window] = maskOf(b, p);
  FloatAttr softcap = p.softcap > 0
                          ? b.getF32FloatAttr(static_cast<float>(p.softcap))
                          : FloatAttr();
  DenseI64ArrayAttr maxSeqlen;
  if (cuQ)
    maxSeqlen = b.getDenseI64ArrayAttr({p.seqQ, p.seqKv});
  auto op =
      AttentionOp::create(b, loc, types, q, k, v, bias, cuQ, cuKv,
                          keyStart, keyEnd, alibiSlopes, runtimeScale,
                          MaskKindAttr::get(b.getContext(), mask), window,
                          scale, softcap, maxSeqlen);
  if (p.isVarlen()) {
    op->setAttr(kSeqLensQAttr, b.getDenseI64ArrayAttr(p.seqLensQ));
    op->setAttr(kSeqLensKvAttr, b.getDenseI64ArrayAttr(p.seqLensKv));
  }
  if (keyStart) {
    op->setAttr(kKeyStartsAttr, b.getDenseI64ArrayAttr(p.keyStarts));
    op->setAttr(kKeyEndsAttr, b.getDenseI64ArrayAttr(p.keyEnds));
  }
  return op;
}

OwningOpRef<ModuleOp>
mlir::attn::buildAttentionModule(MLIRContext &ctx,
                                 const ::attn::AttentionProblem &p,
                                 ScaleSource scaleSource) {
  ctx.loadDialect<AttnDialect, arith::ArithDialect, math::MathDialect,
                  func::FuncDialect, bufferization::BufferizationDialect,
                  memref::MemRefDialect>();
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  Type elt = elementType(b, p.dtype);
  auto [qShape, kShape, vShape, oShape, lseShape] = denseShapes(p);
  if (p.isVarlen()) {
    int64_t tq = p.totalQ(), tk = p.totalKv();
    qShape = {tq, p.headsQ, p.headDim};
    kShape = {tk, p.headsKv, p.headDim};
    vShape = {tk, p.headsKv, p.vDim()};
    oShape = {tq, p.headsQ, p.vDim()};
    lseShape = {p.headsQ, tq};
  }
  // Inputs q, k, v, [bias], [cu_seqlens_q, cu_seqlens_kv], [scale];
  // outputs o, [lse].
  SmallVector<Type> argTypes = {MemRefType::get(qShape, elt),
                                MemRefType::get(kShape, elt),
                                MemRefType::get(vShape, elt)};
  if (p.bias)
    argTypes.push_back(MemRefType::get(
        {p.biasBatch(), p.biasHeads(), p.seqQ, p.seqKv}, elt));
  if (p.isVarlen())
    argTypes.append(2, MemRefType::get({p.batch + 1}, b.getI32Type()));
  if (p.hasKeyRanges())
    argTypes.append(2, MemRefType::get({p.batch}, b.getI32Type()));
  if (p.alibi)
    argTypes.push_back(alibiSlopesType(b, p));
  bool scaleArg = scaleSource == ScaleSource::Argument;
  if (scaleArg)
    argTypes.push_back(MemRefType::get({}, b.getF32Type()));
  unsigned firstOut = argTypes.size();
  argTypes.push_back(MemRefType::get(oShape, elt));
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
  unsigned next = 3;
  Value bias, cuQ, cuKv;
  if (p.bias)
    bias = toTensor(body->getArgument(next++));
  if (p.isVarlen()) {
    cuQ = toTensor(body->getArgument(next++));
    cuKv = toTensor(body->getArgument(next++));
  }
  Value keyStart, keyEnd;
  if (p.hasKeyRanges()) {
    keyStart = toTensor(body->getArgument(next++));
    keyEnd = toTensor(body->getArgument(next++));
  }
  Value alibiSlopes;
  if (p.alibi)
    alibiSlopes = toTensor(body->getArgument(next++));
  Value runtimeScale;
  if (scaleArg)
    runtimeScale = loadScale(b, loc, body->getArgument(next++));
  SmallVector<Type> resultTypes = {RankedTensorType::get(oShape, elt)};
  if (p.withLse)
    resultTypes.push_back(RankedTensorType::get(lseShape, b.getF32Type()));
  auto attention =
      createAttention(b, loc, resultTypes, q, k, v, p, bias, cuQ, cuKv,
                      runtimeScale, keyStart, keyEnd, alibiSlopes);
  for (unsigned i = 0; i < attention->getNumResults(); ++i) {
    auto store = bufferization::MaterializeInDestinationOp::create(
        b, loc, attention->getResult(i), body->getArgument(firstOut + i));
    store.setWritable(true);
  }
  func::ReturnOp::create(b, loc);
  return module;
}

OwningOpRef<ModuleOp>
mlir::attn::buildAttentionBackwardModule(MLIRContext &ctx,
                                         const ::attn::AttentionProblem &p) {
  ctx.loadDialect<AttnDialect, arith::ArithDialect, math::MathDialect,
                  func::FuncDialect, bufferization::BufferizationDialect>();
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  Type elt = elementType(b, p.dtype);
  auto [qShape, kShape, vShape, oShape, lseShape] = denseShapes(p);
  Type f32 = b.getF32Type();
  // The order of buildHostAttentionGradModule's arguments (and so of
  // gradArguments), with o and lse written here instead of read.
  SmallVector<Type> argTypes = {
      MemRefType::get(qShape, elt), MemRefType::get(kShape, elt),
      MemRefType::get(vShape, elt), MemRefType::get(oShape, elt),
      MemRefType::get(oShape, elt), MemRefType::get(lseShape, f32)};
  unsigned keyArgs = argTypes.size();
  if (p.hasKeyRanges())
    argTypes.append(2, MemRefType::get({p.batch}, b.getI32Type()));
  unsigned alibiArg = argTypes.size();
  if (p.alibi)
    argTypes.push_back(alibiSlopesType(b, p));
  unsigned firstOut = argTypes.size();
  argTypes.append({MemRefType::get(qShape, elt), MemRefType::get(kShape, elt),
                   MemRefType::get(vShape, elt)});
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
  Value keyStart, keyEnd;
  if (p.hasKeyRanges()) {
    keyStart = toTensor(body->getArgument(keyArgs));
    keyEnd = toTensor(body->getArgument(keyArgs + 1));
  }
  Value alibiSlopes;
  if (p.alibi)
    alibiSlopes = toTensor(body->getArgument(alibiArg));
  SmallVector<Type> fwdTypes = {RankedTensorType::get(oShape, elt),
                                RankedTensorType::get(lseShape, f32)};
  auto attention =
      createAttention(b, loc, fwdTypes, q, k, v, p, Value(), Value(), Value(),
                      Value(), keyStart, keyEnd, alibiSlopes);
  FloatAttr scale = attention.getScaleAttr();
  SmallVector<Type> gradTypes = {RankedTensorType::get(qShape, elt),
                                 RankedTensorType::get(kShape, elt),
                                 RankedTensorType::get(vShape, elt)};
  auto grad = AttentionGradOp::create(
      b, loc, gradTypes, q, k, v, attention.getOutput(), dO, attention.getLse(),
      keyStart, keyEnd, alibiSlopes, /*runtime_scale=*/Value(),
      attention.getMaskAttr(),
      attention.getWindowAttr(), scale, attention.getSoftcapAttr());
  SmallVector<std::pair<Value, unsigned>> results = {{attention.getOutput(), 4},
                                                     {attention.getLse(), 5}};
  for (auto [i, r] : llvm::enumerate(grad.getResults()))
    results.push_back({r, firstOut + i});
  for (auto [r, arg] : results) {
    auto store = bufferization::MaterializeInDestinationOp::create(
        b, loc, r, body->getArgument(arg));
    store.setWritable(true);
  }
  func::ReturnOp::create(b, loc);
  return module;
}

OwningOpRef<ModuleOp>
mlir::attn::buildHostAttentionGradModule(MLIRContext &ctx,
                                         const ::attn::AttentionProblem &p,
                                         ScaleSource scaleSource) {
  ctx.loadDialect<AttnDialect, func::FuncDialect,
                  bufferization::BufferizationDialect, memref::MemRefDialect>();
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  Type elt = elementType(b, p.dtype);
  auto [qShape, kShape, vShape, oShape, lseShape] = denseShapes(p);
  bool scaleArg = scaleSource == ScaleSource::Argument;
  SmallVector<Type> argTypes = {
      MemRefType::get(qShape, elt), MemRefType::get(kShape, elt),
      MemRefType::get(vShape, elt), MemRefType::get(oShape, elt),
      MemRefType::get(oShape, elt), MemRefType::get(lseShape, b.getF32Type())};
  // As the forward module: the key ranges, then the scale.
  unsigned keyArgs = argTypes.size();
  if (p.hasKeyRanges())
    argTypes.append(2, MemRefType::get({p.batch}, b.getI32Type()));
  unsigned alibiArg = argTypes.size();
  if (p.alibi)
    argTypes.push_back(alibiSlopesType(b, p));
  unsigned scaleArgIndex = argTypes.size();
  if (scaleArg)
    argTypes.push_back(MemRefType::get({}, b.getF32Type()));
  unsigned firstOut = argTypes.size();
  argTypes.append({MemRefType::get(qShape, elt), MemRefType::get(kShape, elt),
                   MemRefType::get(vShape, elt)});
  auto func = func::FuncOp::create(b, loc, kHostAttentionGradEntry,
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
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < 6; ++i)
    inputs.push_back(toTensor(body->getArgument(i)));
  Value keyStart, keyEnd;
  if (p.hasKeyRanges()) {
    keyStart = toTensor(body->getArgument(keyArgs));
    keyEnd = toTensor(body->getArgument(keyArgs + 1));
  }
  Value alibiSlopes;
  if (p.alibi)
    alibiSlopes = toTensor(body->getArgument(alibiArg));
  auto [mask, window] = maskOf(b, p);
  Value runtimeScale;
  if (scaleArg)
    runtimeScale = loadScale(b, loc, body->getArgument(scaleArgIndex));
  FloatAttr scale = scaleAttr(b, p, runtimeScale);
  SmallVector<Type> gradTypes = {RankedTensorType::get(qShape, elt),
                                 RankedTensorType::get(kShape, elt),
                                 RankedTensorType::get(vShape, elt)};
  auto grad = AttentionGradOp::create(
      b, loc, gradTypes, inputs[0], inputs[1], inputs[2], inputs[3], inputs[4],
      inputs[5], keyStart, keyEnd, alibiSlopes, runtimeScale,
      MaskKindAttr::get(b.getContext(), mask), window,
      scale,
      p.softcap > 0 ? b.getF32FloatAttr(static_cast<float>(p.softcap))
                    : FloatAttr());
  for (auto [i, r] : llvm::enumerate(grad.getResults())) {
    auto store = bufferization::MaterializeInDestinationOp::create(
        b, loc, r, body->getArgument(firstOut + i));
    store.setWritable(true);
  }
  func::ReturnOp::create(b, loc);
  return module;
}
