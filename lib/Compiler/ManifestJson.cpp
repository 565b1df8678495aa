//===- ManifestJson.cpp - pieces shared by the compilers' JSON files ------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "ManifestJson.h"
#include "attn/Execution/AttentionModule.h"

using namespace mlir;

void mlir::attn::setKeyRangesOf(Operation *op, ::attn::AttentionProblem &p) {
  auto ranges = [&](StringRef name, int64_t fill) {
    if (auto a = op->getAttrOfType<DenseI64ArrayAttr>(name))
      return std::vector<int64_t>(a.asArrayRef().begin(),
                                  a.asArrayRef().end());
    return std::vector<int64_t>(p.batch, fill);
  };
  p.keyStarts = ranges(kKeyStartsAttr, 0);
  p.keyEnds = ranges(kKeyEndsAttr, p.seqKv);
}

::attn::AttentionProblem mlir::attn::problemShapeOf(RankedTensorType q,
                                                    RankedTensorType k,
                                                    int64_t headDim,
                                                    int64_t valueHeadDim) {
  ::attn::AttentionProblem p;
  auto dimOr0 = [](int64_t d) { return ShapedType::isDynamic(d) ? 0 : d; };
  p.batch = dimOr0(q.getDimSize(0));
  p.headsQ = dimOr0(q.getDimSize(1));
  p.headsKv = dimOr0(k.getDimSize(1));
  p.seqQ = dimOr0(q.getDimSize(2));
  p.seqKv = dimOr0(k.getDimSize(2));
  p.headDim = headDim;
  p.valueHeadDim = valueHeadDim;
  Type elt = q.getElementType();
  p.dtype = elt.isBF16()  ? ::attn::DType::bf16
            : elt.isF16() ? ::attn::DType::f16
                          : ::attn::DType::f32;
  return p;
}

void mlir::attn::writeProblemShape(llvm::json::OStream &j,
                                   const ::attn::AttentionProblem &problem) {
  j.attribute("batch", problem.batch);
  j.attribute("heads_q", problem.headsQ);
  j.attribute("heads_kv", problem.headsKv);
  j.attribute("seq_q", problem.seqQ);
  j.attribute("seq_kv", problem.seqKv);
  j.attribute("head_dim", problem.headDim);
  j.attribute("value_head_dim", problem.vDim());
  j.attribute("dtype", ::attn::dtypeName(problem.dtype));
  j.attribute("causal", problem.causal);
  if (problem.topLeft)
    j.attribute("mask_align", "top_left");
  if (problem.windowLeft >= 0 || problem.windowRight >= 0) {
    j.attribute("window_left", problem.windowLeft);
    j.attribute("window_right", problem.windowRight);
  }
  if (problem.softcap > 0)
    j.attribute("softcap", problem.softcap);
  // ALiBi: the kernels read the slopes at launch (alibi_slopes).
  if (problem.alibi)
    j.attribute("alibi", true);
  // key_range: the ranges the tools built the op for (attn-launch --check).
  if (problem.hasKeyRanges()) {
    j.attributeArray("key_starts", [&] {
      for (int64_t x : problem.keyStarts)
        j.value(x);
    });
    j.attributeArray("key_ends", [&] {
      for (int64_t x : problem.keyEnds)
        j.value(x);
    });
  }
}

void mlir::attn::writeManifestHeader(llvm::json::OStream &j,
                                     llvm::StringRef direction,
                                     llvm::StringRef entry,
                                     llvm::StringRef family,
                                     llvm::StringRef chip, bool hasCubin) {
  j.attribute("format", "attn-kernel/1");
  if (!direction.empty())
    j.attribute("direction", direction);
  j.attribute("entry", entry);
  j.attribute("family", family);
  j.attribute("chip", chip);
  j.attribute("ptx", "kernel.ptx");
  if (hasCubin)
    j.attribute("cubin", "kernel.cubin");
}

void mlir::attn::writeManifestParams(
    llvm::json::OStream &j, ::attn::runtime::KernelAbi abi,
    llvm::ArrayRef<CompiledKernel::TensorMapParam> maps) {
  abi.tensorMaps = false;
  j.attributeArray("params", [&] {
    for (const ::attn::runtime::AbiParam &p : abi.params())
      j.object([&] {
        j.attribute("name", p.name);
        j.attribute("type", ::attn::runtime::paramTypeName(p.type));
      });
    // 128-byte TMA descriptors the runtime encodes.
    for (const CompiledKernel::TensorMapParam &m : maps)
      j.object([&] {
        j.attribute("name", m.name);
        j.attribute("type", "tensormap");
        j.attribute("tensor", m.tensor);
        j.attributeArray("box", [&] {
          j.value(m.boxCols);
          j.value(m.boxRows);
        });
        j.attribute("swizzle", 128);
      });
  });
}

void mlir::attn::writeManifestGrid(llvm::json::OStream &j,
                                   const ::attn::runtime::GridSpec &grid) {
  j.attributeObject("grid", [&] {
    j.attribute("policy", ::attn::runtime::gridPolicyName(grid.policy));
    j.attribute("block_rows", grid.blockRows);
  });
}

std::vector<mlir::attn::CompiledKernel::TensorMapParam>
mlir::attn::tensorMapParams(LaunchAttr launch) {
  std::vector<CompiledKernel::TensorMapParam> out;
  for (TensorMapAttr m : launch.getTensorMaps())
    out.push_back({m.getName().str(), m.getTensor().str(), m.getBoxCols(),
                   m.getBoxRows()});
  return out;
}
