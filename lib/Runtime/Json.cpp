//===- Json.cpp - a small strict JSON reader ------------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

using namespace attn::runtime;

JsonValue JsonValue::makeBool(bool b) {
  JsonValue v;
  v.k = Kind::Bool;
  v.b = b;
  return v;
}

JsonValue JsonValue::makeNumber(double d, bool isInteger, int64_t i) {
  JsonValue v;
  v.k = Kind::Number;
  v.num = d;
  v.integral = isInteger;
  v.i64 = i;
  return v;
}

JsonValue JsonValue::makeString(std::string s) {
  JsonValue v;
  v.k = Kind::String;
  v.str = std::move(s);
  return v;
}

JsonValue JsonValue::makeArray(std::vector<JsonValue> items) {
  JsonValue v;
  v.k = Kind::Array;
  v.items = std::move(items);
  return v;
}

JsonValue JsonValue::makeObject(std::vector<Member> members) {
  JsonValue v;
  v.k = Kind::Object;
  v.members = std::move(members);
  return v;
}

const char *JsonValue::describe(Kind k) {
  switch (k) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "?";
}

const JsonValue *JsonValue::get(const std::string &key) const {
  for (const Member &m : members)
    if (m.first == key)
      return &m.second;
  return nullptr;
}

namespace {
/// Recursive descent over the text; the first error stops the parse.
class Parser {
public:
  explicit Parser(const std::string &text) : s(text) {}

  Expected<JsonValue> parseDocument() {
    skipSpace();
    JsonValue v;
    if (!parseValue(v, 0))
      return Status::error(err);
    skipSpace();
    if (pos != s.size())
      return fail("unexpected text after the JSON value");
    return v;
  }

private:
  // Deep enough for any manifest; bounded so hostile input cannot blow
  // the stack.
  static constexpr int kMaxDepth = 64;

  const std::string &s;
  size_t pos = 0;
  std::string err;

