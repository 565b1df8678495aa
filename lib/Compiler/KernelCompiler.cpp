//===- KernelCompiler.cpp - attn.attention to a launchable kernel ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Compiler/KernelCompiler.h"
#include "ManifestJson.h"
#include "attn/Conversion/AttnToGPU/KernelSelection.h"
#include "attn/Conversion/AttnToGPULaunch/LaunchGridIR.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Execution/AttentionModule.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string mlir::attn::resolveTuningDatabasePath(llvm::StringRef option) {
  if (option == "none")
    return "";
  if (!option.empty())
    return option.str();
  const char *env = std::getenv("ATTN_TUNING_DB");
  return env && llvm::StringRef(env) != "none" ? env : "";
}

std::string mlir::attn::resolveTuningGpu(llvm::StringRef option) {
  if (!option.empty())
    return option.str();
  const char *env = std::getenv("ATTN_TUNING_GPU");
  return env ? env : "";
}

std::string mlir::attn::findPtxas(llvm::StringRef requested) {
  if (!requested.empty())
    return llvm::sys::fs::can_execute(requested) ? requested.str() : "";
  if (const char *home = std::getenv("CUDA_HOME")) {
    llvm::SmallString<256> p(home);
    llvm::sys::path::append(p, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(p))
      return p.str().str();
  }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  return "";
}

llvm::Expected<std::string> mlir::attn::assemblePTX(llvm::StringRef ptxas,
                                                    llvm::StringRef ptx,
                                                    llvm::StringRef chip,
                                                    PtxasReport &report) {
  llvm::SmallString<128> ptxFile, cubinFile, logFile;
  if (auto ec = llvm::sys::fs::createTemporaryFile("attn", "ptx", ptxFile))
    return error("cannot create a temporary file: " + ec.message());
  llvm::FileRemover removePtx(ptxFile);
  if (auto ec = llvm::sys::fs::createTemporaryFile("attn", "cubin", cubinFile))
    return error("cannot create a temporary file: " + ec.message());
  llvm::FileRemover removeCubin(cubinFile);
  if (auto ec = llvm::sys::fs::createTemporaryFile("attn", "log", logFile))
    return error("cannot create a temporary file: " + ec.message());
  llvm::FileRemover removeLog(logFile);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxFile, ec);
    if (ec)
      return error("cannot write " + ptxFile + ": " + ec.message());
    os << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, arch, "-v", "-o",
                                             cubinFile, ptxFile};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt,
                                                llvm::StringRef(logFile),
                                                llvm::StringRef(logFile)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/300, 0, &execError);
  auto log = llvm::MemoryBuffer::getFile(logFile);
  report.log = log ? (*log)->getBuffer().str() : "";
  if (rc != 0)
    return error("ptxas failed (" +
                 (execError.empty() ? "exit " + std::to_string(rc)
                                    : execError) +
                 "):\n" + report.log);

  llvm::Regex regs("Used ([0-9]+) registers");
  llvm::Regex spills("([0-9]+) bytes stack frame, ([0-9]+) bytes spill "
                     "stores, ([0-9]+) bytes spill loads");
  llvm::SmallVector<llvm::StringRef> m;
  if (regs.match(report.log, &m))
    m[1].getAsInteger(10, report.registers);
  if (spills.match(report.log, &m)) {
    m[1].getAsInteger(10, report.stackFrame);
    m[2].getAsInteger(10, report.spillStores);
    m[3].getAsInteger(10, report.spillLoads);
  }
  auto cubin = llvm::MemoryBuffer::getFile(cubinFile, /*IsText=*/false);
  if (!cubin)
    return error("ptxas wrote no cubin: " + cubin.getError().message());
  return (*cubin)->getBuffer().str();
}

/// The serialised object of the gpu.binary @attn_kernels.
llvm::Expected<std::string>
mlir::attn::serializeKernelModule(ModuleOp module, llvm::StringRef format) {
  PassManager pm(module.getContext());
  buildKernelSerialisationPipeline(pm, format);
  if (failed(pm.run(module)))
    return error("serialising the kernels (" + format + ") failed");
  gpu::BinaryOp binary;
  module.walk([&](gpu::BinaryOp op) { binary = op; });
  if (!binary || binary.getObjects().empty())
    return error("no gpu.binary was produced");
  auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
  return object.getObject().getValue().str();
}

