//===- AttnRaiseAttention.cpp - linalg attention -> attn.attention --------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Raises softmax(mask(Q·Kᵀ·s))·V, written by a front end in linalg on
// tensors, to attn.attention. The matcher starts at the P·V contraction and
// walks the producers back: the softmax, the elementwise score ops (scale,
// mask) and the Q·Kᵀ contraction. Anything it does not understand ends the
// match with a reason; nothing is rewritten unless everything matched.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISEATTENTION
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

#define DEBUG_TYPE "attn-raise-attention"

// LLVM_DEBUG is compiled out with NDEBUG, and Debian's LLVM is a release
// build without -debug-only; attn-opt registers -debug / -debug-only itself
// (registerDebugOptions), and this prints under them in every build.
#ifdef isCurrentDebugType
#undef isCurrentDebugType
#endif
namespace llvm {
bool isCurrentDebugType(const char *type, int level);
} // namespace llvm
#define RAISE_DEBUG(X)                                                         \
  do {                                                                         \
    if (::llvm::DebugFlag && ::llvm::isCurrentDebugType(DEBUG_TYPE, 0)) {      \
      X;                                                                       \
    }                                                                          \
  } while (false)

using namespace mlir;
using namespace mlir::attn;

namespace {

/// A masked score must be -inf or at most this (after the scaling applied
/// after the mask): exp of a score that far below the row maximum is 0.
constexpr double kMaskedThreshold = -1.0e4;

//===----------------------------------------------------------------------===//
// Small facts about linalg ops
//===----------------------------------------------------------------------===//

/// True when `map` is exactly (d<dims[0]>, d<dims[1]>, ...).
bool mapIs(AffineMap map, ArrayRef<unsigned> dims) {
  if (map.getNumResults() != dims.size())
    return false;
  for (auto [expr, dim] : llvm::zip(map.getResults(), dims)) {
    auto d = dyn_cast<AffineDimExpr>(expr);
    if (!d || d.getPosition() != dim)
      return false;
  }
  return true;
}

SmallVector<unsigned> concat(ArrayRef<unsigned> batch,
                             std::initializer_list<unsigned> rest) {
  SmallVector<unsigned> dims(batch);
  dims.append(rest);
  return dims;
}

/// Every loop parallel, one tensor result with the identity map, inputs
/// read through projected permutations (broadcasts).
bool isElementwise(linalg::LinalgOp op) {
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0)
    return false;
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return false;
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
    return op.getMatchingIndexingMap(in).isProjectedPermutation(
        /*allowZeroInResults=*/true);
  });
}

/// The scalar `op`'s body yields for its result.
Value yielded(linalg::LinalgOp op) {
  return op.getBlock()->getTerminator()->getOperand(0);
}

/// `v` without float extensions and truncations.
Value stripScalarCasts(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// The input operand of `op` whose block argument is `v`, if any.
OpOperand *inputOf(linalg::LinalgOp op, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != op.getBlock())
    return nullptr;
  OpOperand *operand = op.getMatchingOpOperand(arg);
  return op.isDpsInput(operand) ? operand : nullptr;
}

double toDouble(APFloat f) {
  bool losesInfo;
  f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return f.convertToDouble();
}

/// The value of every element of `v` (a float or a tensor of floats) when
/// it is a constant: arith.constant, a splat, linalg.fill of a constant.
std::optional<double> constantSplat(Value v) {
  if (isa<FloatType>(v.getType())) {
    FloatAttr f;
    if (matchPattern(v, m_Constant(&f)))
      return f.getValueAsDouble();
    return std::nullopt;
  }
  DenseFPElementsAttr dense;
  if (matchPattern(v, m_Constant(&dense)) && dense.isSplat())
    return toDouble(dense.getSplatValue<APFloat>());
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return constantSplat(fill.getDpsInputs()[0]);
  if (auto generic = v.getDefiningOp<linalg::GenericOp>())
    if (std::optional<Value> filled = linalg::isaFillOpInterface(generic))
      return constantSplat(*filled);
  return std::nullopt;
}

/// A scalar in `op`'s body that is a constant: defined by arith.constant, or
/// the block argument of a constant input.
std::optional<double> constantScalar(linalg::LinalgOp op, Value v) {
  v = stripScalarCasts(v);
  if (OpOperand *in = inputOf(op, v))
    return constantSplat(in->get());
  return constantSplat(v);
}

bool isZeroInit(Value init) {
  std::optional<double> c = constantSplat(init);
  return c && *c == 0.0;
}

/// True when `v`, a value in a linalg body, is computed from `arg`.
bool dependsOn(Value v, Value arg) {
  if (v == arg)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || !arg.getParentRegion()->isAncestor(def->getParentRegion()))
    return false;
  return llvm::any_of(def->getOperands(),
                      [&](Value o) { return dependsOn(o, arg); });
}

std::string describe(Operation *op) {
  return "'" + op->getName().getStringRef().str() + "'";
}

std::string formatDouble(double v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%g", v);
  return s;
}

std::string typeStr(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// A contraction with one row dim m, one column dim n and one reduction k,
/// plus batch dims: out[batch, m, n] += lhs[...] * rhs[...].
struct Contraction {
  linalg::LinalgOp op;
  SmallVector<unsigned> batch;
  unsigned m = 0, n = 0, k = 0;
  AffineMap lhs, rhs, out;
};

FailureOr<Contraction> asContraction(linalg::LinalgOp op, StringRef what,
                                     std::string &why) {
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op)) {
    why = (what + " is not a multiply-accumulate contraction on tensors").str();
    return failure();
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  assert(succeeded(dims) && "isaContractionOpInterface infers the dims");
  if (dims->k.size() != 1) {
    why = (what + " contracts over " + Twine(dims->k.size()) +
           " dimensions, not one")
              .str();
    return failure();
  }
  if (dims->m.size() != 1 || dims->n.size() != 1) {
    why = (what + " has more than one row or column dimension").str();
    return failure();
  }
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  return Contraction{op, llvm::to_vector(dims->batch),
                     dims->m[0], dims->n[0], dims->k[0], maps[0], maps[1],
                     maps[2]};
}

