//===- ReadFile.cpp - bounded reads of input files ------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/ReadFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace attn::runtime;

const char *attn::runtime::fileKindName(unsigned mode) {
  if (S_ISREG(mode))
    return "a regular file";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISLNK(mode))
    return "a symbolic link";
  return "not a file";
}

namespace {
std::string sizeText(uint64_t bytes) {
  if (bytes % (uint64_t(1) << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}
} // namespace

Expected<std::string> attn::runtime::readFile(const std::string &path,
                                              uint64_t maxBytes) {
  auto fail = [&](const std::string &why) {
    return Status::error("cannot read " + path + ": " + why);
  };
  auto notRegular = [&](const struct stat &st) {
    return fail(std::string("not a regular file (") + fileKindName(st.st_mode) +
                ")");
  };
  // stat before open: opening a FIFO waits for a writer, a device may act.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return notRegular(st);
  // O_NONBLOCK in case it was replaced by a FIFO since; fstat decides.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return fail(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { (void)::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0)
    return fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return notRegular(st);
  auto tooLarge = [&] {
    return fail("has more than " + sizeText(maxBytes) +
                ", the limit for input files");
  };
  if (static_cast<uint64_t>(st.st_size) > maxBytes)
    return tooLarge();
  // Read to the end, not st_size bytes: the file may grow, and some
  // (/proc) report size 0.
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail(std::strerror(errno));
    if (n == 0)
      return text;
    if (text.size() + static_cast<uint64_t>(n) > maxBytes)
      return tooLarge();
    text.append(buf, static_cast<size_t>(n));
  }
}
