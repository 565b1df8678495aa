//===- RuntimeTests.cpp - unit tests of the MLIR-free runtime -------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// No GPU needed: the JSON reader, the manifest checks, grid policies,
// parameter packing, the host-side checker and the "no CUDA driver" path.
// A small harness rather than GoogleTest, so it also builds on the GPU
// host, which has no package manager. Usage: attn-runtime-tests [group...]
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Check.h"
#include "attn/Runtime/Json.h"
#include "attn/Runtime/LaunchChecks.h"
#include "attn/Runtime/Runtime.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

#ifdef ATTN_HAVE_CUDA_H
#include <cuda.h>
#endif

using namespace attn::runtime;

namespace {
int failures = 0;
std::string current;

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::printf("FAIL %s: %s:%d: %s\n", current.c_str(), __FILE__,          \
                  __LINE__, #cond);                                            \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/// Expects a failure whose message contains `needle`.
template <typename T>
void expectError(const T &result, const std::string &needle, int line) {
  if (result.ok()) {
    std::printf("FAIL %s: line %d: expected an error containing '%s'\n",
                current.c_str(), line, needle.c_str());
    ++failures;
  } else if (result.message().find(needle) == std::string::npos) {
    std::printf("FAIL %s: line %d: error '%s' lacks '%s'\n", current.c_str(),
                line, result.message().c_str(), needle.c_str());
    ++failures;
  }
}
#define EXPECT_ERROR(result, needle) expectError(result, needle, __LINE__)

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

void jsonValues() {
  Expected<JsonValue> v = parseJson(
      R"( {"a": [1, -2.5e3, true, false, null], "s": "x\"\\\/\n\u00e9\ud83d\ude00",
          "big": 123456789012, "o": {}} )");
  EXPECT(v.ok());
  if (!v.ok())
    return;
  const JsonValue *a = v->get("a");
  EXPECT(a && a->isArray() && a->asArray().size() == 5);
  EXPECT(a->asArray()[0].isInteger() && a->asArray()[0].asInt() == 1);
  EXPECT(!a->asArray()[1].isInteger() && a->asArray()[1].asNumber() == -2500);
  EXPECT(a->asArray()[2].isBool() && a->asArray()[2].asBool());
  EXPECT(a->asArray()[4].isNull());
  EXPECT(v->get("s")->asString() == "x\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT(v->get("big")->asInt() == 123456789012LL);
  EXPECT(v->get("o")->isObject() && v->get("o")->asObject().empty());
  EXPECT(v->get("missing") == nullptr);
  EXPECT(jsonQuote("a\"b\n\x01") == "\"a\\\"b\\n\\u0001\"");
}

void jsonStrictness() {
  EXPECT_ERROR(parseJson("{\"a\": 1,}"), "expected a string key");
  EXPECT_ERROR(parseJson("[1, 2,]"), "expected a value");
  EXPECT_ERROR(parseJson("{\"a\": 1} // c"), "unexpected text after");
  EXPECT_ERROR(parseJson("{\"a\": 1, \"a\": 2}"), "duplicate key \"a\"");
  EXPECT_ERROR(parseJson("[01]"), "leading zero");
  EXPECT_ERROR(parseJson("[1.]"), "digits after '.'");
  EXPECT_ERROR(parseJson("\"abc"), "unterminated string");
  EXPECT_ERROR(parseJson("\"a\tb\""), "control character");
  EXPECT_ERROR(parseJson("\"\\x\""), "bad escape");
  EXPECT_ERROR(parseJson("\"\\ud800\""), "unpaired surrogate");
  EXPECT_ERROR(parseJson("[1e999]"), "out of range");
  EXPECT_ERROR(parseJson(""), "unexpected end of input");
  EXPECT_ERROR(parseJson("tru"), "unexpected character");
  EXPECT_ERROR(parseJson(std::string(100, '[') + std::string(100, ']')),
               "nesting deeper");
  // Positions are reported as line and column.
  EXPECT_ERROR(parseJson("{\n  \"a\": ?\n}"), "line 2, column 8");
}

//===----------------------------------------------------------------------===//
// Manifests
//===----------------------------------------------------------------------===//

std::string allParams() {
  std::string s = R"([{"name":"q","type":"ptr"},{"name":"k","type":"ptr"},
    {"name":"v","type":"ptr"},{"name":"o","type":"ptr"},
    {"name":"lse","type":"ptr"},{"name":"seq_q","type":"i32"},
    {"name":"seq_kv","type":"i32"},{"name":"heads_q","type":"i32"},
    {"name":"heads_kv","type":"i32"},{"name":"softmax_scale","type":"f32"})";
  for (const char *t : {"q", "k", "v", "o"})
    for (const char *d : {"b", "h", "n"})
      s += std::string(",{\"name\":\"") + t + "_stride_" + d +
           "\",\"type\":\"i64\"}";
  s += R"(,{"name":"lse_stride_b","type":"i64"},
           {"name":"lse_stride_h","type":"i64"}])";
  return s;
}

/// A complete manifest; `edit` replaces one substring to make variants.
std::string goodManifest(const std::string &from = "",
                         const std::string &to = "") {
  std::string m = R"json({
  "format": "attn-kernel/1",
  "entry": "attn_fwd_d128_bf16_causal_m128n64w8",
  "family": "sm80-mma",
  "chip": "sm_90a",
  "ptx": "kernel.ptx",
  "cubin": "kernel.cubin",
  "problem": {"batch": 2, "heads_q": 16, "heads_kv": 4, "seq_q": 4096,
              "seq_kv": 4096, "head_dim": 128, "value_head_dim": 128,
              "dtype": "bf16", "causal": true, "scale": 0.088388,
              "with_lse": true},
  "tile": {"block_m": 128, "block_n": 64, "warps": 8, "stages": 2,
           "source": "heuristic"},
  "threads": 256,
  "grid": {"policy": "query_tiles", "block_rows": 128},
  "dynamic_shared_memory": 49152,
  "params": PARAMS,
  "ptxas": {"registers": 168, "spill_stores": 0, "spill_loads": 0,
            "local_memory": 0},
  "a_future_field": {"ignored": true}
})json";
  m.replace(m.find("PARAMS"), 6, allParams());
  if (!from.empty()) {
    size_t at = m.find(from);
    if (at == std::string::npos) {
      std::printf("FAIL %s: test bug: '%s' not in the manifest\n",
                  current.c_str(), from.c_str());
      ++failures;
    } else {
      m.replace(at, from.size(), to);
    }
  }
  return m;
}

