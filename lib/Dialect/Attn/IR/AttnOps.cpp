//===- AttnOps.cpp - attn operation verifiers -----------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Renders a dimension the way it is spelled in IR ("?" when dynamic).
std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

/// True when two dimensions may be equal (either is dynamic, or they agree).
bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Checks `actual` against `expected` and names both operands on mismatch.
LogicalResult checkDim(Operation *op, StringRef what, StringRef name,
                       int64_t actual, StringRef refName, int64_t expected) {
  if (dimsCompatible(actual, expected))
    return success();
  return op->emitOpError() << "expected " << name << " " << what << " ("
                           << dimStr(actual) << ") to match " << refName << " "
                           << what << " (" << dimStr(expected) << ")";
}

LogicalResult checkRank(Operation *op, StringRef name, RankedTensorType type,
                        int64_t rank) {
  if (type.getRank() == rank)
    return success();
  return op->emitOpError() << "expected " << name << " to have rank " << rank
                           << ", got rank " << type.getRank() << " ("
                           << type << ")";
}

/// The scale: the attribute, when given, is positive and finite, and not
/// given with the run-time operand.
LogicalResult checkScale(Operation *op, std::optional<APFloat> scale,
                         Value runtimeScale) {
  if (scale && runtimeScale)
    return op->emitOpError()
           << "expected either the scale attribute or the run-time scale "
              "operand, not both";
  if (!scale)
    return success();
  double s = scale->convertToDouble();
  if (!std::isfinite(s))
    return op->emitOpError() << "expected a finite scale, got " << s;
  if (s <= 0.0)
    return op->emitOpError() << "expected a positive scale, got " << s;
  return success();
}
} // namespace

MaskBand mlir::attn::getMaskBand(MaskKind kind,
                                 std::optional<ArrayRef<int64_t>> window,
                                 int64_t seqQ, int64_t seqKv) {
  MaskBand band;
  band.topLeft = kind == MaskKind::causal_top_left ||
                 kind == MaskKind::sliding_top_left;
  switch (kind) {
  case MaskKind::none:
    break;
  case MaskKind::causal:
  case MaskKind::causal_top_left:
    band.right = 0;
    break;
  case MaskKind::sliding:
  case MaskKind::sliding_top_left:
    if (window && window->size() == 2) {
      band.left = (*window)[0];
      band.right = (*window)[1];
    }
    break;
  }
  // |key - d(row)| < Nq + Nk: a wider side bounds nothing, and leaving it
  // out keeps d(row) + right from overflowing (the GPU kernels' i32).
  int64_t wide = ShapedType::isDynamic(seqQ) || ShapedType::isDynamic(seqKv)
                     ? kMaxMaskWindow
                     : std::min(seqQ + seqKv, kMaxMaskWindow);
  if (band.left >= wide)
    band.left = -1;
  if (band.right >= wide)
    band.right = -1;
  return band;
}

bool mlir::attn::isScoreModOp(Operation &op) {
  if (isa_and_nonnull<arith::ArithDialect>(op.getDialect()))
    return true;
  return isa<math::TanhOp, math::ExpOp, math::Exp2Op, math::AbsFOp>(op) &&
         op.getOperand(0).getType().isF32();
}

Value mlir::attn::buildMaskVisible(OpBuilder &b, Location loc,
                                   const MaskBand &band, Value row, Value col,
                                   Value seqQ, Value seqKv) {
  if (band.isNone())
    return Value();
  // d(i): the key row aligned with query row i.
  Value diag = row;
  if (!band.topLeft)
    diag = arith::AddIOp::create(
        b, loc, row, arith::SubIOp::create(b, loc, seqKv, seqQ));
  Value visible;
  auto both = [&](Value cond) {
    visible = visible ? arith::AndIOp::create(b, loc, visible, cond) : cond;
  };
  // getMaskBand bounds the sides by kMaxMaskWindow: d(i) ± side cannot
  // overflow.
  auto shifted = [&](int64_t by) -> Value {
    if (by == 0)
      return diag;
    return arith::AddIOp::create(b, loc, diag,
                                 arith::ConstantIndexOp::create(b, loc, by));
  };
  if (band.hasRight())
    both(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, col,
                               shifted(band.right)));
  if (band.hasLeft())
    both(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, col,
                               shifted(-band.left)));
  return visible;
}

