//===- Execution.cpp - attention on the CPU, from C -----------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Execution.h"
#include "attn/Execution/AttentionModule.h"
#include "attn/Execution/CPUExecutor.h"
#include "attn/InitAll.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>

using namespace mlir;
using namespace mlir::attn;

namespace {
/// The compiled modules, one per problem (without its scale, which every
/// call passes) and direction; shared_ptr so that a call in flight keeps
/// its module through a concurrent clear.
struct ModuleCache {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<HostModule>> modules;
  int64_t compiled = 0;
};

ModuleCache &cache() {
  static ModuleCache *c = new ModuleCache; // never destroyed: no exit races
  return *c;
}

// Enough for every shape of a model several times over; past it the cache
// starts again (each module holds its JIT-compiled code).
constexpr size_t kMaxModules = 512;

/// The message a failed call returns (valid until the thread's next call).
const char *fail(const std::string &msg) {
  static thread_local std::string last;
  last = "attn CPU attention: " + msg;
  return last.c_str();
}

/// The problem `c` describes, or the reason it is not a valid one.
std::string toProblem(const AttnCPUProblem &c, bool backward,
                      ::attn::AttentionProblem &p) {
  p.batch = c.batch;
  p.headsQ = c.headsQ;
  p.headsKv = c.headsKv;
  p.seqQ = c.seqQ;
  p.seqKv = c.seqKv;
  p.headDim = c.headDim;
  p.valueHeadDim = c.valueHeadDim;
  switch (c.dtype) {
  case ATTN_CPU_F16:
    p.dtype = ::attn::DType::f16;
    break;
  case ATTN_CPU_BF16:
    p.dtype = ::attn::DType::bf16;
    break;
  case ATTN_CPU_F32:
    p.dtype = ::attn::DType::f32;
    break;
  default:
    return "dtype must be ATTN_CPU_F16, ATTN_CPU_BF16 or ATTN_CPU_F32 (got " +
           std::to_string(c.dtype) + ")";
  }
  p.causal = c.causal;
  p.topLeft = c.topLeft;
  p.windowLeft = c.windowLeft;
  p.windowRight = c.windowRight;
  if (c.hasScale)
    p.scale = c.scale;
  p.softcap = c.softcap;
  p.alibi = c.alibiSlopes != nullptr;
  p.withLse = true;
  if (static_cast<bool>(c.keyStart) != static_cast<bool>(c.keyEnd))
    return "keyStart and keyEnd must be given together (or both NULL)";
  if (c.keyStart && c.batch > 0) {
    // Values read at call time; the problem keeps them clamped (as the
    // module clamps them) for its checks.
    for (int64_t b = 0; b < c.batch; ++b) {
      int64_t start = std::clamp<int64_t>(c.keyStart[b], 0, c.seqKv);
      p.keyStarts.push_back(start);
      p.keyEnds.push_back(std::clamp<int64_t>(c.keyEnd[b], start, c.seqKv));
    }
  }
  // (validate names the tools' flags, which are these fields.)
  return p.validate();
}

/// The key of a problem: every field that changes the module. Not the
/// scale: the modules take it as an argument (ScaleSource::Argument).
std::string keyOf(const ::attn::AttentionProblem &p, bool backward) {
  std::ostringstream os;
  os.precision(17);
  os << (backward ? "bwd" : "fwd") << ' ' << p.batch << ' ' << p.headsQ << ' '
     << p.headsKv << ' ' << p.seqQ << ' ' << p.seqKv << ' ' << p.headDim << ' '
     << p.vDim() << ' ' << ::attn::dtypeName(p.dtype) << ' ' << p.causal
     << p.topLeft << ' ' << p.windowLeft << ' ' << p.windowRight << ' '
     << p.softcap << ' ' << p.alibi << ' ' << p.hasKeyRanges();
  return os.str();
}

/// Builds, lowers and JIT-compiles the module of `p`; diagnostics go into
/// `error`.
std::unique_ptr<HostModule> compile(const ::attn::AttentionProblem &p,
                                    bool backward, std::string &error) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  llvm::raw_string_ostream diagnostics(error);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diagnostics << d << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module =
      backward ? buildHostAttentionGradModule(ctx, p, ScaleSource::Argument)
               : buildAttentionModule(ctx, p, ScaleSource::Argument);
  if (failed(module->verify())) {
    error = "the generated module does not verify: " + error;
    return nullptr;
  }
  AttnToCPUOptions options;
  PassManager algorithm(&ctx);
  buildAttnAlgorithmPipeline(algorithm, options);
  PassManager lowering(&ctx);
  buildHostLoweringPipeline(lowering);
  if (failed(algorithm.run(*module)) || failed(lowering.run(*module))) {
    error = "lowering for the CPU failed: " + error;
    return nullptr;
  }
  auto compiled = HostModule::compile(*module);
  if (!compiled) {
    error = "JIT compilation failed: " + llvm::toString(compiled.takeError());
    return nullptr;
  }
  return std::move(*compiled);
}

