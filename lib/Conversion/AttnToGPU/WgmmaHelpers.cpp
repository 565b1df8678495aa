//===- WgmmaHelpers.cpp - Hopper (sm_90a) building blocks -----------------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#include "WgmmaHelpers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <string>

using namespace mlir;
using namespace mlir::attn::nvvm;

namespace {
/// Inline PTX with side effects (kept in program order with the others).
Operation *asmOp(KernelBuilder &kb, TypeRange results, ValueRange operands,
                 StringRef code, StringRef constraints) {
  OpBuilder &b = kb.builder();
  Type resultType;
  if (results.size() == 1)
    resultType = results.front();
  else if (results.size() > 1)
    resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                  SmallVector<Type>(results));
  return LLVM::InlineAsmOp::create(
      b, kb.location(), resultType ? TypeRange(resultType) : TypeRange(),
      operands, code, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr(), ArrayAttr());
}

SmallVector<Value> unpack(KernelBuilder &kb, Operation *op, size_t count) {
  SmallVector<Value> values;
  if (count == 1) {
    values.push_back(op->getResult(0));
    return values;
  }
  for (size_t i = 0; i < count; ++i)
    values.push_back(LLVM::ExtractValueOp::create(kb.builder(), kb.location(),
                                                  op->getResult(0), i));
  return values;
}

/// "=f,=f,...,0,1,..." for `n` f32 registers read and written in place,
/// followed by `extra` more input constraints.
std::string tiedConstraints(size_t n, StringRef extra) {
  std::string c;
  for (size_t i = 0; i < n; ++i)
    c += i ? ",=f" : "=f";
  for (size_t i = 0; i < n; ++i)
    c += "," + std::to_string(i);
  if (!extra.empty())
    c += ("," + extra).str();
  return c;
}

/// Registers `values` passed through an asm whose text is `code`.
SmallVector<Value> throughAsm(KernelBuilder &kb, StringRef code,
                              ValueRange values) {
  if (values.empty()) {
    asmOp(kb, {}, {}, code, "");
    return {};
  }
  // Only f32 registers are ever threaded (accumulators) besides packed i32
  // A fragments: both as 32-bit registers ("f" / "r").
  std::string c;
  for (size_t i = 0; i < values.size(); ++i)
    c += std::string(i ? "," : "") +
         (values[i].getType().isF32() ? "=f" : "=r");
  for (size_t i = 0; i < values.size(); ++i)
    c += "," + std::to_string(i);
  Operation *op = asmOp(kb, TypeRange(values), values, code, c);
  return unpack(kb, op, values.size());
}

std::string typeName(Type t) { return t.isBF16() ? "bf16" : "f16"; }

SmallVector<Value> wgmma(KernelBuilder &kb, Type elementType, int64_t n,
                         ArrayRef<Value> aRegs, Value descA, Value descB,
                         bool transposeA, bool transposeB, ValueRange acc,
                         bool accumulate) {
  size_t regs = static_cast<size_t>(n / 2);
  assert(acc.size() == regs && "m64nN f32 accumulators: N/2 per thread");
  std::string code = "{\n.reg .pred p;\nsetp.ne.b32 p, " +
                     std::to_string(accumulate ? 1 : 0) +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + "k16.f32." + typeName(elementType) +
                     "." + typeName(elementType) + " {";
  for (size_t i = 0; i < regs; ++i)
    code += (i ? ", $" : "$") + std::to_string(i);
  code += "}, ";
  // Operands: the N/2 outputs, the N/2 accumulators tied to them, then A
  // and B.
  size_t next = 2 * regs;
  SmallVector<Value> operands(acc.begin(), acc.end());
  std::string extra;
  if (descA) {
    code += "$" + std::to_string(next++) + ", ";
    operands.push_back(descA);
    extra = "l";
  } else {
    code += "{";
    for (int i = 0; i < 4; ++i) {
      code += (i ? ", $" : "$") + std::to_string(next++);
      operands.push_back(aRegs[i]);
      extra += i ? ",r" : "r";
    }
    code += "}, ";
  }
  code += "$" + std::to_string(next++) + ", p, 1, 1";
  operands.push_back(descB);
  extra += ",l";
  // The A transpose flag exists only for A in shared memory (K-major: 0).
  if (descA)
    code += transposeA ? ", 1" : ", 0";
  code += transposeB ? ", 1;\n}" : ", 0;\n}";
  Operation *op = asmOp(kb, SmallVector<Type>(regs, kb.builder().getF32Type()),
                        operands, code, tiedConstraints(regs, extra));
  return unpack(kb, op, regs);
}
} // namespace

Value mlir::attn::nvvm::sharedAddress(KernelBuilder &kb, Value sharedPtr) {
  return LLVM::PtrToIntOp::create(kb.builder(), kb.location(),
                                  kb.builder().getI32Type(), sharedPtr);
}

void mlir::attn::nvvm::mbarrierInit(KernelBuilder &kb, Value barrier,
                                    int64_t count) {
  asmOp(kb, {}, {sharedAddress(kb, barrier), kb.i32(count)},
        "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r");
}

void mlir::attn::nvvm::mbarrierInitFence(KernelBuilder &kb) {
  asmOp(kb, {}, {},
        "fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;",
        "");
}