void manifestGood() {
  Expected<KernelManifest> m = parseManifest(goodManifest());
  EXPECT(m.ok());
  if (!m.ok()) {
    std::printf("  %s\n", m.message().c_str());
    return;
  }
  EXPECT(m->entry == "attn_fwd_d128_bf16_causal_m128n64w8");
  EXPECT(m->ptx == "kernel.ptx" && m->cubin == "kernel.cubin");
  EXPECT(m->chip == "sm_90a" && m->family == "sm80-mma");
  EXPECT(m->problem.batch == 2 && m->problem.headsQ == 16 &&
         m->problem.headsKv == 4 && m->problem.seqQ == 4096 &&
         m->problem.headDim == 128 && m->problem.vDim() == 128);
  EXPECT(m->problem.dtype == attn::DType::bf16 && m->problem.causal &&
         m->problem.withLse);
  EXPECT(m->problem.scale && std::fabs(*m->problem.scale - 0.088388) < 1e-12);
  EXPECT(m->tile.blockM == 128 && m->tile.blockN == 64 && m->tile.warps == 8 &&
         m->tile.stages == 2 && m->tile.source == "heuristic");
  EXPECT(m->threads == 256 && m->dynamicSharedMemory == 49152);
  EXPECT(m->params.size() == 24);
  EXPECT(m->params[0].name == "q" && m->params[0].type == ParamType::Ptr);
  EXPECT(m->params[5].name == "seq_q" && m->params[5].type == ParamType::I32);
  EXPECT(m->params[9].name == "softmax_scale" &&
         m->params[9].type == ParamType::F32);
  EXPECT(m->params[23].name == "lse_stride_h" &&
         m->params[23].type == ParamType::I64);
  EXPECT(m->ptxas.registers == 168);
  EXPECT(m->grid.policy == GridPolicy::QueryTiles && m->grid.blockRows == 128);

  // Optional fields may be left out.
  Expected<KernelManifest> bare =
      parseManifest(goodManifest("\"cubin\": \"kernel.cubin\",", ""));
  EXPECT(bare.ok() && bare->cubin.empty());
  Expected<KernelManifest> noScale =
      parseManifest(goodManifest("\"scale\": 0.088388,", ""));
  EXPECT(noScale.ok() && !noScale->problem.scale);
}

void manifestMissingField() {
  EXPECT_ERROR(parseManifest(goodManifest(
                   "\"entry\": \"attn_fwd_d128_bf16_causal_m128n64w8\",", "")),
               "missing required field 'entry'");
  EXPECT_ERROR(
      parseManifest(goodManifest("\"head_dim\": 128,", "")),
      "missing required field 'problem.head_dim'");
  EXPECT_ERROR(parseManifest(goodManifest("\"block_m\": 128,", "")),
               "missing required field 'tile.block_m'");
  EXPECT_ERROR(parseManifest(goodManifest("\"block_rows\"", "\"rows\"")),
               "missing required field 'grid.block_rows'");
  EXPECT_ERROR(parseManifest(goodManifest("\"format\": \"attn-kernel/1\",", "")),
               "missing required field 'format'");
  EXPECT_ERROR(parseManifest(goodManifest("{\"name\":\"q\",\"type\":\"ptr\"}",
                                          "{\"name\":\"q\"}")),
               "missing required field 'params[0].type'");
}

void manifestWrongType() {
  EXPECT_ERROR(parseManifest(goodManifest(
                   "\"entry\": \"attn_fwd_d128_bf16_causal_m128n64w8\"",
                   "\"entry\": \"\"")),
               "field 'entry': must not be empty");
  EXPECT_ERROR(parseManifest(goodManifest("\"threads\": 256",
                                          "\"threads\": \"256\"")),
               "field 'threads': expected an integer, got a string");
  EXPECT_ERROR(parseManifest(goodManifest("\"causal\": true", "\"causal\": 1")),
               "field 'problem.causal': expected a boolean, got a number");
  EXPECT_ERROR(parseManifest(goodManifest("\"seq_q\": 4096", "\"seq_q\": 4096.5")),
               "field 'problem.seq_q': expected an integer, got a number");
  EXPECT_ERROR(parseManifest(goodManifest("\"tile\": {",
                                          "\"tile\": 7, \"old_tile\": {")),
               "field 'tile': expected an object, got a number");
  EXPECT_ERROR(parseManifest(goodManifest("\"params\": [",
                                          "\"params\": 3, \"old\": [")),
               "field 'params': expected an array, got a number");
  EXPECT_ERROR(parseManifest(
                   goodManifest("\"params\": [", "\"params\": [], \"old\": [")),
               "field 'params': missing 'q' (parameter 0) (the forward "
               "kernel takes 24 parameters, docs/kernel-abi.md)");
  EXPECT_ERROR(parseManifest("[1, 2]"), "expected a JSON object, got an array");
  EXPECT_ERROR(parseManifest(goodManifest("\"dtype\": \"bf16\"", "\"dtype\": \"fp8\"")),
               "field 'problem.dtype': expected f16, bf16 or f32, got 'fp8'");
  EXPECT_ERROR(parseManifest(goodManifest("\"threads\": 256", "\"threads\": 2048")),
               "at most 1024 threads");
  EXPECT_ERROR(parseManifest(goodManifest("\"seq_q\": 4096", "\"seq_q\": 0")),
               "field 'problem.seq_q': must be >= 1");
  EXPECT_ERROR(parseManifest(goodManifest("\"heads_kv\": 4", "\"heads_kv\": 5")),
               "must be a multiple of --heads-kv");
  EXPECT_ERROR(parseManifest(goodManifest("\"ptx\": \"kernel.ptx\"",
                                          "\"ptx\": \"../kernel.ptx\"")),
               "field 'ptx': must be a file name");
  EXPECT_ERROR(parseManifest(goodManifest("{\"name\":\"seq_q\",\"type\":\"i32\"}",
                                          "{\"name\":\"seq_q\",\"type\":\"u32\"}")),
               "field 'params[5].type': expected ptr, i32, i64, f32 or tensormap, got 'u32'");
  EXPECT_ERROR(
      parseManifest(goodManifest("{\"name\":\"seq_q\",\"type\":\"i32\"}",
                                 "{\"name\":\"seq_q\",\"type\":\"ptr\"}")),
      "field 'params[5].type': 'seq_q' must be i32, got 'ptr'");
  EXPECT_ERROR(parseManifest(goodManifest("{\"name\":\"q\",\"type\":\"ptr\"}",
                                          "{\"name\":\"q\",\"type\":\"i64\"}")),
               "field 'params[0].type': 'q' must be ptr, got 'i64'");
  EXPECT_ERROR(
      parseManifest(goodManifest("{\"name\":\"seq_q\",\"type\":\"i32\"}",
                                 "{\"name\":\"window\",\"type\":\"i32\"}")),
      "field 'params[5].name': expected 'seq_q', got 'window'");
  EXPECT_ERROR(
      parseManifest(goodManifest("{\"name\":\"seq_q\",\"type\":\"i32\"}",
                                 "{\"name\":\"q\",\"type\":\"ptr\"}")),
      "field 'params[5].name': expected 'seq_q', got 'q'");
  EXPECT_ERROR(parseManifest(goodManifest("\"query_tiles\"", "\"tiles\"")),
               "field 'grid.policy': expected query_tiles, length_major, "
               "persistent or key_tiles, got 'tiles'");
  EXPECT_ERROR(
      parseManifest(goodManifest("\"block_rows\": 128", "\"block_rows\": 0")),
      "field 'grid.block_rows': must be >= 1 (got 0)");
  // The grid formulas of attn-compile before grid policies: recompile.
  EXPECT_ERROR(
      parseManifest(goodManifest(
          "{\"policy\": \"query_tiles\", \"block_rows\": 128}",
          "{\"x\": \"ceil(seq_q / 128)\", \"y\": \"batch * heads_q\", "
          "\"z\": \"1\"}")),
      "field 'grid.policy': missing; this manifest gives the grid as formulas "
      "('grid.x'), as attn-compile did before grid policies: recompile the "
      "kernel");
}

