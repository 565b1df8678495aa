//===- Manifest.cpp - the kernel launch manifest --------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"
#include "attn/Runtime/Json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace attn::runtime;

//===----------------------------------------------------------------------===//
// Grid formulas
//===----------------------------------------------------------------------===//

struct GridExpr::Node {
  enum Kind { Num, Var, Neg, Add, Sub, Mul, Div, Ceil, Floor, Min, Max } kind;
  double value = 0;          // Num
  int64_t GridVars::*var{};  // Var
  std::string name;          // Var, for messages
  std::shared_ptr<const Node> lhs, rhs;
};

namespace {
using Node = GridExpr::Node;
using NodeRef = std::shared_ptr<const Node>;

struct NamedVar {
  const char *name;
  int64_t GridVars::*member;
};
const NamedVar kGridVars[] = {
    {"batch", &GridVars::batch},
    {"heads_q", &GridVars::headsQ},
    {"heads_kv", &GridVars::headsKv},
    {"seq_q", &GridVars::seqQ},
    {"seq_kv", &GridVars::seqKv},
    {"head_dim", &GridVars::headDim},
    {"value_head_dim", &GridVars::valueHeadDim},
    {"block_m", &GridVars::blockM},
    {"block_n", &GridVars::blockN},
    {"num_sms", &GridVars::numSms},
};

/// expr := term (('+'|'-') term)*; term := unary (('*'|'/') unary)*;
/// unary := '-' unary | primary; primary := number | name | fn '(' args ')'
/// | '(' expr ')'.
class GridParser {
public:
  explicit GridParser(const std::string &s) : s(s) {}

  Expected<NodeRef> parse() {
    NodeRef n = expr();
    if (n && (skip(), pos != s.size()))
      n = error("unexpected '" + s.substr(pos, 1) + "'");
    if (!n)
      return Status::error(err);
    return n;
  }

private:
  const std::string &s;
  size_t pos = 0;
  std::string err;
  int depth = 0;

  NodeRef error(const std::string &what) {
    if (err.empty())
      err = what + " at offset " + std::to_string(pos) + " in '" + s + "'";
    return nullptr;
  }
  void skip() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t'))
      ++pos;
  }
  bool eat(char c) {
    skip();
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  static NodeRef make(Node::Kind k, NodeRef l, NodeRef r = nullptr) {
    auto n = std::make_shared<Node>();
    n->kind = k;
    n->lhs = std::move(l);
    n->rhs = std::move(r);
    return n;
  }

  NodeRef expr() {
    if (++depth > 32)
      return error("formula nested too deeply");
    NodeRef l = term();
    while (l) {
      if (eat('+'))
        l = binary(Node::Add, l, term());
      else if (eat('-'))
        l = binary(Node::Sub, l, term());
      else
        break;
    }
    --depth;
    return l;
  }
  NodeRef term() {
    NodeRef l = unary();
    while (l) {
      if (eat('*'))
        l = binary(Node::Mul, l, unary());
      else if (eat('/'))
        l = binary(Node::Div, l, unary());
      else
        break;
    }
    return l;
  }
  NodeRef binary(Node::Kind k, NodeRef l, NodeRef r) {
    return r ? make(k, std::move(l), std::move(r)) : nullptr;
  }
  NodeRef unary() {
    if (eat('-')) {
      NodeRef v = unary();
      return v ? make(Node::Neg, v) : nullptr;
    }
    return primary();
  }
  NodeRef primary() {
    skip();
    if (pos >= s.size())
      return error("unexpected end of formula");
    char c = s[pos];
    if (c == '(') {
      ++pos;
      NodeRef e = expr();
      if (e && !eat(')'))
        return error("expected ')'");
      return e;
    }
    if (c >= '0' && c <= '9') {
      size_t start = pos;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9')
        ++pos;
      if (pos - start > 12)
        return error("number too large");
      auto n = std::make_shared<Node>();
      n->kind = Node::Num;
      n->value = std::strtod(s.substr(start, pos - start).c_str(), nullptr);
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos;
      while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) ||
                                s[pos] == '_'))
        ++pos;
      std::string name = s.substr(start, pos - start);
      static const std::pair<const char *, Node::Kind> fns[] = {
          {"ceil", Node::Ceil},
          {"floor", Node::Floor},
          {"min", Node::Min},
          {"max", Node::Max}};
      for (const auto &[fn, kind] : fns) {
        if (name != fn)
          continue;
        if (!eat('('))
          return error("expected '(' after " + name);
        NodeRef a = expr();
        if (!a)
          return nullptr;
        NodeRef b;
        if (kind == Node::Min || kind == Node::Max) {
          if (!eat(','))
            return error(name + " takes two arguments");
          b = expr();
          if (!b)
            return nullptr;
        }
        if (!eat(')'))
          return error("expected ')' after " + name + "'s argument");
        return make(kind, a, b);
      }
      for (const NamedVar &v : kGridVars)
        if (name == v.name) {
          auto n = std::make_shared<Node>();
          n->kind = Node::Var;
          n->var = v.member;
          n->name = name;
          return n;
        }
      pos = start;
      return error("unknown name '" + name + "'");
    }
    return error(std::string("unexpected '") + c + "'");
  }
};

