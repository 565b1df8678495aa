//===- ScoreModEmitter.cpp - score_mod regions inside GPU kernels ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "ScoreModEmitter.h"

#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"
#include "attn/Dialect/AttnGPU/Utils/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Clones `op` for one element under `map`; math.tanh/exp/exp2 on f32
/// become their PTX approximations, math.absf abs.f32.
void cloneForElement(OpBuilder &b, Location loc, Operation &op,
                     IRMapping &map) {
  Value x =
      op.getNumOperands() ? map.lookupOrDefault(op.getOperand(0)) : Value();
  Value fast;
  if (isa<math::TanhOp>(op) && x.getType().isF32())
    fast = attn_gpu::TanhOp::create(b, loc, x);
  else if (isa<math::Exp2Op>(op) && x.getType().isF32())
    fast = attn_gpu::Exp2Op::create(b, loc, x);
  else if (isa<math::ExpOp>(op) && x.getType().isF32())
    fast = attn_gpu::Exp2Op::create(
        b, loc,
        arith::MulFOp::create(
            b, loc, x,
            arith::ConstantOp::create(b, loc, b.getF32FloatAttr(M_LOG2E))));
  else if (isa<math::AbsFOp>(op) && x.getType().isF32())
    fast = nvvm::KernelBuilder(b, loc).fabs(x);
  if (fast) {
    map.map(op.getResult(0), fast);
    return;
  }
  b.clone(op, map);
}
/// The ops of `scoreMod` that `roots` depend on.
llvm::SmallPtrSet<Operation *, 16> sliceOf(Block &scoreMod,
                                           ArrayRef<Value> roots) {
  llvm::SmallPtrSet<Operation *, 16> slice;
  SmallVector<Value> work(roots.begin(), roots.end());
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (def && def->getBlock() == &scoreMod && slice.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return slice;
}
} // namespace

ScoreModTileEmitter::ScoreModTileEmitter(OpBuilder &b, Location loc,
                                         Block &scoreMod, Value batch,
                                         Value head, ArrayRef<Value> rows,
                                         Value keyBase,
                                         ArrayRef<Value> roots)
    : b(b), loc(loc), scoreMod(scoreMod), batch(batch), head(head),
      keyBase(keyBase), roots(roots.begin(), roots.end()),
      rows(rows.begin(), rows.end()), rowStates(rows.size()) {
  if (this->roots.empty())
    this->roots.push_back(scoreMod.getTerminator()->getOperand(0));
  needed = sliceOf(scoreMod, this->roots);
  for (BlockArgument arg : scoreMod.getArguments()) {
    readsScore[arg] = arg.getArgNumber() == 0;
    readsKey[arg] = arg.getArgNumber() == 4;
  }
  for (Operation &op : scoreMod.without_terminator()) {
    bool score = false, key = false;
    for (Value operand : op.getOperands()) {
      score |= readsScore.lookup(operand);
      key |= readsKey.lookup(operand);
    }
    for (Value result : op.getResults()) {
      readsScore[result] = score;
      readsKey[result] = key;
    }
  }
}

std::optional<ScoreModTileEmitter::Affine>
ScoreModTileEmitter::lookupAffine(Value v, unsigned rowSlot) const {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    switch (arg.getArgNumber()) {
    case 1:
      return Affine{batch};
    case 2:
      return Affine{head};
    case 3:
      return Affine{rows[rowSlot]};
    case 4:
      return Affine{keyBase, 1, 0};
    default:
      return std::nullopt;
    }
  }
  const RowState &rs = rowStates[rowSlot];
  auto it = rs.affine.find(v);
  if (it == rs.affine.end())
    return std::nullopt;
  return it->second;
}

Value ScoreModTileEmitter::combineBases(Value x, Value y, bool subtract) {
  if (!y)
    return x;
  if (!x)
    return subtract ? arith::SubIOp::create(
                          b, loc,
                          arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0)),
                          y)
                    : y;
  if (subtract)
    return arith::SubIOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