Value mlir::attn::buildAlibiTerm(OpBuilder &b, Location loc,
                                 const MaskBand &band, Value slope, Value row,
                                 Value col, Value seqQ, Value seqKv) {
  Value diag = row;
  if (!band.topLeft)
    diag = arith::AddIOp::create(
        b, loc, row, arith::SubIOp::create(b, loc, seqKv, seqQ));
  Value dist = arith::SubIOp::create(b, loc, diag, col);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), dist);
  Value asFloat = arith::SIToFPOp::create(b, loc, b.getF32Type(), asInt);
  return arith::MulFOp::create(b, loc, slope,
                               math::AbsFOp::create(b, loc, asFloat));
}

Value mlir::attn::inlineScoreMod(OpBuilder &b, Block &scoreMod, Value score,
                                 ValueRange positions) {
  IRMapping map;
  map.map(scoreMod.getArgument(0), score);
  for (auto [arg, pos] :
       llvm::zip(scoreMod.getArguments().drop_front(), positions))
    map.map(arg, pos);
  for (Operation &op : scoreMod.without_terminator())
    b.clone(op, map);
  return map.lookupOrDefault(scoreMod.getTerminator()->getOperand(0));
}

namespace {
/// The mask kind and the window attribute agree: sliding kinds need
/// [left, right] with each >= -1, the others take no window.
LogicalResult verifyMaskWindow(Operation *op, MaskKind kind,
                               std::optional<ArrayRef<int64_t>> window) {
  bool sliding =
      kind == MaskKind::sliding || kind == MaskKind::sliding_top_left;
  if (!sliding) {
    if (window)
      return op->emitOpError()
             << "expected no window with mask <" << stringifyMaskKind(kind)
             << ">: window [left, right] goes with <sliding> or "
                "<sliding_top_left>";
    return success();
  }
  if (!window)
    return op->emitOpError() << "expected window [left, right] with mask <"
                             << stringifyMaskKind(kind) << ">";
  if (window->size() != 2)
    return op->emitOpError()
           << "expected window to have 2 entries [left, right], got "
           << window->size();
  for (auto [name, v] : {std::pair<StringRef, int64_t>{"left", (*window)[0]},
                         {"right", (*window)[1]}})
    if (v < -1)
      return op->emitOpError() << "expected window " << name
                               << " to be >= 0 (or -1 for unbounded), got "
                               << v;
  return success();
}

/// A score_mod block: (f32, index, index, index, index), ending in
/// attn.yield of one f32.
LogicalResult verifyScoreModRegion(Operation *op, Region &region) {
  if (region.empty())
    return success();
  Block &block = region.front();
  SmallVector<Type> args(block.getArgumentTypes());
  auto f32 = Float32Type::get(op->getContext());
  auto index = IndexType::get(op->getContext());
  bool ok = args.size() == 5 && args[0] == f32;
  for (Type t : ArrayRef<Type>(args).drop_front())
    ok = ok && t == index;
  if (!ok) {
    InFlightDiagnostic d = op->emitOpError()
                           << "expected score_mod arguments (score: f32, b: "
                              "index, h: index, q_idx: index, kv_idx: "
                              "index), got (";
    llvm::interleaveComma(args, d);
    return d << ")";
  }
  if (!isa<YieldOp>(block.getTerminator()))
    return op->emitOpError() << "expected score_mod to end in attn.yield";
  for (Operation &inner : block.without_terminator())
    if (!isScoreModOp(inner)) {
      InFlightDiagnostic d = op->emitOpError()
                             << "expected score_mod to hold only "
                             << kScoreModOps << ", got '" << inner.getName()
                             << "'";
      d.attachNote(inner.getLoc()) << "this op";
      return d;
    }
  return success();
}
} // namespace

void AttentionOp::expandScoreModSugar() {
  std::optional<APFloat> cap = getSoftcap();
  if (!cap)
    return;
  MLIRContext *ctx = getContext();
  OpBuilder b(ctx);
  Location loc = getLoc();
  Type index = b.getIndexType();
  Block *block = b.createBlock(&getScoreMod(), {},
                               {b.getF32Type(), index, index, index, index},
                               SmallVector<Location>(5, loc));
  // cap * tanh(score * (1 / cap)): a multiply, not a division (which is
  // a slow sequence on the GPU).
  double c = cap->convertToDouble();
  auto cst = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc,
                                     b.getF32FloatAttr(static_cast<float>(v)));
  };
  Value x = arith::MulFOp::create(b, loc, block->getArgument(0), cst(1.0 / c));
  Value t = math::TanhOp::create(b, loc, x);
  YieldOp::create(b, loc, arith::MulFOp::create(b, loc, t, cst(c)));
  removeSoftcapAttr();
}