/// An elementwise op that only changes the element type (extf/truncf) of
/// one tensor.
Value castSource(Value v) {
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  if (!isElementwise(op) || op.getNumDpsInputs() != 1)
    return {};
  OpOperand *in = op.getDpsInputOperand(0);
  if (!op.getMatchingIndexingMap(in).isIdentity())
    return {};
  Value y = yielded(op);
  if (y == op.getMatchingBlockArgument(in) ||
      stripScalarCasts(y) != op.getMatchingBlockArgument(in))
    return {};
  return in->get();
}

/// A transpose of the last two dims of a rank-`rank` tensor.
Value transposeSource(Value v, unsigned rank) {
  SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(swap[rank - 2], swap[rank - 1]);
  if (auto t = v.getDefiningOp<linalg::TransposeOp>())
    return t.getPermutation() == ArrayRef<int64_t>(swap) ? t.getInput()
                                                          : Value();
  if (auto g = v.getDefiningOp<linalg::GenericOp>())
    if (auto perm = linalg::isaTransposeOpInterface(g))
      if (*perm == swap)
        return g.getDpsInputs()[0];
  return {};
}

//===----------------------------------------------------------------------===//
// The matcher
//===----------------------------------------------------------------------===//

/// What was found, in the front end's layout [batch..., N, D].
struct AttentionMatch {
  Value query, key, value;
  bool transposeKey = false;   // key given as [batch..., D, Nk]
  bool transposeValue = false; // value given as [batch..., Dv, Nk]
  double scale = 1.0;
  bool causal = false;
  Value result; // replaced by attn.attention's output
  SmallVector<Operation *> ops;
};

/// Offsets c for which the masks seen so far keep exactly the keys
/// j <= i + c of query row i.
struct CausalRange {
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
  bool any = false;
  void intersect(int64_t l, int64_t h) {
    lo = std::max(lo, l);
    hi = std::min(hi, h);
    any = true;
  }
};

/// a·i + b·j + c over the query row i and key column j of the scores.
struct IndexExpr {
  int64_t i = 0, j = 0, c = 0;
  IndexExpr operator-(const IndexExpr &o) const {
    return {i - o.i, j - o.j, c - o.c};
  }
  IndexExpr operator+(const IndexExpr &o) const {
    return {i + o.i, j + o.j, c + o.c};
  }
  bool nonNegative() const { return i >= 0 && j >= 0 && c >= 0; }
};

class Matcher {
public:
  explicit Matcher(linalg::LinalgOp pv) : pv(pv) {}

  /// A contraction whose left operand (through casts) is a softmax: the only
  /// ops worth explaining when they are not attention.
  static bool isCandidate(linalg::LinalgOp op) {
    if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
      return false;
    Value p = op.getDpsInputs()[0];
    while (Value src = castSource(p))
      p = src;
    if (p.getDefiningOp<linalg::SoftmaxOp>())
      return true;
    auto div = p.getDefiningOp<linalg::LinalgOp>();
    return isElementwise(div) &&
           stripScalarCasts(yielded(div)).getDefiningOp<arith::DivFOp>();
  }

  FailureOr<AttentionMatch> match();

  std::string why;

private:
  LogicalResult fail(const Twine &msg) {
    why = msg.str();
    return failure();
  }
  Value lookThroughCasts(Value v) {
    while (Value src = castSource(v)) {
      m.ops.push_back(v.getDefiningOp());
      v = src;
    }
    return v;
  }

  FailureOr<std::pair<Value, int64_t>> rowOperand(linalg::LinalgOp op,
                                                  OpOperand *operand);
  FailureOr<Value> rowReduction(Value row, bool isMax);
  FailureOr<Value> matchSoftmax(Value p);
  FailureOr<linalg::LinalgOp> peelScores(Value &scores);
  LogicalResult peelExpr(linalg::LinalgOp op, Value v, Value score);
  LogicalResult additiveMask(linalg::LinalgOp op, Value term);
  LogicalResult maskFromTensor(Value tensor, ArrayRef<int64_t> scoreDims);
  LogicalResult maskFromPredicate(Value cond, bool visibleWhenTrue,
                                  linalg::LinalgOp op,
                                  ArrayRef<int64_t> scoreDims);
  FailureOr<IndexExpr> indexExpr(Value v, linalg::LinalgOp op,
                                 ArrayRef<int64_t> scoreDims);
  LogicalResult maskFromConstant(DenseElementsAttr values,
                                 ArrayRef<int64_t> scoreDims);
  bool isMaskFill(linalg::LinalgOp op, Value v) {
    std::optional<double> c = constantScalar(op, v);
    if (!c)
      return false;
    return (std::isinf(*c) && *c < 0) || *c * m.scale <= kMaskedThreshold;
  }

  linalg::LinalgOp pv;
  AttentionMatch m;
  CausalRange mask;
  unsigned rank = 0; // of every tensor in the pattern
  int64_t rowDim = 0, colDim = 0;
};

