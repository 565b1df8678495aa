//===- FuzzTuneFlags.cpp - libFuzzer: attn-tune's command line ------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Feeds the input, split into words, to attn-tune's own parser (parseArgs
// in tools/attn-tune/attn-tune.cpp, compiled into this target with its main
// renamed). The parser only fills in the options; reading bundles and
// writing the database (main's work after it) is not reached, so the
// fuzzer never touches the file system. scripts/fuzz.sh runs it with
// -close_fd_mask=3: usage errors are printed for every bad input, and
// sanitizer reports still reach libFuzzer's own copy of stderr.
//
//===----------------------------------------------------------------------===//

#include "FuzzArgv.h"

// The tool's headers before `main` is renamed, so that only the tool's own
// definition is affected.
#include "attn/Runtime/Json.h"
#include "attn/Runtime/KernelRun.h"
#include "attn/Runtime/Manifest.h"
#include "attn/Tuning/TuningDatabase.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#define main attnTuneMain
#include "../../tools/attn-tune/attn-tune.cpp"
#undef main

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // The parser falls back to $ATTN_TUNING_DB; keep every run independent
  // of the environment the fuzzer was started in.
  ::unsetenv("ATTN_TUNING_DB");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  attn::fuzz::FuzzArgv args("attn-tune", data, size);
  Options o;
  if (parseArgs(args.argc(), args.pointers(), o) >= 0)
    return 0;
  // What main checks next, before any file is opened.
  volatile bool usable = !o.db.empty() && (o.show || o.merge || !o.inputs.empty());
  (void)usable;
  return 0;
}