/// The compile-time scale of an op with an optional `scale` attribute and
/// run-time operand: the attribute, 1/sqrt(D) when neither is given, none
/// when the operand is.
static std::optional<double> staticScale(std::optional<APFloat> attr,
                                         Value runtimeScale, int64_t headDim) {
  if (runtimeScale)
    return std::nullopt;
  if (attr)
    return attr->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(headDim));
}

static Value buildScaleValue(OpBuilder &b, Location loc,
                             std::optional<double> known, Value runtimeScale) {
  if (runtimeScale)
    return runtimeScale;
  return arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(static_cast<float>(*known)));
}

std::optional<double> AttentionOp::getStaticScale() {
  return staticScale(getScale(), getRuntimeScale(), getHeadDim());
}

Value AttentionOp::buildScale(OpBuilder &b, Location loc) {
  return buildScaleValue(b, loc, getStaticScale(), getRuntimeScale());
}

namespace {
/// The checks attn.attention and attn.attention_grad share: Q, K, V and O
/// (the forward's output) and how their shapes relate.
LogicalResult verifyAttentionOperands(Operation *op, RankedTensorType q,
                                      RankedTensorType k, RankedTensorType v,
                                      RankedTensorType o) {
  auto emitOpError = [&]() { return op->emitOpError(); };
  if (failed(checkRank(op, "query", q, 4)) ||
      failed(checkRank(op, "key", k, 4)) ||
      failed(checkRank(op, "value", v, 4)) ||
      failed(checkRank(op, "output", o, 4)))
    return failure();

  // Element types: one type for Q, K, V and O.
  Type elt = q.getElementType();
  auto checkElt = [&](StringRef name, RankedTensorType t) -> LogicalResult {
    if (t.getElementType() == elt)
      return success();
    return emitOpError() << "expected " << name << " element type ("
                         << t.getElementType()
                         << ") to match query element type (" << elt << ")";
  };
  if (failed(checkElt("key", k)) || failed(checkElt("value", v)) ||
      failed(checkElt("output", o)))
    return failure();

  // Batch.
  if (failed(checkDim(op, "batch", "key", k.getDimSize(0), "query",
                      q.getDimSize(0))) ||
      failed(checkDim(op, "batch", "value", v.getDimSize(0), "query",
                      q.getDimSize(0))) ||
      failed(checkDim(op, "batch", "output", o.getDimSize(0), "query",
                      q.getDimSize(0))))
    return failure();

  // Heads: value and key share kv-heads; query heads are a multiple of them.
  if (failed(checkDim(op, "heads", "value", v.getDimSize(1), "key",
                      k.getDimSize(1))) ||
      failed(checkDim(op, "heads", "output", o.getDimSize(1), "query",
                      q.getDimSize(1))))
    return failure();
  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (!ShapedType::isDynamic(hq) && hq <= 0)
    return emitOpError() << "expected query heads to be positive, got " << hq;
  if (!ShapedType::isDynamic(hkv) && hkv <= 0)
    return emitOpError() << "expected key heads to be positive, got " << hkv;
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      hq % hkv != 0)
    return emitOpError() << "expected query heads (" << hq
                         << ") to be a multiple of key heads (" << hkv << ")";

  // Sequence lengths.
  if (failed(checkDim(op, "sequence length", "value", v.getDimSize(2), "key",
                      k.getDimSize(2))) ||
      failed(checkDim(op, "sequence length", "output", o.getDimSize(2),
                      "query", q.getDimSize(2))))
    return failure();

  // Head dims: static, because they specialise every kernel.
  for (auto [name, t] : {std::pair<StringRef, RankedTensorType>{"query", q},
                         {"key", k},
                         {"value", v},
                         {"output", o}}) {
    if (ShapedType::isDynamic(t.getDimSize(3)))
      return emitOpError() << "expected a static head dim in " << name
                           << " (" << t << ")";
  }
  if (failed(checkDim(op, "head dim", "key", k.getDimSize(3), "query",
                      q.getDimSize(3))) ||
      failed(checkDim(op, "head dim", "output", o.getDimSize(3), "value",
                      v.getDimSize(3))))
    return failure();
  return success();
}