Expected<double> evalNode(const Node &n, const GridVars &vars) {
  if (n.kind == Node::Num)
    return n.value;
  if (n.kind == Node::Var)
    return static_cast<double>(vars.*(n.var));
  Expected<double> a = evalNode(*n.lhs, vars);
  if (!a)
    return a;
  if (n.kind == Node::Neg)
    return -*a;
  if (n.kind == Node::Ceil)
    return std::ceil(*a);
  if (n.kind == Node::Floor)
    return std::floor(*a);
  Expected<double> b = evalNode(*n.rhs, vars);
  if (!b)
    return b;
  switch (n.kind) {
  case Node::Add:
    return *a + *b;
  case Node::Sub:
    return *a - *b;
  case Node::Mul:
    return *a * *b;
  case Node::Div:
    if (*b == 0)
      return Status::error("division by zero");
    return *a / *b;
  case Node::Min:
    return std::min(*a, *b);
  case Node::Max:
    return std::max(*a, *b);
  default:
    return Status::error("internal error: bad grid formula node");
  }
}
} // namespace

Expected<GridExpr> GridExpr::parse(const std::string &text) {
  Expected<NodeRef> root = GridParser(text).parse();
  if (!root)
    return root.status();
  GridExpr e;
  e.src = text;
  e.root = root.take();
  return e;
}

Expected<int64_t> GridExpr::evaluate(const GridVars &vars) const {
  if (!root)
    return Status::error("empty grid formula");
  Expected<double> v = evalNode(*root, vars);
  if (!v)
    return Status(v.status()).prepend("'" + src + "'");
  // Grid sizes are far below 2^53, so doubles hold them exactly; a
  // fraction means the formula lacks a ceil().
  if (!std::isfinite(*v) || *v != std::floor(*v))
    return Status::error("'" + src + "' is not a whole number (" +
                         std::to_string(*v) + ")");
  if (*v < 1 || *v > 2147483647.0) {
    // Print the double: a value beyond int64 must not be cast (UB; found by
    // fuzzing the manifest parser).
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.17g", *v);
    return Status::error("'" + src + "' = " + buf +
                         " is outside [1, 2^31 - 1]");
  }
  return static_cast<int64_t>(*v);
}

//===----------------------------------------------------------------------===//
// manifest.json
//===----------------------------------------------------------------------===//

namespace {
/// Typed access to manifest fields; the first error sticks and names the
/// field by its dotted path.
class FieldReader {
public:
  Status status;

  const JsonValue *field(const JsonValue &obj, const std::string &prefix,
                         const char *key, bool required) {
    if (!status)
      return nullptr;
    const JsonValue *v = obj.get(key);
    if (!v && required)
      status = Status::error("missing required field '" + prefix + key + "'");
    return v;
  }

