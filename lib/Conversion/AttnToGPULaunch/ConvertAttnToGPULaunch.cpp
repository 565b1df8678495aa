//===- ConvertAttnToGPULaunch.cpp - attn.attention -> gpu.launch_func -----===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The host side of convert-attn-to-gpu: each attn.attention that pass
// annotated with its kernel (attn.kernel) and launch data (attn.launch)
// becomes bufferized host code that computes the kernel's arguments from
// the buffers' run-time sizes and strides and launches it. The argument
// list is the kernel ABI's (attn/Runtime/KernelAbi.h), taken by name.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToGPULaunch/Passes.h"

#include "attn/Conversion/AttnToGPU/KernelSelection.h"
#include "attn/Conversion/AttnToGPULaunch/LaunchGridIR.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Runtime/KernelAbi.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPULAUNCH
#include "attn/Conversion/AttnToGPULaunch/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace rt = ::attn::runtime;

namespace {
/// Runtime functions the host code calls (lib/Runtime/MgpuWrappers.cpp).
constexpr StringLiteral kMakeTensorMapFn = "attnMakeTensorMap";
constexpr StringLiteral kNumSmsFn = "attnDeviceMultiprocessorCount";
/// A TMA descriptor: CUtensorMap is 128 bytes, 64-byte aligned.
constexpr int64_t kTensorMapBytes = 128;

/// One tensor operand as the kernel sees it: its buffer's address (aligned
/// pointer plus offset, in bytes) and its sizes and strides (in elements),
/// all `index` values read from the memref at run time.
struct BufferView {
  Value address;
  SmallVector<Value> sizes;
  SmallVector<Value> strides;
  Type elementType;
};

/// The store of `result` into a caller's buffer (destination-passing
/// style), when that is its only use, the buffer exists before `op` and its
/// innermost stride is 1: the kernel then writes the buffer directly.
bufferization::MaterializeInDestinationOp destinationOf(Value result,
                                                        Operation *op) {
  if (!result || !result.hasOneUse())
    return {};
  auto store = dyn_cast<bufferization::MaterializeInDestinationOp>(
      *result.getUsers().begin());
  if (!store || store.getSource() != result || !store.getWritable())
    return {};
  auto type = dyn_cast<MemRefType>(store.getDest().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type || failed(type.getStridesAndOffset(strides, offset)) ||
      strides.empty() || strides.back() != 1)
    return {};
  if (!DominanceInfo(op).properlyDominates(store.getDest(), op))
    return {};
  return store;
}

class HostLowering {
public:
  HostLowering(ModuleOp module, AttentionOp op)
      : module(module), op(op), b(op), loc(op.getLoc()) {}

  LogicalResult run();

private:
  LogicalResult readLaunch();
  LogicalResult checkKernelSymbol();
  Value toBuffer(Value tensor);
  BufferView view(Value memref);
  Value constIndex(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value toI32(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }
  Value toI64(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  }
  /// `address` (index) as a pointer in `addressSpace`.
  Value pointer(Value address, unsigned addressSpace) {
    Value i64 = toI64(address);
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), addressSpace), i64);
  }
  /// The view of ABI tensor name `t` (q, k, v, o, lse), or null.
  const BufferView *lookup(StringRef t) const;
  Value tensorMap(const BufferView &t, TensorMapAttr box);
  FailureOr<Value> argument(const rt::AbiParam &param);
  std::array<Value, 3> grid();
  func::FuncOp declareRuntimeFunction(StringRef name, FunctionType type);

  ModuleOp module;
  AttentionOp op;
  OpBuilder b;
  Location loc;
  SymbolRefAttr kernel;
  LaunchAttr launch; // verified: a forward's, see readLaunch
  BufferView q, k, v, o;
  std::optional<BufferView> lse, keyStart, keyEnd, alibiSlopes;
  Value lastSlot; // the last tensor-map stack slot, to keep them in order
};

LogicalResult HostLowering::readLaunch() {
  kernel = op->getAttrOfType<SymbolRefAttr>("attn.kernel");
  if (!kernel)
    return op.emitOpError() << "'attn.kernel' must be a symbol reference";
  launch = op->getAttrOfType<LaunchAttr>(kLaunchAttrName);
  if (!launch)
    return op.emitOpError()
           << "has 'attn.kernel' but no #attn.launch '" << kLaunchAttrName
           << "': run convert-attn-to-gpu to annotate it";
  if (!launch.getKernels().empty())
    return op.emitOpError() << "'" << kLaunchAttrName
                            << "' describes backward kernels, not a forward "
                               "attn.attention's";
  return success();
}

