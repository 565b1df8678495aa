//===- Compiler.cpp - attn's compiler as JSON in, JSON out ----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// attn-c/Compiler.h over the same C++ builders attn-opt and attn-compile use
// (InitAll, buildAttentionModule, compileAttentionKernel,
// compileAttentionGradKernels, writeKernelFiles, writeTuneBundle). Each
// entry point parses its request, runs one operation in its own
// MLIRContext and turns every failure into {"error": message}.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Compiler.h"

#include "attn/Compiler/BackwardCompiler.h"
#include "attn/Compiler/KernelCompiler.h"
#include "attn/Compiler/TuneBundle.h"
#include "attn/Execution/AttentionModule.h"
#include "attn/InitAll.h"
#include "attn/Support/AttentionProblem.h"
#include "attn/Support/Chip.h"
#include "attn/Support/LargeStack.h"
#include "attn/Support/OptionLimits.h"
#include "attn/Tuning/TuningDatabase.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>

using namespace mlir;
namespace json = llvm::json;

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// One-time process set-up: pass registration is global in MLIR. Only the
/// NVPTX back end: kernels are PTX (the CPU path initialises the host's).
void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::attn::registerAllPasses();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

/// Assigns `field` from `value` or returns its error from the caller.
#define ATTN_READ(field, value)                                               \
  do {                                                                        \
    auto attnRead = (value);                                                  \
    if (!attnRead)                                                            \
      return attnRead.takeError();                                            \
    field = std::move(*attnRead);                                             \
  } while (false)

/// The fields one reader takes, declared next to it (kProblemFields beside
/// readProblem, ...); a handler's fields are the groups of the readers it
/// calls. A request naming any other field is refused before the handler
/// runs: an ignored field (a backward's "bias") would compile something
/// other than what was asked for.
using FieldGroup = llvm::ArrayRef<llvm::StringLiteral>;
using Fields = llvm::ArrayRef<FieldGroup>;

/// The request's fields, type-checked: a wrong type is an error naming the
/// field, an absent one its default.
class Request {
public:
  Request(const json::Object &object, llvm::StringRef kind, Fields fields)
      : object(object), kind(kind), fields(fields) {}

  /// `<kind>: unknown field 'x' (known: ...)` when the request names a
  /// field that no group declares.
  llvm::Error checkFields() const {
    std::vector<std::string> unknown;
    for (const auto &entry : object)
      if (!declared(entry.first))
        unknown.push_back(entry.first.str());
    if (unknown.empty())
      return llvm::Error::success();
    // The object's order is a hash map's: sort for a stable message.
    llvm::sort(unknown);
    std::vector<llvm::StringRef> known;
    for (FieldGroup group : fields)
      known.insert(known.end(), group.begin(), group.end());
    llvm::sort(known);
    return error(kind + ": unknown field" + (unknown.size() > 1 ? "s" : "") +
                 " '" + llvm::join(unknown, "', '") + "' (known: " +
                 (known.empty() ? "none" : llvm::join(known, ", ")) + ")");
  }