  bool typeError(const std::string &path, const char *want,
                 const JsonValue &got) {
    if (status)
      status = Status::error("field '" + path + "': expected " + want +
                             ", got " + got.describe());
    return false;
  }

  bool getString(const JsonValue &obj, const std::string &prefix,
                 const char *key, std::string &out, bool required = true) {
    const JsonValue *v = field(obj, prefix, key, required);
    if (!v)
      return false;
    if (!v->isString())
      return typeError(prefix + key, "a string", *v);
    out = v->asString();
    return true;
  }

  bool getInt(const JsonValue &obj, const std::string &prefix, const char *key,
              int64_t &out, bool required = true, int64_t min = 0) {
    const JsonValue *v = field(obj, prefix, key, required);
    if (!v)
      return false;
    if (!v->isInteger())
      return typeError(prefix + key, "an integer", *v);
    if (v->asInt() < min) {
      status = Status::error("field '" + prefix + key + "': must be >= " +
                             std::to_string(min) + " (got " +
                             std::to_string(v->asInt()) + ")");
      return false;
    }
    out = v->asInt();
    return true;
  }

  bool getBool(const JsonValue &obj, const std::string &prefix,
               const char *key, bool &out, bool required = true) {
    const JsonValue *v = field(obj, prefix, key, required);
    if (!v)
      return false;
    if (!v->isBool())
      return typeError(prefix + key, "a boolean", *v);
    out = v->asBool();
    return true;
  }

  bool getNumber(const JsonValue &obj, const std::string &prefix,
                 const char *key, double &out, bool required = true) {
    const JsonValue *v = field(obj, prefix, key, required);
    if (!v)
      return false;
    if (!v->isNumber())
      return typeError(prefix + key, "a number", *v);
    out = v->asNumber();
    return true;
  }