llvm::Expected<CompiledKernel>
mlir::attn::compileAttentionKernel(ModuleOp module,
                                   const KernelCompileOptions &options) {
  SmallVector<AttentionOp> ops;
  module.walk([&](AttentionOp op) { ops.push_back(op); });
  if (ops.size() != 1)
    return error("expected exactly one attn.attention, found " +
                 llvm::Twine(ops.size()));
  AttentionOp op = ops.front();

  CompiledKernel kernel;
  kernel.chip = options.chip;
  ::attn::AttentionProblem &p = kernel.problem;
  p = problemShapeOf(op.getQueryType(), op.getKeyType(), op.getHeadDim(),
                     op.getValueHeadDim());
  MaskBand band = op.getMaskBand();
  p.causal = band.right == 0 && (op.getMask() == MaskKind::causal ||
                                 op.getMask() == MaskKind::causal_top_left);
  p.topLeft = band.topLeft;
  if (!p.causal) {
    p.windowLeft = band.left;
    p.windowRight = band.right;
  }
  if (std::optional<APFloat> cap = op.getSoftcap())
    p.softcap = cap->convertToDouble();
  else if (op.getScoreModBlock())
    p.customScoreMod = true;
  p.alibi = static_cast<bool>(op.getAlibiSlopes());
  // The kernels take the scale at launch; the manifest records the default
  // one, which a run-time operand does not give.
  std::optional<double> scale = op.getStaticScale();
  if (!scale)
    return error("the attn.attention takes its scale as a run-time operand "
                 "(scale(%s)): a kernel directory records its launches' "
                 "default scale, so give the scale attribute (the kernels "
                 "still take any scale at launch)");
  p.scale = *scale;
  p.withLse = static_cast<bool>(op.getLse());
  if (op.isVarlen()) {
    // Packed [T, H, D]: the batch is |cu_seqlens| - 1 and the lengths are
    // run-time values; the problem keeps the ones the tools built the op
    // for (else every sequence at its maximum) for attn-launch --check.
    int64_t cu = cast<RankedTensorType>(op.getCuSeqlensQ().getType())
                     .getDimSize(0);
    p.batch = ShapedType::isDynamic(cu) ? 1 : cu - 1;
    p.seqQ = op.getMaxSeqlenQ();
    p.seqKv = op.getMaxSeqlenKv();
    auto lens = [&](StringRef name, int64_t max) {
      if (auto a = op->getAttrOfType<DenseI64ArrayAttr>(name))
        return std::vector<int64_t>(a.asArrayRef().begin(),
                                    a.asArrayRef().end());
      return std::vector<int64_t>(p.batch, max);
    };
    p.seqLensQ = lens(kSeqLensQAttr, p.seqQ);
    p.seqLensKv = lens(kSeqLensKvAttr, p.seqKv);
  }
  if (Value bias = op.getBias()) {
    auto bt = cast<RankedTensorType>(bias.getType());
    p.bias = true;
    p.biasBroadcastBatch = bt.getDimSize(0) == 1;
    p.biasBroadcastHeads = bt.getDimSize(1) == 1;
  }
  if (op.getKeyStart())
    setKeyRangesOf(op, p);

  AttnToPTXOptions pipeline;
  pipeline.chip = options.chip;
  pipeline.features = options.features;
  pipeline.optLevel = options.optLevel;
  pipeline.blockM = options.blockM;
  pipeline.blockN = options.blockN;
  pipeline.warpRows = options.warpRows;
  pipeline.stages = options.stages;
  pipeline.family = options.family;
  pipeline.sm90Schedule = options.sm90Schedule;
  // The environment is the tools' and the C API's to read, not the
  // passes'.
  pipeline.tuningDb = resolveTuningDatabasePath(options.tuningDb);
  pipeline.tuningGpu = resolveTuningGpu(options.tuningGpu);
  pipeline.exp2Emulated = options.exp2Emulated;
  pipeline.wideProducer = options.wideProducer;
  PassManager pm(module.getContext());
  buildAttnToGPUKernelsPipeline(pm, pipeline);
  if (failed(pm.run(module)))
    return error("generating the GPU kernel failed");

  auto kernelRef = op->getAttrOfType<SymbolRefAttr>("attn.kernel");
  auto launch = op->getAttrOfType<LaunchAttr>(kLaunchAttrName);
  if (!kernelRef || !launch)
    return error("convert-attn-to-gpu left no kernel on the op");
  kernel.entry = kernelRef.getLeafReference().getValue().str();
  kernel.blockM = launch.getBlockM();
  kernel.blockN = launch.getBlockN();
  kernel.stages = launch.getStages();
  kernel.threads = launch.getThreads();
  kernel.dynamicSharedMemory = launch.getDynamicSharedMemory();
  kernel.warpRows = launch.getWarpRows();
  kernel.family = launch.getFamily().str();
  kernel.tensorMaps = tensorMapParams(launch);
  kernel.grid = runtimeGrid(launch.getGrid());
  kernel.tileSource = launch.getSource().str();
  if (auto config =
          op->getAttrOfType<KernelConfigAttr>(kKernelConfigAttrName))
    kernel.tileReason = config.getReason().str();
  module.walk([&](gpu::GPUModuleOp m) {
    llvm::raw_string_ostream os(kernel.kernelMLIR);
    m.print(os);
  });

  if (options.emitLLVMIR) {
    OwningOpRef<ModuleOp> clone = module.clone();
    auto bitcode = serializeKernelModule(*clone, "llvm");
    if (!bitcode)
      return bitcode.takeError();
    llvm::LLVMContext llvmCtx;
    auto parsed = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(*bitcode, kernel.entry), llvmCtx);
    if (!parsed)
      return parsed.takeError();
    llvm::raw_string_ostream os(kernel.llvmIR);
    (*parsed)->print(os, nullptr);
  }

  auto ptx = serializeKernelModule(module, "isa");
  if (!ptx)
    return ptx.takeError();
  kernel.ptx = std::move(*ptx);

  if (options.assemble) {
    std::string ptxas = findPtxas(options.ptxasPath);
    if (ptxas.empty())
      return error(options.ptxasPath.empty()
                       ? "ptxas not found (set CUDA_HOME or --ptxas)"
                       : "--ptxas '" + options.ptxasPath +
                             "' is not an executable");
    PtxasReport report;
    auto cubin = assemblePTX(ptxas, kernel.ptx, options.chip, report);
    if (!cubin)
      return cubin.takeError();
    kernel.cubin = std::move(*cubin);
    kernel.ptxas = report;
  }
  return kernel;
}

