//===- AttnDialect.cpp - attn dialect registration ------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Support/OptionLimits.h"
#include "attn/Support/Sm90Schedules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnOpsDialect.cpp.inc"

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

namespace mlir::attn {
/// `[a, b, ...]` of attributes `T`, each whole or stripped (#attn.launch's
/// tensor_maps and kernels).
template <typename T>
static FailureOr<SmallVector<T>> parseAttrList(AsmParser &parser) {
  SmallVector<T> out;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        FailureOr<T> a = FieldParser<T>::parse(parser);
        if (failed(a))
          return failure();
        out.push_back(*a);
        return success();
      }))
    return failure();
  return out;
}

template <typename T>
static void printAttrList(AsmPrinter &printer, ArrayRef<T> list) {
  printer << '[';
  llvm::interleaveComma(list, printer, [&](T a) { printer.printAttribute(a); });
  printer << ']';
}
} // namespace mlir::attn

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

/// The tile fields #attn.kernel_config and #attn.launch share, within the
/// tools' and passes' bounds (OptionLimits.h); each family checks its own,
/// tighter ones when it generates the kernel.
static LogicalResult verifyTile(function_ref<InFlightDiagnostic()> emitError,
                                int64_t blockM, int64_t blockN,
                                int64_t warpRows, int64_t stages) {
  for (auto [name, v] : {std::pair<StringRef, int64_t>{"block_m", blockM},
                         {"block_n", blockN}})
    if (v < 1 || v > ::attn::kMaxBlockSize)
      return emitError() << "expected " << name << " in [1, "
                         << ::attn::kMaxBlockSize << "], got " << v;
  if (warpRows != 16 && warpRows != ::attn::kMaxWarpRows)
    return emitError() << "expected warp_rows 16 or 32, got " << warpRows;
  if (stages < 2)
    return emitError() << "expected stages >= 2, got " << stages;
  return success();
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
  if (failed(verifyTile(emitError, blockM, blockN, warpRows, stages)))
    return failure();
  // The sm90a schedules (forward consumers, backward dQ order); sm80
  // kernels have one.
  if (!schedule.empty() && !::attn::findSm90Schedule(schedule))
    return emitError() << "expected schedule "
                       << ::attn::sm90ScheduleNames(/*backward=*/false)
                       << " (forward), "
                       << ::attn::sm90ScheduleNames(/*backward=*/true)
                       << " (backward) or none, got '" << schedule << "'";
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

LogicalResult GridAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               GridPolicy policy, int64_t blockRows) {
  if (blockRows < 1 || blockRows > ::attn::kMaxBlockSize)
    return emitError() << "expected block_rows in [1, " << ::attn::kMaxBlockSize
                       << "], got " << blockRows;
  return success();
}

LogicalResult
TensorMapAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      StringRef name, StringRef tensor, int64_t boxCols,
                      int64_t boxRows) {
  if (name.empty())
    return emitError() << "expected a tensor map's name (its kernel "
                          "parameter), got none";
  static constexpr StringRef kTensors[] = {"q", "k", "v", "o", "do"};
  if (!llvm::is_contained(kTensors, tensor))
    return emitError() << "expected tensor q, k, v, o or do, got '" << tensor
                       << "'";
  // cuTensorMapEncodeTiled's bound on a box dimension.
  for (auto [field, v] : {std::pair<StringRef, int64_t>{"box_cols", boxCols},
                          {"box_rows", boxRows}})
    if (v < 1 || v > 256)
      return emitError() << "expected " << field << " in [1, 256], got " << v;
  return success();
}

/// Threads and shared memory of one kernel launch; `what` says whose.
static LogicalResult verifyBlock(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef what, int64_t threads,
                                 int64_t sharedMemory) {
  if (threads < 32 || threads > 1024 || threads % 32)
    return emitError() << "expected " << what
                       << "threads a multiple of 32 in [32, 1024], got "
                       << threads;
  if (sharedMemory < 0)
    return emitError() << "expected " << what
                       << "dynamic_shared_memory >= 0, got " << sharedMemory;
  return success();
}

