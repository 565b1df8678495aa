//===- FuzzProblemFlags.cpp - libFuzzer: the tools' shape flags -----------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Splits the input into command-line words and parses them with the shape
// flags attn-run, attn-compile and attn-raise-check share (ProblemFlags),
// then uses the problem the way the tools do (validation, FLOP count, JSON).
// Only the ProblemFlags options are passed on: LLVM's own global options
// (-help, -version, ...) exit the process by design.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/ProblemFlags.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cl = llvm::cl;

namespace {
const char *const kFlags[] = {"batch",     "heads-q",  "heads-kv",
                              "seq-q",     "seq-kv",   "head-dim",
                              "value-head-dim", "dtype", "causal",
                              "scale",     "no-lse"};

/// A word the fuzzer may pass: a value, or one of ProblemFlags' flags.
bool allowed(const std::string &word) {
  if (word.empty() || word[0] != '-')
    return true;
  size_t start = word.find_first_not_of('-');
  if (start == std::string::npos)
    return false;
  std::string name = word.substr(start, word.find('=') - start);
  for (const char *f : kFlags)
    if (name == f)
      return true;
  return false;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static cl::OptionCategory category("fuzzed shape flags");
  static mlir::attn::ProblemFlags *flags =
      new mlir::attn::ProblemFlags(category);
  if (size > 4096)
    return 0;

  std::vector<std::string> words{"attn-fuzz-flags"};
  std::string word;
  for (size_t i = 0; i <= size; ++i) {
    char c = i < size ? static_cast<char>(data[i]) : ' ';
    if (c == ' ' || c == '\n' || c == '\t' || c == '\0') {
      if (!word.empty() && allowed(word))
        words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  std::vector<const char *> argv;
  for (const std::string &w : words)
    argv.push_back(w.c_str());

  // Every input starts from the defaults, so a crash reproduces on its own.
  (void)flags;
  auto &registered = cl::getRegisteredOptions();
  for (const char *f : kFlags)
    if (cl::Option *o = registered.lookup(f))
      o->setDefault();
  cl::ResetAllOptionOccurrences();
  if (!cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data(),
                                   "", &llvm::nulls()))
    return 0;
  llvm::Expected<attn::AttentionProblem> p = flags->get();
  if (!p) {
    llvm::consumeError(p.takeError());
    return 0;
  }
  volatile double flops = p->forwardFlops();
  (void)flops;
  std::string json = p->shapeJson();
  (void)json;
  return 0;
}
