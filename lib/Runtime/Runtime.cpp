//===- Runtime.cpp - load and launch generated attention kernels ----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Runtime.h"
#include "attn/Runtime/LaunchChecks.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace attn::runtime;

LaunchArgs LaunchArgs::dense(const AttentionProblem &p, cu::DevicePtr q,
                             cu::DevicePtr k, cu::DevicePtr v, cu::DevicePtr o,
                             cu::DevicePtr lse) {
  LaunchArgs a;
  a.q = q;
  a.k = k;
  a.v = v;
  a.o = o;
  a.lse = lse;
  a.batch = p.batch;
  a.headsQ = p.headsQ;
  a.headsKv = p.headsKv;
  a.seqQ = p.seqQ;
  a.seqKv = p.seqKv;
  const int64_t d = p.headDim, dv = p.vDim();
  a.qStride = {p.headsQ * p.seqQ * d, p.seqQ * d, d};
  a.kStride = {p.headsKv * p.seqKv * d, p.seqKv * d, d};
  a.vStride = {p.headsKv * p.seqKv * dv, p.seqKv * dv, dv};
  a.oStride = {p.headsQ * p.seqQ * dv, p.seqQ * dv, dv};
  a.lseStride = {p.headsQ * p.seqQ, p.seqQ};
  a.softmaxScale = p.effectiveScale();
  return a;
}

uint64_t attn::runtime::f32ParamSlot(double value) {
  float narrow = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &narrow, sizeof(bits));
  return bits;
}

GridSizes LaunchArgs::gridSizes(int64_t numSms) const {
  GridSizes sizes;
  sizes.batch = batch;
  sizes.headsQ = headsQ;
  sizes.headsKv = headsKv;
  sizes.seqQ = seqQ;
  sizes.seqKv = seqKv;
  sizes.numSms = numSms;
  return sizes;
}

namespace {
bool hasParam(const KernelManifest &m, const char *name) {
  for (const KernelParam &p : m.params)
    if (p.name == name)
      return true;
  return false;
}

/// The value the ABI gives parameter `name`; false for unknown names
/// (parseManifest rejects those already).
bool abiValue(const LaunchArgs &a, const std::string &name, uint64_t &out) {
  struct Entry {
    const char *name;
    uint64_t value;
  };
  const Entry table[] = {
      {"q", a.q},
      {"k", a.k},
      {"v", a.v},
      {"o", a.o},
      {"lse", a.lse},
      {"seq_q", static_cast<uint64_t>(a.seqQ)},
      {"seq_kv", static_cast<uint64_t>(a.seqKv)},
      {"heads_q", static_cast<uint64_t>(a.headsQ)},
      {"heads_kv", static_cast<uint64_t>(a.headsKv)},
      {"q_stride_b", static_cast<uint64_t>(a.qStride[0])},
      {"q_stride_h", static_cast<uint64_t>(a.qStride[1])},
      {"q_stride_n", static_cast<uint64_t>(a.qStride[2])},
      {"k_stride_b", static_cast<uint64_t>(a.kStride[0])},
      {"k_stride_h", static_cast<uint64_t>(a.kStride[1])},
      {"k_stride_n", static_cast<uint64_t>(a.kStride[2])},
      {"v_stride_b", static_cast<uint64_t>(a.vStride[0])},
      {"v_stride_h", static_cast<uint64_t>(a.vStride[1])},
      {"v_stride_n", static_cast<uint64_t>(a.vStride[2])},
      {"o_stride_b", static_cast<uint64_t>(a.oStride[0])},
      {"o_stride_h", static_cast<uint64_t>(a.oStride[1])},
      {"o_stride_n", static_cast<uint64_t>(a.oStride[2])},
      {"lse_stride_b", static_cast<uint64_t>(a.lseStride[0])},
      {"lse_stride_h", static_cast<uint64_t>(a.lseStride[1])},
      {"bias", a.bias},
      {"bias_stride_b", static_cast<uint64_t>(a.biasStride[0])},
      {"bias_stride_h", static_cast<uint64_t>(a.biasStride[1])},
      {"bias_stride_n", static_cast<uint64_t>(a.biasStride[2])},
      {"cu_seqlens_q", a.cuSeqlensQ},
      {"cu_seqlens_kv", a.cuSeqlensKv},
      {"key_start", a.keyStart},
      {"key_end", a.keyEnd},
      {"alibi_slopes", a.alibiSlopes},
      {"alibi_slopes_stride_b", static_cast<uint64_t>(a.alibiSlopesStrideB)},
      {"softmax_scale", f32ParamSlot(a.softmaxScale)},
  };
  for (const Entry &e : table)
    if (name == e.name) {
      out = e.value;
      return true;
    }
  return false;
}
} // namespace

