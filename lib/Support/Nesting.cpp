//===- Nesting.cpp - refuse absurdly deep MLIR text -----------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/Nesting.h"

size_t attn::findTooDeepNesting(std::string_view text, size_t limit) {
  size_t depth = 0;
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    char c = text[i];
    if (c == '"') { // a string literal, with escapes
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n')
        ++i;
    } else if (c == '{' || c == '(' || c == '[' || c == '<') {
      if (++depth > limit)
        return i;
    } else if ((c == '}' || c == ')' || c == ']' || c == '>') && depth) {
      --depth;
    }
  }
  return std::string_view::npos;
}