std::optional<ScoreModTileEmitter::Affine>
ScoreModTileEmitter::affineOf(Operation &op, unsigned rowSlot) {
  // Integers (and f32 values of integers) below 2^24 are exact in f32.
  constexpr double kExact = 16777216.0;
  // Integers narrower than 32 bits (i1 flags, i8 ...) stay as written:
  // materialize builds i32 and wider.
  auto wideInteger = [](Type t) {
    return t.isIndex() || (t.isInteger() && t.getIntOrFloatBitWidth() >= 32);
  };
  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      if (wideInteger(c.getType()) &&
          std::abs(i.getValue().getSExtValue()) < (int64_t(1) << 24))
        return Affine{Value(), 0, i.getValue().getSExtValue()};
    if (auto f = dyn_cast<FloatAttr>(c.getValue())) {
      double v = f.getValueAsDouble();
      if (v == std::trunc(v) && std::abs(v) < kExact)
        return Affine{Value(), 0, static_cast<int64_t>(v), true};
    }
    return std::nullopt;
  }
  auto operand = [&](unsigned i) {
    return lookupAffine(op.getOperand(i), rowSlot);
  };
  auto isF32 = [](Type t) { return t.isF32() || t.isF64(); };
  // Signed conversions only: a position difference may be negative, and
  // the unsigned ones would read it as a large number.
  if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(op)) {
    auto a = operand(0);
    if (!a || a->isFloat || !wideInteger(op.getResult(0).getType()))
      return std::nullopt;
    return a;
  }
  if (isa<arith::SIToFPOp>(op)) {
    auto a = operand(0);
    if (!a || a->isFloat || !isF32(op.getResult(0).getType()))
      return std::nullopt;
    a->isFloat = true;
    return a;
  }
  bool subtract = isa<arith::SubIOp, arith::SubFOp>(op);
  bool isFloat = isa<arith::AddFOp, arith::SubFOp>(op);
  if (isa<arith::AddIOp, arith::SubIOp, arith::AddFOp, arith::SubFOp>(op)) {
    auto x = operand(0), y = operand(1);
    if (!x || !y || x->isFloat != isFloat || y->isFloat != isFloat)
      return std::nullopt;
    int64_t sign = subtract ? -1 : 1;
    return Affine{combineBases(x->base, y->base, subtract),
                  x->alpha + sign * y->alpha, x->beta + sign * y->beta,
                  isFloat};
  }
  if (isa<arith::NegFOp>(op)) {
    auto x = operand(0);
    if (!x || !x->isFloat)
      return std::nullopt;
    return Affine{combineBases(Value(), x->base, /*subtract=*/true), -x->alpha,
                  -x->beta, true};
  }
  if (isa<arith::MulIOp>(op)) {
    auto x = operand(0), y = operand(1);
    if (!x || !y)
      return std::nullopt;
    if (x->base || x->alpha)
      std::swap(x, y);
    if (x->base || x->alpha || std::abs(x->beta) > 4096)
      return std::nullopt; // not a product with a small constant
    int64_t k = x->beta;
    Value base =
        y->base ? Value(arith::MulIOp::create(
                      b, loc, y->base,
                      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(k))))
                : Value();
    return Affine{base, y->alpha * k, y->beta * k};
  }
  return std::nullopt;
}

Value ScoreModTileEmitter::materialize(const Affine &a, Type type,
                                       unsigned rowSlot, int64_t keyOffset) {
  int64_t c = a.alpha * keyOffset + a.beta;
  if (a.isFloat) {
    Value offset = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(type, static_cast<double>(c)));
    if (!a.base)
      return offset;
    Value &converted = rowStates[rowSlot].floatBase[a.base];
    if (!converted)
      converted = arith::SIToFPOp::create(b, loc, type, a.base);
    return c ? Value(arith::AddFOp::create(b, loc, converted, offset))
             : converted;
  }
  Value base = a.base ? a.base
                      : Value(arith::ConstantOp::create(
                            b, loc, b.getI32IntegerAttr(0)));
  Value sum =
      c ? Value(arith::AddIOp::create(
              b, loc, base,
              arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(c))))
        : base;
  if (type.isIndex())
    return arith::IndexCastOp::create(b, loc, type, sum);
  if (type.getIntOrFloatBitWidth() > 32)
    return arith::ExtSIOp::create(b, loc, type, sum);
  return sum;
}

Value ScoreModTileEmitter::operandFor(Value v, unsigned rowSlot,
                                      int64_t keyOffset, IRMapping &element) {
  if (Value x = element.lookupOrNull(v))
    return x;
  RowState &rs = rowStates[rowSlot];
  if (Value x = rs.values.lookupOrNull(v))
    return x;
  if (auto a = lookupAffine(v, rowSlot)) {
    Value m = materialize(*a, v.getType(), rowSlot, keyOffset);
    if (a->alpha == 0)
      rs.values.map(v, m);
    else
      element.map(v, m);
    return m;
  }
  return v; // defined above the region
}

