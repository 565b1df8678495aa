//===- AttnGPUOps.cpp - attn_gpu operations -------------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The verifiers hold each op to what its PTX instruction accepts, so that a
// malformed schedule is a diagnostic here rather than a ptxas error (or an
// abort inside LLVM) later.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::attn_gpu;

namespace {
/// The largest mbarrier arrival or transaction count (PTX ISA: 2^20 - 1).
constexpr int64_t kMaxMBarrierCount = (1 << 20) - 1;
/// The descriptor's 14-bit fields hold byte offsets >> 4.
constexpr int64_t kDescriptorFieldLimit = int64_t{1} << 18;

LogicalResult verifyThreads(Operation *op, int64_t threads) {
  if (threads <= 0 || threads % 32 != 0 || threads > 1024)
    return op->emitOpError("expected threads to be a positive multiple of 32 "
                           "up to 1024, got ")
           << threads;
  return success();
}
} // namespace

LogicalResult MBarrierInitOp::verify() {
  int64_t count = getCountAttr().getInt();
  if (count < 1 || count > kMaxMBarrierCount)
    return emitOpError("expected count in [1, ")
           << kMaxMBarrierCount << "], got " << count;
  return success();
}

LogicalResult MBarrierArriveExpectTxOp::verify() {
  int64_t bytes = getBytesAttr().getInt();
  if (bytes < 0 || bytes > kMaxMBarrierCount)
    return emitOpError("expected bytes in [0, ")
           << kMaxMBarrierCount << "], got " << bytes;
  return success();
}

LogicalResult TmaLoadOp::verify() {
  size_t rank = getCoordinates().size();
  if (rank < 1 || rank > 5)
    return emitOpError("expected 1 to 5 coordinates, got ") << rank;
  return success();
}

LogicalResult GlobalReduceAddOp::verify() {
  int64_t count = getValues().size(), width = getGroupWidth();
  if (width != 1 && width != 2 && width != 4)
    return emitOpError("expected width 1, 2 or 4, got ") << width;
  if (count % width != 0)
    return emitOpError("expected a multiple of ")
           << width << " values with width " << width << ", got " << count;
  if (count / width > 32)
    return emitOpError("expected 1 to 32 groups of values, got ")
           << count / width;
  if (std::optional<int64_t> stride = getStride())
    if (*stride <= 0 || *stride % (4 * width) != 0)
      return emitOpError("expected a positive multiple of ")
             << 4 * width << " as stride, got " << *stride;
  return success();
}

LogicalResult NamedBarrierSyncOp::verify() {
  return verifyThreads(*this, getThreadsAttr().getInt());
}

LogicalResult NamedBarrierArriveOp::verify() {
  return verifyThreads(*this, getThreadsAttr().getInt());
}

LogicalResult WgmmaDescriptorOp::verify() {
  for (auto [name, bytes] :
       {std::pair<StringRef, int64_t>{"leading_bytes",
                                      getLeadingBytesAttr().getInt()},
        {"stride_bytes", getStrideBytesAttr().getInt()}})
    if (bytes < 0 || bytes % 16 != 0 || bytes >= kDescriptorFieldLimit)
      return emitOpError("expected ")
             << name << " to be a multiple of 16 below "
             << kDescriptorFieldLimit << ", got " << bytes;
  return success();
}

LogicalResult WgmmaWaitGroupOp::verify() {
  int64_t pending = getPendingAttr().getInt();
  if (pending < 0 || pending > 7)
    return emitOpError("expected pending in [0, 7], got ") << pending;
  return success();
}

/// What both wgmma forms require: an m64nNk16 shape with N/2 f32
/// accumulators per thread and 16-bit inputs.
static LogicalResult verifyWgmma(Operation *op, int64_t n, Type elementType,
                                 size_t accumulators) {
  if (n < 8 || n > 256 || n % 8 != 0)
    return op->emitOpError("expected n to be a multiple of 8 in [8, 256], got ")
           << n;
  if (!elementType.isF16() && !elementType.isBF16())
    return op->emitOpError("expected element_type f16 or bf16, got ")
           << elementType;
  if (accumulators != static_cast<size_t>(n / 2))
    return op->emitOpError("expected n/2 = ")
           << n / 2 << " f32 accumulators per thread, got " << accumulators;
  return success();
}

LogicalResult WgmmaSSOp::verify() {
  return verifyWgmma(*this, getNAttr().getInt(), getElementType(),
                     getAcc().size());
}

LogicalResult WgmmaRSOp::verify() {
  return verifyWgmma(*this, getNAttr().getInt(), getElementType(),
                     getAcc().size());
}

LogicalResult OpaqueOp::verify() {
  if (getValues().empty())
    return emitOpError("expected at least one value");
  return success();
}

//===----------------------------------------------------------------------===//
// Fragment ops
//===----------------------------------------------------------------------===//

