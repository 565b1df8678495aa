//===- LaunchChecks.h - what a launch's arguments must satisfy --*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The checks Kernel::launch makes before it hands arguments to the driver,
// so that a bad pointer or stride is an error naming the argument, never a
// launch that reads or writes out of bounds.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_LAUNCHCHECKS_H
#define ATTN_RUNTIME_LAUNCHCHECKS_H

#include "attn/Runtime/Manifest.h"
#include "attn/Runtime/Runtime.h"
#include "attn/Runtime/Status.h"

namespace attn::runtime {

/// Bytes every Q/K/V/O pointer and row must be aligned to: the kernels move
/// tiles with 16-byte cp.async copies and vector stores.
inline constexpr int64_t kTensorAlignment = 16;

/// True when `args` describe no work (batch or seq_q is 0): a launch then
/// does nothing and succeeds, like an op on an empty tensor.
bool isEmptyLaunch(const LaunchArgs &args);

/// Checks `args` before any launch: no negative sizes; for a non-empty
/// launch, non-null Q/K/V/O (and LSE when the kernel writes or, backward,
/// reads it), 16-byte aligned Q/K/V/O pointers, 4-byte aligned
/// LSE, non-negative strides that keep every row 16-byte aligned, and
/// output rows that do not overlap. Errors name the argument.
Status checkLaunchArgs(const KernelManifest &m, const LaunchArgs &args);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_LAUNCHCHECKS_H
