//===- ProblemFlags.cpp - shape flags shared by the tools -----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/ProblemFlags.h"

#include "llvm/Support/Error.h"

#include <algorithm>

using namespace mlir::attn;
namespace cl = llvm::cl;

ProblemFlags::ProblemFlags(cl::OptionCategory &category,
                           ::attn::DType defaultDType)
    : batch("batch", cl::desc("Batch size"), cl::init(1), cl::cat(category)),
      headsQ("heads-q", cl::desc("Query heads"), cl::init(1),
             cl::cat(category)),
      headsKv("heads-kv", cl::desc("Key/value heads; 0 = same as --heads-q"),
              cl::init(0), cl::cat(category)),
      seqQ("seq-q", cl::desc("Query sequence length"), cl::init(128),
           cl::cat(category)),
      seqKv("seq-kv", cl::desc("Key/value sequence length; 0 = --seq-q"),
            cl::init(0), cl::cat(category)),
      headDim("head-dim", cl::desc("Head dim of Q and K"), cl::init(64),
              cl::cat(category)),
      valueHeadDim("value-head-dim",
                   cl::desc("Head dim of V and O; 0 = --head-dim"),
                   cl::init(0), cl::cat(category)),
      dtype("dtype", cl::desc("Element type: f16, bf16 or f32"),
            cl::init(::attn::dtypeName(defaultDType)), cl::cat(category)),
      causal("causal",
             cl::desc("Causal mask (bottom-right aligned, as FlashAttention; "
                      "--top-left for torch's is_causal)"),
             cl::init(false), cl::cat(category)),
      topLeft("top-left",
              cl::desc("Align the causal/window mask to the top-left corner "
                       "(row i is aligned with key i) instead of the "
                       "bottom-right (key i + Nk - Nq)"),
              cl::init(false), cl::cat(category)),
      windowLeft("window-left",
                 cl::desc("Sliding window: keys before the aligned one that "
                          "a row sees; -1 = unbounded"),
                 cl::init(-1), cl::cat(category)),
      windowRight("window-right",
                  cl::desc("Sliding window: keys after the aligned one that "
                           "a row sees; -1 = unbounded"),
                  cl::init(-1), cl::cat(category)),
      softcap("softcap",
              cl::desc("Score softcap c: score = c * tanh(score / c); 0 = "
                       "none"),
              cl::init(0.0), cl::cat(category)),
      alibi("alibi",
            cl::desc("ALiBi (the alibi_slopes operand, read at run time): "
                     "score -= slope[b, h] * |d(i) - j|; the tools run "
                     "slopes 2^(-8(h+1)/heads-q) * (1 + b/8)"),
            cl::init(false), cl::cat(category)),
      scale("scale",
            cl::desc("Softmax scale; 0 = 1/sqrt(head-dim) (GPU kernels take "
                     "it at launch: the manifest's default)"),
            cl::init(0.0), cl::cat(category)),
      noLse("no-lse", cl::desc("Do not produce the log-sum-exp"),
            cl::init(false), cl::cat(category)),
      seqLensQ("seq-lens-q",
               cl::desc("Variable length (cu_seqlens): the query length of "
                        "each sequence, comma-separated (0 allowed); "
                        "replaces --batch and --seq-q"),
               cl::CommaSeparated, cl::cat(category)),
      seqLensKv("seq-lens-kv",
                cl::desc("Variable length: the key length of each sequence; "
                         "default = --seq-lens-q"),
                cl::CommaSeparated, cl::cat(category)),
      bias("bias",
           cl::desc("Additive bias tensor [B|1, Hq|1, Nq, Nk]: bh, 1h, b1 "
                    "or 11 (1 = broadcast dim); none = no bias"),
           cl::init("none"), cl::cat(category)),
      keyStarts("key-starts",
                cl::desc("Key padding (key_range): the first key each batch "
                         "entry sees, comma-separated; default 0"),
                cl::CommaSeparated, cl::cat(category)),
      keyEnds("key-ends",
              cl::desc("Key padding (key_range): one past the last key each "
                       "batch entry sees; default --seq-kv"),
              cl::CommaSeparated, cl::cat(category)) {}

llvm::Expected<::attn::AttentionProblem> ProblemFlags::get() const {
  ::attn::AttentionProblem p;
  p.batch = batch;
  p.headsQ = headsQ;
  p.headsKv = headsKv ? headsKv : headsQ;
  p.seqQ = seqQ;
  p.seqKv = seqKv ? seqKv : seqQ;
  p.headDim = headDim;
  p.valueHeadDim = valueHeadDim;
  p.causal = causal;
  p.topLeft = topLeft;
  p.windowLeft = windowLeft;
  p.windowRight = windowRight;
  p.softcap = softcap;
  p.alibi = alibi;
  p.withLse = !noLse;
  if (scale != 0.0)
    p.scale = scale;
  if (!seqLensKv.empty() && seqLensQ.empty())
    return llvm::createStringError("--seq-lens-kv needs --seq-lens-q");
  if (!seqLensQ.empty()) {
    if (batch.getNumOccurrences() || seqQ.getNumOccurrences() ||
        seqKv.getNumOccurrences())
      return llvm::createStringError(
          "--seq-lens-q gives the batch and the lengths: drop --batch, "
          "--seq-q and --seq-kv");
    p.seqLensQ.assign(seqLensQ.begin(), seqLensQ.end());
    if (seqLensKv.empty())
      p.seqLensKv = p.seqLensQ;
    else
      p.seqLensKv.assign(seqLensKv.begin(), seqLensKv.end());
    p.batch = static_cast<int64_t>(p.seqLensQ.size());
    p.seqQ = p.seqKv = 1;
    for (int64_t l : p.seqLensQ)
      p.seqQ = std::max(p.seqQ, l);
    for (int64_t l : p.seqLensKv)
      p.seqKv = std::max(p.seqKv, l);
  }
  if (!keyStarts.empty() || !keyEnds.empty()) {
    p.keyStarts.assign(keyStarts.begin(), keyStarts.end());
    p.keyEnds.assign(keyEnds.begin(), keyEnds.end());
    if (p.keyStarts.empty())
      p.keyStarts.assign(p.keyEnds.size(), 0);
    if (p.keyEnds.empty())
      p.keyEnds.assign(p.keyStarts.size(), p.seqKv);
  }
  if (!p.setBiasKind(bias))
    return llvm::createStringError("--bias must be none, bh, 1h, b1 or 11 "
                                   "(got '" + bias + "')");
  std::optional<::attn::DType> dt = ::attn::parseDType(dtype);
  if (!dt)
    return llvm::createStringError("--dtype must be f16, bf16 or f32 (got '" +
                                   dtype + "')");
  p.dtype = *dt;
  if (std::string why = p.validate(); !why.empty())
    return llvm::createStringError(why);
  return p;
}
