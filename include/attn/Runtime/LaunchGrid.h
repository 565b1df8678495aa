//===- LaunchGrid.h - the generated kernels' launch grids -------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The one definition of a generated kernel's grid (docs/kernel-abi.md,
// "Launch"): a policy, chosen at compile time and recorded in the manifest
// by name, applied to the run-time sizes. The runtime launches with it; the
// host lowering (convert-attn-to-gpu-launch) builds the same arithmetic in
// IR, and test/Conversion/LaunchGridIRTests.cpp checks that the two agree.
// MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_LAUNCHGRID_H
#define ATTN_RUNTIME_LAUNCHGRID_H

#include "attn/Runtime/Status.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace attn::runtime {

/// How a kernel's blocks cover the problem; `rows` is the policy's block
/// size along the sequence it tiles (GridSpec::blockRows).
enum class GridPolicy {
  /// (ceil(seq_q / rows), batch * heads_q): one block per query block and
  /// (batch, query head). The sm80 forward kernels, the backward's
  /// preprocess, convert and dq kernels, the sm90a forward without a
  /// causal-like mask.
  QueryTiles,
  /// (ceil(seq_q / rows) * heads_q, batch): one block per (head, query
  /// block) tile, taken length-major. The sm90a forward with a causal-like
  /// mask (a right bound, no left one).
  LengthMajor,
  /// (max(1, min(T, max(floor(num_sms / batch), T * floor(seq_q / 4096)))),
  /// batch), T = ceil(seq_q / rows) * heads_q: the sm90a forward's
  /// persistent kernels, at most as many blocks per batch as the SMs hold
  /// once across the batch, one per tile from 4096 query rows on.
  Persistent,
  /// (ceil(seq_kv / rows), batch * heads_kv): one block per key block and
  /// (batch, key/value head). The backward's dkdv kernels.
  KeyTiles,
};

/// The manifest's name of `p`: query_tiles, length_major, persistent,
/// key_tiles (the same words as the IR's #attn.grid).
const char *gridPolicyName(GridPolicy p);
/// The policy named `name`, if any.
std::optional<GridPolicy> parseGridPolicy(const std::string &name);
/// The names, for messages: "query_tiles, length_major, persistent or
/// key_tiles".
const char *gridPolicyNames();

/// The run-time sizes a grid depends on.
struct GridSizes {
  int64_t batch = 0, headsQ = 0, headsKv = 0, seqQ = 0, seqKv = 0;
  int64_t numSms = 0; // multiprocessors, for Persistent
};

/// A kernel's grid: its policy and block rows (>= 1).
struct GridSpec {
  GridPolicy policy = GridPolicy::QueryTiles;
  int64_t blockRows = 0;

  /// "persistent, block_rows 128", for messages.
  std::string describe() const;
};

/// The grid {x, y, z} of `spec` for `sizes`. Sizes >= 0 and blockRows >= 1
/// give values >= 0 that do not overflow for sizes below 2^31; the caller
/// checks them against the device's limits. A batch of 0 gives y = 0 (and
/// no division by zero).
std::array<int64_t, 3> launchGrid(const GridSpec &spec, const GridSizes &sizes);

/// launchGrid's grid as CUDA takes it, or an error naming the dimension
/// that is empty or beyond CUDA's limits (x < 2^31, y and z <= 65535).
Expected<std::array<unsigned, 3>> cudaGrid(const GridSpec &spec,
                                           const GridSizes &sizes);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_LAUNCHGRID_H