  llvm::Expected<std::string> string(llvm::StringRef key,
                                     llvm::StringRef fallback = "") const {
    const json::Value *v;
    ATTN_READ(v, get(key));
    if (!v)
      return fallback.str();
    if (std::optional<llvm::StringRef> s = v->getAsString())
      return s->str();
    return mistyped(key, "a string");
  }
  llvm::Expected<int64_t> integer(llvm::StringRef key,
                                  int64_t fallback) const {
    const json::Value *v;
    ATTN_READ(v, get(key));
    if (!v)
      return fallback;
    if (std::optional<int64_t> i = v->getAsInteger())
      return *i;
    return mistyped(key, "an integer");
  }
  llvm::Expected<bool> boolean(llvm::StringRef key, bool fallback) const {
    const json::Value *v;
    ATTN_READ(v, get(key));
    if (!v)
      return fallback;
    if (std::optional<bool> b = v->getAsBoolean())
      return *b;
    return mistyped(key, "true or false");
  }
  /// Absent or null: std::nullopt.
  llvm::Expected<std::optional<double>> number(llvm::StringRef key) const {
    const json::Value *v;
    ATTN_READ(v, get(key));
    if (!v || v->getAsNull())
      return std::optional<double>();
    if (std::optional<double> d = v->getAsNumber())
      return std::optional<double>(*d);
    return mistyped(key, "a number or null");
  }
  llvm::Expected<std::vector<std::string>>
  strings(llvm::StringRef key) const {
    std::vector<std::string> out;
    const json::Value *v;
    ATTN_READ(v, get(key));
    if (!v)
      return out;
    const json::Array *array = v->getAsArray();
    if (!array)
      return mistyped(key, "a list of strings");
    for (const json::Value &e : *array) {
      std::optional<llvm::StringRef> s = e.getAsString();
      if (!s)
        return mistyped(key, "a list of strings");
      out.push_back(s->str());
    }
    return out;
  }
  llvm::Expected<bool> has(llvm::StringRef key) const {
    const json::Value *v;
    ATTN_READ(v, get(key));
    return v != nullptr;
  }
  /// The first field of `group` the request names, "" if none.
  llvm::StringRef firstOf(FieldGroup group) const {
    for (llvm::StringRef key : group)
      if (object.get(key))
        return key;
    return "";
  }

private:
  bool declared(llvm::StringRef key) const {
    return llvm::any_of(fields, [&](FieldGroup group) {
      return llvm::is_contained(group, key);
    });
  }
  /// The field's value (null when absent). Reading a field that the
  /// handler's groups do not declare is attn's bug, not the caller's: an
  /// error every time that read runs, so the lists cannot drift from the
  /// reads unnoticed.
  llvm::Expected<const json::Value *> get(llvm::StringRef key) const {
    if (!declared(key))
      return error("internal: " + kind + " reads the field '" + key +
                   "', which its field list does not declare");
    return object.get(key);
  }
  static llvm::Error mistyped(llvm::StringRef key, llvm::StringRef what) {
    return error("'" + key + "' must be " + what);
  }
  const json::Object &object;
  llvm::StringRef kind;
  Fields fields;
};

/// A context with every dialect attn reads or produces, and a source
/// manager whose diagnostic handler prints into `diagnostics` (with the
/// input's line:col and the offending line) instead of stderr.
struct Session {
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> ctx;
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  llvm::raw_string_ostream diagStream{diagnostics};
  std::unique_ptr<SourceMgrDiagnosticHandler> handler;

  Session() {
    initializeOnce();
    mlir::attn::registerAllDialects(registry);
    // Threads are the caller's business; compile single-threaded.
    ctx = std::make_unique<MLIRContext>(registry,
                                        MLIRContext::Threading::DISABLED);
    handler = std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr,
                                                           ctx.get(),
                                                           diagStream);
  }

  llvm::Expected<OwningOpRef<ModuleOp>> parse(llvm::StringRef text) {
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(text, "<input>");
    if (std::string why = ::attn::tooDeepNesting(*buffer); !why.empty())
      return fail("cannot parse the MLIR input: " + why);
    sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr,
                                                             ctx.get());
    if (!module)
      return fail("cannot parse the MLIR input");
    return module;
  }

  /// `summary` and every diagnostic collected.
  llvm::Error fail(const llvm::Twine &summary) {
    std::string message = summary.str();
    if (!diagnostics.empty())
      message += ":\n" + diagnostics;
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    return error(message);
  }
};

std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

/// Read by readProblem.
constexpr llvm::StringLiteral kProblemFields[] = {
    "batch", "heads_q", "heads_kv", "seq_q", "seq_kv", "head_dim",
    "value_head_dim", "dtype", "causal", "scale", "with_lse", "top_left",
    "window_left", "window_right", "softcap", "alibi", "key_range"};

