//===- SpecialValues.h - chosen input values for edge-case runs -*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// `--special TENSOR:INDEX=VALUE` (attn-run on the CPU, attn-launch on the
// GPU): overwrites elements of the random Q, K or V with NaN, an infinity
// or a chosen number, rounded to the storage type, so that edge cases
// (non-finite inputs, huge logits, the dtype's extremes) run through the
// same check against the float64 reference as everything else.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_SPECIALVALUES_H
#define ATTN_SUPPORT_SPECIALVALUES_H

#include "attn/Support/AttentionProblem.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct SpecialValue {
  std::string spec; // as given, for messages
  char tensor = 'q'; // 'q', 'k' or 'v'
  bool all = false;  // INDEX was '*'
  uint64_t index = 0;
  double value = 0;
};

/// Parses TENSOR:INDEX=VALUE (TENSOR q, k or v; INDEX a flat element index
/// or *; VALUE nan, inf, -inf or a number). Returns "" or why not, naming
/// the flag ("--special SPEC: ...").
std::string parseSpecialValue(const std::string &spec, SpecialValue &out);

/// Writes the value, rounded to `t`, over the chosen elements of `bytes`
/// (the tensor in its storage format) and, when given, of `values` (the
/// same tensor as doubles). Returns "" or why not (an index past the end).
std::string applySpecialValue(const SpecialValue &s, DType t,
                              std::vector<uint8_t> &bytes,
                              std::vector<double> *values = nullptr);

} // namespace attn

#endif // ATTN_SUPPORT_SPECIALVALUES_H
