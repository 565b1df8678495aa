//===- CPUExecutor.cpp - run an attention module on the host --------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/CPUExecutor.h"
#include "attn/Execution/AttentionModule.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>

using namespace mlir;
using namespace mlir::attn;

namespace {
/// A dense row-major memref descriptor over `data` with `shape`.
template <int N>
StridedMemRefType<char, N> describe(void *data, ArrayRef<int64_t> shape) {
  StridedMemRefType<char, N> d;
  d.basePtr = d.data = static_cast<char *>(data);
  d.offset = 0;
  int64_t stride = 1;
  for (int i = N - 1; i >= 0; --i) {
    d.sizes[i] = shape[i];
    d.strides[i] = stride;
    stride *= shape[i];
  }
  return d;
}
} // namespace

llvm::Expected<double> mlir::attn::runOnHost(ModuleOp module,
                                             const ::attn::AttentionProblem &p,
                                             HostTensors &t) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());

  ExecutionEngineOptions options;
  // Strided memref copies call into MLIR's C runner utilities.
  SmallVector<StringRef> libs = {ATTN_MLIR_C_RUNNER_UTILS};
  options.sharedLibPaths = libs;
  // `transformer` is a function_ref: the std::function it calls must
  // outlive ExecutionEngine::create (a temporary dangled; found by ASan).
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0, nullptr);
  options.transformer = transformer;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();

  auto q = describe<4>(t.q.data(), {p.batch, p.headsQ, p.seqQ, p.headDim});
  auto k = describe<4>(t.k.data(), {p.batch, p.headsKv, p.seqKv, p.headDim});
  auto v = describe<4>(t.v.data(), {p.batch, p.headsKv, p.seqKv, p.vDim()});
  auto o = describe<4>(t.out.data(), {p.batch, p.headsQ, p.seqQ, p.vDim()});
  auto lse = describe<3>(t.lse.data(), {p.batch, p.headsQ, p.seqQ});
  auto bias = describe<4>(t.bias.data(),
                          {p.biasBatch(), p.biasHeads(), p.seqQ, p.seqKv});
  // Variable length: packed [T, H, D], LSE [H, T], i32 cu_seqlens.
  int64_t tq = p.totalQ(), tk = p.totalKv();
  auto q3 = describe<3>(t.q.data(), {tq, p.headsQ, p.headDim});
  auto k3 = describe<3>(t.k.data(), {tk, p.headsKv, p.headDim});
  auto v3 = describe<3>(t.v.data(), {tk, p.headsKv, p.vDim()});
  auto o3 = describe<3>(t.out.data(), {tq, p.headsQ, p.vDim()});
  auto lse2 = describe<2>(t.lse.data(), {p.headsQ, tq});
  std::vector<int32_t> cuQ = p.cuSeqlens(true), cuKv = p.cuSeqlens(false);
  auto cuQd = describe<1>(cuQ.data(), {p.batch + 1});
  auto cuKvd = describe<1>(cuKv.data(), {p.batch + 1});
  bool varlen = p.isVarlen();
  // The C interface takes a pointer to each descriptor; invokePacked takes
  // a pointer to each argument.
  SmallVector<void *> descriptors;
  if (varlen)
    descriptors = {&q3, &k3, &v3};
  else
    descriptors = {&q, &k, &v};
  if (p.bias)
    descriptors.push_back(&bias);
  if (varlen)
    descriptors.append({&cuQd, &cuKvd});
  descriptors.push_back(varlen ? static_cast<void *>(&o3) : &o);
  if (p.withLse)
    descriptors.push_back(varlen ? static_cast<void *>(&lse2) : &lse);
  SmallVector<void *> args;
  for (void *&d : descriptors)
    args.push_back(&d);

  auto start = std::chrono::steady_clock::now();
  if (llvm::Error err = (*engine)->invokePacked(
          std::string("_mlir_ciface_") + kAttentionEntry, args))
    return std::move(err);
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}

llvm::Expected<double>
mlir::attn::runBackwardOnHost(ModuleOp module,
                              const ::attn::AttentionProblem &p,
                              BackwardHostTensors &t) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());

  ExecutionEngineOptions options;
  SmallVector<StringRef> libs = {ATTN_MLIR_C_RUNNER_UTILS};
  options.sharedLibPaths = libs;
  // `transformer` is a function_ref: the std::function it calls must
  // outlive ExecutionEngine::create (a temporary dangled; found by ASan).
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0, nullptr);
  options.transformer = transformer;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();

  SmallVector<int64_t> qs = {p.batch, p.headsQ, p.seqQ, p.headDim};
  SmallVector<int64_t> ks = {p.batch, p.headsKv, p.seqKv, p.headDim};
  SmallVector<int64_t> vs = {p.batch, p.headsKv, p.seqKv, p.vDim()};
  SmallVector<int64_t> os = {p.batch, p.headsQ, p.seqQ, p.vDim()};
  StridedMemRefType<char, 4> d4[] = {
      describe<4>(t.q.data(), qs),    describe<4>(t.k.data(), ks),
      describe<4>(t.v.data(), vs),    describe<4>(t.dout.data(), os),
      describe<4>(t.out.data(), os),  describe<4>(t.dq.data(), qs),
      describe<4>(t.dk.data(), ks),   describe<4>(t.dv.data(), vs)};
  auto lse = describe<3>(t.lse.data(), {p.batch, p.headsQ, p.seqQ});
  // Argument order: q, k, v, dout, out, lse, dq, dk, dv.
  void *ptrs[] = {&d4[0], &d4[1], &d4[2], &d4[3], &d4[4],
                  &lse,   &d4[5], &d4[6], &d4[7]};
  SmallVector<void *> args;
  for (void *&ptr : ptrs)
    args.push_back(&ptr);

  auto start = std::chrono::steady_clock::now();
  if (llvm::Error err = (*engine)->invokePacked(
          std::string("_mlir_ciface_") + kAttentionBackwardEntry, args))
    return std::move(err);
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}
