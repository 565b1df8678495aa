//===- SpecialValues.cpp - chosen input values for edge-case runs ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/SpecialValues.h"
#include "attn/Support/HostReference.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace attn;

std::string attn::parseSpecialValue(const std::string &spec,
                                    SpecialValue &out) {
  out = SpecialValue();
  out.spec = spec;
  size_t colon = spec.find(':');
  size_t eq = spec.find('=', colon == std::string::npos ? 0 : colon);
  std::string name = spec.substr(0, colon);
  if (name != "q" && name != "k" && name != "v")
    return "--special " + spec + ": the tensor must be q, k or v";
  out.tensor = name[0];
  std::string index = colon == std::string::npos
                          ? ""
                          : spec.substr(colon + 1, eq == std::string::npos
                                                       ? std::string::npos
                                                       : eq - colon - 1);
  std::string value = eq == std::string::npos ? "" : spec.substr(eq + 1);
  if (value == "nan") {
    out.value = std::numeric_limits<double>::quiet_NaN();
  } else if (value == "inf") {
    out.value = std::numeric_limits<double>::infinity();
  } else if (value == "-inf") {
    out.value = -std::numeric_limits<double>::infinity();
  } else {
    // Decimal numbers only (strtod would also read "nan(...)", "infinity"
    // and hex floats); one beyond double's range is refused.
    char *end = nullptr;
    errno = 0;
    bool plain =
        !value.empty() && value.find_first_of("xXnNiI") == std::string::npos;
    double x = plain ? std::strtod(value.c_str(), &end) : 0;
    if (!plain || *end || errno == ERANGE)
      return "--special " + spec +
             ": the value must be nan, inf, -inf or a number";
    out.value = x;
  }
  if (index == "*") {
    out.all = true;
  } else {
    char *end = nullptr;
    errno = 0;
    unsigned long long i =
        index.empty() || index[0] < '0' || index[0] > '9'
            ? 0
            : std::strtoull(index.c_str(), &end, 10);
    if (index.empty() || !end || *end || errno == ERANGE)
      out.index = std::numeric_limits<uint64_t>::max(); // reported by apply
    else
      out.index = i;
  }
  return "";
}

std::string attn::applySpecialValue(const SpecialValue &s, DType t,
                                    std::vector<uint8_t> &bytes,
                                    std::vector<double> *values) {
  const size_t n = bytes.size() / dtypeBytes(t);
  size_t first = 0, last = n;
  if (!s.all) {
    if (s.index >= n)
      return "--special " + s.spec + ": the index must be * or below " +
             std::to_string(n);
    first = s.index, last = s.index + 1;
  }
  float f = static_cast<float>(s.value);
  for (size_t i = first; i < last; ++i) {
    double stored = f;
    switch (t) {
    case DType::f32:
      std::memcpy(&bytes[4 * i], &f, 4);
      break;
    case DType::bf16: {
      uint16_t b = floatToBf16Bits(f);
      std::memcpy(&bytes[2 * i], &b, 2);
      stored = bf16BitsToFloat(b);
      break;
    }
    case DType::f16: {
      uint16_t b = floatToF16Bits(f);
      std::memcpy(&bytes[2 * i], &b, 2);
      stored = f16BitsToFloat(b);
      break;
    }
    }
    if (values)
      (*values)[i] = stored;
  }
  return "";
}