Expected<LaunchGeometry>
attn::runtime::computeLaunchGeometry(const KernelManifest &m,
                                     const LaunchArgs &a, int64_t numSms) {
  auto positive = [](const char *what, int64_t v) -> Status {
    if (v >= 1)
      return Status::success();
    return Status::error(std::string(what) + " must be positive (got " +
                         std::to_string(v) + ")");
  };
  for (Status s : {positive("batch", a.batch), positive("heads_q", a.headsQ),
                   positive("heads_kv", a.headsKv),
                   positive("seq_q", a.seqQ), positive("seq_kv", a.seqKv)})
    if (!s)
      return s;
  if (a.headsQ % a.headsKv != 0)
    return Status::error("heads_q (" + std::to_string(a.headsQ) +
                         ") must be a multiple of heads_kv (" +
                         std::to_string(a.headsKv) + ")");
  struct Ptr {
    const char *name;
    cu::DevicePtr value;
  };
  for (Ptr p : {Ptr{"q", a.q}, Ptr{"k", a.k}, Ptr{"v", a.v}, Ptr{"o", a.o},
                Ptr{"bias", a.bias}, Ptr{"cu_seqlens_q", a.cuSeqlensQ},
                Ptr{"cu_seqlens_kv", a.cuSeqlensKv},
                Ptr{"key_start", a.keyStart}, Ptr{"key_end", a.keyEnd},
                Ptr{"alibi_slopes", a.alibiSlopes}})
    if (!p.value && hasParam(m, p.name))
      return Status::error(std::string("the ") + p.name +
                           " pointer is null");
  if (m.problem.withLse && !a.lse && hasParam(m, "lse"))
    return Status::error("the lse pointer is null but the kernel writes the "
                         "LSE (with_lse)");

  Expected<std::array<unsigned, 3>> grid =
      cudaGrid(m.grid, a.gridSizes(numSms));
  if (!grid)
    return grid.status();
  LaunchGeometry g;
  g.grid = *grid;
  g.threads = static_cast<unsigned>(m.threads);
  g.dynamicSharedMemory = static_cast<unsigned>(m.dynamicSharedMemory);
  return g;
}

Status attn::runtime::encodeTensorMap(const KernelManifest &m,
                                     const KernelParam &p, const LaunchArgs &a,
                                     PackedParams::TensorMap &out) {
  TiledTensorMap t;
  t.tensor = p.tensor;
  t.elementBytes = attn::dtypeBytes(m.problem.dtype);
  // CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6, BFLOAT16 = 9, FLOAT32 = 7.
  t.dataType = m.problem.dtype == attn::DType::bf16  ? 9
               : m.problem.dtype == attn::DType::f16 ? 6
                                                     : 7;
  if (p.tensor == "q") {
    t.base = a.q, t.dim = m.problem.headDim, t.seq = a.seqQ,
    t.heads = a.headsQ, t.stride = a.qStride;
  } else if (p.tensor == "k") {
    t.base = a.k, t.dim = m.problem.headDim, t.seq = a.seqKv,
    t.heads = a.headsKv, t.stride = a.kStride;
  } else if (p.tensor == "v") {
    t.base = a.v, t.dim = m.problem.vDim(), t.seq = a.seqKv,
    t.heads = a.headsKv, t.stride = a.vStride;
  } else {
    t.base = a.o, t.dim = m.problem.vDim(), t.seq = a.seqQ,
    t.heads = a.headsQ, t.stride = a.oStride;
  }
  t.batch = a.batch;
  t.boxCols = p.boxCols;
  t.boxRows = p.boxRows;
  t.swizzle = p.swizzle;
  if (Status s = encodeTiledTensorMap(t, out); !s)
    return s.prepend("tensormap parameter '" + p.name + "'");
  return Status::success();
}

