//===- Sm90Schedules.h - the sm90a kernels' schedule names ------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The one table of the sm90a-wgmma kernels' schedules: the forward's
// consumer schedules and the backward dkdv kernel's dQ schedules, with the
// suffix each gives a tuning tile's name (TileChoice::name, "wg-m128n128s2"
// + suffix). The kernel_config and launch attributes, the tuning database
// and python/attn/families.py (checked against this file by
// python/tests/test_families.py) take their names from here;
// what each schedule does is the kernels' (HopperKernel.h,
// HopperBackwardKernel.h). MLIR-free, like the rest of lib/Support.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_SM90SCHEDULES_H
#define ATTN_SUPPORT_SM90SCHEDULES_H

#include <string>
#include <string_view>

namespace attn {

struct Sm90Schedule {
  const char *name;
  /// Appended to a tuning tile's name ("" for the forward's default).
  const char *tileSuffix;
  /// A backward dkdv schedule (else a forward consumer schedule).
  bool backward;
};

inline constexpr Sm90Schedule kSm90Schedules[] = {
    {"pingpong", "", false},
    {"overlap", "-nopp", false},
    {"serial", "-serial", false},
    {"dq-pipelined", "-dqpipe", true},
    {"dq-first", "-dqfirst", true},
    {"dk-first", "-dkfirst", true},
    {"deterministic", "-det", true},
    {"head-split", "-hsplit", true},
    {"transposed-dkv", "-tdkv", true},
};

/// The schedule called `name`, or null.
inline const Sm90Schedule *findSm90Schedule(std::string_view name) {
  for (const Sm90Schedule &s : kSm90Schedules)
    if (name == s.name)
      return &s;
  return nullptr;
}

/// "a, b or c": the names of the backward (or forward) schedules, then
/// `orElse` as the last alternative when given, for diagnostics.
inline std::string sm90ScheduleNames(bool backward,
                                     std::string_view orElse = "") {
  std::string out;
  int n = 0, count = orElse.empty() ? 0 : 1;
  for (const Sm90Schedule &s : kSm90Schedules)
    count += s.backward == backward;
  auto add = [&](std::string_view name) {
    if (n++)
      out += n == count ? " or " : ", ";
    out += name;
  };
  for (const Sm90Schedule &s : kSm90Schedules)
    if (s.backward == backward)
      add(s.name);
  if (!orElse.empty())
    add(orElse);
  return out;
}

} // namespace attn

#endif // ATTN_SUPPORT_SM90SCHEDULES_H