void ScoreModTileEmitter::emitRowLevel(unsigned rowSlot) {
  RowState &rs = rowStates[rowSlot];
  rs.emitted = true;
  IRMapping unused;
  for (Operation &op : scoreMod.without_terminator()) {
    Value result = op.getResult(0);
    if (readsScore.lookup(result) || !needed.contains(&op))
      continue;
    if (auto a = affineOf(op, rowSlot)) {
      rs.affine[result] = *a;
      continue;
    }
    if (readsKey.lookup(result))
      continue; // per element
    for (Value operand : op.getOperands())
      rs.values.map(operand, operandFor(operand, rowSlot, 0, unused));
    cloneForElement(b, loc, op, rs.values);
  }
}

Value ScoreModTileEmitter::rowValue(unsigned rowSlot, Value target) {
  if (!rowStates[rowSlot].emitted)
    emitRowLevel(rowSlot);
  IRMapping unused;
  return operandFor(target, rowSlot, 0, unused);
}

Value ScoreModTileEmitter::emit(Value score, unsigned rowSlot,
                                int64_t keyOffset, Value target) {
  RowState &rs = rowStates[rowSlot];
  if (!rs.emitted)
    emitRowLevel(rowSlot);
  IRMapping element;
  if (score)
    element.map(scoreMod.getArgument(0), score);
  for (Operation &op : scoreMod.without_terminator()) {
    Value result = op.getResult(0);
    if (!needed.contains(&op) || rs.affine.count(result) ||
        rs.values.contains(result))
      continue;
    for (Value operand : op.getOperands())
      element.map(operand, operandFor(operand, rowSlot, keyOffset, element));
    cloneForElement(b, loc, op, element);
  }
  return operandFor(target ? target : roots.front(), rowSlot, keyOffset,
                    element);
}

/// Whether `v`, a value of `scoreMod`, depends on one of its `arguments`.
static bool dependsOn(Value v, Block &scoreMod,
                      ArrayRef<BlockArgument> arguments) {
  auto isArgument = [&](Value x) {
    auto arg = dyn_cast<BlockArgument>(x);
    return arg && llvm::is_contained(arguments, arg);
  };
  return isArgument(v) ||
         llvm::any_of(sliceOf(scoreMod, v), [&](Operation *op) {
           return llvm::any_of(op->getOperands(), isArgument);
         });
}

std::optional<AdditiveScoreMod>
mlir::attn::matchAdditiveScoreMod(Block &scoreMod) {
  BlockArgument score = scoreMod.getArgument(0), key = scoreMod.getArgument(4);
  Operation *yielded = scoreMod.getTerminator()->getOperand(0).getDefiningOp();
  if (!yielded || !isa<arith::AddFOp, arith::SubFOp>(yielded))
    return std::nullopt;
  Value lhs = yielded->getOperand(0), rhs = yielded->getOperand(1);
  AdditiveScoreMod match;
  if (lhs == score)
    match = {rhs, Value(), isa<arith::SubFOp>(yielded) ? -1.0 : 1.0};
  else if (rhs == score && isa<arith::AddFOp>(yielded))
    match = {lhs, Value(), 1.0};
  else
    return std::nullopt;
  if (dependsOn(match.perKey, scoreMod, {score}))
    return std::nullopt;
  if (auto mul = match.perKey.getDefiningOp<arith::MulFOp>()) {
    for (auto [r, y] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())})
      if (!dependsOn(r, scoreMod, {key})) {
        match.rowFactor = r;
        match.perKey = y;
        break;
      }
  }
  return match;
}

std::optional<std::pair<double, double>>
mlir::attn::matchSoftcap(Block &scoreMod) {
  auto constant = [](Value v) -> std::optional<double> {
    if (auto c = v.getDefiningOp<arith::ConstantOp>())
      if (auto f = dyn_cast<FloatAttr>(c.getValue()))
        return f.getValueAsDouble();
    return std::nullopt;
  };
  // x · c or c · x with c constant: {x, c}.
  auto scaled = [&](Value v) -> std::optional<std::pair<Value, double>> {
    auto mul = v.getDefiningOp<arith::MulFOp>();
    if (!mul)
      return std::nullopt;
    if (auto c = constant(mul.getRhs()))
      return std::make_pair(mul.getLhs(), *c);
    if (auto c = constant(mul.getLhs()))
      return std::make_pair(mul.getRhs(), *c);
    return std::nullopt;
  };
  auto outer = scaled(scoreMod.getTerminator()->getOperand(0));
  if (!outer || outer->second <= 0)
    return std::nullopt;
  auto tanh = outer->first.getDefiningOp<math::TanhOp>();
  if (!tanh)
    return std::nullopt;
  auto inner = scaled(tanh.getOperand());
  if (!inner || inner->first != scoreMod.getArgument(0))
    return std::nullopt;
  return std::make_pair(inner->second, outer->second);
}