/// An operand of `op` that holds one value per score row, broadcast along
/// one dim: returns the row tensor and the dim it is broadcast along.
FailureOr<std::pair<Value, int64_t>>
Matcher::rowOperand(linalg::LinalgOp op, OpOperand *operand) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  // The dim d when `mp` is (d0, ..., d<d-1>, d<d+1>, ...), else -1.
  auto dropped = [&](AffineMap mp) -> int64_t {
    for (unsigned d = 0; d < rank; ++d) {
      SmallVector<unsigned> others;
      for (unsigned e = 0; e < rank; ++e)
        if (e != d)
          others.push_back(e);
      if (mapIs(mp, others))
        return d;
    }
    return -1;
  };
  int64_t d = dropped(map);
  if (d >= 0)
    return std::make_pair(operand->get(), d);
  if (map.isIdentity()) {
    // Broadcast materialised first: linalg.broadcast or a broadcasting copy.
    Value full = operand->get();
    if (auto b = full.getDefiningOp<linalg::BroadcastOp>()) {
      if (b.getDimensions().size() == 1) {
        m.ops.push_back(b);
        return std::make_pair(Value(b.getInput()), b.getDimensions()[0]);
      }
    } else if (auto copy = full.getDefiningOp<linalg::LinalgOp>();
               isElementwise(copy) && copy.getNumDpsInputs() == 1 &&
               yielded(copy) ==
                   copy.getMatchingBlockArgument(copy.getDpsInputOperand(0))) {
      int64_t cd =
          dropped(copy.getMatchingIndexingMap(copy.getDpsInputOperand(0)));
      if (cd >= 0) {
        m.ops.push_back(copy);
        return std::make_pair(copy.getDpsInputs()[0], cd);
      }
    }
  }
  return failure();
}

/// The input of the row reduction (max or sum over `colDim`) producing
/// `row`.
FailureOr<Value> Matcher::rowReduction(Value row, bool isMax) {
  std::string notReduction =
      std::string("the softmax ") + (isMax ? "max" : "sum") +
      " is not a " + (isMax ? "max" : "sum") +
      " reduction of S over the key dimension";
  auto red = row.getDefiningOp<linalg::LinalgOp>();
  if (!red || !red.hasPureTensorSemantics() || red.getNumDpsInputs() != 1 ||
      red.getNumDpsInits() != 1 || red.getNumReductionLoops() != 1 ||
      red.getNumLoops() != rank) {
    why = notReduction;
    return failure();
  }
  SmallVector<unsigned> reduced;
  red.getReductionDims(reduced);
  OpOperand *in = red.getDpsInputOperand(0);
  if (!red.getMatchingIndexingMap(in).isIdentity() ||
      reduced[0] != static_cast<unsigned>(colDim)) {
    why = notReduction;
    return failure();
  }
  BlockArgument inArg = red.getMatchingBlockArgument(in);
  BlockArgument accArg =
      red.getMatchingBlockArgument(red.getDpsInitOperand(0));
  Value y = yielded(red);
  auto isPair = [&](Operation *op) {
    return op && op->getNumOperands() == 2 &&
           ((op->getOperand(0) == inArg && op->getOperand(1) == accArg) ||
            (op->getOperand(0) == accArg && op->getOperand(1) == inArg));
  };
  Operation *def = y.getDefiningOp();
  bool ok;
  if (isMax) {
    ok = (isa_and_nonnull<arith::MaximumFOp, arith::MaxNumFOp>(def) &&
          isPair(def));
    if (auto sel = dyn_cast_or_null<arith::SelectOp>(def)) {
      auto cmp = sel.getCondition().getDefiningOp<arith::CmpFOp>();
      using P = arith::CmpFPredicate;
      ok = cmp && sel.getTrueValue() == cmp.getLhs() &&
           sel.getFalseValue() == cmp.getRhs() && isPair(cmp) &&
           llvm::is_contained({P::OGT, P::OGE, P::UGT, P::UGE},
                              cmp.getPredicate());
    }
  } else {
    ok = isa_and_nonnull<arith::AddFOp>(def) && isPair(def);
    if (ok && !isZeroInit(red.getDpsInits()[0])) {
      why = "the softmax sum does not start at 0";
      return failure();
    }
  }
  if (!ok) {
    why = notReduction;
    return failure();
  }
  m.ops.push_back(red);
  return in->get();
}

/// The scores S whose softmax over the key dimension is `p`.
FailureOr<Value> Matcher::matchSoftmax(Value p) {
  if (auto sm = p.getDefiningOp<linalg::SoftmaxOp>()) {
    if (sm.getDimension() != static_cast<uint64_t>(colDim))
      return fail("the softmax normalises over dimension " +
                  Twine(sm.getDimension()) + ", not the key dimension " +
                  Twine(colDim) + " that P·V contracts");
    m.ops.push_back(sm);
    return sm.getInput();
  }

  // exp(S - max) / sum, from its decomposition.
  // (isCandidate saw the division.)
  const char *notSum = "the softmax divides by something other than the row "
                       "sum of its numerator";
  auto div = p.getDefiningOp<linalg::LinalgOp>();
  auto divf = isElementwise(div) ? stripScalarCasts(yielded(div))
                                       .getDefiningOp<arith::DivFOp>()
                                 : nullptr;
  if (!divf)
    return fail(notSum);
  OpOperand *num = inputOf(div, stripScalarCasts(divf.getLhs()));
  OpOperand *den = inputOf(div, stripScalarCasts(divf.getRhs()));
  if (!num || !den || !div.getMatchingIndexingMap(num).isIdentity())
    return fail(notSum);
  FailureOr<std::pair<Value, int64_t>> sumRow = rowOperand(div, den);
  if (failed(sumRow))
    return fail(notSum);
  if (sumRow->second != colDim)
    return fail("the softmax normalises over dimension " +
                Twine(sumRow->second) + ", not the key dimension " +
                Twine(colDim) + " that P·V contracts");
  m.ops.push_back(div);
  FailureOr<Value> summed = rowReduction(sumRow->first, /*isMax=*/false);
  if (failed(summed))
    return failure();
  Value e = num->get();
  if (*summed != e)
    return fail(notSum);

  // e = exp(S - max), in one op or as exp of a subtraction.
  auto expOp = e.getDefiningOp<linalg::LinalgOp>();
  if (!isElementwise(expOp))
    return fail("the softmax numerator is not exp(S - max)");
  auto exp = stripScalarCasts(yielded(expOp)).getDefiningOp<math::ExpOp>();
  if (!exp)
    return fail("the softmax numerator is not exp(S - max)");
  m.ops.push_back(expOp);
  linalg::LinalgOp subOp = expOp;
  Value diff = stripScalarCasts(exp.getOperand());
  if (OpOperand *in = inputOf(expOp, diff)) {
    subOp = in->get().getDefiningOp<linalg::LinalgOp>();
    if (!expOp.getMatchingIndexingMap(in).isIdentity() ||
        !isElementwise(subOp))
      return fail("the softmax numerator is not exp(S - max)");
    diff = stripScalarCasts(yielded(subOp));
    m.ops.push_back(subOp);
  }
  auto sub = diff.getDefiningOp<arith::SubFOp>();
  OpOperand *sIn = sub ? inputOf(subOp, stripScalarCasts(sub.getLhs()))
                       : nullptr;
  OpOperand *maxIn = sub ? inputOf(subOp, stripScalarCasts(sub.getRhs()))
                         : nullptr;
  if (!sIn || !maxIn || !subOp.getMatchingIndexingMap(sIn).isIdentity())
    return fail("the softmax numerator is not exp(S - max)");
  FailureOr<std::pair<Value, int64_t>> maxRow = rowOperand(subOp, maxIn);
  const char *notMax = "the softmax subtracts something other than the row "
                       "maximum of S over the key dimension";
  if (failed(maxRow) || maxRow->second != colDim)
    return fail(notMax);
  FailureOr<Value> maxed = rowReduction(maxRow->first, /*isMax=*/true);
  if (failed(maxed))
    return failure();
  if (*maxed != sIn->get())
    return fail(notMax);
  return sIn->get();
}