llvm::Expected<::attn::AttentionProblem> readProblem(const Request &r) {
  ::attn::AttentionProblem p;
  ATTN_READ(p.batch, r.integer("batch", 1));
  ATTN_READ(p.headsQ, r.integer("heads_q", 1));
  ATTN_READ(p.headsKv, r.integer("heads_kv", p.headsQ));
  ATTN_READ(p.seqQ, r.integer("seq_q", 128));
  ATTN_READ(p.seqKv, r.integer("seq_kv", p.seqQ));
  ATTN_READ(p.headDim, r.integer("head_dim", 64));
  ATTN_READ(p.valueHeadDim, r.integer("value_head_dim", 0));
  std::string dtype;
  ATTN_READ(dtype, r.string("dtype", "bf16"));
  std::optional<::attn::DType> t = ::attn::parseDType(dtype);
  if (!t)
    return error("dtype: expected 'f16' or 'bf16', got '" + dtype + "'");
  if (*t == ::attn::DType::f32)
    return error("dtype 'f32' has no GPU kernel: use 'f16' or 'bf16'");
  p.dtype = *t;
  ATTN_READ(p.causal, r.boolean("causal", false));
  ATTN_READ(p.scale, r.number("scale"));
  ATTN_READ(p.withLse, r.boolean("with_lse", true));
  ATTN_READ(p.topLeft, r.boolean("top_left", false));
  ATTN_READ(p.windowLeft, r.integer("window_left", -1));
  ATTN_READ(p.windowRight, r.integer("window_right", -1));
  std::optional<double> softcap;
  ATTN_READ(softcap, r.number("softcap"));
  p.softcap = softcap.value_or(0.0);
  ATTN_READ(p.alibi, r.boolean("alibi", false));
  // key_range: a kernel that takes per-batch key ranges at launch (every
  // key of every batch entry in the manifest's problem).
  bool keyRange = false;
  ATTN_READ(keyRange, r.boolean("key_range", false));
  if (keyRange) {
    p.keyStarts.assign(p.batch, 0);
    p.keyEnds.assign(p.batch, p.seqKv);
  }
  std::string why = p.validate();
  if (!why.empty())
    return error("invalid attention problem: " + why);
  return p;
}

llvm::Error checkFamily(llvm::StringRef what, llvm::StringRef family) {
  if (family != "sm80" && family != "sm90a" && family != "auto")
    return error(what + ": expected 'sm80', 'sm90a' or 'auto', got '" +
                 family + "'");
  return llvm::Error::success();
}

/// Read by readOptions: the options of the forward and the backward alike
/// (the backward refuses a warp_rows). tuning_db/tuning_gpu are the
/// forward's and deterministic the backward's, read by their handlers.
constexpr llvm::StringLiteral kOptionFields[] = {
    "chip", "features", "opt_level", "block_m", "block_n", "warp_rows",
    "stages", "family", "sm90_schedule", "ptxas", "assemble"};

llvm::Expected<mlir::attn::KernelCompileOptions>
readOptions(const Request &r) {
  mlir::attn::KernelCompileOptions o;
  ATTN_READ(o.chip, r.string("chip", o.chip));
  if (std::string why = ::attn::checkChip("chip", o.chip); !why.empty())
    return error(why);
  ATTN_READ(o.features, r.string("features"));
  int64_t optLevel;
  ATTN_READ(optLevel, r.integer("opt_level", o.optLevel));
  if (optLevel < 0 || optLevel > 3)
    return error("opt_level: expected 0 to 3, got " + llvm::Twine(optLevel));
  o.optLevel = optLevel;
  ATTN_READ(o.blockM, r.integer("block_m", o.blockM));
  ATTN_READ(o.blockN, r.integer("block_n", o.blockN));
  ATTN_READ(o.warpRows, r.integer("warp_rows", o.warpRows));
  const std::string heuristic = " (0 = the heuristic)";
  for (const std::string &why :
       {::attn::checkRange("block_m", o.blockM, 0, ::attn::kMaxBlockSize,
                           heuristic),
        ::attn::checkRange("block_n", o.blockN, 0, ::attn::kMaxBlockSize,
                           heuristic),
        ::attn::checkRange("warp_rows", o.warpRows, 0, ::attn::kMaxWarpRows,
                           heuristic)})
    if (!why.empty())
      return error(why);
  ATTN_READ(o.stages, r.integer("stages", o.stages));
  ATTN_READ(o.family, r.string("family", o.family));
  if (llvm::Error e = checkFamily("family", o.family))
    return std::move(e);
  ATTN_READ(o.sm90Schedule, r.string("sm90_schedule"));
  ATTN_READ(o.ptxasPath, r.string("ptxas"));
  ATTN_READ(o.assemble, r.boolean("assemble", o.assemble));
  return o;
}

