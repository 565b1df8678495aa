//===- ScoreModEmitter.cpp - score_mod regions inside GPU kernels ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "ScoreModEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;

namespace {
LLVM::InlineAsmOp inlineAsm(OpBuilder &b, Location loc, Type result,
                            ValueRange operands, StringRef code,
                            StringRef constraints) {
  return LLVM::InlineAsmOp::create(b, loc, result, operands, code, constraints,
                                   /*has_side_effects=*/false,
                                   /*is_align_stack=*/false,
                                   LLVM::tailcallkind::TailCallKind::None,
                                   LLVM::AsmDialectAttr(), ArrayAttr());
}

Value approx(OpBuilder &b, Location loc, StringRef code, Value x) {
  return inlineAsm(b, loc, x.getType(), ValueRange{x}, code, "=f,f")
      .getResult(0);
}

/// Binds the block's arguments: the score, then the positions as index.
void bindArguments(OpBuilder &b, Location loc, Block &scoreMod, Value score,
                   ArrayRef<Value> positions, IRMapping &map) {
  map.map(scoreMod.getArgument(0), score);
  for (auto [arg, pos] :
       llvm::zip(scoreMod.getArguments().drop_front(), positions))
    map.map(arg, arith::IndexCastOp::create(b, loc, b.getIndexType(), pos));
}

/// Clones `op` for one element under `map`; math.tanh/exp/exp2 on f32
/// become their PTX approximations, math.absf abs.f32.
void cloneForElement(OpBuilder &b, Location loc, Operation &op,
                     IRMapping &map) {
  Value x =
      op.getNumOperands() ? map.lookupOrDefault(op.getOperand(0)) : Value();
  Value fast;
  if (isa<math::TanhOp>(op) && x.getType().isF32())
    fast = approx(b, loc, "tanh.approx.f32 $0, $1;", x);
  else if (isa<math::Exp2Op>(op) && x.getType().isF32())
    fast = approx(b, loc, "ex2.approx.ftz.f32 $0, $1;", x);
  else if (isa<math::ExpOp>(op) && x.getType().isF32())
    fast =
        approx(b, loc, "ex2.approx.ftz.f32 $0, $1;",
               arith::MulFOp::create(b, loc, x,
                                     arith::ConstantOp::create(
                                         b, loc, b.getF32FloatAttr(M_LOG2E))));
  else if (isa<math::AbsFOp>(op) && x.getType().isF32())
    // convert-gpu-to-nvvm turns math.absf (and llvm.fabs) into a libdevice
    // call, which the sm90a family's llvm.func kernel leaves unresolved.
    fast = approx(b, loc, "abs.f32 $0, $1;", x);
  if (fast) {
    map.map(op.getResult(0), fast);
    return;
  }
  b.clone(op, map);
}
} // namespace

Value mlir::attn::emitScoreModForElement(OpBuilder &b, Location loc,
                                         Block &scoreMod, Value score,
                                         ArrayRef<Value> positions) {
  IRMapping map;
  bindArguments(b, loc, scoreMod, score, positions, map);
  for (Operation &op : scoreMod.without_terminator())
    cloneForElement(b, loc, op, map);
  return map.lookupOrDefault(scoreMod.getTerminator()->getOperand(0));
}

std::array<Value, 2>
mlir::attn::emitScoreModForPair(OpBuilder &b, Location loc, Block &scoreMod,
                                std::array<Value, 2> scores,
                                std::array<ArrayRef<Value>, 2> positions) {
  if (!packTanhPairs())
    return {emitScoreModForElement(b, loc, scoreMod, scores[0], positions[0]),
            emitScoreModForElement(b, loc, scoreMod, scores[1], positions[1])};
  std::array<IRMapping, 2> maps;
  for (int i = 0; i < 2; ++i)
    bindArguments(b, loc, scoreMod, scores[i], positions[i], maps[i]);
  Type f32 = b.getF32Type();
  Type pair = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32});
  for (Operation &op : scoreMod.without_terminator()) {
    if (isa<math::TanhOp>(op) && op.getResult(0).getType().isF32()) {
      // One MUFU op for both elements: tanh.approx.f16x2 (the f32 form's
      // relative error is 2^-10.987 already; f16's 11-bit significand
      // about doubles it).
      Value x0 = maps[0].lookupOrDefault(op.getOperand(0));
      Value x1 = maps[1].lookupOrDefault(op.getOperand(0));
      auto asmOp = inlineAsm(b, loc, pair, ValueRange{x0, x1},
                             "{ .reg .b32 p; .reg .b16 lo, hi;\n"
                             "cvt.rn.f16x2.f32 p, $3, $2;\n"
                             "tanh.approx.f16x2 p, p;\n"
                             "mov.b32 {lo, hi}, p;\n"
                             "cvt.f32.f16 $0, lo;\n"
                             "cvt.f32.f16 $1, hi; }",
                             "=f,=f,f,f");
      for (int i = 0; i < 2; ++i)
        maps[i].map(op.getResult(0),
                    LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0),
                                                 ArrayRef<int64_t>{i}));
      continue;
    }
    for (IRMapping &map : maps)
      cloneForElement(b, loc, op, map);
  }
  Value yielded = scoreMod.getTerminator()->getOperand(0);
  return {maps[0].lookupOrDefault(yielded), maps[1].lookupOrDefault(yielded)};
}

Value mlir::attn::emitTanhApprox(OpBuilder &b, Location loc, Value x) {
  return approx(b, loc, "tanh.approx.f32 $0, $1;", x);
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

bool mlir::attn::packTanhPairs() {
  const char *e = std::getenv("ATTN_TANH_F16X2");
  return e && *e == '1';
}

std::string mlir::attn::unsupportedGpuScoreModOp(Block &scoreMod) {
  for (Operation &op : scoreMod.without_terminator()) {
    StringRef dialect = op.getDialect() ? op.getDialect()->getNamespace() : "";
    if (dialect == "arith")
      continue;
    if (isa<math::TanhOp, math::ExpOp, math::Exp2Op, math::AbsFOp>(op))
      continue;
    return op.getName().getStringRef().str();
  }
  return "";
}
