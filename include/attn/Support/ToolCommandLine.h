//===- ToolCommandLine.h - the tools' command-line errors -------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// llvm::cl refuses a bad number as "for the --batch option: 'x' value
// invalid for long argument!" and exits 1, which attn-run uses for "over
// tolerance". parseToolCommandLine reports it, and every other refusal, as
// "<tool>: error: ..." with the tool's usage-error status. Header-only over
// llvm::cl, for the tools built against LLVM; the rest of lib/Support stays
// LLVM-free.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_TOOLCOMMANDLINE_H
#define ATTN_SUPPORT_TOOLCOMMANDLINE_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

namespace attn {

namespace detail {
/// What a numeric flag of the tools takes ("" for any other option).
inline std::string numberKind(llvm::cl::Option *o) {
  namespace cl = llvm::cl;
  if (dynamic_cast<cl::opt<int64_t> *>(o) ||
      dynamic_cast<cl::list<int64_t> *>(o))
    return "a 64-bit integer";
  if (dynamic_cast<cl::opt<uint64_t> *>(o))
    return "a non-negative 64-bit integer";
  if (dynamic_cast<cl::opt<unsigned> *>(o))
    return "a non-negative 32-bit integer";
  if (dynamic_cast<cl::opt<double> *>(o))
    return "a number";
  return "";
}

/// Whether `v` parses as llvm::cl parses values of `kind`.
inline bool parsesAs(llvm::StringRef kind, llvm::StringRef v) {
  int64_t i;
  uint64_t u;
  unsigned w;
  double d;
  if (kind == "a number")
    return llvm::to_float(v, d);
  if (kind == "a non-negative 64-bit integer")
    return !v.getAsInteger(0, u);
  if (kind == "a non-negative 32-bit integer")
    return !v.getAsInteger(0, w);
  return !v.getAsInteger(0, i);
}
} // namespace detail

/// cl::ParseCommandLineOptions, except that a refusal ends the process with
/// "<tool>: error: ..." (for a bad number: "--batch expects a 64-bit
/// integer, got 'x'") and exit status `errorStatus`.
inline void parseToolCommandLine(int argc, char **argv, llvm::StringRef tool,
                                 llvm::StringRef overview, int errorStatus) {
  // llvm::cl prints a bad number itself, so check the numeric flags first:
  // "-name=value", "--name=value" or "--name value".
  auto options = llvm::cl::getRegisteredOptions();
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--")
      break;
    if (!arg.starts_with("-"))
      continue;
    auto [name, value] = arg.ltrim('-').split('=');
    auto it = options.find(name);
    if (it == options.end())
      continue;
    std::string kind = detail::numberKind(it->second);
    if (kind.empty())
      continue;
    if (!arg.contains('=')) {
      if (i + 1 == argc)
        continue; // llvm::cl says the value is missing
      value = argv[++i];
    }
    llvm::SmallVector<llvm::StringRef> pieces;
    if (it->second->getMiscFlags() & llvm::cl::CommaSeparated)
      value.split(pieces, ',');
    else
      pieces.push_back(value);
    for (llvm::StringRef piece : pieces)
      if (!detail::parsesAs(kind, piece)) {
        llvm::errs() << tool << ": error: " << (name.size() == 1 ? "-" : "--")
                     << name << " expects " << kind << ", got '" << piece
                     << "'\n";
        std::exit(errorStatus);
      }
  }
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::cl::ParseCommandLineOptions(argc, argv, overview, &os))
    return;
  // llvm::cl's own messages ("Unknown command line argument ...") start
  // with the program's file name.
  llvm::StringRef program = llvm::sys::path::filename(argv[0]);
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(errors).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    if (line.consume_front(program))
      line.consume_front(": ");
    llvm::errs() << tool << ": error: " << line << "\n";
  }
  std::exit(errorStatus);
}

} // namespace attn

#endif // ATTN_SUPPORT_TOOLCOMMANDLINE_H