/// The parameters, in order, must be the kernel ABI's (KernelAbi.h): the
/// runtime fills them in the manifest's order, so a reordered, short or
/// mistyped list would launch the kernel with permuted arguments.
void manifestParamsAreTheAbi() {
  const std::string last = R"({"name":"lse_stride_h","type":"i64"})";
  const std::string first = R"({"name":"q","type":"ptr"},)";
  // Reversed and short: the first mismatch is named.
  Expected<JsonValue> all = parseJson(allParams());
  EXPECT(all.ok());
  if (!all.ok())
    return;
  auto withParams = [&](std::vector<JsonValue> ps) {
    std::string list = "[";
    for (const JsonValue &p : ps)
      list += std::string(list.size() > 1 ? "," : "") +
              "{\"name\":" + jsonQuote(p.get("name")->asString()) +
              ",\"type\":" + jsonQuote(p.get("type")->asString()) + "}";
    std::string m = goodManifest();
    m.replace(m.find(allParams()), allParams().size(), list + "]");
    return parseManifest(m);
  };
  std::vector<JsonValue> ps = all->asArray();
  std::reverse(ps.begin(), ps.end());
  EXPECT_ERROR(withParams(ps), "field 'params[0].name': expected 'q', got "
                               "'lse_stride_h' (the forward kernel takes 24 "
                               "parameters, docs/kernel-abi.md)");
  ps = all->asArray();
  ps.pop_back();
  EXPECT_ERROR(withParams(ps),
               "field 'params': missing 'lse_stride_h' (parameter 23)");
  EXPECT_ERROR(parseManifest(goodManifest(first, "")),
               "field 'params[0].name': expected 'q', got 'k'");
  EXPECT_ERROR(
      parseManifest(
          goodManifest(last, last + R"(,{"name":"bias","type":"ptr"})")),
      "field 'params[24]': 'bias' is one parameter too many (the forward "
      "kernel takes 24");
  EXPECT_ERROR(
      parseManifest(goodManifest(R"({"name":"q_stride_b","type":"i64"})",
                                 R"({"name":"q_stride_b","type":"i32"})")),
      "field 'params[10].type': 'q_stride_b' must be i64, got 'i32'");
  // The variants' parameters follow from the problem.
  EXPECT_ERROR(
      parseManifest(goodManifest("\"with_lse\": true",
                                 "\"with_lse\": true, \"bias\": \"bh\"")),
      "field 'params': missing 'bias' (parameter 24) (the forward "
      "kernel with a bias takes 28 parameters");
  std::string biasParams = R"(,{"name":"bias","type":"ptr"},
      {"name":"bias_stride_b","type":"i64"},{"name":"bias_stride_h","type":"i64"},
      {"name":"bias_stride_n","type":"i64"})";
  std::string withBias = goodManifest(last, last + biasParams);
  withBias.replace(withBias.find("\"with_lse\""), 10,
                   "\"bias\": \"bh\", \"with_lse\"");
  Expected<KernelManifest> bias = parseManifest(withBias);
  EXPECT(bias.ok() && bias->params.size() == 28);
  // A backward manifest takes the backward kernels' 41.
  EXPECT_ERROR(
      parseManifest(goodManifest("\"family\"", R"("direction": "backward",
      "launches": [{"role": "dkdv", "entry": "e", "threads": 64, "grid":
      {"policy": "key_tiles", "block_rows": 64}, "dynamic_shared_memory": 0}],
      "family")")),
      "field 'params[4].name': expected 'do', got 'lse' (the backward "
      "kernel takes 41 parameters");
}

/// sm90a-wgmma kernels take TMA descriptors the runtime encodes: q, k, v
/// after the 24 (KernelAbi.h).
std::string tensorMapParam(const char *tensor, int rows = 128) {
  return std::string(R"({"name":")") + tensor +
         R"(_tmap","type":"tensormap","tensor":")" + tensor +
         R"(","box":[64,)" + std::to_string(rows) + R"(],"swizzle":128})";
}

std::string sm90aManifest(const std::string &maps) {
  std::string last = R"({"name":"lse_stride_h","type":"i64"})";
  std::string m = goodManifest(last, last + maps);
  m.replace(m.find("sm80-mma"), 8, "sm90a-wgmma");
  return m;
}

std::string sm90aMaps() {
  return "," + tensorMapParam("q") + "," + tensorMapParam("k") + "," +
         tensorMapParam("v");
}

void manifestTensorMap() {
  Expected<KernelManifest> m = parseManifest(sm90aManifest(sm90aMaps()));
  EXPECT(m.ok() && m->params.size() == 27);
  if (m.ok() && m->params.size() == 27) {
    const KernelParam &p = m->params[25];
    EXPECT(p.type == ParamType::TensorMap && p.tensor == "k" &&
           p.boxCols == 64 && p.boxRows == 128 && p.swizzle == 128);
    EXPECT(std::string(paramTypeName(p.type)) == "tensormap");
  }
  auto variant = [&](const std::string &from, const std::string &to) {
    std::string maps = sm90aMaps();
    maps.replace(maps.find(from), from.size(), to);
    return parseManifest(sm90aManifest(maps));
  };
  EXPECT_ERROR(variant("\"tensor\":\"q\"", "\"tensor\":\"x\""),
               "field 'params[24].tensor': 'q_tmap' describes q, got 'x'");
  EXPECT_ERROR(variant("\"swizzle\":128", "\"swizzle\":96"),
               "field 'params[24].swizzle': expected 0, 32, 64 or 128, got 96");
  EXPECT_ERROR(variant("[64,128]", "[64]"),
               "field 'params[24].box': expected [columns, rows], integers in "
               "[1, 256]");
  EXPECT_ERROR(variant("[64,128]", "[64,512]"),
               "field 'params[24].box': expected [columns, rows]");
  EXPECT_ERROR(variant(",\"swizzle\":128", ""),
               "missing required field 'params[24].swizzle'");
  // The family's maps are part of its ABI: none, or out of order, is an
  // error; an sm80-mma kernel takes none.
  EXPECT_ERROR(parseManifest(sm90aManifest("")),
               "field 'params': missing 'q_tmap' (parameter 24) (the forward "
               "sm90a-wgmma kernel takes 27 parameters");
  EXPECT_ERROR(parseManifest(sm90aManifest("," + tensorMapParam("k") + "," +
                                           tensorMapParam("q") + "," +
                                           tensorMapParam("v"))),
               "field 'params[24].name': expected 'q_tmap', got 'k_tmap'");
  std::string last = R"({"name":"lse_stride_h","type":"i64"})";
  EXPECT_ERROR(parseManifest(goodManifest(last, last + sm90aMaps())),
               "field 'params[24]': 'q_tmap' is one parameter too many");
}