/// The kernel must be in the module: a gpu.module holding the function, or
/// the gpu.binary attn-compile-kernels made of it.
LogicalResult HostLowering::checkKernelSymbol() {
  if (kernel.getNestedReferences().size() != 1)
    return op.emitOpError()
           << "'attn.kernel' must be @module::@kernel, got " << kernel;
  Operation *container = module.lookupSymbol(kernel.getRootReference());
  if (isa_and_nonnull<gpu::BinaryOp>(container))
    return success();
  auto kernels = dyn_cast_or_null<gpu::GPUModuleOp>(container);
  if (!kernels || !kernels.lookupSymbol(kernel.getLeafReference()))
    return op.emitOpError() << "kernel " << kernel << " is not in the module";
  return success();
}

/// A read-only view of `tensor`'s buffer that accepts any strides as long as
/// the head dim is contiguous (the ABI's only layout requirement).
Value HostLowering::toBuffer(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  strides.back() = 1;
  auto layout =
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides);
  auto memrefType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  return bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                           /*read_only=*/b.getUnitAttr());
}

BufferView HostLowering::view(Value memref) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  BufferView view;
  view.sizes.assign(meta.getSizes().begin(), meta.getSizes().end());
  view.strides.assign(meta.getStrides().begin(), meta.getStrides().end());
  view.elementType = cast<MemRefType>(memref.getType()).getElementType();
  Value aligned =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value offsetBytes = arith::MulIOp::create(
      b, loc, meta.getOffset(),
      constIndex(view.elementType.getIntOrFloatBitWidth() / 8));
  view.address = arith::AddIOp::create(b, loc, aligned, offsetBytes);
  return view;
}

func::FuncOp HostLowering::declareRuntimeFunction(StringRef name,
                                                  FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

const BufferView *HostLowering::lookup(StringRef t) const {
  if (t == "q")
    return &q;
  if (t == "k")
    return &k;
  if (t == "v")
    return &v;
  if (t == "o")
    return &o;
  if (t == "lse" && lse)
    return &*lse;
  if (t == "key_start" && keyStart)
    return &*keyStart;
  if (t == "key_end" && keyEnd)
    return &*keyEnd;
  if (t == "alibi_slopes" && alibiSlopes)
    return &*alibiSlopes;
  return nullptr;
}

/// A TMA descriptor of `t`, encoded by the runtime into a stack slot and
/// loaded as the 128-byte value the kernel's byval parameter copies.
Value HostLowering::tensorMap(const BufferView &t, TensorMapAttr box) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  // (map, base, element bytes, bf16?, dims {D, N, H, B}, strides {b, h, n}
  // in elements, box {cols, rows}, swizzle bytes)
  SmallVector<Type> argTypes = {ptr, ptr, i32, i32};
  argTypes.append(4 + 3 + 2, i64);
  argTypes.push_back(i32);
  func::FuncOp fn = declareRuntimeFunction(
      kMakeTensorMapFn, FunctionType::get(ctx, argTypes, {}));

  auto mapType = LLVM::LLVMArrayType::get(b.getI8Type(), kTensorMapBytes);
  // The stack slot at the start of the enclosing function (allocation
  // scope), so that a launch in a loop does not grow the stack.
  Value slot;
  {
    OpBuilder::InsertionGuard guard(b);
    if (lastSlot)
      b.setInsertionPointAfter(lastSlot.getDefiningOp());
    else if (Operation *scope =
                 op->getParentWithTrait<OpTrait::AutomaticAllocationScope>();
             scope && scope->getNumRegions() > 0 &&
             !scope->getRegion(0).empty())
      b.setInsertionPointToStart(&scope->getRegion(0).front());
    Value one = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
    slot = LLVM::AllocaOp::create(b, loc, ptr, mapType, one,
                                  /*alignment=*/64);
    lastSlot = slot;
  }
  auto i32c = [&](int64_t x) {
    return arith::ConstantIntOp::create(b, loc, i32, x).getResult();
  };
  auto i64c = [&](int64_t x) {
    return arith::ConstantIntOp::create(b, loc, i64, x).getResult();
  };
  SmallVector<Value> args = {slot, pointer(t.address, 0),
                             i32c(t.elementType.getIntOrFloatBitWidth() / 8),
                             i32c(t.elementType.isBF16() ? 1 : 0)};
  for (int i = 3; i >= 0; --i)
    args.push_back(toI64(t.sizes[i]));
  for (int i = 0; i < 3; ++i)
    args.push_back(toI64(t.strides[i]));
  args.push_back(i64c(box.getBoxCols()));
  args.push_back(i64c(box.getBoxRows()));
  // 128-byte swizzle: every attn TMA box column is one 128-byte panel
  // (docs/kernel-abi.md).
  args.push_back(i32c(128));
  func::CallOp::create(b, loc, fn, args);
  return LLVM::LoadOp::create(b, loc, mapType, slot, /*alignment=*/64)
      .getResult();
}

