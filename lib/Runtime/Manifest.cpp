//===- Manifest.cpp - the kernel launch manifest --------------------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"
#include "attn/Runtime/Json.h"

#include <optional>

using namespace attn::runtime;

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

/// A "grid" object: the policy's name and its block rows
/// (attn/Runtime/LaunchGrid.h). Manifests of older compilers gave formulas
/// instead ("x": "ceil(seq_q / 128)"); they are refused with a way out.
void readGrid(FieldReader &r, const JsonValue &obj, const std::string &pre,
              GridSpec &grid) {
  const JsonValue *g = r.getObject(obj, pre, "grid");
  if (!g)
    return;
  std::string at = pre + "grid.";
  if (!g->get("policy") && g->get("x")) {
    r.status =
        Status::error("field '" + at +
                      "policy': missing; this manifest gives the grid as "
                      "formulas ('" +
                      at +
                      "x'), as attn-compile did before grid policies: "
                      "recompile the kernel");
    return;
  }
  std::string name;
  if (!r.getString(*g, at, "policy", name))
    return;
  std::optional<GridPolicy> policy = parseGridPolicy(name);
  if (!policy) {
    r.status = Status::error("field '" + at + "policy': expected " +
                             gridPolicyNames() + ", got '" + name + "'");
    return;
  }
  grid.policy = *policy;
  r.getInt(*g, at, "block_rows", grid.blockRows, true, 1);
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
        {"seq_lens_kv", &p.seqLensKv},
        {"key_starts", &p.keyStarts},
        {"key_ends", &p.keyEnds}}) {
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

  readGrid(r, root, "", m.grid);

  r.getInt(root, "", "dynamic_shared_memory", m.dynamicSharedMemory, true, 0);

  // The kernel fills its arguments in this order: it must be exactly the
  // ABI's (a reordered or short list would launch with permuted ones).
  KernelAbi abi;
  abi.backward = m.direction == "backward";
  abi.bias = m.problem.bias;
  abi.varlen = m.problem.isVarlen();
  abi.keyRange = m.problem.hasKeyRanges();
  abi.alibi = m.problem.alibi;
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
      readGrid(r, lv, pre, l.grid);
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