/// Checks that `t` has the shape of `ref`, dim by dim, naming both.
LogicalResult checkSameShape(Operation *op, StringRef name,
                             RankedTensorType t, StringRef refName,
                             RankedTensorType ref) {
  static const char *what[] = {"batch", "heads", "sequence length",
                               "head dim"};
  if (failed(checkRank(op, name, t, ref.getRank())))
    return failure();
  for (int64_t i = 0; i < ref.getRank(); ++i)
    if (failed(checkDim(op, what[i], name, t.getDimSize(i), refName,
                        ref.getDimSize(i))))
      return failure();
  return success();
}
} // namespace

namespace {
/// Packed variable-length operands: Q [Tq, Hq, D], K [Tk, Hkv, D],
/// V [Tk, Hkv, Dv], O [Tq, Hq, Dv], LSE [Hq, Tq], cu_seqlens i32 [B + 1]
/// and max_seqlen [Mq, Mk].
LogicalResult verifyVarlenOperands(AttentionOp op) {
  Operation *o = op.getOperation();
  RankedTensorType q = op.getQueryType(), k = op.getKeyType(),
                   v = op.getValueType(), out = op.getOutputType();
  if (!op.getCuSeqlensKv())
    return op.emitOpError()
           << "expected cu_seqlens_kv with cu_seqlens_q (both or neither)";
  if (failed(checkRank(o, "query", q, 3)) ||
      failed(checkRank(o, "key", k, 3)) ||
      failed(checkRank(o, "value", v, 3)) ||
      failed(checkRank(o, "output", out, 3)))
    return failure();
  Type elt = q.getElementType();
  for (auto [name, t] : {std::pair<StringRef, RankedTensorType>{"key", k},
                         {"value", v},
                         {"output", out}})
    if (t.getElementType() != elt)
      return op.emitOpError()
             << "expected " << name << " element type (" << t.getElementType()
             << ") to match query element type (" << elt << ")";
  if (failed(checkDim(o, "heads", "value", v.getDimSize(1), "key",
                      k.getDimSize(1))) ||
      failed(checkDim(o, "heads", "output", out.getDimSize(1), "query",
                      q.getDimSize(1))) ||
      failed(checkDim(o, "tokens", "value", v.getDimSize(0), "key",
                      k.getDimSize(0))) ||
      failed(checkDim(o, "tokens", "output", out.getDimSize(0), "query",
                      q.getDimSize(0))))
    return failure();
  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (!ShapedType::isDynamic(hq) && hq <= 0)
    return op.emitOpError() << "expected query heads to be positive, got "
                            << hq;
  if (!ShapedType::isDynamic(hkv) && hkv <= 0)
    return op.emitOpError() << "expected key heads to be positive, got "
                            << hkv;
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      hq % hkv != 0)
    return op.emitOpError() << "expected query heads (" << hq
                            << ") to be a multiple of key heads (" << hkv
                            << ")";
  for (auto [name, t] : {std::pair<StringRef, RankedTensorType>{"query", q},
                         {"key", k},
                         {"value", v},
                         {"output", out}})
    if (ShapedType::isDynamic(t.getDimSize(2)))
      return op.emitOpError() << "expected a static head dim in " << name
                              << " (" << t << ")";
  if (failed(checkDim(o, "head dim", "key", k.getDimSize(2), "query",
                      q.getDimSize(2))) ||
      failed(checkDim(o, "head dim", "output", out.getDimSize(2), "value",
                      v.getDimSize(2))))
    return failure();
  auto cuQ = cast<RankedTensorType>(op.getCuSeqlensQ().getType());
  auto cuK = cast<RankedTensorType>(op.getCuSeqlensKv().getType());
  if (failed(checkRank(o, "cu_seqlens_q", cuQ, 1)) ||
      failed(checkRank(o, "cu_seqlens_kv", cuK, 1)))
    return failure();
  if (!dimsCompatible(cuQ.getDimSize(0), cuK.getDimSize(0)))
    return op.emitOpError() << "expected cu_seqlens_q and cu_seqlens_kv to "
                               "have the same size (batch + 1), got "
                            << dimStr(cuQ.getDimSize(0)) << " and "
                            << dimStr(cuK.getDimSize(0));
  if (!ShapedType::isDynamic(cuQ.getDimSize(0)) && cuQ.getDimSize(0) < 2)
    return op.emitOpError() << "expected cu_seqlens of size batch + 1 >= 2, "
                               "got "
                            << cuQ.getDimSize(0);
  std::optional<ArrayRef<int64_t>> maxLen = op.getMaxSeqlen();
  if (!maxLen)
    return op.emitOpError() << "expected max [max_seqlen_q, max_seqlen_kv] "
                               "with cu_seqlens";
  if (maxLen->size() != 2 || (*maxLen)[0] < 1 || (*maxLen)[1] < 1)
    return op.emitOpError() << "expected max to be two positive lengths "
                               "[max_seqlen_q, max_seqlen_kv]";
  // No sequence is longer than the packed tokens, nor than an i32
  // cu_seqlens entry can count.
  for (auto [name, m, tokens] :
       {std::tuple<StringRef, int64_t, int64_t>{"max_seqlen_q", (*maxLen)[0],
                                                q.getDimSize(0)},
        {"max_seqlen_kv", (*maxLen)[1], k.getDimSize(0)}}) {
    if (!ShapedType::isDynamic(tokens) && m > std::max<int64_t>(tokens, 1))
      return op.emitOpError()
             << "expected " << name << " (" << m
             << ") to be at most the packed tokens (" << tokens << ")";
    if (m > std::numeric_limits<int32_t>::max())
      return op.emitOpError() << "expected " << name << " (" << m
                              << ") to fit the i32 cu_seqlens";
  }
  if (op.getBias())
    return op.emitOpError() << "expected no bias with cu_seqlens (a packed "
                               "batch has no [B, H, Nq, Nk] bias layout)";
  if (Value lse = op.getLse()) {
    auto l = cast<RankedTensorType>(lse.getType());
    if (failed(checkRank(o, "lse", l, 2)) ||
        failed(checkDim(o, "heads", "lse", l.getDimSize(0), "query",
                        q.getDimSize(1))) ||
        failed(checkDim(o, "tokens", "lse", l.getDimSize(1), "query",
                        q.getDimSize(0))))
      return failure();
  }
  return success();
}