LogicalResult
KernelLaunchAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         StringRef role, StringRef entry, int64_t threads,
                         int64_t dynamicSharedMemory, GridAttr grid) {
  static constexpr StringRef kRoles[] = {"preprocess", "dkdv", "convert", "dq"};
  if (!llvm::is_contained(kRoles, role))
    return emitError() << "expected role preprocess, dkdv, convert or dq, "
                          "got '"
                       << role << "'";
  if (entry.empty())
    return emitError() << "expected the " << role
                       << " kernel's entry, got none";
  return verifyBlock(emitError, "", threads, dynamicSharedMemory);
}

LogicalResult LaunchAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef family,
    int64_t blockM, int64_t blockN, int64_t warpRows, int64_t stages,
    int64_t threads, int64_t dynamicSharedMemory, GridAttr grid,
    ArrayRef<TensorMapAttr> tensorMaps, ArrayRef<KernelLaunchAttr> kernels,
    bool deterministic, StringRef schedule, StringRef source) {
  bool tma = family == "sm90a-wgmma";
  if (!tma && family != "sm80-mma")
    return emitError() << "expected family sm80-mma or sm90a-wgmma, got '"
                       << family << "'";
  if (failed(verifyTile(emitError, blockM, blockN, warpRows, stages)))
    return failure();
  if (failed(verifyBlock(emitError, "", threads, dynamicSharedMemory)))
    return failure();
  if (source != "heuristic" && source != "option" && source != "tuning-db")
    return emitError() << "expected source heuristic, option or tuning-db, "
                          "got '"
                       << source << "'";
  // The sm90a-wgmma kernels take their TMA descriptors after the ABI's
  // other parameters; sm80-mma kernels take none.
  if (tma && tensorMaps.empty())
    return emitError() << "expected tensor_maps with family sm90a-wgmma (its "
                          "kernels take TMA descriptors)";
  if (!tma && !tensorMaps.empty())
    return emitError() << "expected no tensor_maps with family sm80-mma (its "
                          "kernels take no TMA descriptors)";
  llvm::StringSet<> names;
  for (TensorMapAttr m : tensorMaps)
    if (!names.insert(m.getName()).second)
      return emitError() << "expected distinct tensor map names, got '"
                         << m.getName() << "' twice";

  if (kernels.empty()) {
    // A forward: one kernel, tiled by block_m query rows.
    if (deterministic || !schedule.empty())
      return emitError() << "expected no deterministic or schedule without "
                            "backward kernels";
    if (grid.getPolicy() == GridPolicy::key_tiles)
      return emitError() << "expected a query_tiles, length_major or "
                            "persistent grid for a forward launch (no "
                            "kernels), got key_tiles";
    if (!tma && grid.getPolicy() != GridPolicy::query_tiles)
      return emitError() << "expected a query_tiles grid with family "
                            "sm80-mma, got "
                         << stringifyGridPolicy(grid.getPolicy());
    if (grid.getBlockRows() != blockM)
      return emitError() << "expected the grid's block_rows to be block_m ("
                         << blockM << "), got " << grid.getBlockRows();
    return success();
  }

  // A backward: preprocess, dkdv, then convert or (sm80-mma and
  // deterministic) dq; the sm90a-wgmma dkdv kernel orders its own dQ.
  SmallVector<StringRef> roles;
  for (KernelLaunchAttr k : kernels)
    roles.push_back(k.getRole());
  SmallVector<StringRef> expected = {
      "preprocess", "dkdv", deterministic && !tma ? "dq" : "convert"};
  if (roles != expected)
    return emitError() << "expected kernels preprocess, dkdv, "
                       << expected.back() << " (family " << family
                       << ", deterministic = "
                       << (deterministic ? "true" : "false") << "), got "
                       << llvm::join(roles, ", ");
  KernelLaunchAttr dkdv = kernels[1];
  if (dkdv.getThreads() != threads ||
      dkdv.getDynamicSharedMemory() != dynamicSharedMemory ||
      dkdv.getGrid() != grid)
    return emitError() << "expected threads, dynamic_shared_memory and grid "
                          "to be the dkdv kernel's";
  const ::attn::Sm90Schedule *known = ::attn::findSm90Schedule(schedule);
  if (!schedule.empty() && !(known && known->backward))
    return emitError() << "expected schedule "
                       << ::attn::sm90ScheduleNames(/*backward=*/true, "none")
                       << ", got '" << schedule << "'";
  if (!tma && !schedule.empty())
    return emitError() << "expected no schedule with family sm80-mma";
  return success();
}
