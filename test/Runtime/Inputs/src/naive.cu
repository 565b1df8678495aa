//===- naive.cu - simple kernels with the attn kernel ABI -----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Test inputs for the runtime, written by hand until attn-compile exists:
// a correct but slow attention (one thread per query row, K/V tiles staged
// in dynamic shared memory, online softmax in exp2) with the parameter list
// of docs/kernel-abi.md, and a kernel that writes O = 0 and LSE = -inf
// (wrong on purpose, so a real check must fail it). Regenerate the PTX and
// cubins with regen.sh beside this file.
//
//===----------------------------------------------------------------------===//

#include <cuda_bf16.h>

typedef long long i64;

template <typename T> __device__ float load(const T *p);
template <> __device__ float load<float>(const float *p) { return *p; }
template <> __device__ float load<__nv_bfloat16>(const __nv_bfloat16 *p) {
  return __bfloat162float(*p);
}
__device__ void store(float *p, float x) { *p = x; }
__device__ void store(__nv_bfloat16 *p, float x) { *p = __float2bfloat16_rn(x); }

// scaleLog2 = softmax scale * log2(e): the scale is the ABI's
// softmax_scale argument, folded into exp2.
template <typename T, int D, int DV, bool CAUSAL, int BM, int BN>
__device__ void attention(const T *__restrict__ q, const T *__restrict__ k,
                          const T *__restrict__ v, T *__restrict__ o,
                          float *__restrict__ lse, int seqQ, int seqKv,
                          int headsQ, int headsKv, i64 qSb, i64 qSh, i64 qSn,
                          i64 kSb, i64 kSh, i64 kSn, i64 vSb, i64 vSh, i64 vSn,
                          i64 oSb, i64 oSh, i64 oSn, i64 lseSb, i64 lseSh,
                          float scaleLog2) {
  extern __shared__ float smem[];
  float *ks = smem;          // [BN][D]
  float *vs = smem + BN * D; // [BN][DV]
  const int b = blockIdx.y / headsQ, h = blockIdx.y % headsQ;
  const int hk = h / (headsQ / headsKv);
  const int row = blockIdx.x * BM + threadIdx.x;
  const bool active = row < seqQ;
  const T *qp = q + b * qSb + h * qSh + (i64)row * qSn;
  const T *kp = k + b * kSb + hk * kSh;
  const T *vp = v + b * vSb + hk * vSh;

  float qr[D], acc[DV];
#pragma unroll
  for (int d = 0; d < D; ++d)
    qr[d] = active ? load(qp + d) * scaleLog2 : 0.f;
#pragma unroll
  for (int d = 0; d < DV; ++d)
    acc[d] = 0.f;
  float m = -INFINITY, l = 0.f;

  // Bottom-right aligned causal mask: row i sees keys j <= i + (Nk - Nq).
  const int shift = seqKv - seqQ;
  const int limit = CAUSAL ? min(seqKv, row + shift + 1) : seqKv;
  const int lastRow = min(seqQ - 1, (int)(blockIdx.x * BM + BM - 1));
  const int blockLimit = CAUSAL ? min(seqKv, lastRow + shift + 1) : seqKv;

  for (int kb = 0; kb < blockLimit; kb += BN) {
    __syncthreads();
    for (int i = threadIdx.x; i < BN * D; i += blockDim.x) {
      int j = i / D, d = i % D;
      ks[i] = kb + j < seqKv ? load(kp + (i64)(kb + j) * kSn + d) : 0.f;
    }
    for (int i = threadIdx.x; i < BN * DV; i += blockDim.x) {
      int j = i / DV, d = i % DV;
      vs[i] = kb + j < seqKv ? load(vp + (i64)(kb + j) * vSn + d) : 0.f;
    }
    __syncthreads();
    if (!active)
      continue;
    const int jEnd = min(BN, limit - kb);
    for (int j = 0; j < jEnd; ++j) {
      float s = 0.f;
#pragma unroll
      for (int d = 0; d < D; ++d)
        s += qr[d] * ks[j * D + d];
      float mNew = fmaxf(m, s);
      float corr = exp2f(m - mNew);
      float p = exp2f(s - mNew);
      l = l * corr + p;
#pragma unroll
      for (int d = 0; d < DV; ++d)
        acc[d] = acc[d] * corr + p * vs[j * DV + d];
      m = mNew;
    }
  }
  if (!active)
    return;
  T *op = o + b * oSb + h * oSh + (i64)row * oSn;
  const float inv = l > 0.f ? 1.f / l : 0.f;
#pragma unroll
  for (int d = 0; d < DV; ++d)
    store(op + d, acc[d] * inv);
  if (lse)
    lse[b * lseSb + h * lseSh + row] =
        l > 0.f ? (m + log2f(l)) * 0.69314718055994531f : -INFINITY;
}

#define ABI_PARAMS(T)                                                          \
  const T *q, const T *k, const T *v, T *o, float *lse, int seq_q,             \
      int seq_kv, int heads_q, int heads_kv, float softmax_scale,              \
      i64 q_stride_b, i64 q_stride_h,                                          \
      i64 q_stride_n, i64 k_stride_b, i64 k_stride_h, i64 k_stride_n,          \
      i64 v_stride_b, i64 v_stride_h, i64 v_stride_n, i64 o_stride_b,          \
      i64 o_stride_h, i64 o_stride_n, i64 lse_stride_b, i64 lse_stride_h
#define ABI_ARGS                                                               \
  q, k, v, o, lse, seq_q, seq_kv, heads_q, heads_kv, q_stride_b, q_stride_h,   \
      q_stride_n, k_stride_b, k_stride_h, k_stride_n, v_stride_b, v_stride_h,  \
      v_stride_n, o_stride_b, o_stride_h, o_stride_n, lse_stride_b,            \
      lse_stride_h

#define SCALE_LOG2 (softmax_scale * 1.4426950408889634f)

// regen.sh compiles one kernel per directory (-DKERNEL_...), so each
// kernel directory holds only its own entry.
#ifdef KERNEL_F32
// f32, not causal; 64 KiB of dynamic shared memory, so the runtime must
// raise the kernel's limit past 48 KiB.
extern "C" __global__ void __launch_bounds__(64)
    attn_fwd_naive_d64_f32_m64n128(ABI_PARAMS(float)) {
  attention<float, 64, 64, false, 64, 128>(ABI_ARGS, SCALE_LOG2);
}
#endif

#ifdef KERNEL_BF16_CAUSAL
// bf16, causal (grouped-query heads come from the launch).
extern "C" __global__ void __launch_bounds__(64)
    attn_fwd_naive_d64_bf16_causal_m64n64(ABI_PARAMS(__nv_bfloat16)) {
  attention<__nv_bfloat16, 64, 64, true, 64, 64>(ABI_ARGS, SCALE_LOG2);
}
#endif

#ifdef KERNEL_ZERO
// Wrong on purpose: O = 0, LSE = -inf for every row.
extern "C" __global__ void __launch_bounds__(64)
    attn_fwd_zero_d64_f32(ABI_PARAMS(float)) {
  const int b = blockIdx.y / heads_q, h = blockIdx.y % heads_q;
  const int row = blockIdx.x * 64 + threadIdx.x;
  if (row >= seq_q)
    return;
  float *op = o + b * o_stride_b + h * o_stride_h + (i64)row * o_stride_n;
  for (int d = 0; d < 64; ++d)
    op[d] = 0.f;
  if (lse)
    lse[b * lse_stride_b + h * lse_stride_h + row] = -INFINITY;
}
#endif
