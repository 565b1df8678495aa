/*===- attn-c-test.c - the attn C API, used from C ------------------------===*\
|*                                                                            *|
|* Part of the attn project: an MLIR compiler for exact attention.            *|
|*                                                                            *|
|* Parses a module holding linalg attention next to unrelated code, raises    *|
|* it, compiles it to PTX through both routes of the C API (a caller's pass   *|
|* manager, attnCompileToPTX) and shows the errors that come back. Run by     *|
|* test/CAPI/attn-c.test.                                                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "attn-c/Attn.h"

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A front end's attention: f16 Q·Kᵀ accumulated in f32, scaled, softmax,
 * P in f16, ·V; and a function that has nothing to do with attention. */
static const char *kModule =
    "#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>\n"
    "module {\n"
    "  func.func @caller_math(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "    %s = arith.addf %a, %a : tensor<4xf32>\n"
    "    return %s : tensor<4xf32>\n"
    "  }\n"
    "  func.func @attention(%q: tensor<2x128x64xf16>, %kt: tensor<2x64x128xf16>,\n"
    "                       %v: tensor<2x128x64xf16>) -> tensor<2x128x64xf16> {\n"
    "    %zero = arith.constant 0.0 : f32\n"
    "    %c = arith.constant 0.125 : f32\n"
    "    %s_init = tensor.empty() : tensor<2x128x128xf32>\n"
    "    %s_zero = linalg.fill ins(%zero : f32) outs(%s_init : tensor<2x128x128xf32>) -> tensor<2x128x128xf32>\n"
    "    %s = linalg.batch_matmul ins(%q, %kt : tensor<2x128x64xf16>, tensor<2x64x128xf16>)\n"
    "        outs(%s_zero : tensor<2x128x128xf32>) -> tensor<2x128x128xf32>\n"
    "    %x = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}\n"
    "        ins(%s : tensor<2x128x128xf32>) outs(%s_init : tensor<2x128x128xf32>) {\n"
    "    ^bb0(%in: f32, %out: f32):\n"
    "      %m = arith.mulf %in, %c : f32\n"
    "      linalg.yield %m : f32\n"
    "    } -> tensor<2x128x128xf32>\n"
    "    %p = linalg.softmax dimension(2) ins(%x : tensor<2x128x128xf32>)\n"
    "        outs(%s_init : tensor<2x128x128xf32>) -> tensor<2x128x128xf32>\n"
    "    %ph_init = tensor.empty() : tensor<2x128x128xf16>\n"
    "    %ph = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}\n"
    "        ins(%p : tensor<2x128x128xf32>) outs(%ph_init : tensor<2x128x128xf16>) {\n"
    "    ^bb0(%in: f32, %out: f16):\n"
    "      %t = arith.truncf %in : f32 to f16\n"
    "      linalg.yield %t : f16\n"
    "    } -> tensor<2x128x128xf16>\n"
    "    %o_init = tensor.empty() : tensor<2x128x64xf16>\n"
    "    %zh = arith.constant 0.0 : f16\n"
    "    %o_zero = linalg.fill ins(%zh : f16) outs(%o_init : tensor<2x128x64xf16>) -> tensor<2x128x64xf16>\n"
    "    %o = linalg.batch_matmul ins(%ph, %v : tensor<2x128x128xf16>, tensor<2x128x64xf16>)\n"
    "        outs(%o_zero : tensor<2x128x64xf16>) -> tensor<2x128x64xf16>\n"
    "    return %o : tensor<2x128x64xf16>\n"
    "  }\n"
    "}\n";

/* f32 attention: the tensor-core kernels take f16 and bf16 only. */
static const char *kF32Attention =
    "func.func @f32(%q: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {\n"
    "  %o = attn.attention %q, %q, %q : tensor<1x1x64x64xf32>,\n"
    "      tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32> -> tensor<1x1x64x64xf32>\n"
    "  return %o : tensor<1x1x64x64xf32>\n"
    "}\n";

