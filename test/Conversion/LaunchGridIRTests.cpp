//===- LaunchGridIRTests.cpp - the grid in IR against the runtime's -------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// For every #attn.grid policy and many shapes: buildLaunchGrid on constant
// sizes folds to constants, and those are the runtime's launchGrid (the one
// definition the manifest names); the policy maps to the runtime's of the
// same name. Usage: attn-launch-grid-ir-tests (prints PASS/FAIL lines).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPULaunch/LaunchGridIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdio>
#include <optional>

using namespace mlir;
using namespace mlir::attn;
namespace rt = ::attn::runtime;

int main() {
  MLIRContext ctx;
  ctx.loadDialect<AttnDialect, arith::ArithDialect, func::FuncDialect>();
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  const int64_t batches[] = {1, 2, 3, 5, 8, 33, 132, 133, 1000};
  const int64_t heads[] = {1, 2, 3, 16, 40, 128};
  const int64_t seqs[] = {1,    15,   16,   17,   127,   128,   129,
                          1000, 4095, 4096, 4097, 12345, 65536, 1000000};
  const int64_t rows[] = {4, 16, 64, 80, 128, 192, 256};
  const GridPolicy policies[] = {GridPolicy::query_tiles,
                                 GridPolicy::length_major,
                                 GridPolicy::persistent, GridPolicy::key_tiles};
  int failures = 0;
  for (GridPolicy policy : policies) {
    int before = failures;
    // The same grid in the runtime, under the same name.
    rt::GridPolicy runtime = runtimeGridPolicy(policy);
    std::optional<rt::GridPolicy> named =
        rt::parseGridPolicy(stringifyGridPolicy(policy).str());
    if (!named || *named != runtime) {
      std::printf("FAIL %s: the runtime's policy of this name is another\n",
                  stringifyGridPolicy(policy).data());
      ++failures;
    }
    for (int64_t batch : batches)
      for (int64_t h : heads)
        for (int64_t n : seqs)
          for (int64_t r : rows) {
            rt::GridSizes s;
            s.batch = batch, s.headsQ = h, s.headsKv = h > 2 ? h / 2 : h;
            s.seqQ = n, s.seqKv = n % 3 == 0 ? n : n + 7;
            s.numSms = 132;
            auto constant = [&](int64_t v) -> Value {
              return arith::ConstantIndexOp::create(b, loc, v);
            };
            auto numSms = [&]() { return constant(s.numSms); };
            GridSizeValues values{constant(s.batch),   constant(s.headsQ),
                                  constant(s.headsKv), constant(s.seqQ),
                                  constant(s.seqKv),   numSms};
            GridAttr grid = GridAttr::get(&ctx, policy, r);
            std::array<Value, 3> ir = buildLaunchGrid(b, loc, grid, values);
            std::array<int64_t, 3> want = rt::launchGrid(runtimeGrid(grid), s);
            for (int d = 0; d < 3; ++d) {
              std::optional<int64_t> got = getConstantIntValue(ir[d]);
              if (got && *got == want[d])
                continue;
              if (++failures <= 10)
                std::printf("FAIL %s: rows %lld batch %lld heads %lld seq "
                            "%lld: grid.%c = %s, the runtime's %lld\n",
                            stringifyGridPolicy(policy).data(), (long long)r,
                            (long long)batch, (long long)h, (long long)n,
                            "xyz"[d],
                            got ? std::to_string(*got).c_str() : "not folded",
                            (long long)want[d]);
            }
            // The constants are not needed once compared.
            for (Operation &op : *module->getBody())
              op.dropAllReferences();
            module->getBody()->clear();
            b.setInsertionPointToEnd(module->getBody());
          }
    std::printf("%s %s\n", failures == before ? "PASS" : "FAIL",
                stringifyGridPolicy(policy).data());
  }
  std::printf("%d failed\n", failures);
  return failures ? 1 : 0;
}
