//===- Status.h - error values for the MLIR-free runtime --------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The runtime builds without LLVM (on the GPU host), so it cannot use
// llvm::Error. These two small types carry a failure as a message instead.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_STATUS_H
#define ATTN_RUNTIME_STATUS_H

#include <optional>
#include <string>
#include <utility>

namespace attn::runtime {

/// Success, or a failure with a message meant for a person.
class [[nodiscard]] Status {
public:
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed = true;
    s.msg = std::move(message);
    return s;
  }

  bool ok() const { return !failed; }
  explicit operator bool() const { return !failed; }
  const std::string &message() const { return msg; }

  /// Prefixes the message with where the failure happened ("ctx: msg").
  Status &prepend(const std::string &context) {
    if (failed)
      msg = context + ": " + msg;
    return *this;
  }

private:
  bool failed = false;
  std::string msg;
};

/// A value of type T, or the Status that says why there is none.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : val(std::move(value)) {}
  Expected(Status status) : st(std::move(status)) {
    // An Expected built from a success Status would hold nothing; make
    // that misuse visible rather than undefined.
    if (st.ok())
      st = Status::error("internal error: Expected built from success");
  }

  bool ok() const { return val.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return st; }
  const std::string &message() const { return st.message(); }

  T &operator*() { return *val; }
  const T &operator*() const { return *val; }
  T *operator->() { return &*val; }
  const T *operator->() const { return &*val; }
  T take() { return std::move(*val); }

private:
  std::optional<T> val;
  Status st;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_STATUS_H
