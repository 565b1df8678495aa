//===- Backward.cpp - launching the backward kernels ----------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Backward.h"
#include "attn/Runtime/LaunchChecks.h"

using namespace attn;
using namespace attn::runtime;

BackwardArgs BackwardArgs::dense(const AttentionProblem &p) {
  BackwardArgs a;
  a.batch = p.batch;
  a.headsQ = p.headsQ;
  a.headsKv = p.headsKv;
  a.seqQ = p.seqQ;
  a.seqKv = p.seqKv;
  auto strides = [](int64_t heads, int64_t n, int64_t d) {
    return std::array<int64_t, 3>{heads * n * d, n * d, d};
  };
  a.qStride = a.dqStride = strides(p.headsQ, p.seqQ, p.headDim);
  a.kStride = a.dkStride = strides(p.headsKv, p.seqKv, p.headDim);
  a.vStride = a.dvStride = strides(p.headsKv, p.seqKv, p.vDim());
  a.oStride = a.doStride = strides(p.headsQ, p.seqQ, p.vDim());
  a.lseStride = {p.headsQ * p.seqQ, p.seqQ};
  a.softmaxScale = p.effectiveScale();
  return a;
}

Expected<std::unique_ptr<BackwardKernel>>
BackwardKernel::load(const std::string &dir, const LoadOptions &opts) {
  Expected<std::unique_ptr<Kernel>> main = Kernel::load(dir, opts);
  if (!main)
    return main.status();
  return adopt(main.take());
}

Expected<std::unique_ptr<BackwardKernel>>
BackwardKernel::adopt(std::unique_ptr<Kernel> main) {
  const KernelManifest &m = main->manifest();
  const std::string &dir = main->directory();
  if (m.direction != "backward")
    return Status::error("loading " + dir + ": not a backward kernel "
                         "directory (manifest direction '" + m.direction +
                         "'; compile one with attn-compile --backward)");
  std::unique_ptr<BackwardKernel> k(new BackwardKernel());
  const CudaDriver &d = main->driver();
  ScopedContext guard(d, main->context());
  if (!guard.status())
    return guard.status();
  for (const KernelManifest::Launch &l : m.launches) {
    cu::Function fn = nullptr;
    if (Status s = d.check(d.ModuleGetFunction(&fn, main->cuModule(),
                                               l.entry.c_str()),
                           "cuModuleGetFunction(\"" + l.entry + "\")");
        !s)
      return s.prepend("loading " + dir + ": launch '" + l.role + "'");
    if (l.dynamicSharedMemory > 48 * 1024)
      if (Status s = d.check(
              d.FuncSetAttribute(fn, cu::kFuncAttrMaxDynamicSharedSizeBytes,
                                 static_cast<int>(l.dynamicSharedMemory)),
              "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " +
                  std::to_string(l.dynamicSharedMemory) + ")");
          !s)
        return s.prepend("loading " + dir + ": launch '" + l.role + "'");
    k->functions.push_back(fn);
  }
  k->main = std::move(main);
  return k;
}

uint64_t BackwardKernel::workspaceBytes(const BackwardArgs &a) const {
  const AttentionProblem &p = manifest().problem;
  // Δ padded to a multiple of 4 rows keeps the dQ accumulator 16-byte
  // aligned (FlashBackwardKernel.cpp, workspaceRegion).
  uint64_t seqQ4 = (static_cast<uint64_t>(a.seqQ) + 3) & ~uint64_t(3);
  return static_cast<uint64_t>(a.batch) * a.headsQ * seqQ4 *
         backwardWorkspaceSlotsPerRow(p.headDim) * sizeof(float);
}

namespace {
/// The value of backward parameter `name`.
bool backwardValue(const BackwardArgs &a, const std::string &name,
                   uint64_t &v) {
  struct Ptr {
    const char *name;
    cu::DevicePtr value;
  };
  for (Ptr p : {Ptr{"q", a.q}, {"k", a.k}, {"v", a.v}, {"o", a.o},
                {"do", a.dO}, {"lse", a.lse}, {"dq", a.dq}, {"dk", a.dk},
                {"dv", a.dv}, {"workspace", a.workspace},
                {"key_start", a.keyStart}, {"key_end", a.keyEnd},
                {"alibi_slopes", a.alibiSlopes}})
    if (name == p.name) {
      v = p.value;
      return true;
    }
  struct Int {
    const char *name;
    int64_t value;
  };
  if (name == "softmax_scale") {
    v = f32ParamSlot(a.softmaxScale);
    return true;
  }
  for (Int i : {Int{"seq_q", a.seqQ},
                {"seq_kv", a.seqKv}, {"heads_q", a.headsQ},
                {"heads_kv", a.headsKv}, {"lse_stride_b", a.lseStride[0]},
                {"lse_stride_h", a.lseStride[1]},
                {"alibi_slopes_stride_b", a.alibiSlopesStrideB}})
    if (name == i.name) {
      v = static_cast<uint64_t>(i.value);
      return true;
    }
  struct Strides {
    const char *tensor;
    const std::array<int64_t, 3> &s;
  };
  for (Strides t : {Strides{"q", a.qStride}, {"k", a.kStride},
                    {"v", a.vStride}, {"o", a.oStride}, {"do", a.doStride},
                    {"dq", a.dqStride}, {"dk", a.dkStride},
                    {"dv", a.dvStride}})
    for (int d = 0; d < 3; ++d)
      if (name == std::string(t.tensor) + "_stride_" + "bhn"[d]) {
        v = static_cast<uint64_t>(t.s[d]);
        return true;
      }
  return false;
}
} // namespace

