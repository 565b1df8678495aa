//===- HostRuntime.cpp - runtime functions of JIT-compiled host code ------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/HostRuntime.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"

#include <cstring>
#include <vector>

using namespace mlir;

namespace {

/// memrefCopy's contract (mlir/ExecutionEngine/CRunnerUtils.h): copies the
/// elements of `src` into `dst`, both of `src`'s shape, any strides.
void copyStridedMemref(int64_t elemSize, ::UnrankedMemRefType<char> *srcArg,
                       ::UnrankedMemRefType<char> *dstArg) {
  DynamicMemRefType<char> src(*srcArg), dst(*dstArg);
  int64_t rank = src.rank;
  for (int64_t d = 0; d < rank; ++d)
    if (src.sizes[d] == 0)
      return;
  char *from = src.data + src.offset * elemSize;
  char *to = dst.data + dst.offset * elemSize;
  // An odometer over the indices, innermost fastest.
  std::vector<int64_t> index(rank, 0);
  int64_t read = 0, write = 0;
  for (;;) {
    std::memcpy(to + write, from + read, elemSize);
    int64_t d = rank - 1;
    for (; d >= 0; --d) {
      read += src.strides[d] * elemSize;
      write += dst.strides[d] * elemSize;
      if (++index[d] != src.sizes[d])
        break;
      read -= src.sizes[d] * src.strides[d] * elemSize;
      write -= src.sizes[d] * dst.strides[d] * elemSize;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

} // namespace

void mlir::attn::registerHostRuntimeSymbols(ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("memrefCopy")] = {
        llvm::orc::ExecutorAddr::fromPtr(&copyStridedMemref),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
}
