//===- CPUExecutor.cpp - run an attention module on the host --------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/CPUExecutor.h"
#include "attn/Execution/AttentionModule.h"
#include "attn/Execution/HostRuntime.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>

using namespace mlir;
using namespace mlir::attn;

HostModule::HostModule(std::unique_ptr<ExecutionEngine> engine)
    : engine(std::move(engine)) {}

HostModule::~HostModule() = default;

llvm::Expected<std::unique_ptr<HostModule>>
HostModule::compile(ModuleOp module) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());

  ExecutionEngineOptions options;
  // `transformer` is a function_ref: the std::function it calls must
  // outlive ExecutionEngine::create (a temporary dangled; found by ASan).
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0, nullptr);
  options.transformer = transformer;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();
  // Strided memref copies call memrefCopy.
  registerHostRuntimeSymbols(**engine);
  return std::unique_ptr<HostModule>(new HostModule(std::move(*engine)));
}

llvm::Expected<double> HostModule::call(StringRef entry,
                                        ArrayRef<HostBuffer> args) const {
  // A dense row-major memref descriptor, laid out as StridedMemRefType<T,
  // N>: allocated and aligned pointer, offset, N sizes, N strides, all
  // 8-byte fields.
  static_assert(sizeof(void *) == sizeof(int64_t), "64-bit hosts only");
  SmallVector<SmallVector<int64_t, 11>> descriptors;
  for (const HostBuffer &b : args) {
    size_t rank = b.shape.size();
    SmallVector<int64_t, 11> &d = descriptors.emplace_back(3 + 2 * rank);
    d[0] = d[1] = reinterpret_cast<intptr_t>(b.data);
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      d[3 + i] = b.shape[i];
      d[3 + rank + i] = stride;
      stride *= b.shape[i];
    }
  }
  // The C interface takes a pointer to each descriptor; invokePacked takes
  // a pointer to each argument.
  SmallVector<void *> pointers, packed;
  for (SmallVector<int64_t, 11> &d : descriptors)
    pointers.push_back(d.data());
  for (void *&p : pointers)
    packed.push_back(&p);

  auto start = std::chrono::steady_clock::now();
  if (llvm::Error err =
          engine->invokePacked(("_mlir_ciface_" + entry).str(), packed))
    return std::move(err);
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}

SmallVector<HostBuffer> mlir::attn::forwardArguments(
    const ::attn::AttentionProblem &p, void *q, void *k, void *v, void *bias,
    int32_t *cuQ, int32_t *cuKv, void *out, float *lse, float *scale,
    int32_t *keyStart, int32_t *keyEnd, float *alibiSlopes) {
  SmallVector<HostBuffer> args;
  if (p.isVarlen()) { // packed [T, H, D], LSE [H, T]
    int64_t tq = p.totalQ(), tk = p.totalKv();
    args = {{q, {tq, p.headsQ, p.headDim}},
            {k, {tk, p.headsKv, p.headDim}},
            {v, {tk, p.headsKv, p.vDim()}}};
  } else {
    args = {{q, {p.batch, p.headsQ, p.seqQ, p.headDim}},
            {k, {p.batch, p.headsKv, p.seqKv, p.headDim}},
            {v, {p.batch, p.headsKv, p.seqKv, p.vDim()}}};
  }
  if (p.bias)
    args.push_back({bias, {p.biasBatch(), p.biasHeads(), p.seqQ, p.seqKv}});
  if (p.isVarlen()) {
    args.push_back({cuQ, {p.batch + 1}});
    args.push_back({cuKv, {p.batch + 1}});
  }
  if (p.hasKeyRanges()) {
    args.push_back({keyStart, {p.batch}});
    args.push_back({keyEnd, {p.batch}});
  }
  if (p.alibi)
    args.push_back({alibiSlopes, {p.batch, p.headsQ}});
  if (scale)
    args.push_back({scale, {}});
  if (p.isVarlen()) {
    args.push_back({out, {p.totalQ(), p.headsQ, p.vDim()}});
    if (p.withLse)
      args.push_back({lse, {p.headsQ, p.totalQ()}});
  } else {
    args.push_back({out, {p.batch, p.headsQ, p.seqQ, p.vDim()}});
    if (p.withLse)
      args.push_back({lse, {p.batch, p.headsQ, p.seqQ}});
  }
  return args;
}

