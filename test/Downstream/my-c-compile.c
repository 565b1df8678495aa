/*===- my-c-compile.c - a C program on attn's C API -----------------------===*\
|*                                                                            *|
|* Part of the attn project's downstream example (test/Downstream).           *|
|*                                                                            *|
|* my-c-compile <input.mlir> <chip>: parses the module, raises its linalg      *|
|* attention and compiles it to PTX through libattn-c.so, then prints the     *|
|* module (the PTX summarised). Errors: a message on stderr, exit status 1.   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "attn-c/Attn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print(MlirStringRef s, void *userData) {
  fwrite(s.data, 1, s.length, (FILE *)userData);
}

static size_t count(MlirStringRef s, const char *needle) {
  size_t n = strlen(needle), found = 0;
  for (size_t i = 0; i + n <= s.length; ++i)
    if (memcmp(s.data + i, needle, n) == 0)
      ++found;
  return found;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: my-c-compile <input.mlir> <chip>\n");
    return 2;
  }
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  attnRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  MlirModule module = mlirModuleCreateParseFromFile(
      ctx, mlirStringRefCreateFromCString(argv[1]));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "my-c-compile: cannot parse %s\n", argv[1]);
    return 1;
  }

  AttnPTXOptions options = attnPTXOptionsGetDefault();
  options.chip = argv[2];
  options.raiseAttention = true;
  if (mlirLogicalResultIsFailure(
          attnCompileToPTX(module, &options, print, stderr))) {
    fprintf(stderr, "my-c-compile: compiling %s failed\n", argv[1]);
    return 1;
  }
  MlirStringRef ptx;
  if (mlirLogicalResultIsFailure(attnModuleGetPTX(module, &ptx, print, stderr)))
    return 1;

  MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
  for (; !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(op));
    if (name.length == 10 && memcmp(name.data, "gpu.binary", 10) == 0) {
      printf("gpu.binary: %zu kernel entries\n", count(ptx, ".entry attn_fwd_"));
      continue;
    }
    mlirOperationPrint(op, print, stdout);
    printf("\n");
  }
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
