//===- KernelAbi.cpp - the generated kernels' parameter lists -------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/KernelAbi.h"

using namespace attn::runtime;

const char *attn::runtime::paramTypeName(ParamType t) {
  switch (t) {
  case ParamType::Ptr:
    return "ptr";
  case ParamType::I32:
    return "i32";
  case ParamType::I64:
    return "i64";
  case ParamType::F32:
    return "f32";
  case ParamType::TensorMap:
    return "tensormap";
  }
  return "?";
}

std::vector<AbiParam> KernelAbi::params() const {
  std::vector<AbiParam> ps;
  auto add = [&](std::initializer_list<const char *> names, ParamType t) {
    for (const char *n : names)
      ps.push_back({n, t, ""});
  };
  auto strides = [&](std::initializer_list<const char *> tensors) {
    for (const char *t : tensors)
      for (const char *d : {"b", "h", "n"})
        ps.push_back({std::string(t) + "_stride_" + d, ParamType::I64, ""});
  };
  auto maps = [&](std::initializer_list<const char *> tensors) {
    for (const char *t : tensors)
      ps.push_back({std::string(t) + "_tmap", ParamType::TensorMap, t});
  };
  // ALiBi's f32 slopes and their batch stride (0: one [Hq] for all).
  auto alibiParams = [&] {
    add({"alibi_slopes"}, ParamType::Ptr);
    add({"alibi_slopes_stride_b"}, ParamType::I64);
  };
  const auto sizes = {"seq_q", "seq_kv", "heads_q", "heads_kv"};
  if (backward) {
    add({"q", "k", "v", "o", "do", "lse", "dq", "dk", "dv", "workspace"},
        ParamType::Ptr);
    add(sizes, ParamType::I32);
    add({"softmax_scale"}, ParamType::F32);
    strides({"q", "k", "v", "o", "do", "dq", "dk", "dv"});
    add({"lse_stride_b", "lse_stride_h"}, ParamType::I64);
    if (keyRange)
      add({"key_start", "key_end"}, ParamType::Ptr);
    if (alibi)
      alibiParams();
    if (tensorMaps)
      maps({"q", "k", "v", "do"});
    return ps;
  }
  add({"q", "k", "v", "o", "lse"}, ParamType::Ptr);
  add(sizes, ParamType::I32);
  add({"softmax_scale"}, ParamType::F32);
  strides({"q", "k", "v", "o"});
  add({"lse_stride_b", "lse_stride_h"}, ParamType::I64);
  if (bias) {
    add({"bias"}, ParamType::Ptr);
    add({"bias_stride_b", "bias_stride_h", "bias_stride_n"}, ParamType::I64);
  }
  if (varlen)
    add({"cu_seqlens_q", "cu_seqlens_kv"}, ParamType::Ptr);
  if (keyRange)
    add({"key_start", "key_end"}, ParamType::Ptr);
  if (alibi)
    alibiParams();
  if (tensorMaps)
    maps({"q", "k", "v"});
  return ps;
}

std::string KernelAbi::describe() const {
  std::string s = backward ? "backward" : "forward";
  s += tensorMaps ? " sm90a-wgmma kernel" : " kernel";
  std::vector<const char *> with;
  if (bias)
    with.push_back("a bias");
  if (varlen)
    with.push_back("variable length");
  if (keyRange)
    with.push_back("key ranges");
  if (alibi)
    with.push_back("ALiBi");
  for (size_t i = 0; i < with.size(); ++i)
    s += std::string(i == 0 ? " with " : (i + 1 == with.size() ? " and " : ", ")) +
         with[i];
  return s;
}