  const JsonValue *getObject(const JsonValue &obj, const std::string &prefix,
                             const char *key, bool required = true) {
    const JsonValue *v = field(obj, prefix, key, required);
    if (!v)
      return nullptr;
    if (!v->isObject()) {
      typeError(prefix + key, "an object", *v);
      return nullptr;
    }
    return v;
  }
};

/// A "tensormap" parameter: the tensor it describes (checked against the
/// ABI by the caller), its box and swizzle.
bool readTensorMapParam(FieldReader &r, const JsonValue &pv,
                        const std::string &pre, KernelParam &kp) {
  if (!r.getString(pv, pre, "tensor", kp.tensor) ||
      !r.getInt(pv, pre, "swizzle", kp.swizzle))
    return false;
  if (kp.swizzle != 0 && kp.swizzle != 32 && kp.swizzle != 64 &&
      kp.swizzle != 128) {
    r.status = Status::error("field '" + pre + "swizzle': expected 0, 32, 64 "
                             "or 128, got " + std::to_string(kp.swizzle));
    return false;
  }
  const JsonValue *box = r.field(pv, pre, "box", true);
  if (!box)
    return false;
  const auto *items = box->isArray() ? &box->asArray() : nullptr;
  if (!items || items->size() != 2 || !(*items)[0].isInteger() ||
      !(*items)[1].isInteger() || (*items)[0].asInt() < 1 ||
      (*items)[0].asInt() > 256 || (*items)[1].asInt() < 1 ||
      (*items)[1].asInt() > 256) {
    r.status = Status::error("field '" + pre + "box': expected [columns, "
                             "rows], integers in [1, 256]");
    return false;
  }
  kp.boxCols = (*items)[0].asInt();
  kp.boxRows = (*items)[1].asInt();
  return true;
}

void readProblem(FieldReader &r, const JsonValue &obj,
                 attn::AttentionProblem &p) {
  const std::string pre = "problem.";
  r.getInt(obj, pre, "batch", p.batch, true, 1);
  r.getInt(obj, pre, "heads_q", p.headsQ, true, 1);
  r.getInt(obj, pre, "heads_kv", p.headsKv, true, 1);
  r.getInt(obj, pre, "seq_q", p.seqQ, true, 1);
  r.getInt(obj, pre, "seq_kv", p.seqKv, true, 1);
  r.getInt(obj, pre, "head_dim", p.headDim, true, 1);
  p.valueHeadDim = p.headDim;
  r.getInt(obj, pre, "value_head_dim", p.valueHeadDim, true, 1);
  std::string dtype;
  if (r.getString(obj, pre, "dtype", dtype)) {
    std::optional<attn::DType> t = attn::parseDType(dtype);
    if (!t && r.status)
      r.status = Status::error("field 'problem.dtype': expected f16, bf16 or "
                               "f32, got '" + dtype + "'");
    else if (t)
      p.dtype = *t;
  }
  r.getBool(obj, pre, "causal", p.causal);
  // Variants (optional: manifests without them are plain attention).
  std::string align;
  if (r.getString(obj, pre, "mask_align", align, /*required=*/false)) {
    if (align != "top_left" && align != "bottom_right" && r.status)
      r.status = Status::error("field 'problem.mask_align': expected "
                               "top_left or bottom_right, got '" + align + "'");
    p.topLeft = align == "top_left";
  }
  r.getInt(obj, pre, "window_left", p.windowLeft, false, -1);
  r.getInt(obj, pre, "window_right", p.windowRight, false, -1);
  r.getNumber(obj, pre, "softcap", p.softcap, /*required=*/false);
  r.getBool(obj, pre, "alibi", p.alibi, /*required=*/false);
  std::string scoreMod;
  if (r.getString(obj, pre, "score_mod", scoreMod, /*required=*/false))
    p.customScoreMod = scoreMod == "custom";
  r.getBool(obj, pre, "with_lse", p.withLse);
  // Variable length: the lengths the kernel was compiled and is checked
  // with; bias: which dims broadcast.
  for (auto [key, lens] :
       {std::pair<const char *, std::vector<int64_t> *>{"seq_lens_q",
                                                        &p.seqLensQ},
        {"seq_lens_kv", &p.seqLensKv}}) {
    const JsonValue *v = r.status ? r.field(obj, pre, key, false) : nullptr;
    if (!v)
      continue;
    bool ok = v->isArray() && !v->asArray().empty();
    for (size_t i = 0; ok && i < v->asArray().size(); ++i)
      ok = v->asArray()[i].isInteger() && v->asArray()[i].asInt() >= 0;
    if (!ok) {
      r.status = Status::error("field 'problem." + std::string(key) +
                               "': expected a non-empty array of lengths "
                               ">= 0");
      break;
    }
    for (const JsonValue &x : v->asArray())
      lens->push_back(x.asInt());
  }
  std::string bias;
  if (r.getString(obj, pre, "bias", bias, /*required=*/false) &&
      !p.setBiasKind(bias) && r.status)
    r.status = Status::error("field 'problem.bias': expected bh, 1h, b1 or "
                             "11, got '" + bias + "'");
  double scale = 0;
  if (r.getNumber(obj, pre, "scale", scale, /*required=*/false))
    p.scale = scale;
  if (!r.status)
    return;
  if (std::string why = p.validate(); !why.empty())
    r.status = Status::error("problem: " + why);
}
} // namespace