FailureOr<IndexExpr> Matcher::indexExpr(Value v, linalg::LinalgOp op,
                                        ArrayRef<int64_t> scoreDims) {
  if (auto idx = v.getDefiningOp<linalg::IndexOp>()) {
    int64_t d = idx.getDim() < scoreDims.size() ? scoreDims[idx.getDim()] : -1;
    if (d == rowDim)
      return IndexExpr{1, 0, 0};
    if (d == colDim)
      return IndexExpr{0, 1, 0};
    why = "the mask depends on a batch or head index";
    return failure();
  }
  IntegerAttr c;
  if (matchPattern(v, m_Constant(&c)))
    return IndexExpr{0, 0, c.getInt()};
  if (Operation *def = v.getDefiningOp()) {
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp>(def))
      return indexExpr(def->getOperand(0), op, scoreDims);
    if (isa<arith::AddIOp, arith::SubIOp>(def)) {
      FailureOr<IndexExpr> a = indexExpr(def->getOperand(0), op, scoreDims);
      if (failed(a))
        return failure();
      FailureOr<IndexExpr> b = indexExpr(def->getOperand(1), op, scoreDims);
      if (failed(b))
        return failure();
      return isa<arith::AddIOp>(def) ? *a + *b : *a - *b;
    }
  }
  why = "the mask compares values other than linalg.index and constants";
  return failure();
}

/// A mask keeping the scores where `cond` is `visibleWhenTrue`. `scoreDims`
/// maps the loop dims of `op` (whose body holds `cond`) to score dims.
LogicalResult Matcher::maskFromPredicate(Value cond, bool visibleWhenTrue,
                                         linalg::LinalgOp op,
                                         ArrayRef<int64_t> scoreDims) {
  // A boolean tensor operand: follow it into the op that computes it.
  if (OpOperand *in = inputOf(op, cond)) {
    auto producer = in->get().getDefiningOp<linalg::LinalgOp>();
    if (!isElementwise(producer))
      return fail("the mask condition is a run-time tensor; attn.attention "
                  "can only express a causal mask");
    AffineMap map = op.getMatchingIndexingMap(in);
    SmallVector<int64_t> dims;
    for (AffineExpr e : map.getResults()) {
      auto d = dyn_cast<AffineDimExpr>(e);
      dims.push_back(d ? scoreDims[d.getPosition()] : -1);
    }
    m.ops.push_back(producer);
    return maskFromPredicate(yielded(producer), visibleWhenTrue, producer,
                             dims);
  }
  if (auto x = cond.getDefiningOp<arith::XOrIOp>()) {
    if (matchPattern(x.getRhs(), m_One()))
      return maskFromPredicate(x.getLhs(), !visibleWhenTrue, op, scoreDims);
    if (matchPattern(x.getLhs(), m_One()))
      return maskFromPredicate(x.getRhs(), !visibleWhenTrue, op, scoreDims);
  }
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return fail("the mask condition is not an index comparison");
  FailureOr<IndexExpr> lhs = indexExpr(cmp.getLhs(), op, scoreDims);
  if (failed(lhs))
    return failure();
  FailureOr<IndexExpr> rhs = indexExpr(cmp.getRhs(), op, scoreDims);
  if (failed(rhs))
    return failure();
  using P = arith::CmpIPredicate;
  P pred = visibleWhenTrue ? cmp.getPredicate()
                           : arith::invertPredicate(cmp.getPredicate());
  bool isUnsigned = llvm::is_contained({P::ult, P::ule, P::ugt, P::uge}, pred);
  if (isUnsigned && !(lhs->nonNegative() && rhs->nonNegative()))
    return fail("the mask compares possibly negative indices unsigned");
  // Normalise "visible iff lhs <pred> rhs" to "visible iff e <= 0".
  IndexExpr d = *lhs - *rhs, e;
  switch (pred) {
  case P::sle:
  case P::ule:
    e = d;
    break;
  case P::slt:
  case P::ult:
    e = d + IndexExpr{0, 0, 1};
    break;
  case P::sge:
  case P::uge:
    e = IndexExpr{} - d;
    break;
  case P::sgt:
  case P::ugt:
    e = IndexExpr{} - d + IndexExpr{0, 0, 1};
    break;
  default:
    return fail("the mask compares indices for (in)equality; only a causal "
                "mask (key <= query + c) can be expressed");
  }
  // e = j - i + γ <= 0 keeps j <= i - γ.
  if (e.i != -1 || e.j != 1)
    return fail("the mask is not causal: it does not keep the keys j <= i + "
                "c of query row i");
  mask.intersect(-e.c, -e.c);
  return success();
}