Status attn::runtime::encodeTiledTensorMap(const TiledTensorMap &t,
                                          PackedParams::TensorMap &out) {
  auto fail = [&](const std::string &why) { return Status::error(why); };
  int64_t elt = t.elementBytes, dim = t.dim;
  const std::array<int64_t, 3> &stride = t.stride;
  unsigned long long dims[4] = {
      static_cast<unsigned long long>(dim),
      static_cast<unsigned long long>(t.seq),
      static_cast<unsigned long long>(t.heads),
      static_cast<unsigned long long>(t.batch)};
  // Byte strides of dims 1..3: sequence, head, batch. TMA takes positive
  // multiples of 16 only; a dimension of size 1 never steps its stride
  // (a broadcast or squeezed one may be 0 or odd), so it gets the extent
  // of the dimensions inside it, rounded up to 16.
  static const char *strideNames[3] = {"n", "h", "b"};
  unsigned long long strides[3];
  int64_t extent = dim * elt;
  for (int i = 0; i < 3; ++i) {
    int64_t bytes = stride[2 - i] * elt;
    if (dims[i + 1] == 1) {
      bytes = std::max<int64_t>(16, (extent + 15) / 16 * 16);
    } else if (bytes <= 0 || bytes % 16 != 0) {
      return fail(t.tensor + "_stride_" + strideNames[i] + " = " +
                  std::to_string(stride[2 - i]) + " elements (" +
                  std::to_string(bytes) +
                  " bytes) must be a positive multiple of 16 bytes: the "
                  "sm90a-wgmma kernel loads " + t.tensor +
                  " by TMA (copy the tensor to a dense layout, or compile "
                  "with --family sm80)");
    }
    strides[i] = static_cast<unsigned long long>(bytes);
    extent = std::max<int64_t>(extent, bytes * static_cast<int64_t>(dims[i + 1]));
  }
  if (t.base % 16 != 0)
    return fail("the " + t.tensor + " pointer must be 16-byte aligned");
  Expected<const CudaDriver *> drv = CudaDriver::get();
  if (!drv)
    return fail(drv.message());
  if (!(*drv)->TensorMapEncodeTiled)
    return fail("the CUDA driver has no cuTensorMapEncodeTiled (needs CUDA "
                "12 or newer)");
  unsigned box[4] = {static_cast<unsigned>(t.boxCols),
                     static_cast<unsigned>(t.boxRows), 1, 1};
  unsigned elementStrides[4] = {1, 1, 1, 1};
  // CU_TENSOR_MAP_SWIZZLE_NONE/32B/64B/128B = 0..3; L2 promotion 256B = 3;
  // out-of-bounds elements read as zero (FLOAT_OOB_FILL_NONE = 0).
  int swizzle = t.swizzle == 128 ? 3 : t.swizzle == 64 ? 2
                : t.swizzle == 32 ? 1 : 0;
  return (*drv)->check(
      (*drv)->TensorMapEncodeTiled(&out, t.dataType, 4,
                                   reinterpret_cast<void *>(t.base), dims,
                                   strides, box, elementStrides, 0, swizzle,
                                   3, 0),
      "cuTensorMapEncodeTiled(" + t.tensor + ")");
}