void manifestFormat() {
  EXPECT_ERROR(parseManifest(goodManifest("attn-kernel/1", "attn-kernel/2")),
               "unsupported manifest format 'attn-kernel/2' (this runtime "
               "reads 'attn-kernel/1')");
  EXPECT_ERROR(parseManifest(goodManifest("\"attn-kernel/1\"", "1")),
               "field 'format': expected a string, got a number");
  // A newer format is refused before its other fields are judged.
  EXPECT_ERROR(parseManifest("{\"format\": \"attn-kernel/9\"}"),
               "unsupported manifest format 'attn-kernel/9'");
}

void manifestFile() {
  EXPECT_ERROR(readManifest("/nonexistent/kernel"),
               "cannot read /nonexistent/kernel/manifest.json");
}

//===----------------------------------------------------------------------===//
// Grid policies and launch geometry
//===----------------------------------------------------------------------===//

/// The grid formulas manifests gave before grid policies, as
/// docs/kernel-abi.md wrote them (real division, ceil and floor), for
/// `rows` rows per block.
std::array<int64_t, 3> documentedGrid(GridPolicy p, double rows,
                                      const GridSizes &s) {
  double batch = s.batch, headsQ = s.headsQ, headsKv = s.headsKv;
  double seqQ = s.seqQ, seqKv = s.seqKv, numSms = s.numSms;
  double t = std::ceil(seqQ / rows) * headsQ;
  double x = 0, y = 0;
  switch (p) {
  case GridPolicy::QueryTiles: // "ceil(seq_q / 128)", "batch * heads_q"
    x = std::ceil(seqQ / rows), y = batch * headsQ;
    break;
  case GridPolicy::LengthMajor: // "ceil(seq_q / 128) * heads_q", "batch"
    x = t, y = batch;
    break;
  case GridPolicy::Persistent:
    // "max(1, min(T, max(floor(num_sms / batch), T * floor(seq_q / 4096))))"
    x = std::max(1.0, std::min(t, std::max(std::floor(numSms / batch),
                                           t * std::floor(seqQ / 4096)))),
    y = batch;
    break;
  case GridPolicy::KeyTiles: // "ceil(seq_kv / 128)", "batch * heads_kv"
    x = std::ceil(seqKv / rows), y = batch * headsKv;
    break;
  }
  return {static_cast<int64_t>(x), static_cast<int64_t>(y), 1};
}

/// launchGrid gives exactly the documented formulas' values, for every
/// policy, over shapes around the block and 4096-row boundaries, on an
/// H100/H200's 132 SMs.
void gridPolicies() {
  const int64_t batches[] = {1, 2, 3, 4, 5, 7, 8, 16, 33, 64, 132, 133, 1000};
  const int64_t heads[] = {1, 2, 3, 8, 16, 32, 40, 64, 128};
  const int64_t seqs[] = {1,    2,     15,    16,    17,    63,     64,
                          65,   127,   128,   129,   191,   192,    193,
                          1000, 1023,  1024,  4095,  4096,  4097,   8191,
                          8192, 12345, 16384, 32768, 65536, 131072, 1000000};
  // Forward tiles, the backward's dkdv blocks, dq (64) and the preprocess
  // and convert kernels' 128 / (D / 8) rows (D 32 to 256).
  const int64_t rows[] = {4, 8, 16, 32, 64, 80, 96, 128, 176, 192, 256};
  const GridPolicy policies[] = {GridPolicy::QueryTiles,
                                 GridPolicy::LengthMajor,
                                 GridPolicy::Persistent, GridPolicy::KeyTiles};
  int64_t compared = 0, mismatches = 0;
  for (GridPolicy p : policies)
    for (int64_t b : batches)
      for (int64_t h : heads)
        for (int64_t n : seqs)
          for (int64_t r : rows) {
            GridSizes s;
            s.batch = b, s.headsQ = h, s.headsKv = h > 2 ? h / 2 : h;
            s.seqQ = n, s.seqKv = n % 3 == 0 ? n : n + 7;
            s.numSms = 132;
            std::array<int64_t, 3> got = launchGrid({p, r}, s);
            std::array<int64_t, 3> want =
                documentedGrid(p, static_cast<double>(r), s);
            ++compared;
            if (got != want && ++mismatches <= 5) {
              std::printf(
                  "FAIL %s: %s rows %lld batch %lld heads %lld seq %lld:"
                  " (%lld, %lld, %lld), documented (%lld, %lld, %lld)\n",
                  current.c_str(), gridPolicyName(p), (long long)r,
                  (long long)b, (long long)h, (long long)n, (long long)got[0],
                  (long long)got[1], (long long)got[2], (long long)want[0],
                  (long long)want[1], (long long)want[2]);
              ++failures;
            }
          }
  EXPECT(compared > 40000 && mismatches == 0);

  // The names are the manifest's and the IR's (#attn.grid).
  for (GridPolicy p : policies) {
    std::optional<GridPolicy> back = parseGridPolicy(gridPolicyName(p));
    EXPECT(back && *back == p);
  }
  EXPECT(!parseGridPolicy("ceil(seq_q / 128)"));
  // A few by hand.
  GridSizes s;
  s.batch = 2, s.headsQ = 16, s.headsKv = 4, s.seqQ = 1000, s.seqKv = 300;
  s.numSms = 132;
  EXPECT((launchGrid({GridPolicy::QueryTiles, 128}, s) ==
          std::array<int64_t, 3>{8, 32, 1}));
  EXPECT((launchGrid({GridPolicy::LengthMajor, 128}, s) ==
          std::array<int64_t, 3>{128, 2, 1}));
  EXPECT((launchGrid({GridPolicy::Persistent, 128}, s) ==
          std::array<int64_t, 3>{66, 2, 1})); // min(128, 132 / 2)
  EXPECT((launchGrid({GridPolicy::KeyTiles, 128}, s) ==
          std::array<int64_t, 3>{3, 8, 1}));
  s.seqQ = 4096; // one block per tile from 4096 query rows on
  EXPECT((launchGrid({GridPolicy::Persistent, 128}, s) ==
          std::array<int64_t, 3>{512, 2, 1}));
  // An empty batch is no division by zero, and no launch.
  s.batch = 0, s.seqQ = 1000; // num_sms / max(batch, 1)
  EXPECT((launchGrid({GridPolicy::Persistent, 128}, s) ==
          std::array<int64_t, 3>{128, 0, 1}));
  EXPECT_ERROR(cudaGrid({GridPolicy::Persistent, 128}, s),
               "grid.y = 0 (persistent, block_rows 128) is empty: no block "
               "to launch");
}