Status BackwardKernel::launch(const BackwardArgs &a, cu::Stream stream) const {
  const KernelManifest &m = manifest();
  auto fail = [&](Status s) { return s.prepend("launching " + m.entry); };
  // The forward's argument checks, once for the inputs (Q, K, V, O, LSE)
  // and once for the gradients (dQ, dK, dV with dO in O's place).
  LaunchArgs fwd;
  fwd.q = a.q, fwd.k = a.k, fwd.v = a.v, fwd.o = a.o, fwd.lse = a.lse;
  fwd.batch = a.batch, fwd.headsQ = a.headsQ, fwd.headsKv = a.headsKv;
  fwd.seqQ = a.seqQ, fwd.seqKv = a.seqKv;
  fwd.qStride = a.qStride, fwd.kStride = a.kStride, fwd.vStride = a.vStride;
  fwd.oStride = a.oStride, fwd.lseStride = a.lseStride;
  fwd.softmaxScale = a.softmaxScale;
  fwd.keyStart = a.keyStart, fwd.keyEnd = a.keyEnd;
  fwd.alibiSlopes = a.alibiSlopes;
  fwd.alibiSlopesStrideB = a.alibiSlopesStrideB;
  KernelManifest withLse = m;
  withLse.problem.withLse = true; // the backward reads the LSE
  if (Status s = checkLaunchArgs(withLse, fwd); !s)
    return fail(s);
  LaunchArgs grads = fwd;
  grads.q = a.dq, grads.k = a.dk, grads.v = a.dv, grads.o = a.dO;
  grads.qStride = a.dqStride, grads.kStride = a.dkStride;
  grads.vStride = a.dvStride, grads.oStride = a.doStride;
  if (Status s = checkLaunchArgs(withLse, grads); !s)
    return fail(Status::error(
        std::string(s.message()) +
        " (in the gradients: q, k, v, o stand for dq, dk, dv, do)"));
  if (isEmptyLaunch(fwd))
    return Status::success();
  if (a.workspace == 0 || a.workspace % kTensorAlignment)
    return fail(Status::error(
        "workspace: needs " + std::to_string(workspaceBytes(a)) +
        " bytes of device memory, 16-byte aligned (got " +
        (a.workspace ? "a misaligned pointer" : "null") + ")"));

  // The sm90a dkdv kernel's TMA descriptors take dO through the forward's
  // "o" slot.
  Expected<PackedParams> packed = packParamList(
      m, "the backward ABI",
      [&](const std::string &name, uint64_t &v) {
        return backwardValue(a, name, v);
      },
      [&](const KernelParam &p, PackedParams::TensorMap &out) {
        LaunchArgs mapArgs = fwd;
        if (p.tensor == "do")
          mapArgs.o = a.dO, mapArgs.oStride = a.doStride;
        return encodeTensorMap(m, p, mapArgs, out);
      });
  if (!packed)
    return fail(packed.status());

  GridSizes sizes = fwd.gridSizes(main->numSms());
  const CudaDriver &d = main->driver();
  ScopedContext guard(d, main->context());
  if (!guard.status())
    return fail(guard.status());
  for (size_t i = 0; i < m.launches.size(); ++i) {
    const KernelManifest::Launch &l = m.launches[i];
    Expected<std::array<unsigned, 3>> grid = cudaGrid(l.grid, sizes);
    if (!grid)
      return fail(Status(grid.status()).prepend(l.role));
    if (Status s = d.check(
            d.LaunchKernel(functions[i], (*grid)[0], (*grid)[1], (*grid)[2],
                           static_cast<unsigned>(l.threads), 1, 1,
                           static_cast<unsigned>(l.dynamicSharedMemory), stream,
                           packed->pointers.data(), nullptr),
            "cuLaunchKernel(" + l.entry + ")");
        !s)
      return fail(s);
  }
  return Status::success();
}
