//===- TensorFunctionRunner.cpp - run a tensor function on the host -------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/TensorFunctionRunner.h"
#include "attn/Execution/HostRuntime.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Support/HostReference.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/TargetSelect.h"

#include <cstring>

using namespace mlir;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<double> HostTensor::toDoubles() const {
  std::vector<double> out(numElements());
  for (size_t i = 0; i < out.size(); ++i) {
    if (dtype == ::attn::DType::f32) {
      float f;
      std::memcpy(&f, &bytes[4 * i], 4);
      out[i] = f;
    } else {
      uint16_t h;
      std::memcpy(&h, &bytes[2 * i], 2);
      out[i] = dtype == ::attn::DType::bf16 ? ::attn::bf16BitsToFloat(h)
                                            : ::attn::f16BitsToFloat(h);
    }
  }
  return out;
}

static llvm::Expected<HostTensor> describe(Type type, const llvm::Twine &what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return error(what + " is not a statically shaped tensor");
  HostTensor t;
  Type elt = tensor.getElementType();
  if (elt.isF32())
    t.dtype = ::attn::DType::f32;
  else if (elt.isF16())
    t.dtype = ::attn::DType::f16;
  else if (elt.isBF16())
    t.dtype = ::attn::DType::bf16;
  else
    return error(what + " has element type other than f16, bf16 or f32");
  t.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  t.bytes.assign(t.numElements() * ::attn::dtypeBytes(t.dtype), 0);
  return t;
}

static llvm::Expected<func::FuncOp> lookupEntry(ModuleOp module,
                                                StringRef entry) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isExternal())
    return error("no function @" + entry + " with a body in the module");
  if (func.getNumResults() != 1)
    return error("@" + entry + " must return exactly one tensor");
  return func;
}

llvm::Error mlir::attn::getTensorFunctionSignature(
    ModuleOp module, StringRef entry, std::vector<HostTensor> &args,
    HostTensor &result) {
  auto func = lookupEntry(module, entry);
  if (!func)
    return func.takeError();
  args.clear();
  for (auto [i, type] : llvm::enumerate(func->getArgumentTypes())) {
    auto t = describe(type, "argument #" + llvm::Twine(i));
    if (!t)
      return t.takeError();
    args.push_back(std::move(*t));
  }
  auto r = describe(func->getResultTypes()[0], "the result");
  if (!r)
    return r.takeError();
  result = std::move(*r);
  return llvm::Error::success();
}

static std::string print(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

static std::string memrefOf(Type t) {
  auto tensor = cast<RankedTensorType>(t);
  return print(MemRefType::get(tensor.getShape(), tensor.getElementType()));
}

llvm::Error mlir::attn::lowerTensorFunctionForHost(ModuleOp module,
                                                   StringRef entry) {
  auto func = lookupEntry(module, entry);
  if (!func)
    return func.takeError();
  MLIRContext *ctx = module.getContext();

  // The wrapper, as text: memrefs in, the tensor function called in the
  // middle, the result stored into the last memref.
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string name = (entry + "_host").str();
  FunctionType type = func->getFunctionType();
  os << "func.func @" << name << "(";
  for (auto [i, t] : llvm::enumerate(type.getInputs()))
    os << "%a" << i << ": " << memrefOf(t) << ", ";
  os << "%out: " << memrefOf(type.getResult(0))
     << ") attributes {llvm.emit_c_interface} {\n";
  for (auto [i, t] : llvm::enumerate(type.getInputs()))
    os << "  %t" << i << " = bufferization.to_tensor %a" << i
       << " restrict : " << memrefOf(t) << " to " << print(t) << "\n";
  os << "  %r = func.call @" << entry << "(";
  for (size_t i = 0; i < type.getNumInputs(); ++i)
    os << (i ? ", " : "") << "%t" << i;
  os << ") : " << print(type) << "\n";
  os << "  bufferization.materialize_in_destination %r in restrict writable "
        "%out : ("
     << print(type.getResult(0)) << ", " << memrefOf(type.getResult(0))
     << ") -> ()\n  return\n}\n";
  // (Verified once it sits next to @entry.)
  OwningOpRef<ModuleOp> wrapper = parseSourceString<ModuleOp>(
      text, ParserConfig(ctx, /*verifyAfterParse=*/false));
  if (!wrapper)
    return error("cannot build the host wrapper of @" + entry);
  for (Operation &op : llvm::make_early_inc_range(*wrapper->getBody()))
    op.moveBefore(module.getBody(), module.getBody()->end());
  if (failed(verify(module)))
    return error("the host wrapper of @" + entry + " does not verify");

  // Inline the tensor function into the wrapper, then drop it.
  PassManager inliner(ctx);
  inliner.addPass(createInlinerPass());
  if (failed(inliner.run(module)))
    return error("inlining @" + entry + " failed");
  func->erase();

  // linalg.softmax and other aggregates have no loop lowering of their own.
  IRRewriter rewriter(ctx);
  SmallVector<linalg::AggregatedOpInterface> aggregates;
  module.walk([&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });
  for (linalg::AggregatedOpInterface op : aggregates) {
    rewriter.setInsertionPoint(op);
    FailureOr<SmallVector<Value>> parts = op.decomposeOperation(rewriter);
    if (failed(parts))
      return error("cannot decompose " + op->getName().getStringRef());
    rewriter.replaceOp(op, *parts);
  }

  PassManager lowering(ctx);
  buildHostLoweringPipeline(lowering);
  if (failed(lowering.run(module)))
    return error("lowering @" + entry + " to LLVM failed");
  return llvm::Error::success();
}

/// A memref descriptor of any rank: allocated and aligned pointers, offset,
/// sizes, strides, all 64-bit.
static std::vector<int64_t> descriptor(HostTensor &t) {
  size_t rank = t.shape.size();
  std::vector<int64_t> d(3 + 2 * rank);
  auto ptr = reinterpret_cast<int64_t>(t.bytes.data());
  d[0] = d[1] = ptr;
  d[2] = 0;
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    d[3 + i] = t.shape[i];
    d[3 + rank + i] = stride;
    stride *= t.shape[i];
  }
  return d;
}

llvm::Error mlir::attn::runTensorFunction(ModuleOp module, StringRef entry,
                                          std::vector<HostTensor> &args,
                                          HostTensor &result) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  ExecutionEngineOptions options;
  // A function_ref: keep what it calls alive (see CPUExecutor.cpp).
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(2, 0, nullptr);
  options.transformer = transformer;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();
  registerHostRuntimeSymbols(**engine);

  // The C interface takes a pointer to each descriptor; invokePacked a
  // pointer to each argument.
  std::vector<std::vector<int64_t>> descriptors;
  for (HostTensor &t : args)
    descriptors.push_back(descriptor(t));
  descriptors.push_back(descriptor(result));
  std::vector<void *> pointers, packed;
  for (auto &d : descriptors)
    pointers.push_back(d.data());
  for (void *&p : pointers)
    packed.push_back(&p);
  return (*engine)->invokePacked(("_mlir_ciface_" + entry + "_host").str(),
                                 packed);
}