/// The value of one kernel parameter, by its ABI name.
FailureOr<Value> HostLowering::argument(const rt::AbiParam &param) {
  StringRef name = param.name;
  switch (param.type) {
  case rt::ParamType::Ptr:
    if (name == "lse" && !lse) // ignored without with_lse
      return LLVM::ZeroOp::create(b, loc,
                                  LLVM::LLVMPointerType::get(b.getContext(), 1))
          .getResult();
    if (const BufferView *t = lookup(name))
      return pointer(t->address, 1);
    break;
  case rt::ParamType::I32:
    if (name == "seq_q")
      return toI32(q.sizes[2]);
    if (name == "seq_kv")
      return toI32(k.sizes[2]);
    if (name == "heads_q")
      return toI32(q.sizes[1]);
    if (name == "heads_kv")
      return toI32(k.sizes[1]);
    break;
  case rt::ParamType::F32:
    // The op's scale, passed at launch: the kernel serves every scale (a
    // run-time operand as it is, else a constant).
    if (name == "softmax_scale")
      return op.buildScale(b, loc);
    break;
  case rt::ParamType::I64: {
    // ALiBi's slopes [Hq] (every batch entry: stride 0) or [B, Hq].
    if (name == "alibi_slopes_stride_b" && alibiSlopes)
      return alibiSlopes->strides.size() == 2
                 ? toI64(alibiSlopes->strides[0])
                 : arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0)
                       .getResult();
    // <tensor>_stride_<b|h|n>
    auto [t, dim] = name.rsplit("_stride_");
    int index = llvm::StringSwitch<int>(dim)
                    .Case("b", 0)
                    .Case("h", 1)
                    .Case("n", 2)
                    .Default(-1);
    if (t == "lse" && !lse && index >= 0)
      return arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0)
          .getResult();
    if (const BufferView *view = lookup(t);
        view && index >= 0 &&
        index < static_cast<int>(view->strides.size()) - (t == "lse" ? 0 : 1))
      return toI64(view->strides[index]);
    break;
  }
  case rt::ParamType::TensorMap: {
    auto maps = launch.getTensorMaps();
    const auto *box = llvm::find_if(
        maps, [&](TensorMapAttr m) { return m.getName() == name; });
    if (box == maps.end())
      return op.emitOpError() << "'" << kLaunchAttrName
                              << "' has no tensor map '" << name << "'";
    if (const BufferView *t = lookup(param.tensor))
      return tensorMap(*t, *box);
    break;
  }
  }
  // What the ABI asks of this op (a bias, ...) that the host side cannot
  // give the kernel yet.
  return op.emitOpError() << "cannot be lowered to a launch yet: no host "
                             "value for the kernel's parameter '"
                          << name << "' (" << rt::paramTypeName(param.type)
                          << ")";
}

/// docs/kernel-abi.md "Launch": the grid of the launch's policy
/// (LaunchGridIR.h); a persistent grid asks the runtime for the SM count.
std::array<Value, 3> HostLowering::grid() {
  auto numSms = [&]() -> Value {
    func::FuncOp fn = declareRuntimeFunction(
        kNumSmsFn, FunctionType::get(b.getContext(), {}, {b.getI32Type()}));
    return arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(),
        func::CallOp::create(b, loc, fn, ValueRange{}).getResult(0));
  };
  GridSizeValues sizes{q.sizes[0], q.sizes[1], k.sizes[1],
                       q.sizes[2], k.sizes[2], numSms};
  return buildLaunchGrid(b, loc, launch.getGrid(), sizes);
}