Expected<PackedParams> attn::runtime::packParamList(
    const KernelManifest &m, const std::string &abiName,
    const std::function<bool(const std::string &, uint64_t &)> &valueOf,
    const std::function<Status(const KernelParam &,
                               PackedParams::TensorMap &)> &encodeMap) {
  PackedParams pp;
  pp.storage.resize(m.params.size());
  pp.pointers.resize(m.params.size());
  // Sized once: pointers into it must stay valid.
  pp.tensorMaps.resize(m.params.size());
  for (size_t i = 0; i < m.params.size(); ++i) {
    const KernelParam &p = m.params[i];
    if (p.type == ParamType::TensorMap) {
      if (Status s = encodeMap(p, pp.tensorMaps[i]); !s)
        return s;
      pp.pointers[i] = &pp.tensorMaps[i];
      continue;
    }
    uint64_t v = 0;
    if (!valueOf(p.name, v))
      return Status::error("parameter '" + p.name + "' is not in " + abiName);
    if (p.type == ParamType::I32) {
      int64_t s = static_cast<int64_t>(v);
      if (s < std::numeric_limits<int32_t>::min() ||
          s > std::numeric_limits<int32_t>::max())
        return Status::error("parameter '" + p.name + "' = " +
                             std::to_string(s) +
                             " does not fit the kernel's i32");
      // cuLaunchKernel reads 4 bytes from the slot's start: the i32.
      int32_t narrow = static_cast<int32_t>(s);
      std::memcpy(&pp.storage[i], &narrow, sizeof(narrow));
    } else {
      pp.storage[i] = v;
    }
    pp.pointers[i] = &pp.storage[i];
  }
  return pp;
}

Expected<PackedParams> attn::runtime::packParams(const KernelManifest &m,
                                                 const LaunchArgs &a) {
  return packParamList(
      m, "the ABI",
      [&](const std::string &name, uint64_t &v) {
        return abiValue(a, name, v);
      },
      [&](const KernelParam &p, PackedParams::TensorMap &out) {
        return encodeTensorMap(m, p, a, out);
      });
}

namespace {
/// cuModuleLoadDataEx with the JIT's error log captured into the message.
Status loadImage(const CudaDriver &d, const std::string &image,
                 const std::string &what, cu::Module &module) {
  std::string log(8192, '\0');
  int options[] = {cu::kJitErrorLogBuffer, cu::kJitErrorLogBufferSizeBytes};
  void *values[] = {log.data(),
                    reinterpret_cast<void *>(static_cast<uintptr_t>(log.size()))};
  Status s = d.check(d.ModuleLoadDataEx(&module, image.c_str(), 2, options,
                                        values),
                     "cuModuleLoadDataEx(" + what + ")");
  if (!s) {
    log.resize(log.find('\0'));
    while (!log.empty() && (log.back() == '\n' || log.back() == ' '))
      log.pop_back();
    if (!log.empty())
      s = Status::error(s.message() + "; JIT log: " + log);
  }
  return s;
}
} // namespace

