//===- JsonNumber.cpp - numbers in the tools' JSON lines ------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/JsonNumber.h"

#include <cmath>
#include <sstream>

std::string attn::jsonNumber(double v) {
  if (std::isnan(v))
    return "\"nan\"";
  if (std::isinf(v))
    return v > 0 ? "\"inf\"" : "\"-inf\"";
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}