/// An additive mask given as a constant tensor: 0 where visible, -inf or a
/// large negative value where masked.
LogicalResult Matcher::maskFromConstant(DenseElementsAttr values,
                                        ArrayRef<int64_t> scoreDims) {
  auto type = cast<ShapedType>(values.getType());
  int64_t rowAt = -1, colAt = -1;
  for (auto [t, d] : llvm::enumerate(scoreDims)) {
    if (d == rowDim)
      rowAt = t;
    else if (d == colDim)
      colAt = t;
  }
  int64_t visibleMax = std::numeric_limits<int64_t>::min();
  int64_t maskedMin = std::numeric_limits<int64_t>::max();
  SmallVector<int64_t> strides = computeStrides(type.getShape());
  int64_t flat = 0;
  for (APFloat a : values.getValues<APFloat>()) {
    double v = toDouble(a) * m.scale;
    int64_t i = rowAt >= 0 ? (flat / strides[rowAt]) % type.getDimSize(rowAt)
                           : 0;
    int64_t j = colAt >= 0 ? (flat / strides[colAt]) % type.getDimSize(colAt)
                           : 0;
    ++flat;
    if (v == 0.0)
      visibleMax = std::max(visibleMax, j - i);
    else if ((std::isinf(v) && v < 0) || v <= kMaskedThreshold)
      maskedMin = std::min(maskedMin, j - i);
    else
      return fail("the additive mask holds values other than 0 and -inf (or "
                  "a large negative number): a bias, not a mask");
  }
  if (maskedMin == std::numeric_limits<int64_t>::max())
    return success(); // nothing masked
  if (rowAt < 0 || colAt < 0 || visibleMax >= maskedMin)
    return fail("the mask is not causal: it does not keep the keys "
                "j <= i + c of query row i");
  mask.intersect(visibleMax, maskedMin - 1);
  return success();
}

/// An additive mask tensor whose dims map to score dims `scoreDims` (-1 for
/// a unit dim that is broadcast).
LogicalResult Matcher::maskFromTensor(Value tensor,
                                      ArrayRef<int64_t> scoreDims) {
  if (std::optional<double> c = constantSplat(tensor)) {
    if (*c == 0.0)
      return success();
    return fail("a non-zero constant is added to the scores");
  }
  DenseElementsAttr dense;
  if (matchPattern(tensor, m_Constant(&dense)) &&
      isa<FloatType>(dense.getElementType()))
    return maskFromConstant(dense, scoreDims);
  auto producer = tensor.getDefiningOp<linalg::LinalgOp>();
  if (isElementwise(producer)) {
    m.ops.push_back(producer);
    Value y = stripScalarCasts(yielded(producer));
    if (auto sel = y.getDefiningOp<arith::SelectOp>()) {
      std::optional<double> t = constantScalar(producer, sel.getTrueValue());
      std::optional<double> f = constantScalar(producer, sel.getFalseValue());
      auto masked = [&](std::optional<double> c) {
        return c && ((std::isinf(*c) && *c < 0) ||
                     *c * m.scale <= kMaskedThreshold);
      };
      if (t == 0.0 && masked(f))
        return maskFromPredicate(sel.getCondition(), true, producer,
                                 scoreDims);
      if (f == 0.0 && masked(t))
        return maskFromPredicate(sel.getCondition(), false, producer,
                                 scoreDims);
      return fail("the additive mask selects between values other than 0 "
                  "and -inf (or a large negative number)");
    }
    if (OpOperand *in = inputOf(producer, y)) {
      // A broadcast or copy of another mask tensor.
      SmallVector<int64_t> dims;
      for (AffineExpr e : producer.getMatchingIndexingMap(in).getResults()) {
        auto d = dyn_cast<AffineDimExpr>(e);
        dims.push_back(d ? scoreDims[d.getPosition()] : -1);
      }
      return maskFromTensor(in->get(), dims);
    }
    return fail("the additive mask is computed by a " +
                describe(producer.getOperation()) +
                " this pass does not understand");
  }
  bool variesOverBatch = llvm::any_of(
      scoreDims, [&](int64_t d) { return d >= 0 && d != rowDim && d != colDim; });
  if (variesOverBatch)
    return fail("the additive mask is a run-time tensor that varies over "
                "batch or heads; attn.attention can only express a causal "
                "mask");
  return fail("the additive mask is a run-time tensor; attn.attention can "
              "only express a causal mask");
}

/// `term`, added to the scores in `op`'s body, must be a mask.
LogicalResult Matcher::additiveMask(linalg::LinalgOp op, Value term) {
  term = stripScalarCasts(term);
  if (OpOperand *in = inputOf(op, term)) {
    SmallVector<int64_t> dims;
    for (AffineExpr e : op.getMatchingIndexingMap(in).getResults()) {
      auto d = dyn_cast<AffineDimExpr>(e);
      dims.push_back(d ? d.getPosition() : -1);
    }
    return maskFromTensor(in->get(), dims);
  }
  SmallVector<int64_t> identity =
      llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (std::optional<double> c = constantScalar(op, term)) {
    if (*c == 0.0)
      return success();
    return fail("a non-zero constant is added to the scores");
  }
  if (auto sel = term.getDefiningOp<arith::SelectOp>()) {
    std::optional<double> t = constantScalar(op, sel.getTrueValue());
    std::optional<double> f = constantScalar(op, sel.getFalseValue());
    if (t == 0.0 && isMaskFill(op, sel.getFalseValue()))
      return maskFromPredicate(sel.getCondition(), true, op, identity);
    if (f == 0.0 && isMaskFill(op, sel.getTrueValue()))
      return maskFromPredicate(sel.getCondition(), false, op, identity);
  }
  return fail("the scores are added to a value that is not a mask");
}

