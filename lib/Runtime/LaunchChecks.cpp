//===- LaunchChecks.cpp - what a launch's arguments must satisfy ----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/LaunchChecks.h"
#include "attn/Support/JsonNumber.h"

#include <cmath>
#include <cstdio>
#include <string>

using namespace attn::runtime;

namespace {
int64_t elementBytes(attn::DType t) {
  return t == attn::DType::f32 ? 4 : 2;
}

std::string str(int64_t v) { return std::to_string(v); }

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

/// One 4-D tensor argument: its pointer, strides and the sizes of the
/// dimensions those strides step over (batch, heads, rows).
struct TensorArg {
  const char *name;
  cu::DevicePtr ptr;
  const std::array<int64_t, 3> &stride;
  int64_t sizes[3];
  int64_t rowElements;
};

Status checkTensor(const TensorArg &t, int64_t eltBytes) {
  if (t.ptr % kTensorAlignment != 0)
    return Status::error(std::string("the ") + t.name + " pointer (" +
                         hex(t.ptr) +
                         ") must be 16-byte aligned (the kernels load and "
                         "store 16-byte chunks)");
  static const char *dims[] = {"b", "h", "n"};
  for (int i = 0; i < 3; ++i) {
    std::string what = std::string(t.name) + "_stride_" + dims[i];
    int64_t s = t.stride[i];
    if (s < 0)
      return Status::error(what + " = " + str(s) + " must be non-negative");
    // A dimension of size 1 never multiplies its stride.
    if (t.sizes[i] > 1 && (s * eltBytes) % kTensorAlignment != 0)
      return Status::error(what + " = " + str(s) + " elements (" +
                           str(s * eltBytes) +
                           " bytes) must be a multiple of 16 bytes, so that "
                           "every row stays 16-byte aligned");
  }
  return Status::success();
}
} // namespace

bool attn::runtime::isEmptyLaunch(const LaunchArgs &a) {
  return a.batch == 0 || a.seqQ == 0;
}

Status attn::runtime::checkLaunchArgs(const KernelManifest &m,
                                      const LaunchArgs &a) {
  struct Size {
    const char *name;
    int64_t value;
  };
  for (Size s : {Size{"batch", a.batch}, Size{"heads_q", a.headsQ},
                 Size{"heads_kv", a.headsKv}, Size{"seq_q", a.seqQ},
                 Size{"seq_kv", a.seqKv}})
    if (s.value < 0)
      return Status::error(std::string(s.name) + " must not be negative (got " +
                           str(s.value) + ")");
  if (isEmptyLaunch(a))
    return Status::success();
  // 0 is what a caller that forgot the field passes: refused, never a
  // launch with every score scaled to 0.
  if (!std::isfinite(a.softmaxScale) || a.softmaxScale == 0 ||
      !std::isfinite(static_cast<float>(a.softmaxScale)))
    return Status::error("softmax_scale must be finite and non-zero (got " +
                         jsonNumber(a.softmaxScale) + ")");
  // Every kernel reads Q, K, V and writes O (the backward kernels, checked
  // twice, read dO in O's place and write dQ, dK, dV in Q's, K's, V's).
  struct Ptr {
    const char *name;
    cu::DevicePtr value;
  };
  for (Ptr p : {Ptr{"q", a.q}, Ptr{"k", a.k}, Ptr{"v", a.v}, Ptr{"o", a.o}})
    if (!p.value)
      return Status::error(std::string("the ") + p.name + " pointer is null");
  if (m.problem.withLse && !a.lse)
    return Status::error(m.direction == "backward"
                             ? "the lse pointer is null (the backward kernels "
                               "read the forward's LSE)"
                             : "the lse pointer is null but the kernel writes "
                               "the LSE (with_lse)");

  // The variants' arrays the kernels read (both directions: the backward
  // checks its arguments here only).
  const AttentionProblem &p = m.problem;
  struct Array {
    const char *name;
    bool read;
    cu::DevicePtr value;
  };
  for (Array v : {Array{"bias", p.bias, a.bias},
                  Array{"cu_seqlens_q", p.isVarlen(), a.cuSeqlensQ},
                  Array{"cu_seqlens_kv", p.isVarlen(), a.cuSeqlensKv},
                  Array{"key_start", p.hasKeyRanges(), a.keyStart},
                  Array{"key_end", p.hasKeyRanges(), a.keyEnd},
                  Array{"alibi_slopes", p.alibi, a.alibiSlopes}})
    if (v.read && !v.value)
      return Status::error(std::string("the ") + v.name +
                           " pointer is null (the kernel reads it)");
  // ALiBi's slopes: f32 values, read at b · stride_b + h.
  if (m.problem.alibi) {
    if (a.alibiSlopes % 4 != 0)
      return Status::error("the alibi_slopes pointer (" + hex(a.alibiSlopes) +
                           ") must be 4-byte aligned (f32 slopes)");
    if (a.alibiSlopesStrideB < 0)
      return Status::error("alibi_slopes_stride_b = " +
                           str(a.alibiSlopesStrideB) + " must be non-negative");
  }

  const int64_t elt = elementBytes(m.problem.dtype);
  const int64_t d = m.problem.headDim, dv = m.problem.vDim();
  const TensorArg tensors[] = {
      {"q", a.q, a.qStride, {a.batch, a.headsQ, a.seqQ}, d},
      {"k", a.k, a.kStride, {a.batch, a.headsKv, a.seqKv}, d},
      {"v", a.v, a.vStride, {a.batch, a.headsKv, a.seqKv}, dv},
      {"o", a.o, a.oStride, {a.batch, a.headsQ, a.seqQ}, dv},
  };
  for (const TensorArg &t : tensors)
    if (Status s = checkTensor(t, elt); !s)
      return s;
  // Inputs may alias (a broadcast over batch has stride 0); output rows
  // written by different threads must not.
  if (a.seqQ > 1 && a.oStride[2] < dv)
    return Status::error("o_stride_n = " + str(a.oStride[2]) +
                         " is smaller than an output row (" + str(dv) +
                         " elements): rows would overlap");
  if (a.lse) {
    if (a.lse % 4 != 0)
      return Status::error("the lse pointer must be 4-byte aligned (float)");
    if (a.lseStride[0] < 0 || a.lseStride[1] < 0)
      return Status::error("lse strides must be non-negative (got " +
                           str(a.lseStride[0]) + ", " + str(a.lseStride[1]) +
                           ")");
  }
  return Status::success();
}
