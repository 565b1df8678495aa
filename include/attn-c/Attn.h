/*===-- attn-c/Attn.h - C API of the attn compiler -----------------*- C -*-===*\
|*                                                                            *|
|* Part of the attn project: an MLIR compiler for exact attention.            *|
|*                                                                            *|
|* Embeds attn in a program that uses MLIR's C API (mlir-c/): register the     *|
|* attn dialect, raise linalg attention to attn.attention, compile every      *|
|* attention of a module to PTX and read the PTX back. Link libattn-c.so     *|
|* (CMake: AttnCAPI); it carries MLIR's own C API for IR and passes, which    *|
|* Debian's MLIR ships only as static archives.                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_C_ATTN_H
#define ATTN_C_ATTN_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The attn dialect alone: mlirGetDialectHandle__attn__(), for
 * mlirDialectHandleInsertDialect / mlirDialectHandleLoadDialect. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Attn, attn);

/* The attn dialect and every dialect attn reads or produces (func, arith,
 * linalg, tensor, math, scf, gpu, llvm, nvvm, ...) with their interfaces:
 * what a caller needs to parse front-end IR and run attn's pipelines. */
MLIR_CAPI_EXPORTED void attnRegisterAllDialects(MlirDialectRegistry registry);

/* attn's passes and named pipelines (attn-raise-attention, ...,
 * attn-to-ptx), for mlirParsePassPipeline. */
MLIR_CAPI_EXPORTED void attnRegisterPasses(void);

/* Options of the attn-to-ptx pipeline; start from attnPTXOptionsGetDefault.
 * Strings are borrowed for the duration of the call they are passed to. */
typedef struct AttnPTXOptions {
  const char *chip;     /* target chip, e.g. "sm_90a" (default), "sm_80" */
  const char *features; /* PTX features, e.g. "+ptx80"; "" = the back end's */
  unsigned optLevel;    /* LLVM optimisation level of the kernels (3) */
  int64_t blockM;       /* query rows per thread block; 0 = heuristic */
  int64_t blockN;       /* keys per K/V tile; 0 = heuristic */
  int64_t stages;       /* depth of the K/V shared-memory ring (2) */
  bool raiseAttention;  /* first run attn-raise-attention (linalg -> attn) */
} AttnPTXOptions;

MLIR_CAPI_EXPORTED AttnPTXOptions attnPTXOptionsGetDefault(void);

/* Appends [attn-raise-attention,] attn-to-ptx to `passManager`, which must be
 * anchored on builtin.module. Only attention ops and attn's own
 * gpu.module/gpu.binary @attn_kernels are touched. */
MLIR_CAPI_EXPORTED void attnAddAttnToPTXPipeline(MlirOpPassManager passManager,
                                                 const AttnPTXOptions *options);

/* Runs [attn-raise-attention,] attn-to-ptx on `module`. On failure the
 * diagnostics (one per line, with locations) go to `onError` (may be NULL),
 * called once with the whole message. */
MLIR_CAPI_EXPORTED MlirLogicalResult
attnCompileToPTX(MlirModule module, const AttnPTXOptions *options,
                 MlirStringCallback onError, void *userData);

/* The PTX of every kernel in `module` after attn-to-ptx (format isa): points
 * into the module, valid while it lives. On failure (no gpu.binary
 * @attn_kernels) `onError` (may be NULL) gets the reason. */
MLIR_CAPI_EXPORTED MlirLogicalResult attnModuleGetPTX(
    MlirModule module, MlirStringRef *ptx, MlirStringCallback onError,
    void *userData);

/* Raises linalg attention in `op` to attn.attention; returns how many. */
MLIR_CAPI_EXPORTED int64_t attnRaiseAttention(MlirOperation op);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_ATTN_H */
