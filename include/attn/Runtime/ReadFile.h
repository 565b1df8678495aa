//===- ReadFile.h - bounded reads of input files ----------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Every file attn reads whole -- manifests, PTX, cubins, tuning bundles,
// the tuning database -- goes through readFile: a regular file of at most
// kMaxInputFileBytes, so that /dev/zero is an error rather than an
// out-of-memory kill and a FIFO an error rather than a hang.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_READFILE_H
#define ATTN_RUNTIME_READFILE_H

#include "attn/Runtime/Status.h"

#include <cstdint>
#include <string>

namespace attn::runtime {

/// The largest input file read: far above any manifest, kernel image or
/// tuning database attn writes (a few MiB at most).
inline constexpr uint64_t kMaxInputFileBytes = uint64_t(64) << 20;

/// The contents of `path` (symlinks followed). An error naming the path
/// and why ("cannot read P: not a regular file (a FIFO)", "... has more
/// than 64 MiB") when it is missing, unreadable, not a regular file or
/// larger than `maxBytes`; it never blocks on a FIFO or device.
Expected<std::string> readFile(const std::string &path,
                               uint64_t maxBytes = kMaxInputFileBytes);

/// What kind of file `mode` (st_mode) is, for messages: "a directory",
/// "a FIFO", "a character device", ...
const char *fileKindName(unsigned mode);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_READFILE_H
