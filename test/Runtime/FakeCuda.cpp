//===- FakeCuda.cpp - a host-only stand-in for libcuda, for tests ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Lets CI (no GPU) drive the runtime's whole launch path through dlopen:
// point ATTN_LIBCUDA at this library. Memory is host memory; a cubin loads
// only when built for sm_90 (the fake device), so an sm_80 cubin exercises
// the fall-back to PTX; functions are found by their .entry in the PTX (or
// their name in the cubin); a launch asking for more than 48 KiB of dynamic
// shared memory fails unless the runtime raised the kernel's limit first;
// and the test kernels of Inputs/src/naive.cu, known by entry name, run on
// the host, one block at a time, reading the ABI's parameters from the
// launch. Not a model of CUDA beyond what those tests need.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// The handles carry the CUDA driver's own struct names and every entry
// point below takes the runtime's exact parameter types (CudaDriver.h):
// a call through a function pointer of another type is undefined
// behaviour, which UBSan's -fsanitize=function reports (scripts/sanitize.sh).
struct CUctx_st {
  int device = 0;
};
struct CUmod_st {
  std::string image; // PTX text or cubin bytes
};
struct CUfunc_st {
  std::string name;
  int maxDynamicShared = 48 * 1024;
};
struct CUevent_st {
  double ms = 0;
};
struct CUstream_st {};