/// bias [B|1, Hq|1, Nq, Nk] of the query's element type.
LogicalResult verifyBias(AttentionOp op) {
  auto bias = cast<RankedTensorType>(op.getBias().getType());
  RankedTensorType q = op.getQueryType(), k = op.getKeyType();
  Operation *o = op.getOperation();
  if (failed(checkRank(o, "bias", bias, 4)))
    return failure();
  if (bias.getElementType() != q.getElementType())
    return op.emitOpError() << "expected bias element type ("
                            << bias.getElementType()
                            << ") to match query element type ("
                            << q.getElementType() << ")";
  static const char *what[] = {"batch", "heads"};
  for (int i = 0; i < 2; ++i) {
    int64_t d = bias.getDimSize(i);
    if (d != 1 && !dimsCompatible(d, q.getDimSize(i)))
      return op.emitOpError()
             << "expected bias " << what[i] << " (" << dimStr(d)
             << ") to be 1 (broadcast) or query " << what[i] << " ("
             << dimStr(q.getDimSize(i)) << ")";
  }
  if (failed(checkDim(o, "sequence length", "bias", bias.getDimSize(2),
                      "query", q.getDimSize(2))) ||
      failed(checkDim(o, "sequence length", "bias", bias.getDimSize(3), "key",
                      k.getDimSize(2))))
    return failure();
  return success();
}