LaunchArgs someArgs(const KernelManifest &m) {
  return LaunchArgs::dense(m.problem, 0x1000, 0x2000, 0x3000, 0x4000, 0x5000);
}

void launchGeometry() {
  Expected<KernelManifest> m = parseManifest(goodManifest());
  EXPECT(m.ok());
  if (!m.ok())
    return;
  LaunchArgs a = someArgs(*m);
  a.seqQ = 1000;
  a.batch = 3;
  Expected<LaunchGeometry> g = computeLaunchGeometry(*m, a);
  EXPECT(g.ok());
  if (g.ok()) {
    EXPECT(g->grid[0] == 8);       // ceil(1000 / 128)
    EXPECT(g->grid[1] == 3 * 16);  // batch * heads_q
    EXPECT(g->grid[2] == 1);
    EXPECT(g->threads == 256 && g->dynamicSharedMemory == 49152);
  }
  LaunchArgs bad = a;
  bad.headsKv = 3;
  EXPECT_ERROR(computeLaunchGeometry(*m, bad), "must be a multiple of heads_kv");
  bad = a;
  bad.seqKv = 0;
  EXPECT_ERROR(computeLaunchGeometry(*m, bad), "seq_kv must be positive");
  bad = a;
  bad.k = 0;
  EXPECT_ERROR(computeLaunchGeometry(*m, bad), "the k pointer is null");
  bad = a;
  bad.lse = 0;
  EXPECT_ERROR(computeLaunchGeometry(*m, bad), "the lse pointer is null");
  bad = a;
  bad.batch = 5000;
  EXPECT_ERROR(computeLaunchGeometry(*m, bad),
               "grid.y = 80000 (query_tiles, block_rows 128) exceeds CUDA's "
               "limit of 65535");
  // A persistent grid sees the SM count.
  KernelManifest persistent = *m;
  persistent.grid = {GridPolicy::Persistent, 128};
  Expected<LaunchGeometry> p = computeLaunchGeometry(persistent, a, 132);
  EXPECT(p.ok() && p->grid[0] == 44 && p->grid[1] == 3); // 132 / 3
}

void packing() {
  Expected<KernelManifest> m = parseManifest(goodManifest());
  EXPECT(m.ok());
  if (!m.ok())
    return;
  LaunchArgs a = someArgs(*m);
  Expected<PackedParams> pp = packParams(*m, a);
  EXPECT(pp.ok() && pp->pointers.size() == 24);
  if (!pp.ok() || pp->pointers.size() != 24)
    return;
  auto slot = [&](size_t i) { return pp->pointers[i]; };
  EXPECT(*static_cast<uint64_t *>(slot(0)) == 0x1000);  // q
  EXPECT(*static_cast<uint64_t *>(slot(4)) == 0x5000);  // lse
  EXPECT(*static_cast<int32_t *>(slot(5)) == 4096);     // seq_q as i32
  EXPECT(*static_cast<int32_t *>(slot(8)) == 4);        // heads_kv
  // softmax_scale: the problem's, as f32 (0.088388 in goodManifest).
  EXPECT(*static_cast<float *>(slot(9)) == static_cast<float>(0.088388));
  EXPECT(*static_cast<int64_t *>(slot(10)) == 16 * 4096 * 128); // q_stride_b
  EXPECT(*static_cast<int64_t *>(slot(12)) == 128);     // q_stride_n
  EXPECT(*static_cast<int64_t *>(slot(13)) == 4 * 4096 * 128); // k_stride_b
  EXPECT(*static_cast<int64_t *>(slot(22)) == 16 * 4096); // lse_stride_b
  EXPECT(*static_cast<int64_t *>(slot(23)) == 4096);      // lse_stride_h
  a.seqQ = 3000000000LL;
  EXPECT_ERROR(packParams(*m, a),
               "parameter 'seq_q' = 3000000000 does not fit the kernel's i32");
}

/// Errors the other tests check only in part, checked whole here: every
/// message a user can get has a test (scripts/check-diagnostics.py).
void wholeMessages() {
  EXPECT_ERROR(parseManifest(goodManifest("\"heads_kv\": 4",
                                          "\"heads_kv\": 5")),
               "problem: --heads-q (16) must be a multiple of --heads-kv (5)");
  EXPECT_ERROR(parseManifest(goodManifest("\"ptx\": \"kernel.ptx\"",
                                          "\"ptx\": \"../kernel.ptx\"")),
               "field 'ptx': must be a file name in the kernel directory, "
               "got '../kernel.ptx'");
  EXPECT_ERROR(parseManifest(goodManifest("\"threads\": 256",
                                          "\"threads\": 2048")),
               "field 'threads': at most 1024 threads in a block (got 2048)");
  Expected<KernelManifest> m = parseManifest(goodManifest());
  EXPECT(m.ok());
  if (!m.ok())
    return;
  LaunchArgs a = someArgs(*m);
  a.lse = 0;
  EXPECT_ERROR(computeLaunchGeometry(*m, a),
               "the lse pointer is null but the kernel writes the LSE "
               "(with_lse)");
}

