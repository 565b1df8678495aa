/*===-- attn-c/Compiler.h - attn's compiler as JSON in, JSON out ---*- C -*-===*\
|*                                                                            *|
|* Part of the attn project: an MLIR compiler for exact attention.            *|
|*                                                                            *|
|* The compiler behind attn-compile and attn-opt for callers that speak no    *|
|* C++ and no MLIR C API: the Python package (ctypes), other languages.       *|
|* Every function takes a request as a JSON object (UTF-8 text) and returns   *|
|* a JSON object that the caller releases with attnFreeString. A failure is   *|
|* never an abort: the result is {"error": "<message>"}, the message carrying *|
|* MLIR's diagnostics ("<input>:LINE:COL: error: ...") where there are any.   *|
|* A field the request does not take is such an error ("CompileBackward:      *|
|* unknown field 'bias' (known: ...)"), not ignored.                          *|
|* Requests and results are described in docs/embedding.md. Thread-safe: one *|
|* MLIRContext per call.                                                      *|
|*                                                                            *|
|* Linked into libattn-c.so (against libMLIR.so) and into the Python wheel's  *|
|* self-contained libattn_compiler.so (static MLIR/LLVM, only attn* symbols   *|
|* exported).                                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_C_COMPILER_H
#define ATTN_C_COMPILER_H

#ifdef __cplusplus
extern "C" {
#endif

#define ATTN_COMPILER_EXPORTED __attribute__((visibility("default")))

/* Bumped when a request or result changes incompatibly, or the library's
 * attn-c/Execution.h structs do (2: AttnCPUProblem's keyStart/keyEnd). */
#define ATTN_COMPILER_CAPI_VERSION 3
ATTN_COMPILER_EXPORTED int attnCompilerCAPIVersion(void);

/* {} -> {"version": "0.1.0"}: the version kernels and tuning database
 * entries are keyed by ($ATTN_COMPILER_VERSION overrides it). */
ATTN_COMPILER_EXPORTED char *attnCompilerVersion(const char *request);

/* {"mlir": text, "pipeline": "attn-tile{block-m=64}"} -> {"mlir": text}:
 * runs a textual pass pipeline (anchored on builtin.module unless it names
 * its own anchor), as attn-opt --pass-pipeline. */
ATTN_COMPILER_EXPORTED char *attnCompilerOpt(const char *request);

/* {problem} -> {"mlir": text}: the module holding one attn.attention that
 * attnCompilerCompile builds for a problem. Problem fields: batch, heads_q,
 * heads_kv, seq_q, seq_kv, head_dim, value_head_dim (0 = head_dim), dtype
 * ("f16", "bf16"), causal, scale (absent or null = 1/sqrt(head_dim)),
 * with_lse, top_left, window_left, window_right (-1 = unbounded), softcap
 * (0 = none), alibi. */
ATTN_COMPILER_EXPORTED char *attnCompilerAttentionModule(const char *request);

/* {"mlir": text} or {problem}, plus options: chip, features, opt_level,
 * block_m, block_n, warp_rows, stages, family ("auto", "sm80", "sm90a"),
 * sm90_schedule, tuning_db, tuning_gpu, ptxas, assemble ->
 * {"entry", "family", "chip", "ptx", "cubin" (base64, "" when not
 * assembled), "manifest" (manifest.json's text), "ptxas_log",
 * "tile_source", "tile_reason"}: one forward kernel, as attn-compile. */
ATTN_COMPILER_EXPORTED char *attnCompilerCompile(const char *request);

/* {problem} plus options (as attnCompilerCompile; no tuning_db or
 * tuning_gpu, and warp_rows only 0) plus "deterministic" and "dir" ->
 * {"entry", "manifest"}: the backward kernels of the problem written into
 * the kernel directory "dir", as attn-compile --backward with --tuning-db
 * none (the tile is the options' or the heuristic's). */
ATTN_COMPILER_EXPORTED char *attnCompilerCompileBackward(const char *request);

/* {"dir", "ptx", "cubin" (base64), "manifest"} -> {}: writes a kernel
 * directory (manifest.json, kernel.ptx, kernel.cubin when not empty) from
 * an attnCompilerCompile result. */
ATTN_COMPILER_EXPORTED char *attnCompilerWriteKernel(const char *request);

/* {"mlir", "dir", "chip", "ptxas", "opt_level", "jobs" (0 = one per core),
 * "only": [tile names], "family", "default_family" ("" = family)} ->
 * {"candidates", "pruned", "log"}: a tuning bundle for attn-tune, as
 * attn-compile --tune-bundle. */
ATTN_COMPILER_EXPORTED char *attnCompilerTuneBundle(const char *request);

/* Releases a result of the functions above (NULL is ignored). */
ATTN_COMPILER_EXPORTED void attnFreeString(char *result);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_COMPILER_H */