/// The compiled module of `p`, compiled now if it is not cached.
std::shared_ptr<HostModule> moduleFor(const ::attn::AttentionProblem &p,
                                      bool backward, std::string &error) {
  std::string key = keyOf(p, backward);
  ModuleCache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.modules.find(key);
    if (it != c.modules.end())
      return it->second;
  }
  // Compiled outside the lock: other problems need not wait for this one.
  std::shared_ptr<HostModule> module = compile(p, backward, error);
  if (!module)
    return nullptr;
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.modules.size() >= kMaxModules)
    c.modules.clear();
  auto [it, inserted] = c.modules.emplace(key, module);
  if (inserted)
    ++c.compiled;
  return it->second;
}

template <typename... Ptrs> bool anyNull(Ptrs... ptrs) {
  return ((ptrs == nullptr) || ...);
}
} // namespace

AttnCPUProblem attnCPUProblemGetDefault(void) {
  AttnCPUProblem p;
  p.batch = p.headsQ = p.headsKv = 1;
  p.seqQ = p.seqKv = 128;
  p.headDim = 64;
  p.valueHeadDim = 0;
  p.dtype = ATTN_CPU_F32;
  p.causal = p.topLeft = false;
  p.windowLeft = p.windowRight = -1;
  p.hasScale = false;
  p.scale = 0.0;
  p.softcap = 0.0;
  p.alibiSlopes = nullptr;
  p.keyStart = p.keyEnd = nullptr;
  return p;
}

const char *attnCPUAttentionForward(const AttnCPUProblem *problem,
                                    const void *q, const void *k, const void *v,
                                    void *out, float *lse) {
  if (!problem)
    return fail("problem is NULL");
  if (anyNull(q, k, v, out, lse))
    return fail("q, k, v, out and lse must not be NULL");
  ::attn::AttentionProblem p;
  if (std::string why = toProblem(*problem, /*backward=*/false, p);
      !why.empty())
    return fail(why);
  std::string error;
  std::shared_ptr<HostModule> module = moduleFor(p, false, error);
  if (!module)
    return fail(error);
  // (The module only reads q, k and v.)
  auto in = [](const void *ptr) { return const_cast<void *>(ptr); };
  float scale = static_cast<float>(p.effectiveScale());
  auto seconds = module->call(
      kAttentionEntry,
      forwardArguments(p, in(q), in(k), in(v), nullptr, nullptr, nullptr, out,
                       lse, &scale, const_cast<int32_t *>(problem->keyStart),
                       const_cast<int32_t *>(problem->keyEnd),
                       const_cast<float *>(problem->alibiSlopes)));
  if (!seconds)
    return fail("execution failed: " + llvm::toString(seconds.takeError()));
  return nullptr;
}

const char *attnCPUAttentionBackward(const AttnCPUProblem *problem,
                                     const void *q, const void *k,
                                     const void *v, const void *out,
                                     const void *dout, const float *lse,
                                     void *dq, void *dk, void *dv) {
  if (!problem)
    return fail("problem is NULL");
  if (anyNull(q, k, v, out, dout, lse, dq, dk, dv))
    return fail("q, k, v, out, dout, lse, dq, dk and dv must not be NULL");
  ::attn::AttentionProblem p;
  if (std::string why = toProblem(*problem, /*backward=*/true, p); !why.empty())
    return fail(why);
  std::string error;
  std::shared_ptr<HostModule> module = moduleFor(p, true, error);
  if (!module)
    return fail(error);
  auto in = [](const void *ptr) { return const_cast<void *>(ptr); };
  float scale = static_cast<float>(p.effectiveScale());
  auto seconds = module->call(
      kHostAttentionGradEntry,
      gradArguments(p, in(q), in(k), in(v), in(out), in(dout),
                    static_cast<float *>(in(lse)), dq, dk, dv, &scale,
                    const_cast<int32_t *>(problem->keyStart),
                    const_cast<int32_t *>(problem->keyEnd),
                    const_cast<float *>(problem->alibiSlopes)));
  if (!seconds)
    return fail("execution failed: " + llvm::toString(seconds.takeError()));
  return nullptr;
}

int64_t attnCPUCompiledModules(void) {
  ModuleCache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.compiled;
}

void attnCPUClearCache(void) {
  ModuleCache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.modules.clear();
}
