//===- VariantRun.h - run kernels of variable length or with a bias -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The runtime side of the forward variants with extra operands: packed
// sequences with cu_seqlens (FlashAttention's varlen) and the additive bias
// tensor. Builds their launch arguments and runs, checks (float64, per
// sequence) and times them for runKernel.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_VARIANTRUN_H
#define ATTN_RUNTIME_VARIANTRUN_H

#include "attn/Runtime/KernelRun.h"

namespace attn::runtime {

/// Launch arguments for `p`'s layouts: dense [B, H, N, D] with a bias
/// [B|1, Hq|1, Nq, Nk] (stride 0 along broadcast dims), or packed
/// [T, H, D] with LSE [Hq, Tq] and cu_seqlens (variable length).
LaunchArgs variantLaunchArgs(const AttentionProblem &p, cu::DevicePtr q,
                             cu::DevicePtr k, cu::DevicePtr v,
                             cu::DevicePtr o, cu::DevicePtr lse,
                             cu::DevicePtr bias, cu::DevicePtr cuSeqlensQ,
                             cu::DevicePtr cuSeqlensKv);

/// Checks O and LSE of a variable-length or biased problem against the
/// float64 reference (every row when it costs at most opts.budget
/// multiply-adds, else an even sample of rows).
CheckReport checkVariantAttention(const AttentionProblem &p,
                                  const HostTensor &q, const HostTensor &k,
                                  const HostTensor &v, const HostTensor &bias,
                                  const HostTensor &o,
                                  const std::vector<float> &lse,
                                  const CheckOptions &opts);

/// runKernel for problems with isVarlen() or a bias (one input set; timing
/// repeats it).
Status runVariantKernel(const Kernel &kernel, const RunOptions &options,
                        RunResult &res);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_VARIANTRUN_H