/// Walks the scalar computation `v` of `op`'s body back to the score
/// argument `score`, collecting the scale and masks.
LogicalResult Matcher::peelExpr(linalg::LinalgOp op, Value v, Value score) {
  if (v == score)
    return success();
  Operation *def = v.getDefiningOp();
  if (!def || !dependsOn(v, score))
    return fail("an elementwise op on the scores yields a value that does "
                "not depend on them");
  SmallVector<int64_t> identity =
      llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (isa<arith::ExtFOp, arith::TruncFOp>(def))
    return peelExpr(op, def->getOperand(0), score);
  if (auto mul = dyn_cast<arith::MulFOp>(def)) {
    for (auto [s, c] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
      if (std::optional<double> f = constantScalar(op, c)) {
        m.scale *= *f;
        return peelExpr(op, s, score);
      }
    }
    return fail("the scores are multiplied by a value that is not a "
                "constant");
  }
  if (auto div = dyn_cast<arith::DivFOp>(def)) {
    std::optional<double> f = constantScalar(op, div.getRhs());
    if (!f || *f == 0.0 || dependsOn(div.getRhs(), score))
      return fail("the scores are divided by a value that is not a non-zero "
                  "constant");
    m.scale /= *f;
    return peelExpr(op, div.getLhs(), score);
  }
  if (auto sel = dyn_cast<arith::SelectOp>(def)) {
    Value t = sel.getTrueValue(), f = sel.getFalseValue();
    if (dependsOn(t, score) && !dependsOn(f, score) && isMaskFill(op, f)) {
      if (failed(maskFromPredicate(sel.getCondition(), true, op, identity)))
        return failure();
      return peelExpr(op, t, score);
    }
    if (dependsOn(f, score) && !dependsOn(t, score) && isMaskFill(op, t)) {
      if (failed(maskFromPredicate(sel.getCondition(), false, op, identity)))
        return failure();
      return peelExpr(op, f, score);
    }
    return fail("the scores go through a select that is not a mask (the "
                "other value is not -inf or a large negative constant)");
  }
  if (auto add = dyn_cast<arith::AddFOp>(def)) {
    bool l = dependsOn(add.getLhs(), score), r = dependsOn(add.getRhs(), score);
    if (l == r)
      return fail("the scores are added to a value that is not a mask");
    Value s = l ? add.getLhs() : add.getRhs();
    if (failed(additiveMask(op, l ? add.getRhs() : add.getLhs())))
      return failure();
    return peelExpr(op, s, score);
  }
  return fail("the scores go through " + describe(def) +
              "; only a constant scale and a causal mask can be expressed");
}

/// From the softmax input back to the Q·Kᵀ contraction, through elementwise
/// ops that scale or mask the scores. On return `scores` is S = Q·Kᵀ.
FailureOr<linalg::LinalgOp> Matcher::peelScores(Value &scores) {
  while (true) {
    Operation *def = scores.getDefiningOp();
    auto notScores = [&] {
      return fail("the scores come from " +
                  (def ? describe(def) : std::string("a block argument")) +
                  ", not from elementwise ops on a contraction Q·Kᵀ");
    };
    auto op = dyn_cast_or_null<linalg::LinalgOp>(def);
    if (op && op.getNumReductionLoops() != 0)
      return op;
    if (!isElementwise(op))
      return notScores();
    // The scores are the input read with the identity map that comes from
    // a computation (not a constant); masks come second.
    SmallVector<OpOperand *> candidates;
    for (OpOperand *in : op.getDpsInputOperands())
      if (op.getMatchingIndexingMap(in).isIdentity() &&
          isa<FloatType>(getElementTypeOrSelf(in->get().getType())) &&
          !constantSplat(in->get()))
        candidates.push_back(in);
    llvm::stable_sort(candidates, [](OpOperand *a, OpOperand *b) {
      auto fromData = [](OpOperand *o) {
        auto p = o->get().getDefiningOp<linalg::LinalgOp>();
        return p && p.getNumDpsInputs() > 0;
      };
      return fromData(a) && !fromData(b);
    });
    if (candidates.empty())
      return notScores();
    AttentionMatch saved = m;
    CausalRange savedMask = mask;
    // When no input works out, the first (the likeliest scores) says why.
    OpOperand *found = nullptr;
    std::string firstWhy;
    for (OpOperand *in : candidates) {
      m = saved;
      mask = savedMask;
      if (succeeded(peelExpr(op, yielded(op), op.getMatchingBlockArgument(in)))) {
        found = in;
        break;
      }
      if (firstWhy.empty())
        firstWhy = why;
    }
    if (!found)
      return fail(firstWhy);
    m.ops.push_back(op);
    scores = found->get();
  }
}

