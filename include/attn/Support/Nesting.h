//===- Nesting.h - refuse absurdly deep MLIR text ---------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// MLIR's parser recurses once per nesting level and takes time quadratic in
// the depth (50000 nested regions: minutes). Real IR nests a few dozen
// levels; the tools refuse text nested deeper than kMaxNestingDepth before
// parsing it (and parse on a large stack, LargeStack.h, for the rest).
// MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_NESTING_H
#define ATTN_SUPPORT_NESTING_H

#include <cstddef>
#include <string_view>

namespace attn {

/// Brackets open at once: { ( [ < outside string literals and comments.
inline constexpr size_t kMaxNestingDepth = 1024;

/// The offset of the bracket that opens level `limit` + 1 of `text`, or
/// std::string_view::npos when none does. Closing brackets of any kind
/// close a level ("->" and ">=" only make the count lower than the real
/// depth, never higher).
size_t findTooDeepNesting(std::string_view text,
                          size_t limit = kMaxNestingDepth);

} // namespace attn

#endif // ATTN_SUPPORT_NESTING_H
