//===- LargeStack.h - run IR work on a thread with a large stack -*- C++
//-*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// MLIR's parser, printer and walks recurse once per nesting level (regions,
// types such as tuple<tuple<...>>), so deeply nested input overflows an
// 8 MiB main-thread stack and kills the process. The entry points that read
// user IR (attn-opt, attn-compile, the Python bindings) parse and compile on
// a thread with kLargeStackBytes instead, after refusing text nested beyond
// Nesting.h's limit (reportTooDeepNesting). Header-only over llvm::thread,
// for code built against LLVM; the rest of lib/Support stays LLVM-free.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_LARGESTACK_H
#define ATTN_SUPPORT_LARGESTACK_H

#include "attn/Support/Nesting.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace attn {

/// 256 MiB of address space, committed only as deep as the parser goes:
/// ample below Nesting.h's limit, and for a 200000-term affine expression,
/// which has no brackets (test/Hostile/tools-nesting.test).
inline constexpr unsigned kLargeStackBytes = 256u << 20;

/// Runs `fn` on a thread with a kLargeStackBytes stack and returns what it
/// returns; an exception it throws is rethrown in the caller's thread.
template <typename Fn> auto runOnLargeStack(Fn &&fn) -> decltype(fn()) {
  using Result = decltype(fn());
  std::conditional_t<std::is_void_v<Result>, bool, std::optional<Result>>
      result{};
  std::exception_ptr error;
  llvm::thread worker(std::optional<unsigned>(kLargeStackBytes), [&] {
#if __cpp_exceptions
    try {
#endif
      if constexpr (std::is_void_v<Result>)
        fn();
      else
        result.emplace(fn());
#if __cpp_exceptions
    } catch (...) {
      error = std::current_exception();
    }
#endif
  });
  worker.join();
  if (error)
    std::rethrow_exception(error);
  if constexpr (!std::is_void_v<Result>)
    return std::move(*result);
}

/// "<buffer>:LINE:COL: error: nested deeper than ..." when `buffer` nests
/// deeper than kMaxNestingDepth (Nesting.h), on which the parser would take
/// minutes; "" otherwise.
inline std::string tooDeepNesting(const llvm::MemoryBuffer &buffer) {
  size_t at = findTooDeepNesting(
      std::string_view(buffer.getBufferStart(), buffer.getBufferSize()));
  if (at == std::string_view::npos)
    return "";
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buffer.getMemBufferRef(), false),
      llvm::SMLoc());
  auto [line, col] = sourceMgr.getLineAndColumn(
      llvm::SMLoc::getFromPointer(buffer.getBufferStart() + at));
  return buffer.getBufferIdentifier().str() + ":" + std::to_string(line) + ":" +
         std::to_string(col) + ": error: nested deeper than " +
         std::to_string(kMaxNestingDepth) +
         " levels of brackets ({, (, [, <); attn refuses such input";
}

/// Prints tooDeepNesting's message (without the source line, which may be
/// megabytes long) and returns true when there is one.
inline bool reportTooDeepNesting(const llvm::MemoryBuffer &buffer) {
  std::string why = tooDeepNesting(buffer);
  if (!why.empty())
    llvm::errs() << why << "\n";
  return !why.empty();
}

} // namespace attn

#endif // ATTN_SUPPORT_LARGESTACK_H