Expected<KernelManifest> attn::runtime::parseManifest(const std::string &text) {
  Expected<JsonValue> json = parseJson(text);
  if (!json)
    return json.status();
  const JsonValue &root = *json;
  if (!root.isObject())
    return Status::error(std::string("expected a JSON object, got ") +
                         root.describe());

  KernelManifest m;
  FieldReader r;
  // The format comes first: a newer format may change any other field.
  if (r.getString(root, "", "format", m.format) && m.format != kManifestFormat)
    return Status::error("unsupported manifest format '" + m.format +
                         "' (this runtime reads '" + kManifestFormat + "')");
  r.getString(root, "", "entry", m.entry);
  if (r.status && m.entry.empty())
    r.status = Status::error("field 'entry': must not be empty");
  r.getString(root, "", "family", m.family, false);
  if (r.getString(root, "", "direction", m.direction, false) &&
      m.direction != "forward" && m.direction != "backward")
    r.status = Status::error("field 'direction': expected 'forward' or "
                             "'backward', got '" + m.direction + "'");
  r.getString(root, "", "chip", m.chip, false);
  r.getString(root, "", "ptx", m.ptx);
  r.getString(root, "", "cubin", m.cubin, false);
  for (const std::string *file : {&m.ptx, &m.cubin})
    if (r.status && file->find('/') != std::string::npos)
      r.status = Status::error("field '" +
                               std::string(file == &m.ptx ? "ptx" : "cubin") +
                               "': must be a file name in the kernel "
                               "directory, got '" + *file + "'");

  if (const JsonValue *p = r.getObject(root, "", "problem"))
    readProblem(r, *p, m.problem);

  if (const JsonValue *t = r.getObject(root, "", "tile")) {
    r.getInt(*t, "tile.", "block_m", m.tile.blockM, true, 1);
    r.getInt(*t, "tile.", "block_n", m.tile.blockN, false, 1);
    r.getInt(*t, "tile.", "warps", m.tile.warps, false, 1);
    r.getInt(*t, "tile.", "stages", m.tile.stages, false, 1);
    r.getString(*t, "tile.", "source", m.tile.source, false);
  }

  if (r.getInt(root, "", "threads", m.threads, true, 1) && m.threads > 1024)
    r.status = Status::error("field 'threads': at most 1024 threads in a "
                             "block (got " + std::to_string(m.threads) + ")");

  if (const JsonValue *g = r.getObject(root, "", "grid")) {
    const char *dims[] = {"x", "y", "z"};
    for (int i = 0; i < 3 && r.status; ++i) {
      std::string formula;
      if (!r.getString(*g, "grid.", dims[i], formula))
        break;
      Expected<GridExpr> e = GridExpr::parse(formula);
      if (!e) {
        r.status = Status::error("field 'grid." + std::string(dims[i]) +
                                 "': " + e.message());
        break;
      }
      m.grid[i] = e.take();
    }
  }

  r.getInt(root, "", "dynamic_shared_memory", m.dynamicSharedMemory, true, 0);

  // The kernel fills its arguments in this order: it must be exactly the
  // ABI's (a reordered or short list would launch with permuted ones).
  KernelAbi abi;
  abi.backward = m.direction == "backward";
  abi.bias = m.problem.bias;
  abi.varlen = m.problem.isVarlen();
  abi.tensorMaps = m.family == kTensorMapFamily;
  const std::vector<AbiParam> want = abi.params();
  auto abiError = [&](const std::string &field, const std::string &what) {
    r.status =
        Status::error("field '" + field + "': " + what + " (the " +
                      abi.describe() + " takes " + std::to_string(want.size()) +
                      " parameters, docs/kernel-abi.md)");
  };
  if (const JsonValue *ps = r.field(root, "", "params", true)) {
    if (!ps->isArray())
      r.typeError("params", "an array", *ps);
    for (size_t i = 0; r.status && i < ps->asArray().size(); ++i) {
      const JsonValue &pv = ps->asArray()[i];
      std::string at = "params[" + std::to_string(i) + "]";
      std::string pre = at + ".";
      if (!pv.isObject()) {
        r.typeError(at, "an object", pv);
        break;
      }
      KernelParam kp;
      std::string type;
      if (!r.getString(pv, pre, "name", kp.name) ||
          !r.getString(pv, pre, "type", type))
        break;
      if (type == "ptr")
        kp.type = ParamType::Ptr;
      else if (type == "i32")
        kp.type = ParamType::I32;
      else if (type == "i64")
        kp.type = ParamType::I64;
      else if (type == "f32")
        kp.type = ParamType::F32;
      else if (type == "tensormap")
        kp.type = ParamType::TensorMap;
      else {
        r.status = Status::error("field '" + pre + "type': expected ptr, i32, "
                                 "i64, f32 or tensormap, got '" + type + "'");
        break;
      }
      if (kp.type == ParamType::TensorMap &&
          !readTensorMapParam(r, pv, pre, kp))
        break;
      if (i >= want.size()) {
        abiError(at, "'" + kp.name + "' is one parameter too many");
        break;
      }
      const AbiParam &w = want[i];
      if (kp.name != w.name) {
        abiError(pre + "name",
                 "expected '" + w.name + "', got '" + kp.name + "'");
        break;
      }
      if (kp.type != w.type) {
        abiError(pre + "type", "'" + kp.name + "' must be " +
                                   paramTypeName(w.type) + ", got '" + type +
                                   "'");
        break;
      }
      if (kp.tensor != w.tensor) {
        abiError(pre + "tensor", "'" + kp.name + "' describes " + w.tensor +
                                     ", got '" + kp.tensor + "'");
        break;
      }
      m.params.push_back(kp);
    }
    if (r.status && m.params.size() < want.size())
      abiError("params", "missing '" + want[m.params.size()].name +
                             "' (parameter " + std::to_string(m.params.size()) +
                             ")");
  }

  // Backward: the kernels to launch, in order, all with `params`.
  if (const JsonValue *ls = r.field(root, "", "launches",
                                    m.direction == "backward")) {
    if (!ls->isArray() || ls->asArray().empty())
      r.typeError("launches", "a non-empty array", *ls);
    for (size_t i = 0; r.status && i < ls->asArray().size(); ++i) {
      const JsonValue &lv = ls->asArray()[i];
      std::string pre = "launches[" + std::to_string(i) + "].";
      if (!lv.isObject()) {
        r.typeError("launches[" + std::to_string(i) + "]", "an object", lv);
        break;
      }
      KernelManifest::Launch l;
      r.getString(lv, pre, "role", l.role);
      r.getString(lv, pre, "entry", l.entry);
      r.getInt(lv, pre, "threads", l.threads, true, 1);
      r.getInt(lv, pre, "dynamic_shared_memory", l.dynamicSharedMemory, true,
               0);
      if (const JsonValue *g = r.getObject(lv, pre, "grid")) {
        const char *dims[] = {"x", "y", "z"};
        for (int d = 0; d < 3 && r.status; ++d) {
          std::string formula;
          if (!r.getString(*g, pre + "grid.", dims[d], formula))
            break;
          Expected<GridExpr> e = GridExpr::parse(formula);
          if (!e) {
            r.status = Status::error("field '" + pre + "grid." + dims[d] +
                                     "': " + e.message());
            break;
          }
          l.grid[d] = e.take();
        }
      }
      if (r.status && l.threads > 1024)
        r.status = Status::error("field '" + pre + "threads': at most 1024");
      m.launches.push_back(std::move(l));
    }
  }

  if (const JsonValue *px = r.getObject(root, "", "ptxas", false)) {
    r.getInt(*px, "ptxas.", "registers", m.ptxas.registers, false);
    r.getInt(*px, "ptxas.", "spill_stores", m.ptxas.spillStores, false);
    r.getInt(*px, "ptxas.", "spill_loads", m.ptxas.spillLoads, false);
    r.getInt(*px, "ptxas.", "local_memory", m.ptxas.localMemory, false);
  }

  if (!r.status)
    return r.status;
  return m;
}

Expected<KernelManifest> attn::runtime::readManifest(const std::string &dir) {
  std::string path = dir + "/manifest.json";
  Expected<std::string> text = readFile(path);
  if (!text)
    return text.status();
  Expected<KernelManifest> m = parseManifest(*text);
  if (!m)
    return Status(m.status()).prepend(path);
  return m;
}
