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
  size_t count = getValues().size();
  if (count < 1 || count > 2)
    return emitOpError("expected 1 or 2 values, got ") << count;
  if (getVector() && count != 2)
    return emitOpError("expected 2 values with vector, got ") << count;
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

#define GET_OP_CLASSES
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.cpp.inc"
