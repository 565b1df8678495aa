//===- TuneBundle.h - candidate kernels for the tuner -----------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The compiler host's half of the split tuning flow (docs/tuning.md): every
// tile configuration of the kernel family's space that passes the static
// checks and compiles without spilling becomes a kernel directory in a
// bundle, described by bundle.json; attn-tune (no MLIR) runs the bundle on
// the GPU host and writes the tuning database.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_COMPILER_TUNEBUNDLE_H
#define ATTN_COMPILER_TUNEBUNDLE_H

#include "attn/Compiler/KernelCompiler.h"

#include "llvm/Support/raw_ostream.h"

#include <functional>

namespace mlir::attn {

inline constexpr const char *kTuneBundleFormat = "attn-tune-bundle";
/// Version 3: "direction" (forward or backward), sm90a tiles' "persistent",
/// backward bundles (docs/tuning.md).
inline constexpr int64_t kTuneBundleVersion = 3;

struct TuneBundleSummary {
  int64_t candidates = 0; // kernel directories written
  int64_t pruned = 0;     // by the static checks, ptxas, or a failed compile
};

/// A launch shape to tune the same kernels at (kernels take sequence
/// lengths and head counts as arguments).
struct TuneShape {
  int64_t batch = 0, seqQ = 0, seqKv = 0; // seqKv 0 = seqQ
};

/// "" when `problem` at `shape`'s batch and lengths is a valid problem
/// (AttentionProblem::validate); else why, naming the shape. attn-tune
/// would otherwise run it with wrapped-around sizes.
std::string checkTuneShape(const ::attn::AttentionProblem &problem,
                           const TuneShape &shape);

struct TuneBundleOptions {
  /// attn-compile's --family when not given: the candidate it would pick
  /// without a database is marked "heuristic".
  std::string defaultFamily = KernelCompileOptions().family;
  /// Shapes attn-tune times besides the module's own (one database entry
  /// each); heads, head dims, dtype and mask stay the module's.
  std::vector<TuneShape> shapes;
};

/// Compiles every candidate configuration of the single attn.attention in
/// `module` (left unchanged) on `jobs` threads (0 = one per core) and
/// writes `<dir>/<config>/` kernel directories plus `<dir>/bundle.json`.
/// `options` gives the chip, ptxas, optimisation level and the families
/// (`family`: sm80, sm90a, or auto = both where the chip and the spec
/// allow; enumerateForwardCandidates); its tile fields are ignored. A
/// candidate that spills or uses local memory is pruned. When `only` is
/// not empty, just the configurations it names ("m128n64r32s2",
/// "wg-m128n128s2") and the heuristics' are tried. One line per candidate
/// goes to `log`.
llvm::Expected<TuneBundleSummary>
writeTuneBundle(ModuleOp module, const KernelCompileOptions &options,
                llvm::StringRef dir, unsigned jobs,
                llvm::ArrayRef<std::string> only, llvm::raw_ostream &log,
                const TuneBundleOptions &bundle = {});

/// Builds a module holding one attn.attention for `problem` (the forward
/// kernel of a backward bundle, which makes O and the LSE on the GPU).
using ForwardModuleBuilder = std::function<OwningOpRef<ModuleOp>(
    MLIRContext &, const ::attn::AttentionProblem &)>;

/// The backward counterpart of writeTuneBundle for the single
/// attn.attention_grad in `module`: every candidate of
/// enumerateBackwardCandidates (dQ deterministic or not as
/// `options.deterministic` says) compiled into a backward kernel directory,
/// plus `<dir>/forward/` (the forward kernel for the same problem, from
/// `buildForward`, with the heuristic's tile) and bundle.json with
/// "direction": "backward". A candidate whose kernels spill is pruned,
/// except the heuristic's choice: it is the baseline the tuned one must
/// beat (the bundle records its spills).
llvm::Expected<TuneBundleSummary>
writeBackwardTuneBundle(ModuleOp module, const KernelCompileOptions &options,
                        llvm::StringRef dir, unsigned jobs,
                        llvm::ArrayRef<std::string> only,
                        llvm::raw_ostream &log, const TuneBundleOptions &bundle,
                        const ForwardModuleBuilder &buildForward);

} // namespace mlir::attn

#endif // ATTN_COMPILER_TUNEBUNDLE_H
