//===- JsonNumber.h - numbers in the tools' JSON lines ----------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// MLIR-free, shared by attn-run, attn-launch, attn-raise-check and the tuner.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_JSONNUMBER_H
#define ATTN_SUPPORT_JSONNUMBER_H

#include <string>

namespace attn {

/// A JSON number for `v` (6 significant digits); NaN and the infinities,
/// which JSON has no numbers for, become the strings "nan", "inf", "-inf".
std::string jsonNumber(double v);

} // namespace attn

#endif // ATTN_SUPPORT_JSONNUMBER_H