std::string CompiledKernel::manifestJSON() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os, 2);
  j.object([&] {
    writeManifestHeader(j, "", entry, family, chip, !cubin.empty());
    j.attributeObject("problem", [&] {
      writeProblemShape(j, problem);
      if (problem.customScoreMod)
        j.attribute("score_mod", "custom");
      if (problem.isVarlen()) {
        j.attributeArray("seq_lens_q", [&] {
          for (int64_t l : problem.seqLensQ)
            j.value(l);
        });
        j.attributeArray("seq_lens_kv", [&] {
          for (int64_t l : problem.seqLensKv)
            j.value(l);
        });
      }
      if (problem.bias)
        j.attribute("bias", problem.biasKind());
      j.attribute("scale", problem.effectiveScale());
      j.attribute("with_lse", problem.withLse);
    });
    j.attributeObject("tile", [&] {
      j.attribute("block_m", blockM);
      j.attribute("block_n", blockN);
      j.attribute("warps", threads / 32);
      j.attribute("stages", stages);
      j.attribute("warp_rows", warpRows);
      j.attribute("source", tileSource);
      // Why this family and tile (what attn-compile --explain prints).
      if (!tileReason.empty())
        j.attribute("reason", tileReason);
    });
    j.attribute("threads", threads);
    writeManifestGrid(j, grid);
    j.attribute("dynamic_shared_memory", dynamicSharedMemory);
    ::attn::runtime::KernelAbi abi;
    abi.bias = problem.bias;
    abi.varlen = problem.isVarlen();
    abi.keyRange = problem.hasKeyRanges();
    abi.alibi = problem.alibi;
    writeManifestParams(j, abi, tensorMaps);
    if (ptxas) {
      j.attributeObject("ptxas", [&] {
        j.attribute("registers", ptxas->registers);
        j.attribute("spill_stores", ptxas->spillStores);
        j.attribute("spill_loads", ptxas->spillLoads);
        j.attribute("local_memory", ptxas->stackFrame);
      });
    }
  });
  os << "\n";
  return out;
}

llvm::Error mlir::attn::writeKernelDirectory(const CompiledKernel &kernel,
                                             llvm::StringRef dir) {
  return writeKernelFiles(dir, kernel.ptx, kernel.cubin,
                          kernel.manifestJSON());
}

llvm::Error mlir::attn::writeKernelFiles(llvm::StringRef dir,
                                         llvm::StringRef ptx,
                                         llvm::StringRef cubin,
                                         llvm::StringRef manifest) {
  if (auto ec = llvm::sys::fs::create_directories(dir))
    return error("cannot create directory '" + dir + "': " + ec.message());
  auto write = [&](llvm::StringRef name, llvm::StringRef data) -> llvm::Error {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
    if (ec)
      return error("cannot write '" + path + "': " + ec.message());
    os << data;
    return llvm::Error::success();
  };
  if (auto e = write("kernel.ptx", ptx))
    return e;
  if (!cubin.empty())
    if (auto e = write("kernel.cubin", cubin))
      return e;
  return write("manifest.json", manifest);
}
