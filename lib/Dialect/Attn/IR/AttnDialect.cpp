//===- AttnDialect.cpp - attn dialect registration ------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Support/OptionLimits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnOpsDialect.cpp.inc"

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"
      >();
}

LogicalResult
KernelConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         StringRef family, int64_t blockM, int64_t blockN,
                         int64_t warpRows, int64_t stages, StringRef schedule,
                         bool persistent, bool deterministic,
                         int64_t exp2Emulated, bool wideProducer,
                         int64_t sectionMb, StringRef source,
                         StringRef reason) {
  if (family != "sm80" && family != "sm90a")
    return emitError() << "expected family sm80 or sm90a, got '" << family
                       << "'";
  // The tools' and passes' bounds (OptionLimits.h); each family checks
  // its own, tighter ones when it generates the kernel.
  for (auto [name, v] : {std::pair<StringRef, int64_t>{"block_m", blockM},
                         {"block_n", blockN}})
    if (v < 1 || v > ::attn::kMaxBlockSize)
      return emitError() << "expected " << name << " in [1, "
                         << ::attn::kMaxBlockSize << "], got " << v;
  if (warpRows != 16 && warpRows != ::attn::kMaxWarpRows)
    return emitError() << "expected warp_rows 16 or 32, got " << warpRows;
  if (stages < 2)
    return emitError() << "expected stages >= 2, got " << stages;
  // The sm90a schedules (forward consumers, backward dQ order); sm80
  // kernels have one.
  static constexpr StringRef kSchedules[] = {
      "",         "pingpong", "overlap",  "serial",
      "dq-pipelined", "dq-first", "dk-first", "deterministic"};
  if (!llvm::is_contained(kSchedules, schedule))
    return emitError() << "expected schedule pingpong, overlap, serial, "
                          "dq-pipelined, dq-first, dk-first, deterministic "
                          "or none, got '"
                       << schedule << "'";
  if (family == "sm80" && (!schedule.empty() || persistent ||
                           exp2Emulated || wideProducer))
    return emitError() << "expected no schedule, persistent, exp2_emulated "
                          "or wide_producer with family sm80";
  if (exp2Emulated < 0 || exp2Emulated > 8)
    return emitError() << "expected exp2_emulated in [0, 8], got "
                       << exp2Emulated;
  if (sectionMb < 0)
    return emitError() << "expected section_mb >= 0, got " << sectionMb;
  if (source != "heuristic" && source != "option" && source != "tuning-db")
    return emitError() << "expected source heuristic, option or tuning-db, "
                          "got '"
                       << source << "'";
  return success();
}