/// key_range (%start, %end): i32 [B] each, B the query's batch.
LogicalResult verifyKeyRange(Operation *op, Value start, Value end,
                             RankedTensorType q) {
  if (!start && !end)
    return success();
  if (!start || !end)
    return op->emitOpError() << "expected key_start with key_end (both or "
                                "neither)";
  for (auto [name, v] : {std::pair<StringRef, Value>{"key_start", start},
                         {"key_end", end}}) {
    auto t = cast<RankedTensorType>(v.getType());
    if (failed(checkRank(op, name, t, 1)) ||
        failed(checkDim(op, "batch", name, t.getDimSize(0), "query",
                        q.getDimSize(0))))
      return failure();
  }
  return success();
}
/// alibi_slopes: f32 [Hq] (every batch entry) or [B, Hq]; `batch` is the
/// query's batch, or the sequences of a packed (varlen) batch.
LogicalResult verifyAlibiSlopes(Operation *op, Value slopes, int64_t batch,
                                int64_t headsQ) {
  if (!slopes)
    return success();
  auto t = cast<RankedTensorType>(slopes.getType());
  if (t.getRank() != 1 && t.getRank() != 2)
    return op->emitOpError() << "expected alibi_slopes of rank 1 ([Hq]) or 2 "
                                "([B, Hq]), got rank "
                             << t.getRank();
  if (t.getRank() == 2 &&
      failed(checkDim(op, "batch", "alibi_slopes", t.getDimSize(0), "query",
                      batch)))
    return failure();
  return checkDim(op, "heads", "alibi_slopes", t.getDimSize(t.getRank() - 1),
                  "query", headsQ);
}
} // namespace

LogicalResult AttentionOp::verify() {
  Operation *op = getOperation();
  RankedTensorType q = getQueryType();
  if (getCuSeqlensKv() && !getCuSeqlensQ())
    return emitOpError()
           << "expected cu_seqlens_q with cu_seqlens_kv (both or neither)";
  if (getMaxSeqlen() && !getCuSeqlensQ())
    return emitOpError() << "expected max_seqlen only with cu_seqlens";
  if (isVarlen()) {
    if (getKeyStart() || getKeyEnd())
      return emitOpError() << "expected no key_range with cu_seqlens (each "
                              "packed sequence has its own keys already)";
    if (failed(verifyVarlenOperands(*this)))
      return failure();
    int64_t sequences = getCuSeqlensQ().getType().getDimSize(0);
    if (failed(verifyMaskWindow(op, getMask(), getWindow())) ||
        failed(verifyAlibiSlopes(op, getAlibiSlopes(),
                                 ShapedType::isDynamic(sequences)
                                     ? ShapedType::kDynamic
                                     : sequences - 1,
                                 q.getDimSize(1))))
      return failure();
    if (std::optional<APFloat> cap = getSoftcap()) {
      double c = cap->convertToDouble();
      if (!std::isfinite(c) || c <= 0.0)
        return emitOpError() << "expected a positive finite softcap, got "
                             << c;
    }
    return checkScale(op, getScale(), getRuntimeScale());
  }
  if (failed(verifyAttentionOperands(op, q, getKeyType(), getValueType(),
                                     getOutputType())))
    return failure();
  if (getBias() && failed(verifyBias(*this)))
    return failure();
  if (failed(verifyKeyRange(op, getKeyStart(), getKeyEnd(), q)) ||
      failed(verifyAlibiSlopes(op, getAlibiSlopes(), q.getDimSize(0),
                               q.getDimSize(1))))
    return failure();

  // Optional LSE: [B, Hq, Nq] f32.
  if (Value lse = getLse()) {
    auto l = cast<RankedTensorType>(lse.getType());
    if (failed(checkRank(op, "lse", l, 3)))
      return failure();
    for (int i = 0; i < 3; ++i) {
      static const char *what[] = {"batch", "heads", "sequence length"};
      if (failed(checkDim(op, what[i], "lse", l.getDimSize(i), "query",
                          q.getDimSize(i))))
        return failure();
    }
  }
  if (failed(verifyMaskWindow(op, getMask(), getWindow())))
    return failure();
  if (std::optional<APFloat> cap = getSoftcap()) {
    double c = cap->convertToDouble();
    if (!std::isfinite(c) || c <= 0.0)
      return emitOpError() << "expected a positive finite softcap, got " << c;
  }
  return checkScale(op, getScale(), getRuntimeScale());
}

LogicalResult AttentionOp::verifyRegions() {
  if (getSoftcap() && !getScoreMod().empty())
    return emitOpError()
           << "expected either softcap or a score_mod region, not both";
  return verifyScoreModRegion(getOperation(), getScoreMod());
}

std::optional<double> AttentionGradOp::getStaticScale() {
  return staticScale(getScale(), getRuntimeScale(), getHeadDim());
}