/// TMA takes positive multiples of 16 bytes as strides: a broadcast (stride
/// 0) K that the sm80 family reads is an error naming the stride for the
/// sm90a-wgmma family's tensor maps; a dimension of size 1 never steps its
/// stride, so any value passes there.
void tensorMapStrides() {
  Expected<KernelManifest> m = parseManifest(goodManifest());
  EXPECT(m.ok());
  if (!m.ok())
    return;
  LaunchArgs a = someArgs(*m);
  a.batch = 2;
  KernelParam k;
  k.name = "k_tmap";
  k.type = ParamType::TensorMap;
  k.tensor = "k";
  k.boxCols = 64;
  k.boxRows = 128;
  k.swizzle = 128;
  PackedParams::TensorMap out;
  LaunchArgs bad = a;
  bad.kStride[0] = 0;
  EXPECT(checkLaunchArgs(*m, bad).ok());
  EXPECT_ERROR(encodeTensorMap(*m, k, bad, out),
               "tensormap parameter 'k_tmap': k_stride_b = 0 elements (0 "
               "bytes) must be a positive multiple of 16 bytes: the "
               "sm90a-wgmma kernel loads k by TMA");
  bad = a;
  bad.kStride[2] = 36; // bf16: 72 bytes
  EXPECT_ERROR(encodeTensorMap(*m, k, bad, out),
               "k_stride_n = 36 elements (72 bytes) must be a positive "
               "multiple of 16 bytes");
  // Past the strides: only the driver (none or the fake) can fail.
  LaunchArgs one = a;
  one.batch = 1;
  one.kStride[0] = 3;
  Status s = encodeTensorMap(*m, k, one, out);
  EXPECT(s.ok() || s.message().find("stride") == std::string::npos);
}

void launchChecks() {
  Expected<KernelManifest> m = parseManifest(goodManifest());
  EXPECT(m.ok());
  if (!m.ok())
    return;
  LaunchArgs a = someArgs(*m);
  EXPECT(checkLaunchArgs(*m, a).ok());
  LaunchArgs bad = a;
  bad.o += 8;
  EXPECT_ERROR(checkLaunchArgs(*m, bad),
               "the o pointer (0x4008) must be 16-byte aligned");
  bad = a;
  bad.lse += 2;
  EXPECT_ERROR(checkLaunchArgs(*m, bad),
               "the lse pointer must be 4-byte aligned (float)");
  bad = a;
  bad.lseStride[1] = -4;
  EXPECT_ERROR(checkLaunchArgs(*m, bad),
               "lse strides must be non-negative (got 65536, -4)");
  bad = a;
  bad.vStride[1] = 100; // bf16: 200 bytes
  EXPECT_ERROR(checkLaunchArgs(*m, bad),
               "v_stride_h = 100 elements (200 bytes) must be a multiple of "
               "16 bytes");
  bad = a;
  bad.headsQ = -2;
  EXPECT_ERROR(checkLaunchArgs(*m, bad), "heads_q must not be negative");
  // An ALiBi kernel's slopes: present, f32-aligned, a non-negative stride.
  {
    KernelManifest alibi = *m;
    alibi.problem.alibi = true;
    LaunchArgs s = a;
    EXPECT_ERROR(checkLaunchArgs(alibi, s),
                 "the alibi_slopes pointer is null (the kernel reads it)");
    s.alibiSlopes = 0x9002;
    EXPECT_ERROR(checkLaunchArgs(alibi, s),
                 "the alibi_slopes pointer (0x9002) must be 4-byte aligned "
                 "(f32 slopes)");
    s.alibiSlopes = 0x9000;
    s.alibiSlopesStrideB = -8;
    EXPECT_ERROR(checkLaunchArgs(alibi, s),
                 "alibi_slopes_stride_b = -8 must be non-negative");
    s.alibiSlopesStrideB = 0;
    EXPECT(checkLaunchArgs(alibi, s).ok());
  }
  // A key_range kernel's ranges (the backward has no other check of them).
  {
    KernelManifest ranges = *m;
    ranges.problem.keyStarts = {0};
    ranges.problem.keyEnds = {1};
    LaunchArgs r = a;
    r.keyEnd = 0x9000;
    EXPECT_ERROR(checkLaunchArgs(ranges, r),
                 "the key_start pointer is null (the kernel reads it)");
    r.keyStart = 0x9100;
    EXPECT(checkLaunchArgs(ranges, r).ok());
  }
  // A stride over a dimension of size 1 is never used: any value is fine.
  LaunchArgs one = a;
  one.batch = 1;
  one.qStride[0] = 3;
  EXPECT(checkLaunchArgs(*m, one).ok());
  // Broadcast inputs (stride 0) are fine; overlapping output rows are not.
  LaunchArgs broadcast = a;
  broadcast.kStride[0] = 0;
  EXPECT(checkLaunchArgs(*m, broadcast).ok());
  bad = a;
  bad.oStride[2] = 0;
  EXPECT_ERROR(checkLaunchArgs(*m, bad),
               "o_stride_n = 0 is smaller than an output row (128 elements)");
  // Empty problems: nothing to check beyond the signs, nothing to launch.
  LaunchArgs empty = a;
  empty.batch = 0;
  empty.q = empty.k = empty.v = empty.o = empty.lse = 0;
  EXPECT(isEmptyLaunch(empty) && checkLaunchArgs(*m, empty).ok());
  empty = a;
  empty.seqQ = 0;
  empty.q = 3;
  EXPECT(isEmptyLaunch(empty) && checkLaunchArgs(*m, empty).ok());
  EXPECT(!isEmptyLaunch(a));
}

//===----------------------------------------------------------------------===//
// The host-side checker
//===----------------------------------------------------------------------===//

/// Runs the checker on `o`/`lse` derived from the exact reference by `edit`.
CheckReport checkWith(attn::AttentionProblem p, int64_t maxRows,
                      const std::function<void(std::vector<double> &,
                                               std::vector<double> &)> &edit) {
  std::mt19937_64 rng(7);
  const size_t qN = p.batch * p.headsQ * p.seqQ * p.headDim;
  const size_t kN = p.batch * p.headsKv * p.seqKv * p.headDim;
  const size_t vN = p.batch * p.headsKv * p.seqKv * p.vDim();
  HostTensor q = HostTensor::random(p.dtype, qN, 1.0, rng);
  HostTensor k = HostTensor::random(p.dtype, kN, 1.0, rng);
  HostTensor v = HostTensor::random(p.dtype, vN, 1.0, rng);
  auto decode = [](const HostTensor &t) {
    std::vector<double> d(t.size());
    for (size_t i = 0; i < d.size(); ++i)
      d[i] = t.get(i);
    return d;
  };
  std::vector<double> out, lse;
  attn::referenceAttention(p, decode(q), decode(k), decode(v), out, lse);
  edit(out, lse);
  HostTensor o = HostTensor::zeros(attn::DType::f32, out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    float f = static_cast<float>(out[i]);
    std::memcpy(&o.bytes[4 * i], &f, 4);
  }
  std::vector<float> l(lse.begin(), lse.end());
  CheckOptions co;
  co.maxRows = maxRows;
  co.threads = 2;
  return checkAttention(p, q, k, v, o, l, co);
}

