//===- Manifest.h - the kernel launch manifest ------------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The in-memory form of manifest.json (docs/kernel-abi.md): what a runtime
// without MLIR needs to load and launch a generated kernel.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_MANIFEST_H
#define ATTN_RUNTIME_MANIFEST_H

#include "attn/Runtime/KernelAbi.h"
#include "attn/Runtime/LaunchGrid.h"
#include "attn/Runtime/ReadFile.h"
#include "attn/Runtime/Status.h"
#include "attn/Support/AttentionProblem.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn::runtime {

/// The manifest format this runtime reads.
inline constexpr const char *kManifestFormat = "attn-kernel/1";

struct KernelParam {
  std::string name;
  ParamType type = ParamType::Ptr;
  // TensorMap only: a 128-byte TMA descriptor of `tensor` (q, k, v or o)
  // the runtime encodes at launch: 4-D {head dim, sequence, heads, batch},
  // box {boxCols, boxRows, 1, 1}, `swizzle` bytes (docs/kernel-abi.md).
  std::string tensor;
  int64_t boxCols = 0, boxRows = 0, swizzle = 0;
};

struct TileConfig {
  int64_t blockM = 0;
  int64_t blockN = 0;
  int64_t warps = 0;
  int64_t stages = 0;
  std::string source;
};

/// ptxas's resource report; -1 where the manifest does not say.
struct PtxasInfo {
  int64_t registers = -1;
  int64_t spillStores = -1;
  int64_t spillLoads = -1;
  int64_t localMemory = -1;
};

struct KernelManifest {
  std::string format;
  std::string entry;
  std::string family;
  std::string chip;
  std::string ptx;   // file name in the kernel directory
  std::string cubin; // "" when the manifest names none
  /// The shape it was compiled and tuned for; head dims, dtype, mask and
  /// scale are fixed, the rest may change at launch.
  AttentionProblem problem;
  TileConfig tile;
  int64_t threads = 0;
  /// The grid's policy and block rows (LaunchGrid.h); backward: the dkdv
  /// launch's.
  GridSpec grid;
  int64_t dynamicSharedMemory = 0;
  std::vector<KernelParam> params;
  PtxasInfo ptxas;
  /// "forward" (one kernel, `entry`) or "backward" (`launches`, in order,
  /// each taking `params`; the caller provides an f32 workspace).
  std::string direction = "forward";
  struct Launch {
    std::string role, entry;
    int64_t threads = 0;
    GridSpec grid;
    int64_t dynamicSharedMemory = 0;
  };
  std::vector<Launch> launches;
};

/// Parses and checks manifest text. Errors name the field at fault
/// ("problem.seq_q: expected an integer, got a string").
Expected<KernelManifest> parseManifest(const std::string &text);

/// Reads `<dir>/manifest.json`; errors start with the file's path.
Expected<KernelManifest> readManifest(const std::string &dir);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_MANIFEST_H