FailureOr<AttentionMatch> Matcher::match() {
  // O = P·V.
  FailureOr<Contraction> o = asContraction(pv, "P·V", why);
  if (failed(o))
    return failure();
  rank = o->out.getNumResults();
  if (rank < 2 || rank > 4)
    return fail("the attention has rank " + Twine(rank) +
                "; attn.attention covers ranks 2 to 4");
  const char *pvLayout = "P·V does not compute [batch..., Nq, Dv] from P "
                         "[batch..., Nq, Nk] and V [batch..., Nk, Dv] or its "
                         "transpose";
  if (o->batch.size() != rank - 2 ||
      !mapIs(o->out, concat(o->batch, {o->m, o->n})))
    return fail(pvLayout);
  rowDim = rank - 2;
  colDim = rank - 1;
  if (mapIs(o->lhs, concat(o->batch, {o->k, o->m})))
    return fail("P·V contracts over the query dimension of the softmax, "
                "not the key dimension");
  if (!mapIs(o->lhs, concat(o->batch, {o->m, o->k})))
    return fail(pvLayout);
  if (mapIs(o->rhs, concat(o->batch, {o->n, o->k})))
    m.transposeValue = true;
  else if (!mapIs(o->rhs, concat(o->batch, {o->k, o->n})))
    return fail(pvLayout);
  if (!isZeroInit(pv.getDpsInits()[0]))
    return fail("the P·V accumulator is not zero-initialised");
  m.ops.push_back(pv);

  // P = softmax(S') over the keys.
  FailureOr<Value> scores = matchSoftmax(lookThroughCasts(pv.getDpsInputs()[0]));
  if (failed(scores))
    return failure();

  // S' = mask(S · scale), S = Q·Kᵀ.
  Value s = *scores;
  FailureOr<linalg::LinalgOp> qkOp = peelScores(s);
  if (failed(qkOp))
    return failure();
  FailureOr<Contraction> qk = asContraction(*qkOp, "Q·Kᵀ", why);
  if (failed(qk))
    return failure();
  const char *qkLayout = "Q·Kᵀ does not compute [batch..., Nq, Nk] from Q "
                         "[batch..., Nq, D] and K [batch..., Nk, D] or its "
                         "transpose";
  if (qk->out.getNumResults() != rank || qk->batch.size() != rank - 2 ||
      !mapIs(qk->out, concat(qk->batch, {qk->m, qk->n})))
    return fail(qkLayout);
  if (mapIs(qk->lhs, concat(qk->batch, {qk->k, qk->m})))
    return fail("Q is read as [batch..., head dim, query]: Q·Kᵀ contracts "
                "over the sequence, not the head dim");
  if (!mapIs(qk->lhs, concat(qk->batch, {qk->m, qk->k})))
    return fail(qkLayout);
  Value key = qk->op.getDpsInputs()[1];
  if (mapIs(qk->rhs, concat(qk->batch, {qk->k, qk->n}))) {
    // Kᵀ as a tensor: look through the transpose when there is one.
    if (Value src = transposeSource(key, rank)) {
      m.ops.push_back(key.getDefiningOp());
      key = src;
    } else {
      m.transposeKey = true;
    }
  } else if (!mapIs(qk->rhs, concat(qk->batch, {qk->n, qk->k}))) {
    return fail(qkLayout);
  }
  if (!isZeroInit(qk->op.getDpsInits()[0]))
    return fail("the Q·Kᵀ accumulator is not zero-initialised");
  m.ops.push_back(qk->op);

  // Element types: one for Q, K, V and the result.
  m.query = lookThroughCasts(qk->op.getDpsInputs()[0]);
  m.key = lookThroughCasts(key);
  m.value = lookThroughCasts(pv.getDpsInputs()[1]);
  Type elt = getElementTypeOrSelf(m.query.getType());
  if (!elt.isF16() && !elt.isBF16() && !elt.isF32())
    return fail("Q has element type " + typeStr(elt) +
                "; attn.attention takes f16, bf16 or f32");
  if (getElementTypeOrSelf(m.key.getType()) != elt ||
      getElementTypeOrSelf(m.value.getType()) != elt)
    return fail("Q, K and V have different element types");
  Type sElt = getElementTypeOrSelf(s.getType());
  if (sElt != elt && !sElt.isF32())
    return fail("the scores are computed in " + typeStr(sElt) +
                ", more precisely than attn.attention's f32");
  m.result = pv->getResult(0);
  if (getElementTypeOrSelf(m.result.getType()) != elt) {
    Operation *user = m.result.hasOneUse() ? *m.result.user_begin() : nullptr;
    auto cast = dyn_cast_or_null<linalg::LinalgOp>(user);
    if (!cast || castSource(cast->getResult(0)) != m.result ||
        getElementTypeOrSelf(cast->getResult(0).getType()) != elt)
      return fail("P·V produces " +
                  typeStr(getElementTypeOrSelf(m.result.getType())) +
                  " but Q, K and V are " + typeStr(elt) +
                  ", which attn.attention returns");
    m.ops.push_back(cast);
    m.result = cast->getResult(0);
  }

  // The scale and the mask.
  if (!std::isfinite(m.scale) || m.scale <= 0.0)
    return fail("the scale " + formatDouble(m.scale) +
                " is not positive and finite");
  if (mask.any) {
    auto sType = cast<RankedTensorType>(s.getType());
    int64_t nq = sType.getDimSize(rowDim), nk = sType.getDimSize(colDim);
    if (ShapedType::isDynamic(nq) || ShapedType::isDynamic(nk))
      return fail("the causal mask is on dynamic sequence lengths: its "
                  "alignment cannot be checked");
    int64_t c = nk - nq;
    if (c < 0)
      return fail("the causal mask leaves query rows without keys (Nq = " +
                  Twine(nq) + " > Nk = " + Twine(nk) + ")");
    if (mask.lo > c || c > mask.hi) {
      if (mask.lo <= 0 && 0 <= mask.hi)
        return fail("the causal mask is aligned top-left (key j <= query i); "
                    "attn.attention's is aligned bottom-right (j <= i + " +
                    Twine(c) + ")");
      return fail("the mask keeps keys j <= i + " + Twine(mask.lo) +
                  ", not the causal j <= i + " + Twine(c));
    }
    m.causal = true;
  }
  return m;
}

//===----------------------------------------------------------------------===//
// The rewrite
//===----------------------------------------------------------------------===//

SmallVector<ReassociationIndices> toRank4(unsigned rank) {
  if (rank == 3)
    return {{0, 1}, {2}, {3}};
  return {{0, 1, 2}, {3}};
}