LogicalResult RingTileOp::verify() {
  std::optional<int64_t> panel = getPanel();
  int64_t panels = getRing().getType().getCols() / 64;
  if (panel && (*panel < 0 || *panel >= panels))
    return emitOpError("expected panel in [0, ")
           << panels << ") for " << getRing().getType() << ", got " << *panel;
  return success();
}

LogicalResult FragSplatOp::verify() {
  if (getType().getLayout() == FragmentLayout::OperandA)
    return emitOpError("expected an acc or rows fragment, got ")
           << getType();
  return success();
}

/// `registers` are exactly `fragment`'s, in number and type.
static LogicalResult verifyRegisters(Operation *op, FragmentType fragment,
                                     TypeRange registers) {
  if (static_cast<int64_t>(registers.size()) != fragment.getRegisterCount())
    return op->emitOpError("expected ")
           << fragment.getRegisterCount() << " registers for " << fragment
           << ", got " << registers.size();
  for (Type t : registers)
    if (t != fragment.getRegisterType())
      return op->emitOpError("expected ")
             << fragment.getRegisterType() << " registers for " << fragment
             << ", got " << t;
  return success();
}

LogicalResult FragFromRegistersOp::verify() {
  return verifyRegisters(*this, getType(), getRegisters().getTypes());
}

LogicalResult FragRegistersOp::verify() {
  return verifyRegisters(*this, getFragment().getType(),
                         getRegisters().getTypes());
}

Type WarpgroupMmaOp::getInputType() {
  if (auto a = dyn_cast<FragmentType>(getA().getType()))
    return a.getElementType();
  return *getElementType();
}

LogicalResult WarpgroupMmaOp::verify() {
  auto acc = cast<FragmentType>(getAcc().getType());
  int64_t n = acc.getCols();
  if (n > 256)
    return emitOpError("expected at most 256 accumulator columns (wgmma's "
                       "largest N), got ")
           << n;
  auto a = dyn_cast<FragmentType>(getA().getType());
  if (!a) {
    if (!getElementType())
      return emitOpError("expected element_type with a descriptor A");
    if (getAKStep() != 0)
      return emitOpError("expected a_k_step only with a fragment A");
  } else {
    if (getElementType() && *getElementType() != a.getElementType())
      return emitOpError("expected element_type to match the A fragment's ")
             << a.getElementType() << ", got " << *getElementType();
    if (getTransposeA())
      return emitOpError("expected transpose_a only with a descriptor A");
    int64_t kStep = getAKStep();
    if (kStep < 0 || 16 * (kStep + 1) > a.getCols())
      return emitOpError("expected a_k_step in [0, ")
             << a.getCols() / 16 << ") for " << a << ", got " << kStep;
  }
  Type in = getInputType();
  if (!in.isF16() && !in.isBF16())
    return emitOpError("expected f16 or bf16 inputs, got ") << in;
  return success();
}

LogicalResult WarpMmaOp::verify() {
  auto a = cast<FragmentType>(getA().getType());
  auto acc = cast<FragmentType>(getAcc().getType());
  int64_t tile = getNTile(), kStep = getAKStep();
  if (tile < 0 || 8 * (tile + 1) > acc.getCols())
    return emitOpError("expected n_tile in [0, ")
           << acc.getCols() / 8 << ") for " << acc << ", got " << tile;
  if (kStep < 0 || 16 * (kStep + 1) > a.getCols())
    return emitOpError("expected a_k_step in [0, ")
           << a.getCols() / 16 << ") for " << a << ", got " << kStep;
  return success();
}

LogicalResult MaskScoresOp::verify() {
  if (getScores().empty())
    return emitOpError("expected at least one score fragment");
  bool window = getWindowLeft() || getWindowRight();
  if (window != static_cast<bool>(getRowMinusKey()))
    return emitOpError(window ? "expected row_minus_key with a window side"
                              : "expected row_minus_key only with a window "
                                "side");
  for (std::optional<int64_t> side : {getWindowLeft(), getWindowRight()})
    if (side && *side < 0)
      return emitOpError("expected window sides >= 0, got ") << *side;
  return success();
}

LogicalResult OnlineSoftmaxOp::verify() {
  int64_t fma = getExp2FmaTiles();
  if (fma < 0 || fma > 8)
    return emitOpError("expected exp2_fma_tiles in [0, 8], got ") << fma;
  return success();
}

LogicalResult ToOperandOp::verify() {
  auto from = cast<FragmentType>(getFragment().getType());
  auto to = cast<FragmentType>(getType());
  if (from.getCols() != to.getCols())
    return emitOpError("expected ")
           << from.getCols() << " columns in the A operand, got "
           << to.getCols();
  return success();
}

#define GET_OP_CLASSES
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.cpp.inc"