  Status fail(const std::string &what) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos && i < s.size(); ++i) {
      if (s[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::ostringstream os;
    os << "JSON error at line " << line << ", column " << col << ": " << what;
    err = os.str();
    return Status::error(err);
  }

  bool failed(const std::string &what) {
    (void)fail(what);
    return false;
  }

  void skipSpace() {
    while (pos < s.size() &&
           (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r'))
      ++pos;
  }

  bool literal(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (s.compare(pos, n, word) != 0)
      return false;
    pos += n;
    return true;
  }

  bool parseValue(JsonValue &out, int depth) {
    if (depth > kMaxDepth)
      return failed("nesting deeper than 64 levels");
    if (pos >= s.size())
      return failed("unexpected end of input, expected a value");
    char c = s[pos];
    if (c == '{')
      return parseObject(out, depth);
    if (c == '[')
      return parseArray(out, depth);
    if (c == '"') {
      std::string str;
      if (!parseString(str))
        return false;
      out = JsonValue::makeString(std::move(str));
      return true;
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(out);
    if (literal("true")) {
      out = JsonValue::makeBool(true);
      return true;
    }
    if (literal("false")) {
      out = JsonValue::makeBool(false);
      return true;
    }
    if (literal("null")) {
      out = JsonValue();
      return true;
    }
    return failed(std::string("unexpected character '") + c +
                  "', expected a value");
  }

  bool parseObject(JsonValue &out, int depth) {
    ++pos; // '{'
    std::vector<JsonValue::Member> members;
    skipSpace();
    if (pos < s.size() && s[pos] == '}') {
      ++pos;
      out = JsonValue::makeObject(std::move(members));
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= s.size() || s[pos] != '"')
        return failed("expected a string key in object");
      size_t keyPos = pos;
      std::string key;
      if (!parseString(key))
        return false;
      for (const JsonValue::Member &m : members)
        if (m.first == key) {
          pos = keyPos;
          return failed("duplicate key \"" + key + "\"");
        }
      skipSpace();
      if (pos >= s.size() || s[pos] != ':')
        return failed("expected ':' after object key");
      ++pos;
      skipSpace();
      JsonValue v;
      if (!parseValue(v, depth + 1))
        return false;
      members.emplace_back(std::move(key), std::move(v));
      skipSpace();
      if (pos < s.size() && s[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < s.size() && s[pos] == '}') {
        ++pos;
        out = JsonValue::makeObject(std::move(members));
        return true;
      }
      return failed("expected ',' or '}' in object");
    }
  }

  bool parseArray(JsonValue &out, int depth) {
    ++pos; // '['
    std::vector<JsonValue> items;
    skipSpace();
    if (pos < s.size() && s[pos] == ']') {
      ++pos;
      out = JsonValue::makeArray(std::move(items));
      return true;
    }
    while (true) {
      skipSpace();
      JsonValue v;
      if (!parseValue(v, depth + 1))
        return false;
      items.push_back(std::move(v));
      skipSpace();
      if (pos < s.size() && s[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < s.size() && s[pos] == ']') {
        ++pos;
        out = JsonValue::makeArray(std::move(items));
        return true;
      }
      return failed("expected ',' or ']' in array");
    }
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  bool parseHex4(uint32_t &cp) {
    if (pos + 4 > s.size())
      return failed("truncated \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s[pos++];
      cp <<= 4;
      if (c >= '0' && c <= '9')
        cp |= c - '0';
      else if (c >= 'a' && c <= 'f')
        cp |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        cp |= c - 'A' + 10;
      else
        return failed("bad hex digit in \\u escape");
    }
    return true;
  }

  bool parseString(std::string &out) {
    ++pos; // '"'
    while (true) {
      if (pos >= s.size())
        return failed("unterminated string");
      unsigned char c = static_cast<unsigned char>(s[pos]);
      if (c == '"') {
        ++pos;
        return true;
      }
      if (c < 0x20)
        return failed("control character in string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++pos;
        continue;
      }
      ++pos;
      if (pos >= s.size())
        return failed("unterminated escape");
      char e = s[pos++];
      switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!parseHex4(cp))
          return false;
        if (cp >= 0xd800 && cp < 0xdc00) {
          // A high surrogate must be followed by a low one.
          uint32_t lo;
          if (s.compare(pos, 2, "\\u") != 0)
            return failed("unpaired surrogate in \\u escape");
          pos += 2;
          if (!parseHex4(lo))
            return false;
          if (lo < 0xdc00 || lo >= 0xe000)
            return failed("unpaired surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp < 0xe000) {
          return failed("unpaired surrogate in \\u escape");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --pos;
        return failed(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  bool parseNumber(JsonValue &out) {
    size_t start = pos;
    if (s[pos] == '-')
      ++pos;
    auto digits = [&] {
      size_t n = 0;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        ++pos;
        ++n;
      }
      return n;
    };
    if (pos < s.size() && s[pos] == '0') {
      ++pos;
      if (pos < s.size() && s[pos] >= '0' && s[pos] <= '9')
        return failed("leading zero in number");
    } else if (digits() == 0) {
      return failed("expected digits in number");
    }
    bool integral = true;
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      integral = false;
      if (digits() == 0)
        return failed("expected digits after '.' in number");
    }
    if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
      ++pos;
      integral = false;
      if (pos < s.size() && (s[pos] == '+' || s[pos] == '-'))
        ++pos;
      if (digits() == 0)
        return failed("expected digits in exponent");
    }
    std::string text = s.substr(start, pos - start);
    errno = 0;
    double d = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(d)) {
      pos = start;
      return failed("number out of range: " + text);
    }
    int64_t i = 0;
    if (integral) {
      errno = 0;
      long long ll = std::strtoll(text.c_str(), nullptr, 10);
      // Integers beyond int64 stay numbers but are not integers.
      if (errno == ERANGE)
        integral = false;
      else
        i = ll;
    }
    out = JsonValue::makeNumber(d, integral, i);
    return true;
  }
};
} // namespace

Expected<JsonValue> attn::runtime::parseJson(const std::string &text) {
  return Parser(text).parseDocument();
}

std::string attn::runtime::jsonQuote(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  return out + "\"";
}