/// [batch..., N, D] -> [B, H, N, D] with unit dims.
Value expandToRank4(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  unsigned rank = type.getRank();
  if (rank == 4)
    return v;
  // Rank 3 [B, N, D] -> [B, 1, N, D] (one head, so that the head count
  // stays static with a dynamic batch); rank 2 [N, D] -> [1, 1, N, D].
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  SmallVector<OpFoldResult> shape(sizes.begin(), sizes.end());
  SmallVector<int64_t> staticShape(type.getShape());
  unsigned at = rank == 3 ? 1 : 0;
  shape.insert(shape.begin() + at, 4 - rank, b.getIndexAttr(1));
  staticShape.insert(staticShape.begin() + at, 4 - rank, 1);
  auto resultType = RankedTensorType::get(staticShape, type.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, resultType, v, toRank4(rank),
                                       shape);
}

Value transposeLastTwo(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  unsigned rank = type.getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 2], perm[rank - 1]);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, v);
  std::swap(sizes[rank - 2], sizes[rank - 1]);
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  return linalg::TransposeOp::create(b, loc, v, init, perm)->getResult(0);
}

AttentionOp rewriteAttention(RewriterBase &rewriter, linalg::LinalgOp pv,
                             const AttentionMatch &m) {
  Location loc = pv.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(pv);
  Value key = m.transposeKey ? transposeLastTwo(rewriter, loc, m.key) : m.key;
  Value value =
      m.transposeValue ? transposeLastTwo(rewriter, loc, m.value) : m.value;
  Value q = expandToRank4(rewriter, loc, m.query);
  Value k = expandToRank4(rewriter, loc, key);
  Value v = expandToRank4(rewriter, loc, value);
  auto qType = cast<RankedTensorType>(q.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  auto outType = RankedTensorType::get(
      {qType.getDimSize(0), qType.getDimSize(1), qType.getDimSize(2),
       vType.getDimSize(3)},
      qType.getElementType());
  auto attention = AttentionOp::create(
      rewriter, loc, outType, /*lse=*/Type(), q, k, v, /*bias=*/Value(),
      /*cu_seqlens_q=*/Value(), /*cu_seqlens_kv=*/Value(),
      /*key_start=*/Value(), /*key_end=*/Value(), /*alibi_slopes=*/Value(),
      /*runtime_scale=*/Value(), m.causal ? MaskKind::causal : MaskKind::none,
      /*window=*/nullptr, rewriter.getF32FloatAttr(static_cast<float>(m.scale)),
      /*softcap=*/nullptr, /*max_seqlen=*/nullptr);
  Value out = attention.getOutput();
  unsigned rank = cast<RankedTensorType>(m.result.getType()).getRank();
  if (rank != 4)
    out = tensor::CollapseShapeOp::create(rewriter, loc, out, toRank4(rank));
  rewriter.replaceAllUsesWith(m.result, out);

  // Erase what the pattern left without uses, and what that in turn leaves
  // without uses (fills, empties, constants it alone read).
  SmallVector<Operation *> worklist(m.ops.begin(), m.ops.end());
  llvm::SmallPtrSet<Operation *, 16> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    SetVector<Value> used(op->getOperands().begin(), op->getOperands().end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    for (Value operand : used)
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    erased.insert(op);
    rewriter.eraseOp(op);
  }
  return attention;
}

std::string summary(const AttentionMatch &m, unsigned rank) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "raised to attn.attention (rank " << rank << ", "
     << (m.causal ? "causal" : "no mask") << ", scale "
     << formatDouble(m.scale) << ")";
  return s;
}

struct RaiseAttentionPattern
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!Matcher::isCandidate(op))
      return rewriter.notifyMatchFailure(op, "not a contraction of a softmax");
    Matcher matcher(op);
    FailureOr<AttentionMatch> m = matcher.match();
    if (failed(m))
      return rewriter.notifyMatchFailure(op, matcher.why);
    rewriteAttention(rewriter, op, *m);
    return success();
  }
};

struct AttnRaiseAttentionPass
    : mlir::attn::impl::AttnRaiseAttentionBase<AttnRaiseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    raiseAttention(rewriter, getOperation(), emitRemarks);
  }
};
} // namespace

void mlir::attn::populateRaiseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseAttentionPattern>(patterns.getContext());
}

int64_t mlir::attn::raiseAttention(RewriterBase &rewriter, Operation *root,
                                   bool emitRemarks) {
  // What the rewrite creates (already loaded when called from the pass).
  root->getContext()
      ->loadDialect<AttnDialect, linalg::LinalgDialect, tensor::TensorDialect>();
  SmallVector<linalg::LinalgOp> candidates;
  root->walk([&](linalg::LinalgOp op) {
    if (Matcher::isCandidate(op))
      candidates.push_back(op);
    else if (op.getNumReductionLoops() != 0)
      RAISE_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << op->getLoc() << ": "
                               << op->getName()
                               << " skipped: its first operand is not a "
                                  "softmax\n");
  });
  int64_t raised = 0;
  for (linalg::LinalgOp op : candidates) {
    Matcher matcher(op);
    FailureOr<AttentionMatch> m = matcher.match();
    Location loc = op->getLoc();
    unsigned rank = cast<ShapedType>(op->getResult(0).getType()).getRank();
    if (failed(m)) {
      RAISE_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << loc
                               << ": not raised: " << matcher.why << "\n");
      if (emitRemarks)
        op->emitRemark() << "not raised to attn.attention: " << matcher.why;
      continue;
    }
    std::string what = summary(*m, rank);
    RAISE_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << loc << ": " << what
                             << "\n");
    AttentionOp attention = rewriteAttention(rewriter, op, *m);
    if (emitRemarks)
      attention->emitRemark() << what;
    ++raised;
  }
  return raised;
}
