//===- BackwardCompiler.cpp - attn.attention_grad to GPU kernels ----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/BackwardCompiler.h"
#include "ManifestJson.h"
#include "attn/Conversion/AttnToGPU/KernelSelection.h"
#include "attn/Conversion/AttnToGPULaunch/LaunchGridIR.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Execution/AttentionModule.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Regex.h"

#include <map>

using namespace mlir;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<OwningOpRef<ModuleOp>>
mlir::attn::buildAttentionGradModule(MLIRContext &ctx,
                                     const ::attn::AttentionProblem &p) {
  // What attn.attention_grad cannot express is refused here, by flag:
  // the kernels would compute the gradients of another attention. Its only
  // score modifications are the softcap and ALiBi.
  if (p.customScoreMod)
    return error("a score_mod is not supported with --backward: "
                 "attn.attention_grad has no score modification but the "
                 "softcap and ALiBi (its gradients would be those of another "
                 "attention)");
  if (p.isVarlen() || p.bias)
    return error(std::string(p.bias ? "--bias" : "--seq-lens-q/--seq-lens-kv") +
                 " is not supported with --backward: attn.attention_grad has "
                 "no bias or cu_seqlens operand");
  if (!p.withLse)
    return error("--no-lse is not supported with --backward: the backward "
                 "reads the forward's LSE");
  ctx.loadDialect<AttnDialect, func::FuncDialect>();
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  Type elt = p.dtype == ::attn::DType::bf16  ? Type(b.getBF16Type())
             : p.dtype == ::attn::DType::f16 ? Type(b.getF16Type())
                                             : Type(b.getF32Type());
  auto tensor = [&](ArrayRef<int64_t> shape, Type t) {
    return RankedTensorType::get(shape, t);
  };
  Type q = tensor({p.batch, p.headsQ, p.seqQ, p.headDim}, elt);
  Type k = tensor({p.batch, p.headsKv, p.seqKv, p.headDim}, elt);
  Type v = tensor({p.batch, p.headsKv, p.seqKv, p.vDim()}, elt);
  Type o = tensor({p.batch, p.headsQ, p.seqQ, p.vDim()}, elt);
  Type lse = tensor({p.batch, p.headsQ, p.seqQ}, b.getF32Type());
  SmallVector<Type> args = {q, k, v, o, o, lse};
  if (p.hasKeyRanges())
    args.append(2, tensor({p.batch}, b.getI32Type()));
  unsigned alibiArg = args.size();
  if (p.alibi)
    args.push_back(tensor({p.batch, p.headsQ}, b.getF32Type()));
  auto func = func::FuncOp::create(b, loc, "attention_grad",
                                   b.getFunctionType(args, {q, k, v}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  // The mask as attn.attention's (AttentionModule.cpp): windows and the
  // alignment too, for the conversion to implement or refuse.
  MaskKind mask = MaskKind::none;
  DenseI64ArrayAttr window;
  if (p.windowLeft >= 0 || p.windowRight >= 0) {
    mask = p.topLeft ? MaskKind::sliding_top_left : MaskKind::sliding;
    window = b.getDenseI64ArrayAttr({p.windowLeft, p.rightBound()});
  } else if (p.causal) {
    mask = p.topLeft ? MaskKind::causal_top_left : MaskKind::causal;
  }
  FloatAttr scale;
  if (p.scale)
    scale = b.getF32FloatAttr(static_cast<float>(*p.scale));
  auto grad = AttentionGradOp::create(
      b, loc, TypeRange{q, k, v}, body->getArgument(0), body->getArgument(1),
      body->getArgument(2), body->getArgument(3), body->getArgument(4),
      body->getArgument(5),
      p.hasKeyRanges() ? body->getArgument(6) : Value(),
      p.hasKeyRanges() ? body->getArgument(7) : Value(),
      p.alibi ? body->getArgument(alibiArg) : Value(),
      /*runtime_scale=*/Value(),
      MaskKindAttr::get(&ctx, mask), window, scale,
      p.softcap > 0 ? b.getF32FloatAttr(static_cast<float>(p.softcap))
                    : FloatAttr());
  if (p.hasKeyRanges()) {
    grad->setAttr(kKeyStartsAttr, b.getDenseI64ArrayAttr(p.keyStarts));
    grad->setAttr(kKeyEndsAttr, b.getDenseI64ArrayAttr(p.keyEnds));
  }
  func::ReturnOp::create(b, loc, grad.getResults());
  return module;
}

/// ptxas -v's report per entry function.
static std::map<std::string, PtxasReport>
parsePtxasPerEntry(StringRef log) {
  std::map<std::string, PtxasReport> out;
  llvm::Regex entry("Compiling entry function '([A-Za-z0-9_]+)'");
  llvm::Regex regs("Used ([0-9]+) registers");
  llvm::Regex spills("([0-9]+) bytes stack frame, ([0-9]+) bytes spill "
                     "stores, ([0-9]+) bytes spill loads");
  std::string current;
  SmallVector<StringRef> lines;
  log.split(lines, '\n');
  for (StringRef line : lines) {
    SmallVector<StringRef> m;
    if (entry.match(line, &m)) {
      current = m[1].str();
      out[current].log = "";
    } else if (!current.empty() && regs.match(line, &m)) {
      m[1].getAsInteger(10, out[current].registers);
    } else if (!current.empty() && spills.match(line, &m)) {
      m[1].getAsInteger(10, out[current].stackFrame);
      m[2].getAsInteger(10, out[current].spillStores);
      m[3].getAsInteger(10, out[current].spillLoads);
    }
  }
  return out;
}

llvm::Expected<CompiledBackward>
mlir::attn::compileAttentionGradKernels(ModuleOp module,
                                        const KernelCompileOptions &options) {
  SmallVector<AttentionGradOp> ops;
  module.walk([&](AttentionGradOp op) { ops.push_back(op); });
  if (ops.size() != 1)
    return error("expected exactly one attn.attention_grad, found " +
                 llvm::Twine(ops.size()));
  AttentionGradOp op = ops.front();
  bool hasForward = false;
  module.walk([&](AttentionOp) { hasForward = true; });
  if (hasForward)
    return error("a backward kernel module holds only the attn.attention_grad "
                 "(compile the forward attn.attention on its own)");

  CompiledBackward out;
  out.chip = options.chip;
  ::attn::AttentionProblem &p = out.problem;
  p = problemShapeOf(op.getQueryType(), op.getKeyType(), op.getHeadDim(),
                     op.getValueHeadDim());
  // The band the kernels implement (a window as wide as the sequences is
  // none), so that the manifest describes what they compute.
  MaskBand band = op.getMaskBand();
  p.topLeft = band.topLeft;
  p.causal = !band.hasLeft() && band.right == 0;
  if (!p.causal) {
    p.windowLeft = band.left;
    p.windowRight = band.right;
  }
  // The kernels take the scale at launch; the manifest records the default
  // one, which a run-time operand does not give.
  std::optional<double> scale = op.getStaticScale();
  if (!scale)
    return error(
        "the attn.attention_grad takes its scale as a run-time operand "
        "(scale(%s)): a kernel directory records its launches' "
        "default scale, so give the scale attribute (the kernels "
        "still take any scale at launch)");
  p.scale = *scale;
  if (std::optional<APFloat> cap = op.getSoftcap())
    p.softcap = cap->convertToDouble();
  if (op.getKeyStart())
    setKeyRangesOf(op, p);
  p.alibi = static_cast<bool>(op.getAlibiSlopes());

  AttnToPTXOptions pipeline;
  pipeline.chip = options.chip;
  pipeline.features = options.features;
  pipeline.optLevel = options.optLevel;
  pipeline.deterministicGrad = options.deterministic;
  pipeline.family = options.family;
  pipeline.blockM = options.blockM;
  pipeline.blockN = options.blockN;
  pipeline.stages = options.stages;
  pipeline.sm90Schedule = options.sm90Schedule;
  pipeline.sectionMb = options.sectionMb;
  // The environment is the tools' and the C API's to read, not the
  // passes'.
  pipeline.tuningDb = resolveTuningDatabasePath(options.tuningDb);
  pipeline.tuningGpu = resolveTuningGpu(options.tuningGpu);
  PassManager pm(module.getContext());
  buildAttnToGPUKernelsPipeline(pm, pipeline);
  if (failed(pm.run(module)))
    return error("generating the GPU backward kernels failed");

  auto launch = op->getAttrOfType<LaunchAttr>(kLaunchAttrName);
  if (!launch || launch.getKernels().empty())
    return error("convert-attn-to-gpu left no backward kernels on the op");
  out.blockM = launch.getBlockM();
  out.blockN = launch.getBlockN();
  out.threads = launch.getThreads();
  out.deterministic = launch.getDeterministic();
  out.tileSource = launch.getSource().str();
  if (auto config =
          op->getAttrOfType<KernelConfigAttr>(kKernelConfigAttrName))
    out.tileReason = config.getReason().str();
  out.family = launch.getFamily().str();
  out.stages = launch.getStages();
  out.schedule = launch.getSchedule().str();
  out.tensorMaps = tensorMapParams(launch);
  for (KernelLaunchAttr k : launch.getKernels()) {
    CompiledBackward::Launch l;
    l.role = k.getRole().str();
    l.entry = k.getEntry().str();
    l.grid = runtimeGrid(k.getGrid());
    l.threads = k.getThreads();
    l.dynamicSharedMemory = k.getDynamicSharedMemory();
    out.launches.push_back(l);
  }
  module.walk([&](gpu::GPUModuleOp m) {
    llvm::raw_string_ostream os(out.kernelMLIR);
    m.print(os);
  });

  auto ptx = serializeKernelModule(module, "isa");
  if (!ptx)
    return ptx.takeError();
  out.ptx = std::move(*ptx);
  if (options.assemble) {
    std::string ptxas = findPtxas(options.ptxasPath);
    if (ptxas.empty())
      return error(options.ptxasPath.empty()
                       ? "ptxas not found (set CUDA_HOME or --ptxas)"
                       : "--ptxas '" + options.ptxasPath +
                             "' is not an executable");
    PtxasReport report;
    auto cubin = assemblePTX(ptxas, out.ptx, options.chip, report);
    if (!cubin)
      return cubin.takeError();
    out.cubin = std::move(*cubin);
    std::map<std::string, PtxasReport> perEntry =
        parsePtxasPerEntry(report.log);
    for (CompiledBackward::Launch &l : out.launches)
      if (auto it = perEntry.find(l.entry); it != perEntry.end())
        l.ptxas = it->second;
  }
  return out;
}

const CompiledBackward::Launch &CompiledBackward::main() const {
  for (const Launch &l : launches)
    if (l.role == "dkdv")
      return l;
  return launches.front();
}

std::string CompiledBackward::manifestJSON() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os, 2);
  auto ptxasObject = [&](const PtxasReport &r) {
    j.attributeObject("ptxas", [&] {
      j.attribute("registers", r.registers);
      j.attribute("spill_stores", r.spillStores);
      j.attribute("spill_loads", r.spillLoads);
      j.attribute("local_memory", r.stackFrame);
    });
  };
  j.object([&] {
    writeManifestHeader(j, "backward", main().entry, family, chip,
                        !cubin.empty());
    j.attributeObject("problem", [&] {
      writeProblemShape(j, problem);
      j.attribute("scale", problem.effectiveScale());
      j.attribute("with_lse", true);
    });
    j.attributeObject("tile", [&] {
      j.attribute("block_m", blockM);
      j.attribute("block_n", blockN);
      j.attribute("warps", threads / 32);
      j.attribute("stages", stages);
      if (!schedule.empty())
        j.attribute("schedule", schedule);
      j.attribute("source", tileSource);
      j.attribute("deterministic", deterministic);
    });
    // The main kernel's launch, also at the top level so that tools that
    // only look there see a consistent description.
    j.attribute("threads", main().threads);
    writeManifestGrid(j, main().grid);
    j.attribute("dynamic_shared_memory", main().dynamicSharedMemory);
    // Scratch the caller provides: per (batch, query head) Δ [seq_q,
    // padded to a multiple of 4], the dQ accumulator [seq_q, head_dim] and
    // a semaphore per row (runtime::backwardWorkspaceSlotsPerRow).
    j.attribute("workspace",
                "batch * heads_q * ceil(seq_q / 4) * 4 * (head_dim + 2) * 4");
    j.attributeArray("launches", [&] {
      for (const Launch &l : launches)
        j.object([&] {
          j.attribute("role", l.role);
          j.attribute("entry", l.entry);
          j.attribute("threads", l.threads);
          writeManifestGrid(j, l.grid);
          j.attribute("dynamic_shared_memory", l.dynamicSharedMemory);
          if (l.ptxas)
            ptxasObject(*l.ptxas);
        });
    });
    ::attn::runtime::KernelAbi abi;
    abi.backward = true;
    abi.keyRange = problem.hasKeyRanges();
    abi.alibi = problem.alibi;
    // sm90a-wgmma dkdv: its tensor maps (the other launches declare fewer
    // parameters and ignore them).
    writeManifestParams(j, abi, tensorMaps);
    if (main().ptxas)
      ptxasObject(*main().ptxas);
  });
  os << "\n";
  return text;
}

llvm::Error mlir::attn::writeBackwardDirectory(const CompiledBackward &kernels,
                                               llvm::StringRef dir) {
  return writeKernelFiles(dir, kernels.ptx, kernels.cubin,
                          kernels.manifestJSON());
}
