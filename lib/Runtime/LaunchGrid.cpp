//===- LaunchGrid.cpp - the generated kernels' launch grids ---------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/LaunchGrid.h"

#include <algorithm>

using namespace attn::runtime;

namespace {
struct NamedPolicy {
  GridPolicy policy;
  const char *name;
};
constexpr NamedPolicy kPolicies[] = {
    {GridPolicy::QueryTiles, "query_tiles"},
    {GridPolicy::LengthMajor, "length_major"},
    {GridPolicy::Persistent, "persistent"},
    {GridPolicy::KeyTiles, "key_tiles"},
};

int64_t ceilDiv(int64_t n, int64_t d) { return (n + d - 1) / d; }
} // namespace

const char *attn::runtime::gridPolicyName(GridPolicy p) {
  for (const NamedPolicy &n : kPolicies)
    if (n.policy == p)
      return n.name;
  return "?";
}

std::optional<GridPolicy>
attn::runtime::parseGridPolicy(const std::string &name) {
  for (const NamedPolicy &n : kPolicies)
    if (name == n.name)
      return n.policy;
  return std::nullopt;
}

const char *attn::runtime::gridPolicyNames() {
  return "query_tiles, length_major, persistent or key_tiles";
}

std::string GridSpec::describe() const {
  return std::string(gridPolicyName(policy)) + ", block_rows " +
         std::to_string(blockRows);
}

std::array<int64_t, 3> attn::runtime::launchGrid(const GridSpec &spec,
                                                 const GridSizes &s) {
  int64_t queryBlocks = ceilDiv(s.seqQ, spec.blockRows);
  switch (spec.policy) {
  case GridPolicy::QueryTiles:
    return {queryBlocks, s.batch * s.headsQ, 1};
  case GridPolicy::LengthMajor:
    return {queryBlocks * s.headsQ, s.batch, 1};
  case GridPolicy::Persistent: {
    // max(1, min(T, max(floor(num_sms / batch), T * floor(seq_q / 4096)))):
    // from 4096 query rows on the inner max is at least T, so this is T
    // there, without the product that could overflow.
    int64_t tiles = queryBlocks * s.headsQ;
    int64_t perBatch = s.numSms / std::max<int64_t>(s.batch, 1);
    int64_t x = s.seqQ >= 4096 ? tiles : std::min(tiles, perBatch);
    return {std::max<int64_t>(1, x), s.batch, 1};
  }
  case GridPolicy::KeyTiles:
    return {ceilDiv(s.seqKv, spec.blockRows), s.batch * s.headsKv, 1};
  }
  return {0, 0, 0};
}

Expected<std::array<unsigned, 3>>
attn::runtime::cudaGrid(const GridSpec &spec, const GridSizes &sizes) {
  std::array<int64_t, 3> g = launchGrid(spec, sizes);
  const int64_t limits[] = {2147483647, 65535, 65535};
  std::array<unsigned, 3> out{};
  for (int i = 0; i < 3; ++i) {
    std::string dim = std::string("grid.") + "xyz"[i] + " = " +
                      std::to_string(g[i]) + " (" + spec.describe() + ")";
    if (g[i] < 1)
      return Status::error(dim + " is empty: no block to launch");
    if (g[i] > limits[i])
      return Status::error(dim + " exceeds CUDA's limit of " +
                           std::to_string(limits[i]));
    out[i] = static_cast<unsigned>(g[i]);
  }
  return out;
}