/// Read by readModule, which reads kProblemFields without it.
constexpr llvm::StringLiteral kModuleFields[] = {"mlir"};

/// The module to compile: the request's "mlir" text, else the one built
/// for its problem by `build`.
using ModuleBuilder = std::function<llvm::Expected<OwningOpRef<ModuleOp>>(
    MLIRContext &, const ::attn::AttentionProblem &)>;
llvm::Expected<OwningOpRef<ModuleOp>>
readModule(Session &session, const Request &r, const ModuleBuilder &build) {
  bool hasText;
  ATTN_READ(hasText, r.has("mlir"));
  if (hasText) {
    // The text's attention is the problem: a problem field would be
    // ignored.
    if (llvm::StringRef key = r.firstOf(kProblemFields); !key.empty())
      return error("'" + key + "' does not apply with 'mlir' (the "
                   "module's attention is the problem)");
    std::string text;
    ATTN_READ(text, r.string("mlir"));
    return session.parse(text);
  }
  ::attn::AttentionProblem p;
  ATTN_READ(p, readProblem(r));
  OwningOpRef<ModuleOp> module;
  ATTN_READ(module, build(*session.ctx, p));
  if (!module)
    return session.fail("cannot build the attention module");
  return module;
}

llvm::Expected<OwningOpRef<ModuleOp>>
forwardModule(MLIRContext &ctx, const ::attn::AttentionProblem &p) {
  return mlir::attn::buildAttentionModule(ctx, p);
}

llvm::Expected<OwningOpRef<ModuleOp>>
backwardModule(MLIRContext &ctx, const ::attn::AttentionProblem &p) {
  return mlir::attn::buildAttentionGradModule(ctx, p);
}

// version reads no field.
llvm::Expected<json::Object> version(const Request &) {
  return json::Object{{"version", ::attn::tuning::compilerVersion()}};
}

constexpr llvm::StringLiteral kOptOwn[] = {"mlir", "pipeline"};
constexpr FieldGroup kOptFields[] = {kOptOwn};

llvm::Expected<json::Object> opt(const Request &r) {
  std::string text, pipeline;
  ATTN_READ(text, r.string("mlir"));
  ATTN_READ(pipeline, r.string("pipeline"));
  Session session;
  OwningOpRef<ModuleOp> module;
  ATTN_READ(module, session.parse(text));
  std::string anchored = llvm::StringRef(pipeline).trim().str();
  if (!llvm::StringRef(anchored).starts_with("builtin.module("))
    anchored = "builtin.module(" + anchored + ")";
  std::string pipelineErrors;
  llvm::raw_string_ostream errs(pipelineErrors);
  FailureOr<OpPassManager> parsed = parsePassPipeline(anchored, errs);
  if (failed(parsed))
    return error("invalid pass pipeline '" + pipeline + "': " +
                 llvm::StringRef(pipelineErrors).trim().str());
  PassManager pm(session.ctx.get(), ModuleOp::getOperationName());
  static_cast<OpPassManager &>(pm) = *parsed;
  if (failed(pm.run(*module)))
    return session.fail("pipeline '" + pipeline + "' failed");
  return json::Object{{"mlir", printModule(*module)}};
}

constexpr FieldGroup kAttentionModuleFields[] = {kModuleFields,
                                                 kProblemFields};

llvm::Expected<json::Object> attentionModule(const Request &r) {
  Session session;
  OwningOpRef<ModuleOp> module;
  ATTN_READ(module, readModule(session, r, forwardModule));
  return json::Object{{"mlir", printModule(*module)}};
}

constexpr llvm::StringLiteral kCompileOwn[] = {"tuning_db", "tuning_gpu"};
constexpr FieldGroup kCompileFields[] = {kModuleFields, kProblemFields,
                                         kOptionFields, kCompileOwn};

