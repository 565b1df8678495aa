//===- AttnGPUDialect.cpp - attn_gpu dialect registration -----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn_gpu;

#include "attn/Dialect/AttnGPU/IR/AttnGPUOpsDialect.cpp.inc"

void AttnGPUDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "attn/Dialect/AttnGPU/IR/AttnGPUOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/AttnGPU/IR/AttnGPUOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// FragmentType
//===----------------------------------------------------------------------===//

namespace {
constexpr std::pair<FragmentLayout, StringLiteral> kLayoutNames[] = {
    {FragmentLayout::Accumulator, "acc"},
    {FragmentLayout::OperandA, "a"},
    {FragmentLayout::Rows, "rows"}};
} // namespace

Type FragmentType::parse(AsmParser &parser) {
  SmallVector<int64_t, 2> shape;
  Type elementType;
  StringRef layoutName;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseKeyword(&layoutName) || parser.parseGreater())
    return {};
  if (shape.size() != 2) {
    parser.emitError(parser.getNameLoc(),
                     "expected a fragment shape rows x cols, got ")
        << shape.size() << " dimensions";
    return {};
  }
  for (auto [layout, name] : kLayoutNames)
    if (layoutName == name)
      return getChecked(
          [&] { return parser.emitError(parser.getNameLoc()); },
          parser.getContext(), shape[0], shape[1], elementType, layout);
  parser.emitError(parser.getNameLoc(),
                   "expected fragment layout acc, a or rows, got '")
      << layoutName << "'";
  return {};
}

void FragmentType::print(AsmPrinter &printer) const {
  printer << "<" << getRows() << "x" << getCols() << "x" << getElementType()
          << ", ";
  for (auto [layout, name] : kLayoutNames)
    if (layout == getLayout())
      printer << name;
  printer << ">";
}

LogicalResult
FragmentType::verify(function_ref<InFlightDiagnostic()> emitError,
                     int64_t rows, int64_t cols, Type elementType,
                     FragmentLayout layout) {
  if (rows != 16)
    return emitError() << "expected a fragment of 16 rows (one warp's), got "
                       << rows;
  switch (layout) {
  case FragmentLayout::Accumulator:
    if (!elementType.isF32())
      return emitError() << "expected f32 elements in an acc fragment, got "
                         << elementType;
    if (cols <= 0 || cols % 8 != 0)
      return emitError() << "expected a positive multiple of 8 columns in an "
                            "acc fragment, got "
                         << cols;
    return success();
  case FragmentLayout::OperandA:
    if (!elementType.isF16() && !elementType.isBF16())
      return emitError() << "expected f16 or bf16 elements in an a fragment, "
                            "got "
                         << elementType;
    if (cols <= 0 || cols % 16 != 0)
      return emitError() << "expected a positive multiple of 16 columns in an "
                            "a fragment, got "
                         << cols;
    return success();
  case FragmentLayout::Rows:
    if (!elementType.isF32() || cols != 1)
      return emitError() << "expected a rows fragment to be 16x1xf32, got "
                         << (Twine(rows) + "x" + Twine(cols) + "x").str()
                         << elementType;
    return success();
  }
  llvm_unreachable("unknown fragment layout");
}

int64_t FragmentType::getRegisterCount() const {
  switch (getLayout()) {
  case FragmentLayout::Accumulator:
    return getCols() / 2;
  case FragmentLayout::OperandA:
    return getCols() / 4;
  case FragmentLayout::Rows:
    return 2;
  }
  llvm_unreachable("unknown fragment layout");
}

Type FragmentType::getRegisterType() const {
  if (getLayout() == FragmentLayout::OperandA)
    return IntegerType::get(getContext(), 32);
  return Float32Type::get(getContext());
}

FragmentType FragmentType::getAccumulator(MLIRContext *context, int64_t cols) {
  return get(context, 16, cols, Float32Type::get(context),
             FragmentLayout::Accumulator);
}

FragmentType FragmentType::getRows(MLIRContext *context) {
  return get(context, 16, 1, Float32Type::get(context), FragmentLayout::Rows);
}

FragmentType FragmentType::getOperandA(Type elementType, int64_t cols) {
  return get(elementType.getContext(), 16, cols, elementType,
             FragmentLayout::OperandA);
}

//===----------------------------------------------------------------------===//
// RingType
//===----------------------------------------------------------------------===//

Type RingType::parse(AsmParser &parser) {
  SmallVector<int64_t, 3> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  if (shape.size() != 3) {
    parser.emitError(parser.getNameLoc(),
                     "expected a ring shape stages x rows x cols, got ")
        << shape.size() << " dimensions";
    return {};
  }
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); },
                    parser.getContext(), shape[0], shape[1], shape[2],
                    elementType);
}

void RingType::print(AsmPrinter &printer) const {
  printer << "<" << getStages() << "x" << getRows() << "x" << getCols() << "x"
          << getElementType() << ">";
}

LogicalResult RingType::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t stages, int64_t rows, int64_t cols,
                               Type elementType) {
  if (stages < 1)
    return emitError() << "expected at least one stage, got " << stages;
  if (rows < 8 || rows % 8 != 0)
    return emitError() << "expected rows to be a positive multiple of 8 (the "
                          "swizzle's period), got "
                       << rows;
  if (cols < 64 || cols % 64 != 0)
    return emitError() << "expected cols to be a positive multiple of 64 "
                          "(whole 128-byte panels), got "
                       << cols;
  if (!elementType.isF16() && !elementType.isBF16())
    return emitError() << "expected f16 or bf16 elements, got " << elementType;
  // sm_90's shared memory per block (227 KiB): also keeps a tile's offsets
  // i32 and a panel within a wgmma descriptor's 18-bit byte fields.
  constexpr int64_t kMaxSharedBytes = 227 * 1024;
  if (stages > kMaxSharedBytes || rows > kMaxSharedBytes ||
      cols > kMaxSharedBytes || stages * rows * cols * 2 > kMaxSharedBytes)
    return emitError() << "expected the ring to fit in shared memory ("
                       << kMaxSharedBytes << " bytes per block), got "
                       << stages << " tiles of " << rows << "x" << cols
                       << " elements";
  return success();
}

#define GET_TYPEDEF_CLASSES
#include "attn/Dialect/AttnGPU/IR/AttnGPUOpsTypes.cpp.inc"
