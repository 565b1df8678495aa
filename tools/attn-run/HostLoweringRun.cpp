//===- HostLoweringRun.cpp - attn-run --target cuda --host-lowering -------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The issue-23 path: the kernel launched by host code that MLIR lowered
// (convert-attn-to-gpu-launch, upstream gpu-to-llvm), JIT-compiled and
// linked against attn's mgpu* functions, instead of the runtime reading a
// manifest. The inputs, poison and check are the manifest path's.
//
//===----------------------------------------------------------------------===//

#include "HostLoweringRun.h"

#include "attn/Execution/AttentionModule.h"
#include "attn/InitAll.h"
#include "attn/Runtime/Check.h"
#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/DeviceMemory.h"
#include "attn/Runtime/Json.h"
#include "attn/Runtime/MgpuWrappers.h"
#include "attn/Support/JsonNumber.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include <random>
#include <sstream>

using namespace mlir;
using namespace ::attn::runtime;
using ::attn::AttentionProblem;
using ::attn::dtypeBytes;
using ::attn::jsonNumber;
namespace tools = ::attn::tools;

namespace {
llvm::Error error(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The passes from attn.attention on memrefs (buildAttentionModule's
/// destination-passing function) to the LLVM dialect.
std::string hostPipeline(const tools::HostLoweringRunOptions &o) {
  std::ostringstream os;
  os << "convert-attn-to-gpu{chip=" << o.chip << " block-m=" << o.blockM
     << " block-n=" << o.blockN << " warp-rows=" << o.warpRows << "},"
     << "convert-attn-to-gpu-launch,"
     // PTX: the driver JIT-compiles it for whatever GPU runs it.
     << "attn-compile-kernels{chip=" << o.chip << " format=isa},"
     << "one-shot-bufferize,gpu-to-llvm,convert-arith-to-llvm,"
     << "convert-func-to-llvm,finalize-memref-to-llvm,"
     << "reconcile-unrealized-casts";
  return os.str();
}

/// A dense row-major memref descriptor (StridedMemRefType<T, N>): allocated
/// and aligned pointer, offset, sizes, strides, all 8 bytes.
std::vector<int64_t> descriptor(cu::DevicePtr ptr,
                                const std::vector<int64_t> &shape) {
  size_t rank = shape.size();
  std::vector<int64_t> d(3 + 2 * rank);
  d[0] = d[1] = static_cast<int64_t>(ptr);
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    d[3 + i] = shape[i];
    d[3 + rank + i] = stride;
    stride *= shape[i];
  }
  return d;
}
} // namespace

llvm::Expected<tools::HostLoweringRunResult>
tools::runThroughHostLowering(const AttentionProblem &p,
                              const HostLoweringRunOptions &o) {
  if (p.isVarlen() || p.bias)
    return error("--host-lowering: variable length (--seq-lens-q) and "
                 "--bias are not lowered to host code yet "
                 "(convert-attn-to-gpu-launch); drop --host-lowering");
  // The driver first: without one there is nothing to run the JIT for.
  Expected<const CudaDriver *> drv = CudaDriver::get();
  if (!drv)
    return error("--target cuda: " + drv.message());
  const CudaDriver &d = **drv;
  Expected<cu::Context> ctx = ensureContext(d, 0);
  if (!ctx)
    return error("--target cuda: " + ctx.message());

  DialectRegistry registry;
  mlir::attn::registerAllDialects(registry);
  // gpu.binary and gpu.launch_func to LLVM IR: the embedded PTX and the
  // mgpu* calls (SelectObjectAttr's translation).
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diagnostics += (diagnostics.empty() ? "" : "; ") + diag.str();
    return success();
  });
  OwningOpRef<ModuleOp> module = mlir::attn::buildAttentionModule(context, p);
  mlir::attn::registerAllPasses();
  PassManager pm(&context);
  std::string parseErrors;
  llvm::raw_string_ostream parseOs(parseErrors);
  if (failed(parsePassPipeline(hostPipeline(o), pm, parseOs)))
    return error("--host-lowering: " + parseErrors);
  // The kernel's name, for the report, before the launch is lowered.
  std::string entry;
  if (failed(pm.run(*module)))
    return error("--host-lowering: " + diagnostics);
  module->walk([&](gpu::LaunchFuncOp launch) {
    entry = launch.getKernelName().getValue().str();
  });

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  ExecutionEngineOptions engineOptions;
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0, nullptr);
  engineOptions.transformer = transformer;
  auto engine = ExecutionEngine::create(*module, engineOptions);
  if (!engine)
    return error("--host-lowering: JIT: " + llvm::toString(engine.takeError()) +
                 (diagnostics.empty() ? "" : " (" + diagnostics + ")"));
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    for (auto [name, address] : mgpuSymbols())
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                 llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  // Loads the kernel module (a global constructor calls mgpuModuleLoadJIT).
  (void)takeMgpuError();
  (*engine)->initialize();
  if (Status s = takeMgpuError(); !s)
    return error("--target cuda: " + s.message());

  // Inputs as the manifest path draws them; outputs poisoned (NaN).
  std::mt19937_64 rng(o.seed);
  size_t qN = p.batch * p.headsQ * p.seqQ * p.headDim;
  size_t kN = p.batch * p.headsKv * p.seqKv * p.headDim;
  size_t vN = p.batch * p.headsKv * p.seqKv * p.vDim();
  size_t oN = p.batch * p.headsQ * p.seqQ * p.vDim();
  size_t lseN = p.batch * p.headsQ * p.seqQ;
  HostTensor hq = HostTensor::random(p.dtype, qN, o.inputRange, rng);
  HostTensor hk = HostTensor::random(p.dtype, kN, o.inputRange, rng);
  HostTensor hv = HostTensor::random(p.dtype, vN, 1.0, rng);
  DeviceBuffer dq(d), dk(d), dv(d), dout(d), dlse(d);
  for (auto [buffer, bytes] :
       {std::pair{&dq, hq.bytes.size()},
        {&dk, hk.bytes.size()},
        {&dv, hv.bytes.size()},
        {&dout, oN * static_cast<size_t>(dtypeBytes(p.dtype))},
        {&dlse, lseN * sizeof(float)}})
    if (Status s = buffer->allocate(std::max<size_t>(bytes, 1)); !s)
      return error("--target cuda: " + s.message());
  for (auto [buffer, host] : {std::pair{&dq, &hq}, {&dk, &hk}, {&dv, &hv}})
    if (Status s = d.check(
            d.MemcpyHtoD(buffer->get(), host->bytes.data(), host->bytes.size()),
            "cuMemcpyHtoD");
        !s)
      return error("--target cuda: " + s.message());
  for (DeviceBuffer *buffer : {&dout, &dlse})
    if (Status s = d.check(d.MemsetD8(buffer->get(), 0xff, buffer->size()),
                           "cuMemsetD8");
        !s)
      return error("--target cuda: " + s.message());

  // key_range: each batch entry's [start, end), i32 [B] on the device.
  DeviceBuffer dstart(d), dend(d);
  if (p.hasKeyRanges())
    for (auto [buffer, bounds] : {std::pair{&dstart, p.keyBounds(true)},
                                  {&dend, p.keyBounds(false)}}) {
      size_t bytes = bounds.size() * sizeof(int32_t);
      if (Status s = buffer->allocate(std::max<size_t>(bytes, 1)); !s)
        return error("--target cuda: " + s.message());
      if (Status s = d.check(
              d.MemcpyHtoD(buffer->get(), bounds.data(), bytes),
              "cuMemcpyHtoD");
          !s)
        return error("--target cuda: " + s.message());
    }

  // ALiBi: the tools' slopes, f32 [B, Hq] on the device.
  DeviceBuffer dslopes(d);
  if (p.alibi) {
    std::vector<float> slopes = p.alibiSlopes();
    size_t bytes = slopes.size() * sizeof(float);
    if (Status s = dslopes.allocate(std::max<size_t>(bytes, 1)); !s)
      return error("--target cuda: " + s.message());
    if (Status s = d.check(d.MemcpyHtoD(dslopes.get(), slopes.data(), bytes),
                           "cuMemcpyHtoD");
        !s)
      return error("--target cuda: " + s.message());
  }

  // @attention(q, k, v, [key_start, key_end], [alibi_slopes], o, [lse]) on
  // memrefs, through its C interface.
  std::vector<std::vector<int64_t>> descriptors = {
      descriptor(dq.get(), {p.batch, p.headsQ, p.seqQ, p.headDim}),
      descriptor(dk.get(), {p.batch, p.headsKv, p.seqKv, p.headDim}),
      descriptor(dv.get(), {p.batch, p.headsKv, p.seqKv, p.vDim()})};
  if (p.hasKeyRanges()) {
    descriptors.push_back(descriptor(dstart.get(), {p.batch}));
    descriptors.push_back(descriptor(dend.get(), {p.batch}));
  }
  if (p.alibi)
    descriptors.push_back(descriptor(dslopes.get(), {p.batch, p.headsQ}));
  descriptors.push_back(
      descriptor(dout.get(), {p.batch, p.headsQ, p.seqQ, p.vDim()}));
  if (p.withLse)
    descriptors.push_back(descriptor(dlse.get(), {p.batch, p.headsQ, p.seqQ}));
  std::vector<void *> pointers, packed;
  for (std::vector<int64_t> &desc : descriptors)
    pointers.push_back(desc.data());
  for (void *&ptr : pointers)
    packed.push_back(&ptr);
  if (llvm::Error err = (*engine)->invokePacked(
          std::string("_mlir_ciface_") + mlir::attn::kAttentionEntry, packed))
    return error("--host-lowering: " + llvm::toString(std::move(err)));
  if (Status s = takeMgpuError(); !s)
    return error("--target cuda: " + s.message());

  HostTensor ho = HostTensor::zeros(p.dtype, oN);
  std::vector<float> lse(lseN);
  if (Status s =
          d.check(d.MemcpyDtoH(ho.bytes.data(), dout.get(), ho.bytes.size()),
                  "cuMemcpyDtoH");
      !s)
    return error("--target cuda: " + s.message());
  if (p.withLse)
    if (Status s = d.check(
            d.MemcpyDtoH(lse.data(), dlse.get(), lse.size() * sizeof(float)),
            "cuMemcpyDtoH");
        !s)
      return error("--target cuda: " + s.message());

  CheckOptions checkOptions;
  checkOptions.seed = o.seed;
  checkOptions.maxRows = o.checkRows;
  CheckReport c = checkAttention(p, hq, hk, hv, ho, lse, checkOptions);
  std::ostringstream os;
  os << "{\"target\":\"cuda\",\"launch\":\"host-lowering\",\"kernel\":"
     << jsonQuote(entry) << ",\"shape\":" << p.shapeJson()
     << ",\"seed\":" << o.seed << ",\"check\":\""
     << (c.full ? "full" : "sampled") << "\",\"checked_rows\":" << c.rows
     << ",\"rel_err\":" << jsonNumber(c.out.relErr)
     << ",\"max_abs_err\":" << jsonNumber(c.out.maxAbsErr);
  if (p.withLse)
    os << ",\"lse_rel_err\":" << jsonNumber(c.lse.relErr);
  os << ",\"non_finite_out\":" << c.nonFiniteOut
     << ",\"tolerance\":" << jsonNumber(c.tolerance)
     << ",\"ok\":" << (c.ok ? "true" : "false") << "}";
  return HostLoweringRunResult{os.str(), c.ok};
}
