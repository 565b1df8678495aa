/*===-- attn-c/Execution.h - attention on the CPU, from C ---------*- C -*-===*\
|*                                                                            *|
|* Part of the attn project: an MLIR compiler for exact attention.            *|
|*                                                                            *|
|* Runs one attention (forward, or its gradients) on host buffers through    *|
|* the compiler's own CPU path: attn.attention / attn.attention_grad, the     *|
|* tiled FlashAttention pipeline, LLVM's JIT. The module of each distinct     *|
|* problem is compiled on its first call and kept for the process, so        *|
|* repeated calls only run it; the scale is an argument of the module, so    *|
|* problems that differ only in their scale share one. Part of libattn-c.so  *|
|* (CMake: AttnCAPI).                                                         *|
|* Every function is thread-safe; none aborts on bad input: errors come back  *|
|* as a message.                                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_C_EXECUTION_H
#define ATTN_C_EXECUTION_H

#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types of q, k, v, out and the gradients (LSE is always float32). */
enum { ATTN_CPU_F16 = 0, ATTN_CPU_BF16 = 1, ATTN_CPU_F32 = 2 };

/* One attention: q [B, Hq, Nq, D], k [B, Hkv, Nk, D], v [B, Hkv, Nk, Dv],
 * out [B, Hq, Nq, Dv], lse [B, Hq, Nq]; dense row-major buffers, 16-bit
 * types as raw bits. Start from attnCPUProblemGetDefault. */
typedef struct AttnCPUProblem {
  int64_t batch, headsQ, headsKv, seqQ, seqKv, headDim;
  int64_t valueHeadDim; /* 0 = headDim */
  int32_t dtype;        /* ATTN_CPU_F16, ATTN_CPU_BF16 or ATTN_CPU_F32 */
  /* The mask: row i aligned with key i + Nk - Nq (bottom-right) or i
   * (topLeft) sees the keys windowLeft before to windowRight after it
   * (-1 = unbounded); causal bounds the right side at 0. */
  bool causal, topLeft;
  int64_t windowLeft, windowRight;
  bool hasScale; /* false: scale = 1/sqrt(headDim); passed at call time,
                    one compiled module serves every scale */
  double scale;
  double softcap; /* 0 = none; forward and backward */
  /* ALiBi: f32 [batch, headsQ] host array of slopes read at call time
   * (score -= slope[b, h] * |d(i) - j|, after the softcap), or NULL for
   * none; forward and backward. */
  const float *alibiSlopes;
  /* Key padding (attn.attention's key_range): batch entry b sees only keys
   * [keyStart[b], keyEnd[b]) (clamped to [0, seqKv]); i32 [batch] host
   * arrays read at call time, or both NULL for every key. */
  const int32_t *keyStart, *keyEnd;
} AttnCPUProblem;

MLIR_CAPI_EXPORTED AttnCPUProblem attnCPUProblemGetDefault(void);

/* out and lse of `problem` (lse: natural log, -inf where a row sees no key,
 * whose out row is 0). Returns NULL on success, else a message naming the
 * field at fault, valid until this thread's next call. */
MLIR_CAPI_EXPORTED const char *
attnCPUAttentionForward(const AttnCPUProblem *problem, const void *q,
                        const void *k, const void *v, void *out, float *lse);

/* dq, dk, dv for the output gradient dout, recomputing the probabilities
 * from q, k and the given out and lse (which may be those of a larger
 * attention that this one is a block of). Every field of the forward's.
 * Returns as
 * attnCPUAttentionForward. */
MLIR_CAPI_EXPORTED const char *
attnCPUAttentionBackward(const AttnCPUProblem *problem, const void *q,
                         const void *k, const void *v, const void *out,
                         const void *dout, const float *lse, void *dq, void *dk,
                         void *dv);

/* How many modules (forward and backward problems) have been compiled in
 * this process; a repeated call compiles none, nor does a call that differs
 * from an earlier one only in its scale. */
MLIR_CAPI_EXPORTED int64_t attnCPUCompiledModules(void);

/* Drops every compiled module (the next call of each problem compiles
 * again). */
MLIR_CAPI_EXPORTED void attnCPUClearCache(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_EXECUTION_H */