namespace {
using Result = int;
using DevicePtr = unsigned long long; // CUdeviceptr
using Context = CUctx_st;
using Module = CUmod_st;
using Function = CUfunc_st;
using Event = CUevent_st;
constexpr Result kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2,
                 kInvalidImage = 200, kInvalidContext = 201,
                 kNoBinaryForGpu = 209, kInvalidPtx = 218,
                 kInvalidHandle = 400, kNotFound = 500;

struct Error {
  Result code;
  const char *name, *text;
};
const Error kErrors[] = {
    {kSuccess, "CUDA_SUCCESS", "no error"},
    {kInvalidValue, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {kOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {kInvalidImage, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {kInvalidContext, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {kNoBinaryForGpu, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {kInvalidPtx, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {kInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {kNotFound, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
};

Context theContext;
thread_local Context *current = nullptr;
thread_local std::vector<Context *> pushed;


double nowMs() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch())
      .count();
}

float bf16ToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t floatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

/// The ABI's parameters, in order (docs/kernel-abi.md).
struct AbiArgs {
  char *q, *k, *v, *o;
  float *lse;
  int seqQ, seqKv, headsQ, headsKv;
  float scale;
  int64_t qs[3], ks[3], vs[3], os[3], ls[2];
  const int32_t *keyStart = nullptr, *keyEnd = nullptr; // a _kr kernel's
};
AbiArgs readArgs(void **p) {
  AbiArgs a;
  auto ptr = [&](int i) { return *static_cast<char **>(p[i]); };
  auto i32 = [&](int i) { return *static_cast<int32_t *>(p[i]); };
  auto i64 = [&](int i) { return *static_cast<int64_t *>(p[i]); };
  a.q = ptr(0);
  a.k = ptr(1);
  a.v = ptr(2);
  a.o = ptr(3);
  a.lse = reinterpret_cast<float *>(ptr(4));
  a.seqQ = i32(5);
  a.seqKv = i32(6);
  a.headsQ = i32(7);
  a.headsKv = i32(8);
  a.scale = *static_cast<float *>(p[9]);
  for (int i = 0; i < 3; ++i) {
    a.qs[i] = i64(10 + i);
    a.ks[i] = i64(13 + i);
    a.vs[i] = i64(16 + i);
    a.os[i] = i64(19 + i);
  }
  a.ls[0] = i64(22);
  a.ls[1] = i64(23);
  return a;
}

/// A key_range kernel's key_start and key_end (i32 [B]), after the rest.
void readKeyRange(void **p, AbiArgs &a) {
  a.keyStart = *static_cast<const int32_t **>(p[24]);
  a.keyEnd = *static_cast<const int32_t **>(p[25]);
}

/// Host version of naive.cu's kernels, one block (bx, by) of 64 rows.
void runBlock(const std::string &entry, const AbiArgs &a, unsigned bx,
              unsigned by) {
  const bool bf16 = entry.find("bf16") != std::string::npos;
  const bool causal = entry.find("causal") != std::string::npos;
  const bool zero = entry.find("zero") != std::string::npos;
  const int D = 64, eb = bf16 ? 2 : 4;
  auto load = [&](const char *base, int64_t i) {
    if (bf16) {
      uint16_t h;
      std::memcpy(&h, base + 2 * i, 2);
      return bf16ToFloat(h);
    }
    float f;
    std::memcpy(&f, base + 4 * i, 4);
    return f;
  };
  auto store = [&](char *base, int64_t i, float x) {
    if (bf16) {
      uint16_t h = floatToBf16(x);
      std::memcpy(base + 2 * i, &h, 2);
    } else {
      std::memcpy(base + 4 * i, &x, 4);
    }
  };
  (void)eb;
  const int b = by / a.headsQ, h = by % a.headsQ;
  const int hk = h / (a.headsQ / a.headsKv);
  const float scale = a.scale;
  for (int t = 0; t < 64; ++t) {
    const int row = bx * 64 + t;
    if (row >= a.seqQ)
      continue;
    const int64_t oBase = b * a.os[0] + h * a.os[1] + row * a.os[2];
    float *lse = a.lse ? &a.lse[b * a.ls[0] + h * a.ls[1] + row] : nullptr;
    int limit =
        causal ? std::min(a.seqKv, row + a.seqKv - a.seqQ + 1) : a.seqKv;
    // key_range: keys [start, end) of batch entry b, clamped to [0, Nk].
    int first = 0;
    if (a.keyStart) {
      first = std::clamp(a.keyStart[b], 0, a.seqKv);
      limit = std::min(limit, std::clamp(a.keyEnd[b], 0, a.seqKv));
    }
    if (zero || limit <= first) {
      for (int d = 0; d < D; ++d)
        store(a.o, oBase + d, 0.f);
      if (lse)
        *lse = -INFINITY;
      continue;
    }
    std::vector<float> s(limit - first);
    float m = -INFINITY;
    for (int j = first; j < limit; ++j) {
      float acc = 0;
      for (int d = 0; d < D; ++d)
        acc += load(a.q, b * a.qs[0] + h * a.qs[1] + row * a.qs[2] + d) *
               load(a.k, b * a.ks[0] + hk * a.ks[1] + j * a.ks[2] + d);
      s[j - first] = acc * scale;
      m = std::max(m, s[j - first]);
    }
    float l = 0;
    for (float &x : s)
      l += (x = std::exp(x - m));
    for (int d = 0; d < D; ++d) {
      float acc = 0;
      for (int j = first; j < limit; ++j)
        acc += s[j - first] *
               load(a.v, b * a.vs[0] + hk * a.vs[1] + j * a.vs[2] + d);
      store(a.o, oBase + d, acc / l);
    }
    if (lse)
      *lse = m + std::log(l);
  }
}
/// Host version of a naive f32 D = 64 backward pass for attn-tune's tests
/// (entries naive_bwd_*: Inputs of test/Tuning): the "dkdv" launch computes
/// dQ, dK and dV of the whole problem from Q, K, V, O, dO and the LSE;
/// the other launches do nothing; "zero" entries write zero gradients.
/// The dkdv grid's y is batch * heads_kv (the parameters hold no batch).
void runBackward(const std::string &entry, void **p, unsigned gy) {
  if (entry.find("dkdv") == std::string::npos)
    return;
  auto ptr = [&](int i) { return *static_cast<float **>(p[i]); };
  auto i32 = [&](int i) { return *static_cast<int32_t *>(p[i]); };
  auto i64 = [&](int i) { return *static_cast<int64_t *>(p[i]); };
  float *q = ptr(0), *k = ptr(1), *v = ptr(2), *o = ptr(3), *dO = ptr(4),
        *lse = ptr(5), *dq = ptr(6), *dk = ptr(7), *dv = ptr(8);
  const int nq = i32(10), nk = i32(11), hq = i32(12), hkv = i32(13);
  int64_t st[8][3]; // q k v o do dq dk dv: batch, head, row
  for (int t = 0; t < 8; ++t)
    for (int x = 0; x < 3; ++x)
      st[t][x] = i64(15 + 3 * t + x);
  const int64_t lb = i64(39), lh = i64(40);
  const bool causal = entry.find("causal") != std::string::npos;
  const bool zero = entry.find("zero") != std::string::npos;
  const int D = 64, group = hq / hkv, batch = gy / hkv;
  const float scale = *static_cast<float *>(p[14]);
  auto at = [&](int t, int b, int h, int n) {
    return b * st[t][0] + h * st[t][1] + n * st[t][2];
  };
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < hq; ++h)
      for (int i = 0; i < nq; ++i)
        for (int d = 0; d < D; ++d)
          dq[at(5, b, h, i) + d] = 0;
    for (int h = 0; h < hkv; ++h)
      for (int j = 0; j < nk; ++j)
        for (int d = 0; d < D; ++d)
          dk[at(6, b, h, j) + d] = dv[at(7, b, h, j) + d] = 0;
    if (zero)
      continue;
    for (int h = 0; h < hq; ++h) {
      const int g = h / group;
      for (int i = 0; i < nq; ++i) {
        const int limit = causal ? std::min(nk, i + nk - nq + 1) : nk;
        float delta = 0;
        for (int d = 0; d < D; ++d)
          delta += dO[at(4, b, h, i) + d] * o[at(3, b, h, i) + d];
        for (int j = 0; j < limit; ++j) {
          float s = 0, dp = 0;
          for (int d = 0; d < D; ++d) {
            s += q[at(0, b, h, i) + d] * k[at(1, b, g, j) + d];
            dp += dO[at(4, b, h, i) + d] * v[at(2, b, g, j) + d];
          }
          float pij = std::exp(s * scale - lse[b * lb + h * lh + i]);
          float ds = pij * (dp - delta);
          for (int d = 0; d < D; ++d) {
            dq[at(5, b, h, i) + d] += scale * ds * k[at(1, b, g, j) + d];
            dk[at(6, b, g, j) + d] += scale * ds * q[at(0, b, h, i) + d];
            dv[at(7, b, g, j) + d] += pij * dO[at(4, b, h, i) + d];
          }
        }
      }
    }
  }
}
} // namespace

#define API extern "C" __attribute__((visibility("default"))) Result

API cuInit(unsigned) { return kSuccess; }
API cuDriverGetVersion(int *v) {
  *v = 13000;
  return kSuccess;
}
API cuGetErrorName(Result r, const char **name) {
  for (const Error &e : kErrors)
    if (e.code == r) {
      *name = e.name;
      return kSuccess;
    }
  return kInvalidValue;
}
API cuGetErrorString(Result r, const char **text) {
  for (const Error &e : kErrors)
    if (e.code == r) {
      *text = e.text;
      return kSuccess;
    }
  return kInvalidValue;
}
API cuDeviceGet(int *dev, int ordinal) {
  if (ordinal != 0)
    return kInvalidValue;
  *dev = 0;
  return kSuccess;
}
API cuDeviceGetCount(int *n) {
  *n = 1;
  return kSuccess;
}
API cuDeviceGetName(char *name, int len, int) {
  std::strncpy(name, "attn fake CUDA device", len);
  return kSuccess;
}
API cuDeviceGetAttribute(int *v, int attr, int) {
  switch (attr) {
  case 5: // max grid x
    *v = 2147483647;
    return kSuccess;
  case 6:
  case 7:
    *v = 65535;
    return kSuccess;
  case 16: // multiprocessors
    *v = 4;
    return kSuccess;
  case 38: // L2 bytes
    *v = 1 << 20;
    return kSuccess;
  case 75:
    *v = 9;
    return kSuccess;
  case 76:
    *v = 0;
    return kSuccess;
  case 97: // opt-in shared memory per block
    *v = 227 * 1024;
    return kSuccess;
  }
  return kInvalidValue;
}
API cuDevicePrimaryCtxRetain(Context **ctx, int) {
  *ctx = &theContext;
  return kSuccess;
}
API cuCtxGetCurrent(Context **ctx) {
  *ctx = current;
  return kSuccess;
}
API cuCtxSetCurrent(Context *ctx) {
  current = ctx;
  return kSuccess;
}
API cuCtxGetDevice(int *dev) {
  if (!current)
    return kInvalidContext;
  *dev = current->device;
  return kSuccess;
}
API cuCtxPushCurrent_v2(Context *ctx) {
  pushed.push_back(current);
  current = ctx;
  return kSuccess;
}
API cuCtxPopCurrent_v2(Context **ctx) {
  if (pushed.empty())
    return kInvalidContext;
  *ctx = current;
  current = pushed.back();
  pushed.pop_back();
  return kSuccess;
}

API cuModuleLoadDataEx(Module **mod, const void *image, unsigned n,
                       int *options, void **values) {
  if (!current)
    return kInvalidContext;
  const char *bytes = static_cast<const char *>(image);
  std::string log;
  Result r = kSuccess;
  std::string text;
  if (std::memcmp(bytes, "\x7f" "ELF", 4) == 0) {
    // CUDA cubins keep the SM version in e_flags' second byte.
    uint32_t flags;
    std::memcpy(&flags, bytes + 48, 4);
    unsigned sm = (flags >> 8) & 0xff;
    if (sm != 90) {
      r = kNoBinaryForGpu;
      log = "fake: cubin for sm_" + std::to_string(sm) + ", device is sm_90";
    }
    // The section headers end the file, so they give its size.
    uint64_t shoff;
    uint16_t shentsize, shnum;
    std::memcpy(&shoff, bytes + 40, 8);
    std::memcpy(&shentsize, bytes + 58, 2);
    std::memcpy(&shnum, bytes + 60, 2);
    text.assign(bytes, shoff + uint64_t(shentsize) * shnum);
  } else {
    text = bytes;
    if (text.find(".version") == std::string::npos ||
        text.find(".target") == std::string::npos) {
      r = kInvalidPtx;
      log = "fake: not PTX (no .version/.target)";
    }
  }
  for (unsigned i = 0; i + 1 < n; ++i)
    if (options[i] == 5 && options[i + 1] == 6 && !log.empty()) {
      size_t cap = reinterpret_cast<uintptr_t>(values[i + 1]);
      std::strncpy(static_cast<char *>(values[i]), log.c_str(), cap - 1);
    }
  if (r != kSuccess)
    return r;
  *mod = new Module{text};
  return kSuccess;
}
API cuModuleUnload(Module *mod) {
  delete mod;
  return kSuccess;
}
API cuModuleGetFunction(Function **fn, Module *mod, const char *name) {
  if (!mod)
    return kInvalidHandle;
  std::string n = name;
  bool found = mod->image.find(".entry " + n + "(") != std::string::npos ||
               (mod->image.rfind("\x7f" "ELF", 0) == 0 &&
                mod->image.find(std::string(1, '\0') + n + '\0') !=
                    std::string::npos);
  if (!found)
    return kNotFound;
  *fn = new Function{n}; // leaked, like the module handles a test makes
  return kSuccess;
}
API cuFuncGetAttribute(int *v, int attr, Function *fn) {
  if (!fn)
    return kInvalidHandle;
  if (attr == 0) { // max threads per block
    *v = 1024;
    return kSuccess;
  }
  if (attr == 4) { // registers
    *v = 32;
    return kSuccess;
  }
  return kInvalidValue;
}
API cuFuncSetAttribute(Function *fn, int attr, int value) {
  if (!fn)
    return kInvalidHandle;
  if (attr != 8 || value < 0 || value > 227 * 1024)
    return kInvalidValue;
  fn->maxDynamicShared = value;
  return kSuccess;
}
API cuLaunchKernel(Function *fn, unsigned gx, unsigned gy, unsigned gz,
                   unsigned bx, unsigned by, unsigned bz, unsigned smem,
                   CUstream_st *, void **params, void **) {
  if (!current)
    return kInvalidContext;
  if (!fn || !params)
    return kInvalidValue;
  // Tests of paths that must launch nothing (an empty problem) set this:
  // a launch then fails, and so does the test.
  if (std::getenv("ATTN_FAKE_CUDA_NO_LAUNCH"))
    return kInvalidValue;
  if (static_cast<int>(smem) > fn->maxDynamicShared || bx * by * bz > 1024 ||
      gz != 1 || bx != 64)
    return kInvalidValue;
  if (fn->name.rfind("naive_bwd_", 0) == 0) {
    runBackward(fn->name, params, gy);
    return kSuccess;
  }
  AbiArgs a = readArgs(params);
  if (fn->name.find("_kr") != std::string::npos)
    readKeyRange(params, a);
  for (unsigned y = 0; y < gy; ++y)
    for (unsigned x = 0; x < gx; ++x)
      runBlock(fn->name, a, x, y);
  return kSuccess;
}

API cuMemGetInfo_v2(size_t *freeBytes, size_t *total) {
  *freeBytes = size_t(4) << 30;
  *total = size_t(8) << 30;
  return kSuccess;
}
API cuMemAlloc_v2(DevicePtr *ptr, size_t n) {
  // A device of ATTN_FAKE_CUDA_MEMORY bytes, for out-of-memory tests.
  if (const char *limit = std::getenv("ATTN_FAKE_CUDA_MEMORY"))
    if (n > std::strtoull(limit, nullptr, 10))
      return kOutOfMemory;
  void *p = std::aligned_alloc(256, (n + 255) & ~size_t(255));
  if (!p)
    return kOutOfMemory;
  *ptr = reinterpret_cast<uintptr_t>(p);
  return kSuccess;
}
API cuMemFree_v2(DevicePtr ptr) {
  std::free(reinterpret_cast<void *>(ptr));
  return kSuccess;
}
API cuMemcpyHtoD_v2(DevicePtr dst, const void *src, size_t n) {
  std::memcpy(reinterpret_cast<void *>(dst), src, n);
  return kSuccess;
}
API cuMemcpyDtoH_v2(void *dst, DevicePtr src, size_t n) {
  std::memcpy(dst, reinterpret_cast<void *>(src), n);
  return kSuccess;
}
API cuMemcpyDtoD_v2(DevicePtr dst, DevicePtr src, size_t n) {
  std::memcpy(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src), n);
  return kSuccess;
}
API cuMemsetD8_v2(DevicePtr dst, unsigned char v, size_t n) {
  std::memset(reinterpret_cast<void *>(dst), v, n);
  return kSuccess;
}
API cuStreamCreate(CUstream_st **s, unsigned) {
  *s = new CUstream_st;
  return kSuccess;
}
API cuStreamDestroy_v2(CUstream_st *s) {
  delete s;
  return kSuccess;
}
API cuStreamSynchronize(CUstream_st *) { return kSuccess; }
API cuEventCreate(Event **e, unsigned) {
  *e = new Event;
  return kSuccess;
}
API cuEventDestroy_v2(Event *e) {
  delete e;
  return kSuccess;
}
API cuEventRecord(Event *e, CUstream_st *) {
  e->ms = nowMs();
  return kSuccess;
}
API cuEventSynchronize(Event *) { return kSuccess; }
API cuEventElapsedTime(float *ms, Event *a, Event *b) {
  *ms = static_cast<float>(b->ms - a->ms);
  return kSuccess;
}
