//===- FuzzArgv.h - libFuzzer input as a command line -----------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Splits a fuzzer input into command-line words (on spaces, tabs, newlines
// and NULs), as a shell would hand them to a tool's main.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TEST_FUZZ_FUZZARGV_H
#define ATTN_TEST_FUZZ_FUZZARGV_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::fuzz {

/// argv[0] = `tool`, then the input's words. `pointers()` stays valid as
/// long as the FuzzArgv does (the words are not copied again).
class FuzzArgv {
public:
  FuzzArgv(const char *tool, const uint8_t *data, size_t size) {
    words.push_back(tool);
    std::string word;
    for (size_t i = 0; i <= size; ++i) {
      char c = i < size ? static_cast<char>(data[i]) : ' ';
      if (c == ' ' || c == '\n' || c == '\t' || c == '\0') {
        if (!word.empty())
          words.push_back(word);
        word.clear();
      } else {
        word += c;
      }
    }
    for (std::string &w : words)
      argv.push_back(w.data());
    argv.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(words.size()); }
  char **pointers() { return argv.data(); }

private:
  std::vector<std::string> words;
  std::vector<char *> argv;
};

} // namespace attn::fuzz

#endif // ATTN_TEST_FUZZ_FUZZARGV_H