void mlir::attn::nvvm::mbarrierArriveExpectTx(KernelBuilder &kb, Value barrier,
                                              int64_t bytes) {
  asmOp(kb, {}, {sharedAddress(kb, barrier), kb.i32(bytes)},
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r");
}

void mlir::attn::nvvm::mbarrierArrive(KernelBuilder &kb, Value barrier) {
  asmOp(kb, {}, {sharedAddress(kb, barrier)},
        "mbarrier.arrive.shared::cta.b64 _, [$0];", "r");
}

void mlir::attn::nvvm::mbarrierWait(KernelBuilder &kb, Value barrier,
                                    Value parity) {
  // Labels inside a { } block are local to it, so the asm can repeat.
  asmOp(kb, {}, {sharedAddress(kb, barrier), parity},
        "{\n.reg .pred done;\nwait_again:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
        "@!done bra wait_again;\n}",
        "r,r");
}

void mlir::attn::nvvm::tmaLoad4d(KernelBuilder &kb, Value sharedDst,
                                 Value tensorMap, ArrayRef<Value> coords,
                                 Value barrier) {
  assert(coords.size() == 4 && "4-D tensor maps");
  SmallVector<Value> operands{sharedAddress(kb, sharedDst), tensorMap};
  operands.append(coords.begin(), coords.end());
  operands.push_back(sharedAddress(kb, barrier));
  asmOp(kb, {}, operands,
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::"
        "complete_tx::bytes [$0], [$1, {$2, $3, $4, $5}], [$6];",
        "r,l,r,r,r,r,r");
}

void mlir::attn::nvvm::setMaxRegisters(KernelBuilder &kb, int64_t count,
                                       bool increase) {
  NVVM::SetMaxRegisterOp::create(
      kb.builder(), kb.location(), static_cast<int32_t>(count),
      increase ? NVVM::SetMaxRegisterAction::increase
               : NVVM::SetMaxRegisterAction::decrease);
}

void mlir::attn::nvvm::namedBarrierSync(KernelBuilder &kb, Value id,
                                        int64_t threads) {
  asmOp(kb, {}, {id, kb.i32(threads)}, "bar.sync $0, $1;", "r,r");
}

void mlir::attn::nvvm::namedBarrierArrive(KernelBuilder &kb, Value id,
                                          int64_t threads) {
  asmOp(kb, {}, {id, kb.i32(threads)}, "bar.arrive $0, $1;", "r,r");
}

Value mlir::attn::nvvm::wgmmaDescriptor(KernelBuilder &kb, Value sharedTile,
                                        int64_t leadingBytes,
                                        int64_t strideBytes) {
  // Bits 0-13: start address >> 4; 16-29: leading byte offset >> 4;
  // 32-45: stride byte offset >> 4; 62-63: 1 = 128-byte swizzle.
  uint64_t fixed = (static_cast<uint64_t>((leadingBytes >> 4) & 0x3fff) << 16) |
                   (static_cast<uint64_t>((strideBytes >> 4) & 0x3fff) << 32) |
                   (uint64_t{1} << 62);
  Value addr = kb.zext64(
      kb.andi(kb.lshr(sharedAddress(kb, sharedTile), 4), 0x3fff));
  return arith::OrIOp::create(kb.builder(), kb.location(), addr,
                              kb.i64(static_cast<int64_t>(fixed)));
}

Value mlir::attn::nvvm::wgmmaDescriptorAdvance(KernelBuilder &kb, Value desc,
                                               int64_t bytes) {
  if (bytes == 0)
    return desc;
  return kb.add(desc, kb.i64(bytes >> 4));
}

SmallVector<Value> mlir::attn::nvvm::wgmmaFence(KernelBuilder &kb,
                                                ValueRange values) {
  return throughAsm(kb, "wgmma.fence.sync.aligned;", values);
}

void mlir::attn::nvvm::wgmmaCommitGroup(KernelBuilder &kb) {
  asmOp(kb, {}, {}, "wgmma.commit_group.sync.aligned;", "");
}

SmallVector<Value> mlir::attn::nvvm::wgmmaWaitGroup(KernelBuilder &kb,
                                                    int64_t pending,
                                                    ValueRange values) {
  return throughAsm(kb,
                    "wgmma.wait_group.sync.aligned " +
                        std::to_string(pending) + ";",
                    values);
}

SmallVector<Value> mlir::attn::nvvm::wgmmaSS(KernelBuilder &kb,
                                             Type elementType, int64_t n,
                                             Value descA, Value descB,
                                             bool transposeB, ValueRange acc,
                                             bool accumulate, bool transposeA) {
  return wgmma(kb, elementType, n, {}, descA, descB, transposeA, transposeB,
               acc, accumulate);
}

SmallVector<Value> mlir::attn::nvvm::wgmmaRS(KernelBuilder &kb,
                                             Type elementType, int64_t n,
                                             ArrayRef<Value> aRegs, Value descB,
                                             bool transposeB, ValueRange acc,
                                             bool accumulate) {
  return wgmma(kb, elementType, n, aRegs, Value(), descB,
               /*transposeA=*/false, transposeB, acc, accumulate);
}

LLVM::LLVMFuncOp mlir::attn::nvvm::createHopperKernelFunc(
    OpBuilder &builder, Location loc, StringRef name, ArrayRef<Type> params,
    unsigned firstTensorMap, unsigned numTensorMaps, int64_t threads) {
  MLIRContext *ctx = builder.getContext();
  auto func = LLVM::LLVMFuncOp::create(
      builder, loc, name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  for (unsigned i = firstTensorMap; i < firstTensorMap + numTensorMaps; ++i) {
    func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(LLVM::LLVMArrayType::get(
                        builder.getI8Type(), 128)));
    func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                    builder.getI64IntegerAttr(64));
    func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                    builder.getUnitAttr());
  }
  func->setAttr("nvvm.maxntid", builder.getDenseI32ArrayAttr(
                                    {static_cast<int32_t>(threads), 1, 1}));
  func->setAttr("nvvm.minctasm", builder.getI32IntegerAttr(1));
  func.addEntryBlock(builder);
  return func;
}