llvm::Expected<json::Object> compile(const Request &r) {
  mlir::attn::KernelCompileOptions options;
  ATTN_READ(options, readOptions(r));
  ATTN_READ(options.tuningDb, r.string("tuning_db"));
  ATTN_READ(options.tuningGpu, r.string("tuning_gpu"));
  Session session;
  OwningOpRef<ModuleOp> module;
  ATTN_READ(module, readModule(session, r, forwardModule));
  llvm::Expected<mlir::attn::CompiledKernel> k =
      mlir::attn::compileAttentionKernel(*module, options);
  if (!k)
    return session.fail(llvm::toString(k.takeError()));
  return json::Object{{"entry", k->entry},
                      {"family", k->family},
                      {"chip", k->chip},
                      {"ptx", k->ptx},
                      {"cubin", llvm::encodeBase64(k->cubin)},
                      {"manifest", k->manifestJSON()},
                      {"ptxas_log", k->ptxas ? k->ptxas->log : ""},
                      {"tile_source", k->tileSource},
                      {"tile_reason", k->tileReason}};
}

// No tuning_db: the backward's tile is the options' or the heuristic's.
constexpr llvm::StringLiteral kCompileBackwardOwn[] = {"deterministic",
                                                       "dir"};
constexpr FieldGroup kCompileBackwardFields[] = {
    kModuleFields, kProblemFields, kOptionFields, kCompileBackwardOwn};

llvm::Expected<json::Object> compileBackward(const Request &r) {
  mlir::attn::KernelCompileOptions options;
  ATTN_READ(options, readOptions(r));
  if (options.warpRows)
    return error("warp_rows does not apply to the backward kernels (16 "
                 "keys per warp)");
  options.tuningDb = "none";
  ATTN_READ(options.deterministic, r.boolean("deterministic", false));
  std::string dir;
  ATTN_READ(dir, r.string("dir"));
  if (dir.empty())
    return error("'dir' (the kernel directory to write) is required");
  Session session;
  OwningOpRef<ModuleOp> module;
  ATTN_READ(module, readModule(session, r, backwardModule));
  auto kernels = mlir::attn::compileAttentionGradKernels(*module, options);
  if (!kernels)
    return session.fail(llvm::toString(kernels.takeError()));
  if (llvm::Error e = mlir::attn::writeBackwardDirectory(*kernels, dir))
    return std::move(e);
  return json::Object{{"entry", kernels->main().entry},
                      {"manifest", kernels->manifestJSON()}};
}

constexpr llvm::StringLiteral kWriteKernelOwn[] = {"dir", "ptx", "cubin",
                                                   "manifest"};
constexpr FieldGroup kWriteKernelFields[] = {kWriteKernelOwn};

llvm::Expected<json::Object> writeKernel(const Request &r) {
  std::string dir, ptx, cubin64, manifest;
  ATTN_READ(dir, r.string("dir"));
  ATTN_READ(ptx, r.string("ptx"));
  ATTN_READ(cubin64, r.string("cubin"));
  ATTN_READ(manifest, r.string("manifest"));
  if (dir.empty())
    return error("'dir' (the kernel directory to write) is required");
  std::vector<char> cubin;
  if (llvm::Error e = llvm::decodeBase64(cubin64, cubin))
    return error("'cubin' is not base64: " + llvm::toString(std::move(e)));
  if (llvm::Error e = mlir::attn::writeKernelFiles(
          dir, ptx, llvm::StringRef(cubin.data(), cubin.size()), manifest))
    return std::move(e);
  return json::Object{};
}

constexpr llvm::StringLiteral kTuneBundleOwn[] = {
    "mlir", "dir", "chip", "ptxas", "opt_level", "jobs", "only", "family",
    "default_family"};
constexpr FieldGroup kTuneBundleFields[] = {kTuneBundleOwn};