void checker() {
  attn::AttentionProblem p;
  p.batch = 2;
  p.headsQ = 4;
  p.headsKv = 2;
  p.seqQ = 40;
  p.seqKv = 24; // causal with Nq > Nk: the first 16 rows see no key
  p.headDim = 16;
  p.causal = true;
  auto same = [](std::vector<double> &, std::vector<double> &) {};
  CheckReport r = checkWith(p, 0, same);
  EXPECT(r.ok && r.full && r.rows == 2 * 4 * 40);
  EXPECT(r.out.relErr < 1e-6 && r.lse.relErr < 1e-6);
  EXPECT(r.nonFiniteOut == 0 && r.badLse == 0);

  CheckReport sampled = checkWith(p, 10, same);
  EXPECT(sampled.ok && !sampled.full && sampled.rows >= 10 &&
         sampled.rows < 2 * 4 * 40);

  CheckReport poisoned =
      checkWith(p, 10, [](std::vector<double> &o, std::vector<double> &) {
        o[o.size() / 2] = std::nan("");
      });
  EXPECT(!poisoned.ok && poisoned.nonFiniteOut == 1);

  CheckReport zeros =
      checkWith(p, 0, [](std::vector<double> &o, std::vector<double> &l) {
        std::fill(o.begin(), o.end(), 0.0);
        std::fill(l.begin(), l.end(), -INFINITY);
      });
  EXPECT(!zeros.ok && zeros.out.relErr > 0.5 && zeros.badLse > 0);

  CheckReport masked =
      checkWith(p, 0, [](std::vector<double> &, std::vector<double> &l) {
        l[0] = 0.0; // row 0 sees no key: its LSE must be -inf
      });
  EXPECT(!masked.ok && masked.badLse == 1);

  CheckReport slightly =
      checkWith(p, 0, [](std::vector<double> &o, std::vector<double> &) {
        for (double &x : o)
          x *= 1.001;
      });
  EXPECT(!slightly.ok && slightly.out.relErr > 1e-5);
}

/// Forward FLOPs (DESIGN.md): 4·B·H·Nq·Nk·D, halved when causal with
/// Nq = Nk; a causal mask with Nq != Nk counts the pairs it keeps, which
/// differ between the two alignments.
void problemFlops() {
  attn::AttentionProblem p;
  p.batch = 2;
  p.headsQ = p.headsKv = 4;
  p.seqQ = p.seqKv = 256;
  p.headDim = 64;
  const double full = 4.0 * 2 * 4 * 256 * 256 * 64;
  EXPECT(p.forwardFlops() == full);
  p.causal = true;
  EXPECT(p.forwardFlops() == full / 2);
  // Nq = 128, Nk = 512: top-left keeps sum(i + 1) = 128·129/2 pairs per
  // head, bottom-right 128·384 more.
  p.seqQ = 128;
  p.seqKv = 512;
  const double perPair = 4.0 * 2 * 4 * 64;
  p.topLeft = true;
  EXPECT(p.forwardFlops() == perPair * (128.0 * 129 / 2));
  p.topLeft = false;
  EXPECT(p.forwardFlops() == perPair * (128.0 * 129 / 2 + 128.0 * 384));
}

/// The contract for a non-finite V (HiddenKeyLeaks.h): NaN is required
/// where the reference has it, allowed in rows that hide the key but share
/// its key block's tile, and an error anywhere else.
void hiddenKeyLeaks() {
  attn::AttentionProblem p;
  p.headsQ = 2;
  p.headsKv = 1;
  p.seqQ = p.seqKv = 64;
  p.headDim = 16;
  p.causal = true;
  using Span = std::pair<int64_t, int64_t>;
  const attn::KeyTiling t16{16, 16};
  EXPECT((attn::tiledKeySpan(p, 0, t16) == Span{0, 16}));
  EXPECT((attn::tiledKeySpan(p, 47, t16) == Span{0, 48}));
  EXPECT((attn::tiledKeySpan(p, 48, t16) == Span{0, 64}));
  EXPECT((attn::tiledKeySpan(p, 5, attn::KeyTiling{}) == Span{0, 64}));
  // A window (bottom-right, keys d(i) - 10 ... d(i), d(i) = i + 30): whole
  // key blocks, the last one clamped to Nk.
  attn::AttentionProblem w = p;
  w.seqQ = 40;
  w.seqKv = 70;
  w.windowLeft = 10;
  EXPECT((attn::tiledKeySpan(w, 0, t16) == Span{16, 48}));
  EXPECT((attn::tiledKeySpan(w, 39, t16) == Span{48, 70}));
  // A query block whose rows see no key visits no key block.
  attn::AttentionProblem empty = p;
  empty.seqKv = 24;
  EXPECT((attn::tiledKeySpan(empty, 3, t16) == Span{0, 0}));

  // NaN in V at key 60, column 3: rows 60-63 attend to it (NaN in the
  // reference); rows 48-59 hide it but their query block visits its key
  // block; rows 0-47 never load it.
  std::mt19937_64 rng(11);
  const size_t qN = p.headsQ * p.seqQ * p.headDim;
  const size_t vN = p.headsKv * p.seqKv * p.headDim;
  HostTensor q = HostTensor::random(attn::DType::f32, qN, 1.0, rng);
  HostTensor k = HostTensor::random(attn::DType::f32, vN, 1.0, rng);
  HostTensor v = HostTensor::random(attn::DType::f32, vN, 1.0, rng);
  const size_t badV = 60 * p.headDim + 3;
  const float nanF = std::nanf("");
  std::memcpy(&v.bytes[4 * badV], &nanF, 4);
  auto decode = [](const HostTensor &x) {
    std::vector<double> d(x.size());
    for (size_t i = 0; i < d.size(); ++i)
      d[i] = x.get(i);
    return d;
  };
  std::vector<double> ref, refLse;
  attn::referenceAttention(p, decode(q), decode(k), decode(v), ref, refLse);
  auto at = [&](int64_t h, int64_t i, int64_t x) {
    return (h * p.seqQ + i) * p.headDim + x;
  };
  EXPECT(std::isnan(ref[at(0, 60, 3)]) && !std::isnan(ref[at(0, 59, 3)]));
  auto run = [&](const std::function<void(std::vector<double> &)> &edit,
                 attn::KeyTiling tiling) {
    std::vector<double> out = ref;
    edit(out);
    HostTensor o = HostTensor::zeros(attn::DType::f32, out.size());
    for (size_t i = 0; i < out.size(); ++i) {
      float f = static_cast<float>(out[i]);
      std::memcpy(&o.bytes[4 * i], &f, 4);
    }
    std::vector<float> l(refLse.begin(), refLse.end());
    CheckOptions co;
    co.threads = 2;
    co.nonFiniteInputs = true;
    co.tiling = tiling;
    return checkAttention(p, q, k, v, o, l, co);
  };
  auto leakRows = [&](int64_t from, int64_t to) {
    return [=](std::vector<double> &o) {
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = from; i < to; ++i)
          o[at(h, i, 3)] = std::nan("");
    };
  };
  CheckReport exact = run([](std::vector<double> &) {}, t16);
  EXPECT(exact.ok && exact.out.hiddenKeyNaN == 0);
  CheckReport tile = run(leakRows(48, 60), t16);
  EXPECT(tile.ok && tile.out.hiddenKeyNaN == 2 * 12);
  // Row 47's query block never loads key 60: NaN there is a bug.
  CheckReport outside = run(leakRows(47, 60), t16);
  EXPECT(!outside.ok && outside.out.nonFinite == 2);
  // One tile (the reference lowering): every row may leak.
  CheckReport whole = run(leakRows(0, 60), attn::KeyTiling{});
  EXPECT(whole.ok && whole.out.hiddenKeyNaN == 2 * 60);
  // Only the column of the non-finite value.
  CheckReport column = run(
      [&](std::vector<double> &o) { o[at(0, 50, 4)] = std::nan(""); }, t16);
  EXPECT(!column.ok && column.out.nonFinite == 1);
  // NaN is required where the reference has it.
  CheckReport lost = run(
      [&](std::vector<double> &o) { o[at(1, 61, 3)] = 0.5; }, t16);
  EXPECT(!lost.ok && lost.out.nonFinite == 1);
  // A finite value where NaN is allowed must still be right.
  CheckReport wrong = run(
      [&](std::vector<double> &o) { o[at(0, 50, 3)] += 10.0; }, t16);
  EXPECT(!wrong.ok && wrong.out.relErr > 1e-3);
}