static void printToStdout(MlirStringRef s, void *userData) {
  (void)userData;
  fwrite(s.data, 1, s.length, stdout);
}

static char kPtx[] = "ptx";
static char kCompile[] = "compile";

static void printError(MlirStringRef s, void *userData) {
  printf("%s: ", (const char *)userData);
  fwrite(s.data, 1, s.length, stdout);
}

/* Prints every top-level op but the serialised kernels. */
static void printModuleWithoutBinary(MlirModule module) {
  MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
  for (; !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
    if (s.length == 10 && strncmp(s.data, "gpu.binary", 10) == 0) {
      MlirAttribute objects = mlirOperationGetAttributeByName(
          op, mlirStringRefCreateFromCString("objects"));
      printf("gpu.binary (%d objects)\n",
             mlirAttributeIsAArray(objects)
                 ? (int)mlirArrayAttrGetNumElements(objects)
                 : -1);
      continue;
    }
    mlirOperationPrint(op, printToStdout, NULL);
    printf("\n");
  }
}

static int contains(MlirStringRef s, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= s.length; ++i)
    if (memcmp(s.data + i, needle, n) == 0)
      return 1;
  return 0;
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  attnRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  MlirDialect attn =
      mlirDialectHandleLoadDialect(mlirGetDialectHandle__attn__(), ctx);
  MlirStringRef ns = mlirDialectGetNamespace(attn);
  printf("dialect: %.*s\n", (int)ns.length, ns.data);
  attnRegisterPasses();

  /* Route 1: the caller's pass manager, with attn's pipeline appended. */
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kModule));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "cannot parse the module\n");
    return 1;
  }
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  AttnPTXOptions options = attnPTXOptionsGetDefault();
  options.chip = "sm_80";
  options.raiseAttention = true;
  attnAddAttnToPTXPipeline(mlirPassManagerGetAsOpPassManager(pm), &options);
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  printf("pass manager: %s\n",
         mlirLogicalResultIsSuccess(ran) ? "success" : "failure");
  MlirStringRef ptx;
  if (mlirLogicalResultIsFailure(
          attnModuleGetPTX(module, &ptx, printError, kPtx)))
    return 1;
  printf("ptx: %zu bytes, sm_80 target: %d, kernel entry: %d\n", ptx.length,
         contains(ptx, ".target sm_80"), contains(ptx, ".entry attn_fwd_"));
  printModuleWithoutBinary(module);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);

  /* Route 2: attnCompileToPTX, raising first, here for sm_90a. */
  module = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kModule));
  options = attnPTXOptionsGetDefault();
  options.raiseAttention = true;
  MlirLogicalResult compiled =
      attnCompileToPTX(module, &options, printError, kCompile);
  printf("attnCompileToPTX: %s\n",
         mlirLogicalResultIsSuccess(compiled) ? "success" : "failure");
  if (mlirLogicalResultIsSuccess(
          attnModuleGetPTX(module, &ptx, printError, kPtx)))
    printf("ptx: sm_90a target: %d\n", contains(ptx, ".target sm_90a"));
  mlirModuleDestroy(module);

  /* Errors come back as a failed MlirLogicalResult and a message. */
  module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kF32Attention));
  compiled = attnCompileToPTX(module, &options, printError, kCompile);
  printf("f32 attention: %s\n",
         mlirLogicalResultIsSuccess(compiled) ? "success" : "failure");
  if (mlirLogicalResultIsFailure(
          attnModuleGetPTX(module, &ptx, printError, kPtx)))
    printf("no ptx\n");
  mlirModuleDestroy(module);

  /* Raising alone, on a module without attention: nothing to do. */
  module = mlirModuleCreateParse(
      ctx, mlirStringRefCreateFromCString("func.func @f() { return }"));
  printf("raised: %lld\n",
         (long long)attnRaiseAttention(mlirModuleGetOperation(module)));
  mlirModuleDestroy(module);

  mlirContextDestroy(ctx);
  return 0;
}
