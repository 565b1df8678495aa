//===- LaunchGridIR.cpp - the launch grid, in IR --------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPULaunch/LaunchGridIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;

// Step for step ::attn::runtime::launchGrid (lib/Runtime/LaunchGrid.cpp),
// in unsigned index arithmetic (the sizes are >= 0).
std::array<Value, 3> mlir::attn::buildLaunchGrid(OpBuilder &b, Location loc,
                                                 GridAttr grid,
                                                 const GridSizeValues &s) {
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto mul = [&](Value x, Value y) {
    return b.createOrFold<arith::MulIOp>(loc, x, y);
  };
  auto blocks = [&](Value n) {
    return b.createOrFold<arith::CeilDivUIOp>(loc, n,
                                              constant(grid.getBlockRows()));
  };
  std::array<Value, 3> out;
  switch (grid.getPolicy()) {
  case GridPolicy::query_tiles:
    out = {blocks(s.seqQ), mul(s.batch, s.headsQ), Value()};
    break;
  case GridPolicy::length_major:
    out = {mul(blocks(s.seqQ), s.headsQ), s.batch, Value()};
    break;
  case GridPolicy::persistent: {
    // max(1, seq_q >= 4096 ? T : min(T, num_sms / max(batch, 1))): an
    // empty batch launches nothing, but the division must not trap first.
    // (One statement per op: the IR's order is the source's.)
    Value queryBlocks = blocks(s.seqQ);
    Value sms = s.numSms();
    Value one = constant(1);
    Value tiles = mul(queryBlocks, s.headsQ);
    Value batch = b.createOrFold<arith::MaxUIOp>(loc, s.batch, one);
    Value perBatch = b.createOrFold<arith::DivUIOp>(loc, sms, batch);
    Value longRows = b.createOrFold<arith::CmpIOp>(
        loc, arith::CmpIPredicate::uge, s.seqQ, constant(4096));
    Value fewer = b.createOrFold<arith::MinUIOp>(loc, tiles, perBatch);
    Value x = b.createOrFold<arith::SelectOp>(loc, longRows, tiles, fewer);
    out = {b.createOrFold<arith::MaxUIOp>(loc, one, x), s.batch, Value()};
    break;
  }
  case GridPolicy::key_tiles:
    out = {blocks(s.seqKv), mul(s.batch, s.headsKv), Value()};
    break;
  }
  out[2] = constant(1);
  return out;
}
