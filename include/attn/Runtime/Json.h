//===- Json.h - a small strict JSON reader ----------------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Enough JSON (RFC 8259) to read kernel manifests on a GPU host that has no
// LLVM and no package manager. Strict: no comments, no trailing commas, no
// duplicate keys, nothing after the top-level value.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_JSON_H
#define ATTN_RUNTIME_JSON_H

#include "attn/Runtime/Status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn::runtime {

class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  using Member = std::pair<std::string, JsonValue>;

  JsonValue() = default;
  static JsonValue makeBool(bool b);
  static JsonValue makeNumber(double d, bool isInteger, int64_t i);
  static JsonValue makeString(std::string s);
  static JsonValue makeArray(std::vector<JsonValue> items);
  static JsonValue makeObject(std::vector<Member> members);

  Kind kind() const { return k; }
  /// "null", "a boolean", "a number", "a string", "an array", "an object".
  static const char *describe(Kind k);
  const char *describe() const { return describe(k); }

  bool isNull() const { return k == Kind::Null; }
  bool isBool() const { return k == Kind::Bool; }
  bool isNumber() const { return k == Kind::Number; }
  /// A number written without fraction or exponent that fits in int64.
  bool isInteger() const { return k == Kind::Number && integral; }
  bool isString() const { return k == Kind::String; }
  bool isArray() const { return k == Kind::Array; }
  bool isObject() const { return k == Kind::Object; }

  bool asBool() const { return b; }
  double asNumber() const { return num; }
  int64_t asInt() const { return i64; }
  const std::string &asString() const { return str; }
  const std::vector<JsonValue> &asArray() const { return items; }
  const std::vector<Member> &asObject() const { return members; }

  /// The member named `key` of an object; nullptr when absent or when this
  /// is not an object.
  const JsonValue *get(const std::string &key) const;

private:
  Kind k = Kind::Null;
  bool b = false;
  bool integral = false;
  double num = 0.0;
  int64_t i64 = 0;
  std::string str;
  std::vector<JsonValue> items;
  std::vector<Member> members;
};

/// Parses one JSON document. Errors name the line and column.
Expected<JsonValue> parseJson(const std::string &text);

/// `s` as a JSON string literal, quotes included.
std::string jsonQuote(const std::string &s);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_JSON_H