llvm::Expected<json::Object> tuneBundle(const Request &r) {
  std::string text, dir;
  ATTN_READ(text, r.string("mlir"));
  ATTN_READ(dir, r.string("dir"));
  if (dir.empty())
    return error("'dir' (the bundle directory to write) is required");
  mlir::attn::KernelCompileOptions options;
  ATTN_READ(options.chip, r.string("chip", options.chip));
  if (std::string why = ::attn::checkChip("chip", options.chip); !why.empty())
    return error(why);
  ATTN_READ(options.ptxasPath, r.string("ptxas"));
  int64_t optLevel, jobs;
  ATTN_READ(optLevel, r.integer("opt_level", options.optLevel));
  ATTN_READ(jobs, r.integer("jobs", 0));
  if (optLevel < 0 || optLevel > 3)
    return error("opt_level: expected 0 to 3, got " + llvm::Twine(optLevel));
  if (jobs < 0)
    return error("jobs: expected 0 (one per core) or more, got " +
                 llvm::Twine(jobs));
  options.optLevel = optLevel;
  // The family's space, as attn-compile --tune-bundle --family: auto tunes
  // both where the chip and the problem allow.
  ATTN_READ(options.family, r.string("family", options.family));
  if (llvm::Error e = checkFamily("family", options.family))
    return std::move(e);
  std::vector<std::string> only;
  ATTN_READ(only, r.strings("only"));
  mlir::attn::TuneBundleOptions bundle;
  // The candidate marked "heuristic": what the caller compiles without a
  // database.
  ATTN_READ(bundle.defaultFamily, r.string("default_family"));
  if (bundle.defaultFamily.empty())
    bundle.defaultFamily = options.family;
  if (llvm::Error e = checkFamily("default_family", bundle.defaultFamily))
    return std::move(e);
  Session session;
  OwningOpRef<ModuleOp> module;
  ATTN_READ(module, session.parse(text));
  std::string log;
  llvm::raw_string_ostream logStream(log);
  auto summary = mlir::attn::writeTuneBundle(*module, options, dir, jobs,
                                             only, logStream, bundle);
  if (!summary)
    return session.fail(llvm::toString(summary.takeError()));
  return json::Object{{"candidates", summary->candidates},
                      {"pruned", summary->pruned},
                      {"log", log}};
}

char *copyOut(const json::Value &value) {
  std::string text;
  llvm::raw_string_ostream(text) << value;
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  if (out)
    std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

/// Parses `request`, refuses a field `fields` does not declare, runs `op`
/// (the function attnCompiler<kind>), and returns its result or
/// {"error": ...}.
char *run(const char *request, llvm::StringRef kind, Fields fields,
          llvm::Expected<json::Object> (*op)(const Request &)) {
  llvm::Expected<json::Value> parsed =
      json::parse(request ? request : "{}");
  llvm::Expected<json::Object> result = [&]() -> llvm::Expected<json::Object> {
    if (!parsed)
      return error("the request is not JSON: " +
                   llvm::toString(parsed.takeError()));
    const json::Object *object = parsed->getAsObject();
    if (!object)
      return error("the request must be a JSON object");
    Request r(*object, kind, fields);
    if (llvm::Error e = r.checkFields())
      return std::move(e);
    // Deeply nested IR must be an error, not a stack overflow in the
    // caller's (Python's) thread.
    return ::attn::runOnLargeStack([&] { return op(r); });
  }();
  if (!result)
    return copyOut(json::Object{{"error", llvm::toString(result.takeError())}});
  return copyOut(std::move(*result));
}

} // namespace

int attnCompilerCAPIVersion(void) { return ATTN_COMPILER_CAPI_VERSION; }

char *attnCompilerVersion(const char *request) {
  return run(request, "Version", {}, version);
}
char *attnCompilerOpt(const char *request) {
  return run(request, "Opt", kOptFields, opt);
}
char *attnCompilerAttentionModule(const char *request) {
  return run(request, "AttentionModule", kAttentionModuleFields,
             attentionModule);
}
char *attnCompilerCompile(const char *request) {
  return run(request, "Compile", kCompileFields, compile);
}
char *attnCompilerCompileBackward(const char *request) {
  return run(request, "CompileBackward", kCompileBackwardFields,
             compileBackward);
}
char *attnCompilerWriteKernel(const char *request) {
  return run(request, "WriteKernel", kWriteKernelFields, writeKernel);
}
char *attnCompilerTuneBundle(const char *request) {
  return run(request, "TuneBundle", kTuneBundleFields, tuneBundle);
}
void attnFreeString(char *result) { std::free(result); }