//===----------------------------------------------------------------------===//
// The CUDA driver
//===----------------------------------------------------------------------===//

void noDriver() {
  Expected<CudaDriver> d = CudaDriver::load("/nonexistent/libcuda.so.1");
  EXPECT_ERROR(d, "no CUDA driver: cannot load /nonexistent/libcuda.so.1");
  // A library that is not the driver: every missing entry point is named.
  Expected<CudaDriver> libc = CudaDriver::load("libc.so.6");
  EXPECT_ERROR(libc, "lacks entry points the runtime needs: cuInit");
  // Through the public entry point, as attn-launch and Python reach it.
  setenv("ATTN_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  EXPECT_ERROR(CudaDriver::get(), "no CUDA driver");
  // Loading a kernel reads its manifest first, then fails cleanly.
  char dir[] = "/tmp/attn-runtime-tests-XXXXXX";
  if (!mkdtemp(dir)) {
    EXPECT(false && "mkdtemp");
    return;
  }
  std::string path = std::string(dir) + "/manifest.json";
  FILE *f = std::fopen(path.c_str(), "w");
  std::string text = goodManifest();
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  EXPECT_ERROR(Kernel::load(dir), "loading " + std::string(dir) +
                                      ": no CUDA driver: cannot load");
  // A tensor map needs the driver to encode it.
  Expected<KernelManifest> m = parseManifest(sm90aManifest(sm90aMaps()));
  EXPECT(m.ok());
  if (m.ok())
    EXPECT_ERROR(packParams(*m, someArgs(*m)),
                 "tensormap parameter 'q_tmap': no CUDA driver");
  std::remove(path.c_str());
  rmdir(dir);
}

void cudaHeader() {
#ifdef ATTN_HAVE_CUDA_H
  // Our copies of the driver's enumerators must match the real header.
  static_assert(cu::kSuccess == CUDA_SUCCESS);
  static_assert(cu::kErrorNotFound == CUDA_ERROR_NOT_FOUND);
  static_assert(cu::kFuncAttrMaxThreadsPerBlock ==
                CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  static_assert(cu::kFuncAttrNumRegs == CU_FUNC_ATTRIBUTE_NUM_REGS);
  static_assert(cu::kFuncAttrMaxDynamicSharedSizeBytes ==
                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  static_assert(cu::kDevAttrMaxGridDimY == CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  static_assert(cu::kDevAttrMultiprocessorCount ==
                CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  static_assert(cu::kDevAttrL2CacheSize == CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  static_assert(cu::kDevAttrComputeCapabilityMajor ==
                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  static_assert(cu::kDevAttrComputeCapabilityMinor ==
                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  static_assert(cu::kDevAttrMaxSharedMemoryPerBlockOptin ==
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  static_assert(cu::kJitErrorLogBuffer == CU_JIT_ERROR_LOG_BUFFER);
  static_assert(cu::kJitErrorLogBufferSizeBytes ==
                CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
  static_assert(cu::kStreamNonBlocking == CU_STREAM_NON_BLOCKING);
  static_assert(sizeof(cu::DevicePtr) == sizeof(CUdeviceptr));
  static_assert(std::is_same_v<cu::Stream, CUstream>);
  static_assert(std::is_same_v<cu::Context, CUcontext>);
  std::printf("  (checked against <cuda.h> %d)\n", CUDA_VERSION);
#else
  std::printf("  (<cuda.h> not found at build time: nothing to compare)\n");
#endif
}

struct Test {
  const char *group, *name;
  void (*fn)();
};
const Test kTests[] = {
    {"json", "values", jsonValues},
    {"json", "strictness", jsonStrictness},
    {"manifest", "good", manifestGood},
    {"manifest", "missing-field", manifestMissingField},
    {"manifest", "wrong-type", manifestWrongType},
    {"manifest", "format-version", manifestFormat},
    {"manifest", "tensormap", manifestTensorMap},
    {"manifest", "abi", manifestParamsAreTheAbi},
    {"manifest", "file", manifestFile},
    {"grid", "policies", gridPolicies},
    {"grid", "launch-geometry", launchGeometry},
    {"params", "packing", packing},
    {"params", "launch-checks", launchChecks},
    {"tensormap", "strides", tensorMapStrides},
    {"params", "whole-messages", wholeMessages},
    {"check", "checker", checker},
    {"check", "hidden-key-leaks", hiddenKeyLeaks},
    {"problem", "flops", problemFlops},
    {"cuda-h", "enums", cudaHeader},
    // Last: it sets ATTN_LIBCUDA for the rest of the process.
    {"no-driver", "load", noDriver},
};
} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> groups(argv + 1, argv + argc);
  int ran = 0;
  for (const Test &t : kTests) {
    if (!groups.empty() &&
        std::find(groups.begin(), groups.end(), t.group) == groups.end())
      continue;
    current = std::string(t.group) + "/" + t.name;
    int before = failures;
    t.fn();
    std::printf("%s %s\n", failures == before ? "PASS" : "FAIL",
                current.c_str());
    ++ran;
  }
  if (ran == 0) {
    std::printf("no tests in the groups given\n");
    return 2;
  }
  std::printf("%d tests, %d failed checks\n", ran, failures);
  return failures ? 1 : 0;
}