LogicalResult HostLowering::run() {
  if (failed(readLaunch()) || failed(checkKernelSymbol()))
    return failure();
  // Packed sequences change the meaning of every size and stride.
  if (op.isVarlen())
    return op.emitOpError()
           << "with cu_seqlens (variable length) cannot be lowered to a "
              "launch yet: the host lowering handles dense batches only";
  // Dense: the verifier guarantees rank-4 tensors and static head dims.
  RankedTensorType outType = op.getOutputType();

  rt::KernelAbi abi;
  abi.tensorMaps = launch.getFamily() == rt::kTensorMapFamily;
  abi.bias = static_cast<bool>(op.getBias());
  abi.keyRange = static_cast<bool>(op.getKeyStart());
  abi.alibi = static_cast<bool>(op.getAlibiSlopes());

  q = view(toBuffer(op.getQuery()));
  k = view(toBuffer(op.getKey()));
  v = view(toBuffer(op.getValue()));
  if (abi.keyRange) {
    keyStart = view(toBuffer(op.getKeyStart()));
    keyEnd = view(toBuffer(op.getKeyEnd()));
  }
  if (abi.alibi)
    alibiSlopes = view(toBuffer(op.getAlibiSlopes()));
  // One stream for the allocations and the launch (upstream gpu-to-llvm
  // lowers gpu.alloc only on a stream): gpu.wait async creates it, the
  // final gpu.wait synchronises and destroys it.
  Type tokenType = gpu::AsyncTokenType::get(b.getContext());
  Value token =
      gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  // O [B, Hq, Nq, Dv] and LSE [B, Hq, Nq]: Q's leading sizes.
  auto allocate = [&](RankedTensorType type) {
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        dynamicSizes.push_back(q.sizes[i]);
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    auto alloc =
        gpu::AllocOp::create(b, loc, memrefType, tokenType, ValueRange{token},
                             dynamicSizes, ValueRange{}, UnitAttr());
    token = alloc.getAsyncToken();
    return alloc.getMemref();
  };
  // Results stored into a caller's buffer are written there; the others
  // get a new device buffer.
  auto outStore = destinationOf(op.getOutput(), op);
  Value outBuffer = outStore ? outStore.getDest() : allocate(outType);
  o = view(outBuffer);
  Value lseBuffer;
  bufferization::MaterializeInDestinationOp lseStore;
  if (Value lseResult = op.getLse()) {
    lseStore = destinationOf(lseResult, op);
    lseBuffer = lseStore
                    ? lseStore.getDest()
                    : allocate(cast<RankedTensorType>(lseResult.getType()));
    lse = view(lseBuffer);
  }

  SmallVector<Value> operands;
  for (const rt::AbiParam &param : abi.params()) {
    FailureOr<Value> value = argument(param);
    if (failed(value))
      return failure();
    operands.push_back(*value);
  }
  auto [gridX, gridY, gridZ] = grid();
  Value one = constIndex(1);
  Value smem = arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                            launch.getDynamicSharedMemory());
  auto launchOp =
      gpu::LaunchFuncOp::create(b, loc, kernel, {gridX, gridY, gridZ},
                                {constIndex(launch.getThreads()), one, one},
                                smem, operands, tokenType, ValueRange{token});
  gpu::WaitOp::create(b, loc, Type(), ValueRange{launchOp.getAsyncToken()});

  auto replace = [&](Value result, Value buffer,
                     bufferization::MaterializeInDestinationOp store) {
    if (store) // the kernel wrote the destination
      store->erase();
    else
      result.replaceAllUsesWith(bufferization::ToTensorOp::create(
          b, loc, result.getType(), buffer, /*restrict=*/true));
  };
  replace(op.getOutput(), outBuffer, outStore);
  if (lseBuffer)
    replace(op.getLse(), lseBuffer, lseStore);
  op->erase();
  return success();
}

struct ConvertAttnToGPULaunchPass
    : mlir::attn::impl::ConvertAttnToGPULaunchBase<ConvertAttnToGPULaunchPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) {
      if (op->hasAttr("attn.kernel"))
        ops.push_back(op);
    });
    bool failedAny = false;
    // The backward's three launches and workspace are not lowered yet.
    module.walk([&](AttentionGradOp op) {
      if (!op->hasAttr("attn.kernel"))
        return;
      op.emitOpError() << "cannot be lowered to a launch yet: the host "
                          "lowering handles the forward attn.attention only";
      failedAny = true;
    });
    for (AttentionOp op : ops)
      if (failed(HostLowering(module, op).run()))
        failedAny = true;
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