Value AttentionGradOp::buildScale(OpBuilder &b, Location loc) {
  return buildScaleValue(b, loc, getStaticScale(), getRuntimeScale());
}

LogicalResult AttentionGradOp::verify() {
  Operation *op = getOperation();
  RankedTensorType q = getQueryType(), k = getKeyType(), v = getValueType(),
                   o = getOutputType();
  if (failed(verifyAttentionOperands(op, q, k, v, o)))
    return failure();

  // dO has the type of O; the LSE is [B, Hq, Nq].
  auto dO = cast<RankedTensorType>(getGradOutput().getType());
  if (dO.getElementType() != o.getElementType())
    return emitOpError() << "expected grad_output element type ("
                         << dO.getElementType()
                         << ") to match output element type ("
                         << o.getElementType() << ")";
  if (failed(checkSameShape(op, "grad_output", dO, "output", o)))
    return failure();
  auto lse = cast<RankedTensorType>(getLse().getType());
  if (failed(checkRank(op, "lse", lse, 3)))
    return failure();
  for (int i = 0; i < 3; ++i) {
    static const char *what[] = {"batch", "heads", "sequence length"};
    if (failed(checkDim(op, what[i], "lse", lse.getDimSize(i), "query",
                        q.getDimSize(i))))
      return failure();
  }
  if (failed(verifyKeyRange(op, getKeyStart(), getKeyEnd(), q)) ||
      failed(verifyAlibiSlopes(op, getAlibiSlopes(), q.getDimSize(0),
                               q.getDimSize(1))))
    return failure();

  // Each gradient has the type of what it differentiates.
  struct Grad {
    StringRef name;
    RankedTensorType type;
    StringRef refName;
    RankedTensorType ref;
  };
  Grad grads[] = {
      {"grad_query", cast<RankedTensorType>(getGradQuery().getType()),
       "query", q},
      {"grad_key", cast<RankedTensorType>(getGradKey().getType()), "key", k},
      {"grad_value", cast<RankedTensorType>(getGradValue().getType()), "value",
       v}};
  for (const Grad &g : grads) {
    StringRef name = g.name, refName = g.refName;
    RankedTensorType t = g.type, ref = g.ref;
    if (t.getElementType() != ref.getElementType())
      return emitOpError() << "expected " << name << " element type ("
                           << t.getElementType() << ") to match " << refName
                           << " element type (" << ref.getElementType()
                           << ")";
    if (failed(checkSameShape(op, name, t, refName, ref)))
      return failure();
  }
  if (failed(verifyMaskWindow(op, getMask(), getWindow())))
    return failure();
  if (std::optional<APFloat> cap = getSoftcap()) {
    double c = cap->convertToDouble();
    if (!std::isfinite(c) || c <= 0.0)
      return emitOpError() << "expected a positive finite softcap, got " << c;
  }
  return checkScale(op, getScale(), getRuntimeScale());
}

//===----------------------------------------------------------------------===//
// Tile-level ops
//===----------------------------------------------------------------------===//

LogicalResult OnlineBlockOp::verify() {
  Operation *op = getOperation();
  if (static_cast<bool>(getKeyStart()) != static_cast<bool>(getKeyEnd()))
    return emitOpError() << "expected key_start with key_end (both or "
                            "neither)";
  auto q = cast<RankedTensorType>(getQuery().getType());
  auto k = cast<RankedTensorType>(getKey().getType());
  auto v = cast<RankedTensorType>(getValue().getType());
  auto acc = cast<RankedTensorType>(getAcc().getType());
  auto mx = cast<RankedTensorType>(getMax().getType());
  auto sum = cast<RankedTensorType>(getSum().getType());
  if (failed(checkRank(op, "query", q, 2)) ||
      failed(checkRank(op, "key", k, 2)) ||
      failed(checkRank(op, "value", v, 2)) ||
      failed(checkRank(op, "acc", acc, 2)) ||
      failed(checkRank(op, "max", mx, 1)) ||
      failed(checkRank(op, "sum", sum, 1)))
    return failure();
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return emitOpError() << "expected query, key and value to share one "
                            "element type";
  if (failed(checkDim(op, "head dim", "key", k.getDimSize(1), "query",
                      q.getDimSize(1))) ||
      failed(checkDim(op, "rows", "value", v.getDimSize(0), "key",
                      k.getDimSize(0))) ||
      failed(checkDim(op, "rows", "acc", acc.getDimSize(0), "query",
                      q.getDimSize(0))) ||
      failed(checkDim(op, "head dim", "acc", acc.getDimSize(1), "value",
                      v.getDimSize(1))) ||
      failed(checkDim(op, "rows", "max", mx.getDimSize(0), "query",
                      q.getDimSize(0))) ||
      failed(checkDim(op, "rows", "sum", sum.getDimSize(0), "query",
                      q.getDimSize(0))))
    return failure();
  if (Value bias = getBias()) {
    auto bt = cast<RankedTensorType>(bias.getType());
    if (failed(checkRank(op, "bias", bt, 2)) ||
        failed(checkDim(op, "rows", "bias", bt.getDimSize(0), "query",
                        q.getDimSize(0))) ||
        failed(checkDim(op, "columns", "bias", bt.getDimSize(1), "key rows",
                        k.getDimSize(0))))
      return failure();
  }
  if (failed(verifyMaskWindow(op, getMask(), getWindow())))
    return failure();
  if (!getScale() && !getRuntimeScale())
    return emitOpError() << "expected a scale: the attribute or the run-time "
                            "scale operand";
  return checkScale(op, getScale(), getRuntimeScale());
}