Expected<std::unique_ptr<Kernel>> Kernel::load(const std::string &dir,
                                               const LoadOptions &opts) {
  auto fail = [&](Status s) { return s.prepend("loading " + dir); };
  Expected<KernelManifest> man = readManifest(dir);
  if (!man)
    return man.status();
  Expected<const CudaDriver *> drv = CudaDriver::get();
  if (!drv)
    return fail(drv.status());
  const CudaDriver &d = **drv;
  Expected<cu::Context> ctx = ensureContext(d, opts.deviceOrdinal);
  if (!ctx)
    return fail(ctx.status());

  std::unique_ptr<Kernel> k(new Kernel());
  k->drv = &d;
  k->man = man.take();
  k->dir = dir;
  k->ctx = *ctx;
  const KernelManifest &m = k->man;

  cu::Device dev;
  int smCount = 0, major = 0, minor = 0, optin = 0;
  if (Status s = d.check(d.CtxGetDevice(&dev), "cuCtxGetDevice"); !s)
    return fail(s);
  for (auto [attr, out] : {std::pair{cu::kDevAttrMultiprocessorCount, &smCount},
                           std::pair{cu::kDevAttrComputeCapabilityMajor, &major},
                           std::pair{cu::kDevAttrComputeCapabilityMinor, &minor},
                           std::pair{cu::kDevAttrMaxSharedMemoryPerBlockOptin,
                                     &optin}})
    if (Status s = d.check(d.DeviceGetAttribute(out, attr, dev),
                           "cuDeviceGetAttribute");
        !s)
      return fail(s);
  k->sms = smCount;
  std::string device = "sm_" + std::to_string(major) + std::to_string(minor);

  if (!m.cubin.empty() && !opts.preferPtx) {
    Expected<std::string> cubin = readFile(dir + "/" + m.cubin);
    if (!cubin) {
      k->note = cubin.message();
    } else if (Status s = loadImage(d, *cubin, m.cubin, k->module); !s) {
      k->note = s.message();
      k->module = nullptr;
    } else {
      k->from = "cubin";
    }
  } else if (!m.cubin.empty()) {
    k->note = "PTX preferred";
  }
  if (!k->module) {
    Expected<std::string> ptx = readFile(dir + "/" + m.ptx);
    if (!ptx)
      return fail(ptx.status());
    if (Status s = loadImage(d, *ptx, m.ptx, k->module); !s) {
      k->module = nullptr;
      std::string msg = s.message();
      if (!m.chip.empty())
        msg += " (kernel built for " + m.chip + ", device is " + device + ")";
      if (!k->note.empty())
        msg += "; the cubin was not used either: " + k->note;
      return fail(Status::error(msg));
    }
    k->from = "ptx";
  }

  if (Status s = d.check(d.ModuleGetFunction(&k->function, k->module,
                                             m.entry.c_str()),
                         "cuModuleGetFunction(\"" + m.entry + "\")");
      !s)
    return fail(s.prepend("entry '" + m.entry + "' not in " + k->from));

  int maxThreads = 0;
  if (Status s = d.check(d.FuncGetAttribute(&maxThreads,
                                            cu::kFuncAttrMaxThreadsPerBlock,
                                            k->function),
                         "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
      !s)
    return fail(s);
  if (m.threads > maxThreads)
    return fail(Status::error(
        "the manifest's " + std::to_string(m.threads) +
        " threads exceed what the kernel can launch with (" +
        std::to_string(maxThreads) + ", limited by its registers)"));
  (void)d.FuncGetAttribute(&k->regs, cu::kFuncAttrNumRegs, k->function);

  // Above 48 KiB a kernel must opt in to more dynamic shared memory.
  if (m.dynamicSharedMemory > 48 * 1024) {
    if (m.dynamicSharedMemory > optin)
      return fail(Status::error(
          "dynamic_shared_memory " + std::to_string(m.dynamicSharedMemory) +
          " exceeds the device's " + std::to_string(optin) + " bytes per block"));
    if (Status s = d.check(
            d.FuncSetAttribute(k->function,
                               cu::kFuncAttrMaxDynamicSharedSizeBytes,
                               static_cast<int>(m.dynamicSharedMemory)),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " +
                std::to_string(m.dynamicSharedMemory) + ")");
        !s)
      return fail(s);
  }
  return k;
}

Kernel::~Kernel() {
  if (!module)
    return;
  ScopedContext guard(*drv, ctx);
  if (guard.status())
    (void)drv->ModuleUnload(module);
}

Status Kernel::launch(const LaunchArgs &args, cu::Stream stream) const {
  auto fail = [&](Status s) { return s.prepend("launching " + man.entry); };
  if (Status s = checkLaunchArgs(man, args); !s)
    return fail(s);
  if (isEmptyLaunch(args))
    return Status::success();
  Expected<LaunchGeometry> g = geometry(args);
  if (!g)
    return fail(g.status());
  Expected<PackedParams> params = packParams(man, args);
  if (!params)
    return fail(params.status());
  ScopedContext guard(*drv, ctx);
  if (!guard.status())
    return fail(guard.status());
  Status s = drv->check(
      drv->LaunchKernel(function, g->grid[0], g->grid[1], g->grid[2],
                        g->threads, 1, 1, g->dynamicSharedMemory, stream,
                        params->pointers.data(), nullptr),
      "cuLaunchKernel");
  if (!s)
    return fail(s);
  // Debugging aid: attribute asynchronous faults to this launch.
  static const bool syncEach = [] {
    const char *e = std::getenv("ATTN_SYNC_LAUNCH");
    return e && *e && *e != '0';
  }();
  if (syncEach)
    if (Status s = drv->check(drv->StreamSynchronize(stream),
                              "cuStreamSynchronize after the launch");
        !s)
      return fail(s);
  return Status::success();
}
