/*===- RuntimeCAPI.h - C interface of libattn_runtime.so ----------*- C -*-===*\
|*                                                                            *|
|* Part of the attn project: an MLIR compiler for exact attention.            *|
|*                                                                            *|
|* A C ABI over attn::runtime for ctypes (python/attn/runtime.py) and other   *|
|* languages. Functions that fail return NULL or -1 and leave a message for   *|
|* attn_runtime_last_error() on the calling thread.                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_RUNTIME_RUNTIMECAPI_H
#define ATTN_RUNTIME_RUNTIMECAPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ATTN_RUNTIME_EXPORT __attribute__((visibility("default")))
#else
#define ATTN_RUNTIME_EXPORT
#endif

/* Bumped whenever a signature or attn_launch_args changes. */
#define ATTN_RUNTIME_ABI_VERSION 4

typedef struct attn_kernel attn_kernel;

/* Device pointers, shape, and strides in elements (see docs/kernel-abi.md). */
typedef struct attn_launch_args {
  uint64_t q, k, v, o, lse; /* lse may be 0 when the kernel has no LSE */
  int64_t batch, heads_q, heads_kv, seq_q, seq_kv;
  int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3]; /* b, h, n */
  int64_t lse_stride[2];                                      /* b, h */
  /* The softmax scale applied to Q·Kᵀ, usually 1/sqrt(head_dim): a kernel
     argument, so one kernel serves every scale. Finite and non-zero (a
     zero is refused: it is what a forgotten field holds). */
  double softmax_scale;
  /* key_range kernels: i32 [batch] device arrays (0 otherwise). */
  uint64_t key_start, key_end;
  /* ALiBi kernels: f32 slopes, (b, h) at alibi_slopes[b * alibi_stride_b
     + h]; alibi_stride_b 0 shares one [heads_q] row (0 otherwise). */
  uint64_t alibi_slopes;
  int64_t alibi_stride_b;
} attn_launch_args;

ATTN_RUNTIME_EXPORT int attn_runtime_abi_version(void);

/* The message of the last failure on this thread ("" if none). */
ATTN_RUNTIME_EXPORT const char *attn_runtime_last_error(void);

/* Loads a kernel directory into the current CUDA context (the device's
   primary context if none is current). prefer_ptx != 0 skips the cubin. */
ATTN_RUNTIME_EXPORT attn_kernel *attn_kernel_load(const char *dir,
                                                  int prefer_ptx);
ATTN_RUNTIME_EXPORT void attn_kernel_destroy(attn_kernel *kernel);

/* The entry name, and "cubin" or "ptx" (what was loaded). Owned by the
   kernel. */
ATTN_RUNTIME_EXPORT const char *attn_kernel_entry(const attn_kernel *kernel);
ATTN_RUNTIME_EXPORT const char *
attn_kernel_loaded_from(const attn_kernel *kernel);

/* The grid a launch with `args` would use; 0 on success. */
ATTN_RUNTIME_EXPORT int attn_kernel_grid(const attn_kernel *kernel,
                                         const attn_launch_args *args,
                                         uint32_t grid[3]);

/* Launches on `stream` (a CUstream; NULL for the default stream),
   asynchronously; 0 on success, -1 with a message otherwise. */
ATTN_RUNTIME_EXPORT int attn_kernel_launch(const attn_kernel *kernel,
                                           const attn_launch_args *args,
                                           void *stream);

/* The backward pass (a kernel directory from attn-compile --backward):
   gradients dq, dk, dv (dtype and layout rules of q, k, v) from the
   forward's inputs, its output o, the output gradient d_o (o's rules) and
   its LSE. `workspace` is device memory of attn_kernel_workspace_bytes(),
   16-byte aligned, that the launch may overwrite. */
typedef struct attn_backward_args {
  uint64_t q, k, v, o, d_o, lse;
  uint64_t dq, dk, dv;
  uint64_t workspace;
  int64_t batch, heads_q, heads_kv, seq_q, seq_kv;
  int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3], do_stride[3];
  int64_t dq_stride[3], dk_stride[3], dv_stride[3]; /* b, h, n */
  int64_t lse_stride[2];                            /* b, h */
  double softmax_scale; /* the forward's (attn_launch_args) */
  uint64_t key_start, key_end; /* as attn_launch_args' */
  uint64_t alibi_slopes;       /* as attn_launch_args' */
  int64_t alibi_stride_b;
} attn_backward_args;

/* 1 for a backward kernel directory, 0 otherwise. */
ATTN_RUNTIME_EXPORT int attn_kernel_is_backward(const attn_kernel *kernel);
/* Workspace bytes a backward launch with `args` needs (0 for a forward
   kernel). */
ATTN_RUNTIME_EXPORT uint64_t attn_kernel_workspace_bytes(
    const attn_kernel *kernel, const attn_backward_args *args);
/* Launches the backward kernels in order on `stream`, asynchronously; 0 on
   success, -1 with a message otherwise. */
ATTN_RUNTIME_EXPORT int
attn_kernel_launch_backward(const attn_kernel *kernel,
                            const attn_backward_args *args, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_RUNTIME_RUNTIMECAPI_H */
