//===- RuntimeCAPI.cpp - C interface of libattn_runtime.so ----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/RuntimeCAPI.h"
#include "attn/Runtime/Backward.h"
#include "attn/Runtime/Runtime.h"

#include <memory>
#include <string>

using namespace attn::runtime;

struct attn_kernel {
  std::unique_ptr<Kernel> kernel;             // forward
  std::unique_ptr<BackwardKernel> backward;   // or backward

  const Kernel &main() const {
    return kernel ? *kernel : backward->mainKernel();
  }
};

namespace {
thread_local std::string lastError;

int fail(const Status &s) {
  lastError = s.message();
  return -1;
}

LaunchArgs convert(const attn_launch_args &c) {
  LaunchArgs a;
  a.q = c.q;
  a.k = c.k;
  a.v = c.v;
  a.o = c.o;
  a.lse = c.lse;
  a.batch = c.batch;
  a.headsQ = c.heads_q;
  a.headsKv = c.heads_kv;
  a.seqQ = c.seq_q;
  a.seqKv = c.seq_kv;
  for (int i = 0; i < 3; ++i) {
    a.qStride[i] = c.q_stride[i];
    a.kStride[i] = c.k_stride[i];
    a.vStride[i] = c.v_stride[i];
    a.oStride[i] = c.o_stride[i];
  }
  a.lseStride = {c.lse_stride[0], c.lse_stride[1]};
  a.softmaxScale = c.softmax_scale;
  a.keyStart = c.key_start;
  a.keyEnd = c.key_end;
  a.alibiSlopes = c.alibi_slopes;
  a.alibiSlopesStrideB = c.alibi_stride_b;
  return a;
}
} // namespace

int attn_runtime_abi_version(void) { return ATTN_RUNTIME_ABI_VERSION; }

const char *attn_runtime_last_error(void) { return lastError.c_str(); }

attn_kernel *attn_kernel_load(const char *dir, int prefer_ptx) {
  if (!dir) {
    fail(Status::error("attn_kernel_load: dir is NULL"));
    return nullptr;
  }
  LoadOptions opts;
  opts.preferPtx = prefer_ptx != 0;
  Expected<std::unique_ptr<Kernel>> k = Kernel::load(dir, opts);
  if (!k) {
    fail(k.status());
    return nullptr;
  }
  lastError.clear();
  if ((*k)->manifest().direction != "backward")
    return new attn_kernel{k.take(), nullptr};
  Expected<std::unique_ptr<BackwardKernel>> bwd =
      BackwardKernel::adopt(k.take());
  if (!bwd) {
    fail(bwd.status());
    return nullptr;
  }
  return new attn_kernel{nullptr, bwd.take()};
}

void attn_kernel_destroy(attn_kernel *kernel) { delete kernel; }

const char *attn_kernel_entry(const attn_kernel *kernel) {
  return kernel ? kernel->main().manifest().entry.c_str() : "";
}

const char *attn_kernel_loaded_from(const attn_kernel *kernel) {
  return kernel ? kernel->main().loadedFrom().c_str() : "";
}

int attn_kernel_grid(const attn_kernel *kernel, const attn_launch_args *args,
                     uint32_t grid[3]) {
  if (!kernel || !args || !grid)
    return fail(Status::error("attn_kernel_grid: NULL argument"));
  if (kernel->backward)
    return fail(Status::error("attn_kernel_grid: " +
                              kernel->main().manifest().entry +
                              " is a backward kernel (several launches)"));
  Expected<LaunchGeometry> g = kernel->kernel->geometry(convert(*args));
  if (!g)
    return fail(g.status());
  for (int i = 0; i < 3; ++i)
    grid[i] = g->grid[i];
  return 0;
}

int attn_kernel_launch(const attn_kernel *kernel, const attn_launch_args *args,
                       void *stream) {
  if (!kernel || !args)
    return fail(Status::error("attn_kernel_launch: NULL argument"));
  if (kernel->backward)
    return fail(Status::error("attn_kernel_launch: " +
                              kernel->main().manifest().entry +
                              " is a backward kernel: use "
                              "attn_kernel_launch_backward"));
  Status s = kernel->kernel->launch(convert(*args),
                                    static_cast<cu::Stream>(stream));
  if (!s)
    return fail(s);
  return 0;
}

namespace {
BackwardArgs convertBackward(const attn_backward_args &c) {
  BackwardArgs a;
  a.q = c.q, a.k = c.k, a.v = c.v, a.o = c.o, a.dO = c.d_o, a.lse = c.lse;
  a.dq = c.dq, a.dk = c.dk, a.dv = c.dv, a.workspace = c.workspace;
  a.batch = c.batch, a.headsQ = c.heads_q, a.headsKv = c.heads_kv;
  a.seqQ = c.seq_q, a.seqKv = c.seq_kv;
  for (int i = 0; i < 3; ++i) {
    a.qStride[i] = c.q_stride[i];
    a.kStride[i] = c.k_stride[i];
    a.vStride[i] = c.v_stride[i];
    a.oStride[i] = c.o_stride[i];
    a.doStride[i] = c.do_stride[i];
    a.dqStride[i] = c.dq_stride[i];
    a.dkStride[i] = c.dk_stride[i];
    a.dvStride[i] = c.dv_stride[i];
  }
  a.lseStride = {c.lse_stride[0], c.lse_stride[1]};
  a.softmaxScale = c.softmax_scale;
  a.keyStart = c.key_start;
  a.keyEnd = c.key_end;
  a.alibiSlopes = c.alibi_slopes;
  a.alibiSlopesStrideB = c.alibi_stride_b;
  return a;
}
} // namespace

int attn_kernel_is_backward(const attn_kernel *kernel) {
  return kernel && kernel->backward ? 1 : 0;
}

uint64_t attn_kernel_workspace_bytes(const attn_kernel *kernel,
                                     const attn_backward_args *args) {
  if (!kernel || !args || !kernel->backward)
    return 0;
  return kernel->backward->workspaceBytes(convertBackward(*args));
}

int attn_kernel_launch_backward(const attn_kernel *kernel,
                                const attn_backward_args *args,
                                void *stream) {
  if (!kernel || !args)
    return fail(Status::error("attn_kernel_launch_backward: NULL argument"));
  if (!kernel->backward)
    return fail(Status::error("attn_kernel_launch_backward: " +
                              kernel->main().manifest().entry +
                              " is a forward kernel"));
  Status s = kernel->backward->launch(convertBackward(*args),
                                      static_cast<cu::Stream>(stream));
  if (!s)
    return fail(s);
  return 0;
}
