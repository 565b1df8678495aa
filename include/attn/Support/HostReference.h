//===- HostReference.h - float64 attention on the host ----------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_HOSTREFERENCE_H
#define ATTN_SUPPORT_HOSTREFERENCE_H

#include "attn/Support/AttentionProblem.h"

#include <cstdint>
#include <vector>

namespace attn {

/// Computes O and LSE in float64 from inputs already rounded to the
/// problem's dtype. Layouts are dense row-major [B, H, N, D]; `bias`, when
/// the problem has one, is [B|1, Hq|1, Nq, Nk]. Variable-length problems
/// use the packed layouts (referenceAttentionVarlen).
void referenceAttention(const AttentionProblem &p, const std::vector<double> &q,
                        const std::vector<double> &k,
                        const std::vector<double> &v, std::vector<double> &out,
                        std::vector<double> &lse,
                        const std::vector<double> *bias = nullptr);

/// referenceAttention of a variable-length problem: Q [Tq, Hq, D], K
/// [Tk, Hkv, D], V [Tk, Hkv, Dv], O [Tq, Hq, Dv], LSE [Hq, Tq]; sequence s
/// owns tokens [cu[s], cu[s + 1]) (AttentionProblem::cuSeqlens) and is an
/// attention of its own.
void referenceAttentionVarlen(const AttentionProblem &p,
                              const std::vector<double> &q,
                              const std::vector<double> &k,
                              const std::vector<double> &v,
                              std::vector<double> &out,
                              std::vector<double> &lse);

/// One row of referenceAttention: O [Dv] and the LSE of batch entry `b`
/// (its ALiBi slope; varlen: the sequence), query head `h`, row `i` (q: [D]) against keys [first, last) of its key/value head (k, v: the
/// whole [Nk, D] / [Nk, Dv] slices), with the problem's score modification.
/// `biasRow`, when given, is added to the modified score of key j
/// (biasRow[j]). No key (first == last), or a bias of -inf on all of them,
/// gives O = 0 and LSE = -inf.
void referenceAttentionRow(const AttentionProblem &p, int64_t b, int64_t h,
                           int64_t i, const double *q, const double *k, const double *v,
                           int64_t first, int64_t last, double *out,
                           double &lse, const double *biasRow = nullptr);

/// Computes the gradients dQ, dK, dV of attention in float64 for the output
/// gradient `dout` [B, Hq, Nq, Dv], recomputing O and LSE with
/// referenceAttention. dK and dV of a key/value head sum over its query
/// heads; rows that see no key contribute nothing. Masks, the softcap and
/// ALiBi are honoured (the backward's score modifications).
void referenceAttentionBackward(const AttentionProblem &p,
                                const std::vector<double> &q,
                                const std::vector<double> &k,
                                const std::vector<double> &v,
                                const std::vector<double> &dout,
                                std::vector<double> &dq,
                                std::vector<double> &dk,
                                std::vector<double> &dv);

/// Errors of `got` against `want`: ‖got − want‖ / ‖want‖ and max |got − want|.
/// Non-finite values in `got` where `want` is finite make both errors
/// infinite. Entries where both are the same infinity (masked LSE) agree.
/// Where `mayBeNaN` is set (HiddenKeyLeaks::markRow), NaN in `got` is
/// allowed and counted in `hiddenKeyNaN`; a finite value there must still
/// match.
struct ErrorStats {
  double relErr = 0.0;
  double maxAbsErr = 0.0;
  int64_t nonFinite = 0;
  int64_t hiddenKeyNaN = 0;
};
ErrorStats compareToReference(const std::vector<double> &got,
                              const std::vector<double> &want,
                              const std::vector<char> *mayBeNaN = nullptr);

/// Rounds through the storage format of `t` (bf16/f16 round to nearest even).
uint16_t floatToBf16Bits(float f);
float bf16BitsToFloat(uint16_t b);
uint16_t floatToF16Bits(float f);
float f16BitsToFloat(uint16_t h);
double roundToDType(double x, DType t);

/// The tolerance on rel_err for outputs of dtype `t`.
double toleranceFor(DType t);

} // namespace attn

#endif // ATTN_SUPPORT_HOSTREFERENCE_H