Value OnlineBlockOp::buildScale(OpBuilder &b, Location loc) {
  std::optional<double> known;
  if (std::optional<APFloat> s = getScale())
    known = s->convertToDouble();
  return buildScaleValue(b, loc, known, getRuntimeScale());
}

LogicalResult OnlineBlockOp::verifyRegions() {
  if (!getScoreMod().empty() && !getBatch())
    return emitOpError()
           << "expected head (batch, head) indices with a score_mod region";
  return verifyScoreModRegion(getOperation(), getScoreMod());
}

LogicalResult OnlineFinalizeOp::verify() {
  Operation *op = getOperation();
  auto acc = cast<RankedTensorType>(getAcc().getType());
  auto mx = cast<RankedTensorType>(getMax().getType());
  auto sum = cast<RankedTensorType>(getSum().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  auto lse = cast<RankedTensorType>(getLse().getType());
  if (failed(checkRank(op, "acc", acc, 2)) ||
      failed(checkRank(op, "max", mx, 1)) ||
      failed(checkRank(op, "sum", sum, 1)) ||
      failed(checkRank(op, "output", out, 2)) ||
      failed(checkRank(op, "lse", lse, 1)))
    return failure();
  if (acc.getShape() != out.getShape())
    return emitOpError() << "expected output shape to match acc shape";
  if (failed(checkDim(op, "rows", "max", mx.getDimSize(0), "acc",
                      acc.getDimSize(0))) ||
      failed(checkDim(op, "rows", "sum", sum.getDimSize(0), "acc",
                      acc.getDimSize(0))) ||
      failed(checkDim(op, "rows", "lse", lse.getDimSize(0), "acc",
                      acc.getDimSize(0))))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// custom<Scale>: `scale 0.125` (the attribute) or `scale(%s)` (the run-time
// f32 operand). One keyword for both, so a custom directive: two optional
// groups cannot start with the same literal.
//===----------------------------------------------------------------------===//

static ParseResult
parseScale(OpAsmParser &parser,
           std::optional<OpAsmParser::UnresolvedOperand> &runtimeScale,
           FloatAttr &scale) {
  if (failed(parser.parseOptionalKeyword("scale")))
    return success();
  if (succeeded(parser.parseOptionalLParen())) {
    OpAsmParser::UnresolvedOperand operand;
    if (parser.parseOperand(operand) || parser.parseRParen())
      return failure();
    runtimeScale = operand;
    // Both forms parse (and fail to verify), so that what an invalid op
    // prints reads back.
    if (failed(parser.parseOptionalKeyword("scale")))
      return success();
  }
  return parser.parseAttribute(scale, parser.getBuilder().getF32Type());
}

static void printScale(OpAsmPrinter &printer, Operation *, Value runtimeScale,
                       FloatAttr scale) {
  if (runtimeScale) {
    printer << "scale(" << runtimeScale << ")";
    // An invalid op may carry both: print what it holds.
    if (scale)
      printer << " ";
  }
  if (scale) {
    printer << "scale ";
    printer.printAttributeWithoutType(scale);
  }
}

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