SmallVector<HostBuffer>
mlir::attn::gradArguments(const ::attn::AttentionProblem &p, void *q, void *k,
                          void *v, void *out, void *dout, float *lse, void *dq,
                          void *dk, void *dv, float *scale,
                          int32_t *keyStart, int32_t *keyEnd,
                          float *alibiSlopes) {
  SmallVector<int64_t, 4> qs = {p.batch, p.headsQ, p.seqQ, p.headDim};
  SmallVector<int64_t, 4> ks = {p.batch, p.headsKv, p.seqKv, p.headDim};
  SmallVector<int64_t, 4> vs = {p.batch, p.headsKv, p.seqKv, p.vDim()};
  SmallVector<int64_t, 4> os = {p.batch, p.headsQ, p.seqQ, p.vDim()};
  SmallVector<HostBuffer> args = {
      {q, qs},   {k, ks},    {v, vs},
      {out, os}, {dout, os}, {lse, {p.batch, p.headsQ, p.seqQ}}};
  if (keyStart) {
    args.push_back({keyStart, {p.batch}});
    args.push_back({keyEnd, {p.batch}});
  }
  if (p.alibi)
    args.push_back({alibiSlopes, {p.batch, p.headsQ}});
  if (scale)
    args.push_back({scale, {}});
  args.append({{dq, qs}, {dk, ks}, {dv, vs}});
  return args;
}

llvm::Expected<double> mlir::attn::runOnHost(ModuleOp module,
                                             const ::attn::AttentionProblem &p,
                                             HostTensors &t) {
  auto compiled = HostModule::compile(module);
  if (!compiled)
    return compiled.takeError();
  std::vector<int32_t> cuQ = p.cuSeqlens(true), cuKv = p.cuSeqlens(false);
  std::vector<int32_t> keyStarts = p.keyBounds(true),
                       keyEnds = p.keyBounds(false);
  std::vector<float> slopes = p.alibiSlopes();
  return (*compiled)->call(
      kAttentionEntry,
      forwardArguments(p, t.q.data(), t.k.data(), t.v.data(), t.bias.data(),
                       cuQ.data(), cuKv.data(), t.out.data(), t.lse.data(),
                       /*scale=*/nullptr, keyStarts.data(), keyEnds.data(),
                       slopes.data()));
}

llvm::Expected<double>
mlir::attn::runBackwardOnHost(ModuleOp module,
                              const ::attn::AttentionProblem &p,
                              BackwardHostTensors &t) {
  auto compiled = HostModule::compile(module);
  if (!compiled)
    return compiled.takeError();
  // The grad module's argument order with dout where it reads out: q, k,
  // v, dout, out, lse, [key_start, key_end], [alibi_slopes], dq, dk, dv
  // (the module's
  // forward writes out and lse).
  std::vector<int32_t> keyStarts = p.keyBounds(true),
                       keyEnds = p.keyBounds(false);
  std::vector<float> slopes = p.alibiSlopes();
  SmallVector<HostBuffer> args = gradArguments(
      p, t.q.data(), t.k.data(), t.v.data(), t.dout.data(), t.out.data(),
      t.lse.data(), t.dq.data(), t.dk.data(), t.dv.data(), /*scale=*/nullptr,
      p.hasKeyRanges() ? keyStarts.data() : nullptr, keyEnds.data(),
      slopes.data());
  return (*compiled)->call(kAttentionBackwardEntry, args);
}
