//===- LaunchGridIR.h - the launch grid, in IR ------------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// An #attn.grid is defined by the runtime's launchGrid
// (attn/Runtime/LaunchGrid.h). The manifest writer hands it to the runtime
// (runtimeGrid); the host lowering builds the same arithmetic on the
// run-time sizes (buildLaunchGrid). test/Conversion/LaunchGridIRTests.cpp
// folds the IR on constant sizes and compares it with launchGrid.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPULAUNCH_LAUNCHGRIDIR_H
#define ATTN_CONVERSION_ATTNTOGPULAUNCH_LAUNCHGRIDIR_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Runtime/LaunchGrid.h"

#include "mlir/IR/Builders.h"

#include <array>

namespace mlir::attn {

/// The runtime's policy of `policy` (the same grid, the same name).
inline ::attn::runtime::GridPolicy runtimeGridPolicy(GridPolicy policy) {
  using RT = ::attn::runtime::GridPolicy;
  switch (policy) {
  case GridPolicy::query_tiles:
    return RT::QueryTiles;
  case GridPolicy::length_major:
    return RT::LengthMajor;
  case GridPolicy::persistent:
    return RT::Persistent;
  case GridPolicy::key_tiles:
    return RT::KeyTiles;
  }
  return RT::QueryTiles; // every enumerator is handled above
}

/// The runtime's grid of `grid`.
inline ::attn::runtime::GridSpec runtimeGrid(GridAttr grid) {
  return {runtimeGridPolicy(grid.getPolicy()), grid.getBlockRows()};
}

/// The run-time sizes a grid depends on, as `index` values; `numSms` is
/// called only for a persistent grid.
struct GridSizeValues {
  Value batch, headsQ, headsKv, seqQ, seqKv;
  function_ref<Value()> numSms;
};

/// `grid`'s {x, y, z} for `sizes` as `index` values: launchGrid's
/// arithmetic (folded where the sizes are constants).
std::array<Value, 3> buildLaunchGrid(OpBuilder &b, Location loc, GridAttr grid,
                                     const GridSizeValues &sizes);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOGPULAUNCH_LAUNCHGRIDIR_H
