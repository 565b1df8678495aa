//===- FlashBackwardKernel.cpp - the sm80-family backward kernels ---------===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Emits the three kernels of FlashAttention-2's backward pass (see
// FlashBackwardKernel.h) as gpu.funcs of NVVM/LLVM/arith/scf operations.
//
// The dkdv kernel works in the transposed orientation: each warp owns 16
// keys of the thread block's key block and computes Sᵀ = K·Qᵀ, Pᵀ, dPᵀ =
// V·dOᵀ and dSᵀ for them, so that Pᵀ and dSᵀ — accumulator tiles — are
// directly the A operands of dV += Pᵀ·dO and dK += dSᵀ·Q (the mma
// accumulator and A layouts coincide, as in the forward kernel). dQ = dS·K
// needs dS the other way round: dSᵀ goes through shared memory and
// ldmatrix.trans hands it back transposed.
//
//===----------------------------------------------------------------------===//

#include "BackwardWorkspace.h"
#include "KernelSignature.h"
#include "KernelTiles.h"
#include "attn/Conversion/AttnToGPU/FlashBackwardKernel.h"
#include "attn/Conversion/AttnToGPU/FlashKernel.h"
#include "attn/Dialect/AttnGPU/IR/AttnGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/Twine.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::attn;
using nvvm::FragmentAddresses;
using nvvm::KernelBuilder;
using nvvm::TileLayout;

namespace {

constexpr const char *kSharedMemorySymbol = "attn_dynamic_smem";

using Acc = std::array<Value, 4>;
using AFrag = std::array<Value, 4>;

/// The backward kernels' parameters (docs/kernel-abi.md): all three
/// kernels of the sm80 family take the same list (key_start/key_end and
/// the ALiBi slopes last when the spec has them).
nvvm::KernelSignature backwardSignature(const FlashBackwardSpec &spec) {
  ::attn::runtime::KernelAbi abi;
  abi.backward = true;
  abi.keyRange = spec.keyRange;
  abi.alibi = spec.alibi;
  return nvvm::KernelSignature(abi);
}

/// The signature of a kernel `func` made by createKernel, bound to its
/// arguments.
nvvm::KernelSignature boundSignature(gpu::GPUFuncOp func,
                                     const FlashBackwardSpec &spec) {
  nvvm::KernelSignature params = backwardSignature(spec);
  params.bind(func.getBody().front());
  return params;
}

/// `tiles` (8-column accumulator tiles) as one accumulator fragment, and
/// back: the MMAs are attn_gpu.warp_mma on fragments, the elementwise work
/// between them goes tile by tile.
Value asFragment(KernelBuilder &kb, ArrayRef<Acc> tiles) {
  SmallVector<Value> regs;
  for (const Acc &acc : tiles)
    regs.append(acc.begin(), acc.end());
  return kb.fragment(attn_gpu::FragmentType::getAccumulator(
                         kb.builder().getContext(), 8 * tiles.size()),
                     regs);
}

SmallVector<Acc> asTiles(KernelBuilder &kb, Value fragment) {
  SmallVector<Value> regs = kb.registers(fragment);
  SmallVector<Acc> tiles;
  for (size_t i = 0; i < regs.size(); i += 4)
    tiles.push_back({regs[i], regs[i + 1], regs[i + 2], regs[i + 3]});
  return tiles;
}

/// Tile `nTile` of `acc` += A·B for the 16x16 A of one ldmatrix.x4 and the
/// B pair (b0, b1): one mma.sync.
Value warpMma(KernelBuilder &kb, Type elt, const AFrag &a, Value b0, Value b1,
              Value acc, int64_t nTile) {
  Value aFragment =
      kb.fragment(attn_gpu::FragmentType::getOperandA(elt, 16), a);
  return attn_gpu::WarpMmaOp::create(kb.builder(), kb.location(), aFragment,
                                     b0, b1, acc, nTile);
}

/// One warp's C[16 × 8·nTiles] = A·Bᵀ with both operands in shared memory
/// as [row][depth]: A's 16 rows through `aRows`, B's 8·nTiles rows through
/// `bRows` (ldmatrix without .trans for both).
SmallVector<Acc> warpGemmABt(KernelBuilder &kb, Type elt,
                             FragmentAddresses &aRows, ArrayRef<Value> aPtrs,
                             FragmentAddresses &bRows, ArrayRef<Value> bPtrs,
                             int64_t nTiles, int64_t depth) {
  Value zero = kb.f32(0.0);
  Value acc = attn_gpu::FragSplatOp::create(
      kb.builder(), kb.location(),
      attn_gpu::FragmentType::getAccumulator(kb.builder().getContext(),
                                             8 * nTiles),
      zero);
  for (int64_t kk = 0; kk < depth / 16; ++kk) {
    AFrag a = kb.ldmatrixX4(aRows.address(aPtrs, 0, kk), /*transpose=*/false);
    for (int64_t np = 0; np < nTiles / 2; ++np) {
      auto r = kb.ldmatrixX4(bRows.address(bPtrs, 16 * np, kk),
                             /*transpose=*/false);
      acc = warpMma(kb, elt, a, r[0], r[1], acc, 2 * np);
      acc = warpMma(kb, elt, a, r[2], r[3], acc, 2 * np + 1);
    }
  }
  return asTiles(kb, acc);
}

/// Values every backward kernel derives from its parameters.
struct Common {
  Value seqQ, seqKv, headsQ, headsKv;
  Value tid;
};

/// tensor + b·stride_b + h·stride_h, with elements of type `elt`.
Value headBase(KernelBuilder &kb, const nvvm::KernelSignature &params,
               StringRef tensor, Type elt, Value batch, Value head) {
  Value off = kb.add(kb.mul(kb.zext64(batch), params.stride(tensor, 0)),
                     kb.mul(kb.zext64(head), params.stride(tensor, 1)));
  return kb.gep(params[tensor], elt, off);
}

/// The workspace region of (batch, query head) `bh` (BackwardWorkspace.h).
Value workspaceRegion(KernelBuilder &kb, const nvvm::KernelSignature &params,
                      Value bh, Value seqQ, int64_t headDim) {
  return nvvm::workspaceRegion(kb, params["workspace"], bh, seqQ, headDim);
}

/// *ptr += {lo, hi} (two consecutive f32, 8-byte aligned): with `paired`
/// one vector reduction (sm_90 and newer), else two scalar ones.
void atomicAddPairF32(KernelBuilder &kb, Value ptr, Value lo, Value hi,
                      bool paired) {
  attn_gpu::GlobalReduceAddOp::create(kb.builder(), kb.location(), ptr,
                                      ValueRange{lo, hi}, paired ? 2 : 1);
}

Value loadF32(KernelBuilder &kb, Value ptr) {
  return LLVM::LoadOp::create(kb.builder(), kb.location(),
                              kb.builder().getF32Type(), ptr);
}
void storeF32(KernelBuilder &kb, Value value, Value ptr) {
  LLVM::StoreOp::create(kb.builder(), kb.location(), value, ptr);
}

/// Eight consecutive 16-bit elements at `ptr` (16-byte aligned) as f32.
SmallVector<Value> loadChunkAsF32(KernelBuilder &kb, Type elt, Value ptr) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  auto vecTy = VectorType::get({8}, elt);
  Value vec = LLVM::LoadOp::create(b, loc, vecTy, ptr, /*alignment=*/16);
  Value wide = LLVM::FPExtOp::create(
      b, loc, VectorType::get({8}, b.getF32Type()), vec);
  SmallVector<Value> out;
  for (int64_t i = 0; i < 8; ++i)
    out.push_back(LLVM::ExtractElementOp::create(b, loc, wide, kb.i32(i)));
  return out;
}

/// nvvm::maskFragment on a step's score tiles: element e of tile nt stays
/// when col·(8·nt + e % 2) + row·8·(e / 2) <= limit().
void maskTiles(KernelBuilder &kb, SmallVector<Acc> &s, Value needed,
               llvm::function_ref<Value()> limit, int64_t col, int64_t row) {
  s = asTiles(kb, nvvm::maskFragment(kb, asFragment(kb, s), needed, limit,
                                     col, row));
}

/// The softcap on a step's raw scores Q·Kᵀ, before the mask: each becomes
/// t = tanh(s · scale / C), so that the softmax constant is C·log2e
/// (backwardSoftmaxConstant). Returns the t values, which dS's factor 1 − t²
/// needs after the masked scores are overwritten by P.
SmallVector<Acc> applySoftcap(KernelBuilder &kb,
                              const nvvm::KernelSignature &params,
                              SmallVector<Acc> &s, double softcap) {
  Value inner = kb.fmul(params["softmax_scale"], kb.f32(1.0 / softcap));
  for (Acc &acc : s)
    for (Value &v : acc)
      v = attn_gpu::TanhOp::create(kb.builder(), kb.location(),
                                   kb.fmul(v, inner));
  return s;
}

/// What ALiBi's slope is divided by (nvvm::AlibiTerm): the score the
/// softmax multiplies is raw (scale) or the softcap's t (C).
Value alibiUnit(KernelBuilder &kb, const nvvm::KernelSignature &params,
                const FlashBackwardSpec &spec) {
  return spec.softcap > 0 ? kb.f32(spec.softcap) : params["softmax_scale"];
}

/// dS ∘ (1 − t²): the softcap's derivative (t from applySoftcap).
void scaleBySoftcapDerivative(KernelBuilder &kb, SmallVector<Acc> &ds,
                              ArrayRef<Acc> t) {
  for (size_t i = 0; i < ds.size(); ++i)
    for (int e = 0; e < 4; ++e)
      ds[i][e] = kb.fmul(ds[i][e],
                         kb.fsub(kb.f32(1.0), kb.fmul(t[i][e], t[i][e])));
}

Common setUpCommon(KernelBuilder &kb, const nvvm::KernelSignature &params) {
  Common c;
  c.seqQ = params["seq_q"];
  c.seqKv = params["seq_kv"];
  c.headsQ = params["heads_q"];
  c.headsKv = params["heads_kv"];
  c.tid = NVVM::ThreadIdXOp::create(kb.builder(), kb.location(),
                                    kb.builder().getI32Type());
  return c;
}

//===----------------------------------------------------------------------===//
// Preprocess: Δ = rowsum(dO ∘ O), dQ accumulator = 0.
//===----------------------------------------------------------------------===//

void emitPreprocess(OpBuilder &b, Location loc,
                    const nvvm::KernelSignature &params,
                    const FlashBackwardSpec &spec) {
  KernelBuilder kb(b, loc);
  Type elt = spec.elementType;
  Common c = setUpCommon(kb, params);
  // One 8-element chunk per thread, of a row padded to tileHeadDim (the
  // chunks past the head dim add 0).
  int64_t chunks = spec.tileHeadDim() / 8;
  int64_t rowsPerBlock = kBackwardAuxThreads / chunks;
  Value bh = NVVM::BlockIdYOp::create(b, loc, b.getI32Type());
  Value batch = kb.divu(bh, c.headsQ), head = kb.remu(bh, c.headsQ);
  Value blockX = NVVM::BlockIdXOp::create(b, loc, b.getI32Type());
  Value row = kb.add(kb.mul(blockX, kb.i32(rowsPerBlock)),
                     kb.lshr(c.tid, llvm::Log2_64(chunks)));
  Value chunk = kb.andi(c.tid, chunks - 1);
  Value inRange = kb.slt(row, c.seqQ);
  Value oBase = headBase(kb, params, "o", elt, batch, head);
  Value doBase = headBase(kb, params, "do", elt, batch, head);

  // Rows past Nq contribute 0 (and are not stored), as do the chunks of a
  // padded row past the head dim (not loaded).
  Value loads = inRange;
  if (spec.tileHeadDim() != spec.valueHeadDim)
    loads = kb.andb(loads, kb.slt(chunk, kb.i32(spec.valueHeadDim / 8)));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{b.getF32Type()}, loads,
                                /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value col = kb.sext64(kb.shl(chunk, 3));
    Value rowL = kb.sext64(row);
    SmallVector<Value> o = loadChunkAsF32(
        kb, elt,
        kb.gep(oBase, elt, kb.add(kb.mul(rowL, params.stride("o", 2)), col)));
    SmallVector<Value> dO = loadChunkAsF32(
        kb, elt,
        kb.gep(doBase, elt, kb.add(kb.mul(rowL, params.stride("do", 2)), col)));
    Value dot = kb.f32(0.0);
    for (int64_t i = 0; i < 8; ++i)
      dot = LLVM::FMAOp::create(b, loc, o[i], dO[i], dot);
    scf::YieldOp::create(b, loc, dot);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, kb.f32(0.0));
  }
  Value partial = ifOp.getResult(0);
  for (int64_t mask = 1; mask < chunks; mask *= 2)
    partial = kb.fadd(partial, kb.shuffleXor(partial, mask));

  ifThen(kb, inRange, [&] {
    Value region = workspaceRegion(kb, params, bh, c.seqQ, spec.headDim);
    ifThen(kb,
           arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, chunk,
                                 kb.i32(0)),
           [&] {
             storeF32(kb, partial,
                      kb.gep(region, b.getF32Type(), kb.sext64(row)));
             // The row's semaphore (the sm90a deterministic dQ order).
             LLVM::StoreOp::create(
                 b, loc, kb.i32(0),
                 kb.gep(dqSemaphores(kb, region, c.seqQ, spec.headDim),
                        b.getI32Type(), kb.sext64(row)));
           });
    // This row's dQ accumulator, split over the row's threads.
    Value acc = kb.gep(dqAccumulator(kb, region, c.seqQ), b.getF32Type(),
                       kb.mul(kb.sext64(row), kb.i64(spec.headDim)));
    for (int64_t i = 0; i * chunks < spec.headDim; ++i) {
      Value col = kb.add(chunk, kb.i32(i * chunks));
      auto store = [&] {
        storeF32(kb, kb.f32(0.0),
                 kb.gep(acc, b.getF32Type(), kb.sext64(col)));
      };
      if ((i + 1) * chunks <= spec.headDim)
        store();
      else
        ifThen(kb, kb.slt(col, kb.i32(spec.headDim)), store);
    }
  });
  gpu::ReturnOp::create(b, loc);
}

//===----------------------------------------------------------------------===//
// Convert: dQ = accumulator · scale in the element type.
//===----------------------------------------------------------------------===//

void emitConvert(OpBuilder &b, Location loc,
                 const nvvm::KernelSignature &params,
                 const FlashBackwardSpec &spec, bool groupedDq) {
  KernelBuilder kb(b, loc);
  Type elt = spec.elementType;
  Common c = setUpCommon(kb, params);
  int64_t chunks = spec.tileHeadDim() / 8;
  int64_t rowsPerBlock = kBackwardAuxThreads / chunks;
  Value bh = NVVM::BlockIdYOp::create(b, loc, b.getI32Type());
  Value batch = kb.divu(bh, c.headsQ), head = kb.remu(bh, c.headsQ);
  Value blockX = NVVM::BlockIdXOp::create(b, loc, b.getI32Type());
  Value row = kb.add(kb.mul(blockX, kb.i32(rowsPerBlock)),
                     kb.lshr(c.tid, llvm::Log2_64(chunks)));
  Value chunk = kb.andi(c.tid, chunks - 1);
  // Grouped: whether the row is in a whole 16-row group (the grid's
  // remapping below keeps it there).
  Value whole;
  if (groupedDq) {
    // Thread i of the grid (row·chunks + chunk) in a whole 16-row group
    // takes, per 32 threads, two chunks of the group's 16 rows: each of
    // its loads is then 2 x 64 contiguous bytes of the grouped layout, and
    // each row's two chunks 32 contiguous bytes of dQ.
    Value linear = kb.add(kb.mul(row, kb.i32(chunks)), chunk);
    Value inGroup = kb.remu(linear, kb.i32(16 * chunks));
    Value groupRow = kb.sub(row, kb.remu(row, kb.i32(16)));
    Value groupedRow = kb.add(groupRow, kb.andi(inGroup, 15));
    Value groupedChunk = kb.add(kb.shl(kb.lshr(inGroup, 5), 1),
                                kb.andi(kb.lshr(inGroup, 4), 1));
    whole = kb.slt(row, kb.andi(c.seqQ, ~int64_t(15)));
    row = kb.select(whole, groupedRow, row);
    chunk = kb.select(whole, groupedChunk, chunk);
  }
  // Chunks of a padded row past the head dim have nothing to convert.
  Value active = kb.slt(row, c.seqQ);
  if (spec.tileHeadDim() != spec.headDim)
    active = kb.andb(active, kb.slt(chunk, kb.i32(spec.headDim / 8)));
  ifThen(kb, active, [&] {
    Value region = workspaceRegion(kb, params, bh, c.seqQ, spec.headDim);
    // Column 8·chunk + i is i·16 floats on in a whole group, i on else.
    Value columnStep =
        groupedDq ? kb.select(whole, kb.i64(16), kb.i64(1)) : kb.i64(1);
    Value acc = kb.gep(dqAccumulator(kb, region, c.seqQ), b.getF32Type(),
                       nvvm::dqAccumulatorOffset(kb, row, kb.shl(chunk, 3),
                                                 c.seqQ, spec.headDim,
                                                 groupedDq));
    auto column = [&](int64_t i) {
      return loadF32(kb, kb.gep(acc, b.getF32Type(),
                                kb.mul(columnStep, kb.i64(i))));
    };
    Value scale = params["softmax_scale"];
    SmallVector<Value> packed;
    for (int64_t i = 0; i < 8; i += 2) {
      Value lo = kb.fmul(column(i), scale);
      Value hi = kb.fmul(column(i + 1), scale);
      packed.push_back(kb.packPair(elt, lo, hi));
    }
    auto v4i32 = VectorType::get({4}, b.getI32Type());
    Value vec = LLVM::PoisonOp::create(b, loc, v4i32);
    for (int64_t i = 0; i < 4; ++i)
      vec = LLVM::InsertElementOp::create(b, loc, vec, packed[i], kb.i32(i));
    Value dqBase = headBase(kb, params, "dq", elt, batch, head);
    Value offset = kb.add(kb.mul(kb.sext64(row), params.stride("dq", 2)),
                          kb.sext64(kb.shl(chunk, 3)));
    LLVM::StoreOp::create(b, loc, vec, kb.gep(dqBase, elt, offset), 16);
  });
  gpu::ReturnOp::create(b, loc);
}

//===----------------------------------------------------------------------===//
// dkdv: the main kernel.
//===----------------------------------------------------------------------===//

class DkDvEmitter {
public:
  DkDvEmitter(OpBuilder &b, Location loc, gpu::GPUFuncOp func,
              const FlashBackwardSpec &spec, const FlashBackwardConfig &config)
      : kb(b, loc), b(b), loc(loc), func(func), spec(spec), config(config),
        params(boundSignature(func, spec)), elt(spec.elementType),
        warps(config.warps()), qTiles(config.blockM / 8),
        kLayout(config.blockN, spec.tileHeadDim()),
        vLayout(config.blockN, spec.tileHeadDim()),
        qLayout(config.blockM, spec.tileHeadDim()),
        doLayout(config.blockM, spec.tileHeadDim()),
        dsLayout(config.blockN, config.blockM) {}

  void emit();

private:
  struct Step {
    Value head, q0, stage;
    Value qBase, doBase, region; // this step's query head
  };
  Step stepAt(Value it);
  void issueStepLoads(const Step &step);
  /// LSE·log2e (+inf for rows past Nq or without keys) and Δ of row
  /// `index` (< blockM) of a step, read from global memory.
  std::pair<Value, Value> loadRowScalars(const Step &step, Value index);
  SmallVector<Value> emitStep(Value it, ValueRange carried);
  void emitEpilogue(ValueRange accs);
  /// One walk over the query blocks accumulating the current column slice,
  /// then its epilogue.
  void emitSlice();

  KernelBuilder kb;
  OpBuilder &b;
  Location loc;
  gpu::GPUFuncOp func;
  const FlashBackwardSpec &spec;
  const FlashBackwardConfig &config;
  nvvm::KernelSignature params;
  Type elt;
  int64_t warps, qTiles;
  TileLayout kLayout, vLayout, qLayout, doLayout, dsLayout;
  // The column slice of dK and dV (and dQ) the current walk accumulates:
  // columns [sliceStart, sliceStart + 8·dTiles) (FlashBackwardSpec::
  // columnSlices); dvTiles = dTiles (D = Dv).
  int64_t sliceStart = 0, dTiles = 0, dvTiles = 0;

  Common c;
  Value lane, warp, g, t, batch, kvHead, groupSize, kv0, diagonal;
  // Keys outside [keyStart, keyEnd) are masked: [0, Nk), or the batch
  // entry's key_range (keyStart null without one).
  Value keyStart, keyEnd;
  Value qStart, qSteps, numSteps; // the walk: qSteps query blocks per head
  // qSteps, or 1 where a window leaves a key block no query block (the
  // prologue's step 0 is then never run, but its addresses are formed).
  Value qStepsDivisor;
  Value kTile, vTile, qRing, doRing, dsTile, lseRing, deltaRing;
  std::optional<FragmentAddresses> aRows;  // A from [m][k]: K, V rows
  std::optional<FragmentAddresses> bRows;  // B from [n][k]: Q, dO rows
  std::optional<FragmentAddresses> bTrans; // B from [k][n]: dO, Q, K
  std::optional<FragmentAddresses> aTrans; // A from [k][m]: dSᵀ
  // dQ's split: warp w computes m-tile dqMTile = w % (blockM / 16) of the
  // query block, columns [8·dqTiles·dqColGroup, +8·dqTiles) of the head.
  int64_t dqColGroups = 0, dqTiles = 0;
  Value dqMTile, dqColGroup;
  std::optional<FragmentAddresses> bTransKSlice; // B from [k][n]: K slice
};

DkDvEmitter::Step DkDvEmitter::stepAt(Value it) {
  Step s;
  Value headInGroup = kb.divu(it, qStepsDivisor);
  Value qBlock = kb.add(qStart, kb.remu(it, qStepsDivisor));
  s.head = kb.add(kb.mul(kvHead, groupSize), headInGroup);
  s.q0 = kb.mul(qBlock, kb.i32(config.blockM));
  s.stage = kb.andi(it, 1);
  s.qBase = headBase(kb, params, "q", elt, batch, s.head);
  s.doBase = headBase(kb, params, "do", elt, batch, s.head);
  s.region =
      workspaceRegion(kb, params, kb.add(kb.mul(batch, c.headsQ), s.head),
                      c.seqQ, spec.headDim);
  return s;
}

void DkDvEmitter::issueStepLoads(const Step &step) {
  Value rowsLeft = kb.sub(c.seqQ, step.q0);
  Value qDst = kb.gepBytes(qRing, kb.mul(step.stage, kb.i32(qLayout.bytes())));
  Value doDst =
      kb.gepBytes(doRing, kb.mul(step.stage, kb.i32(doLayout.bytes())));
  nvvm::loadTileAsync(kb, elt, config.threads(), c.tid, step.qBase,
                      params.stride("q", 2), step.q0, rowsLeft, qLayout, qDst,
                      spec.headDim / 8);
  nvvm::loadTileAsync(kb, elt, config.threads(), c.tid, step.doBase,
                      params.stride("do", 2), step.q0, rowsLeft, doLayout,
                      doDst, spec.valueHeadDim / 8);
}

std::pair<Value, Value> DkDvEmitter::loadRowScalars(const Step &step,
                                                    Value index) {
  Value row = kb.add(step.q0, index);
  Value inf = kb.f32(std::numeric_limits<double>::infinity());
  Value negInf = kb.f32(-std::numeric_limits<double>::infinity());
  auto ifOp = scf::IfOp::create(b, loc,
                                TypeRange{b.getF32Type(), b.getF32Type()},
                                kb.slt(row, c.seqQ), /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value lseBase =
        headBase(kb, params, "lse", b.getF32Type(), batch, step.head);
    Value lse = loadF32(kb, kb.gep(lseBase, b.getF32Type(), kb.sext64(row)));
    // A row that saw no key in the forward (LSE = -inf) has P = 0: shift
    // its scores by +inf instead.
    Value scaled = kb.select(kb.feq(lse, negInf), inf,
                             kb.fmul(lse, kb.f32(M_LOG2E)));
    Value delta =
        loadF32(kb, kb.gep(step.region, b.getF32Type(), kb.sext64(row)));
    scf::YieldOp::create(b, loc, ValueRange{scaled, delta});
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{inf, kb.f32(0.0)});
  }
  return {ifOp.getResult(0), ifOp.getResult(1)};
}

/// One step of the walk: query block `q0` of query head `head`, against
/// this block's keys. Carried: dK then dV accumulators.
SmallVector<Value> DkDvEmitter::emitStep(Value it, ValueRange carried) {
  Step step = stepAt(it);
  Value next = kb.add(it, kb.i32(1));
  Value hasNext = kb.slt(next, numSteps);

  // Q/dO(it) landed; every warp is done with step it - 1 (its ring stage,
  // the dSᵀ tile).
  kb.cpAsyncWait(0);
  kb.barrier();

  // Prefetch step it + 1's Q and dO into the other stage, and read its row
  // scalars now: they are stored into shared memory at the end of this
  // step, so their latency hides behind this step's math.
  std::optional<Step> nextStep;
  Value scalarIndex = c.tid;
  Value nextLse, nextDelta;
  {
    auto ifOp = scf::IfOp::create(b, loc,
                                  TypeRange{b.getF32Type(), b.getF32Type()},
                                  hasNext, /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Step ns = stepAt(next);
    issueStepLoads(ns);
    // Threads [0, blockM) fetch one row's scalars each.
    auto inner = scf::IfOp::create(
        b, loc, TypeRange{b.getF32Type(), b.getF32Type()},
        kb.slt(scalarIndex, kb.i32(config.blockM)), /*withElse=*/true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&inner.getThenRegion().front());
      auto [lse, delta] = loadRowScalars(ns, scalarIndex);
      scf::YieldOp::create(b, loc, ValueRange{lse, delta});
      b.setInsertionPointToStart(&inner.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{kb.f32(0.0), kb.f32(0.0)});
    }
    scf::YieldOp::create(b, loc, inner.getResults());
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{kb.f32(0.0), kb.f32(0.0)});
    nextLse = ifOp.getResult(0);
    nextDelta = ifOp.getResult(1);
  }
  kb.cpAsyncCommit();

  Value qTile = kb.gepBytes(qRing, kb.mul(step.stage, kb.i32(qLayout.bytes())));
  Value doTile =
      kb.gepBytes(doRing, kb.mul(step.stage, kb.i32(doLayout.bytes())));
  Value lseHere = kb.gepBytes(lseRing, kb.mul(step.stage,
                                              kb.i32(4 * config.blockM)));
  Value deltaHere = kb.gepBytes(deltaRing, kb.mul(step.stage,
                                                  kb.i32(4 * config.blockM)));

  Value zero = kb.f32(0.0);
  SmallVector<Value> kPtrs = aRows->lanePointers(kTile);
  SmallVector<Value> vPtrs = aRows->lanePointers(vTile);
  SmallVector<Value> qPtrs = bRows->lanePointers(qTile);
  SmallVector<Value> doPtrs = bRows->lanePointers(doTile);

  // ALiBi: the step's query head's slope, read before the product hides it.
  std::optional<nvvm::AlibiTerm> alibi;
  if (spec.alibi)
    alibi.emplace(kb, params, batch, step.head, alibiUnit(kb, params, spec));

  // Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ for this warp's 16 keys: qTiles tiles each.
  SmallVector<Acc> s = warpGemmABt(kb, elt, *aRows, kPtrs, *bRows, qPtrs,
                                   qTiles, spec.mmaHeadDim());
  SmallVector<Acc> capT;
  if (spec.softcap > 0)
    capT = applySoftcap(kb, params, s, spec.softcap);
  // ALiBi on element e of tile nt: query q0 + 8·nt + 2t + e%2, key
  // kv0 + 16·warp + g + 8·(e/2).
  if (alibi) {
    Value base = alibi->rowBase(
        kb.sub(kb.add(kb.add(step.q0, diagonal), kb.shl(t, 1)),
               kb.add(kb.add(kv0, kb.mul(warp, kb.i32(16))), g)));
    for (int64_t nt = 0; nt < qTiles; ++nt)
      for (int e = 0; e < 4; ++e)
        s[nt][e] = alibi->apply(s[nt][e], base, 8 * nt + (e & 1) - 8 * (e / 2));
  }

  // The band: element e of tile nt is key kv0 + 16·warp + g + 8·(e/2) of
  // query q0 + 8·nt + 2t + e%2, visible iff d(query) − left <= key <=
  // d(query) + right (d(i) = i + diagonal):
  //   right: 8·(e/2) − 8·nt − e%2 <= q0 + diagonal + right − kv0 + 2t
  //          − 16·warp − g;
  //   left:  8·nt + e%2 − 8·(e/2) <= left − diagonal − q0 + kv0 − 2t
  //          + 16·warp + g.
  // Each is tested only in blocks that straddle its edge. Rows past Nq need
  // no mask (their LSE is +inf, so P = 0); keys past Nk (zero-filled K, V
  // rows of the last key block) do, below.
  if (spec.band.hasRight()) {
    Value reach = kb.add(step.q0, diagonal);
    if (spec.band.right)
      reach = kb.add(reach, kb.i32(spec.band.right));
    maskTiles(
        kb, s, kb.slt(reach, kb.add(kv0, kb.i32(config.blockN - 1))),
        [&] {
          return kb.sub(kb.add(kb.sub(reach, kv0), kb.shl(t, 1)),
                        kb.add(kb.mul(warp, kb.i32(16)), g));
        },
        /*col=*/-1, /*row=*/1);
  }
  if (spec.band.hasLeft()) {
    // The lowest key the block's last row sees.
    Value lowest = kb.sub(kb.add(step.q0, diagonal),
                          kb.i32(spec.band.left - (config.blockM - 1)));
    maskTiles(
        kb, s, kb.slt(kv0, lowest),
        [&] {
          return kb.add(
              kb.sub(kb.sub(kb.i32(spec.band.left), kb.add(step.q0, diagonal)),
                     kb.shl(t, 1)),
              kb.add(kb.add(kv0, kb.mul(warp, kb.i32(16))), g));
        },
        /*col=*/1, /*row=*/-1);
  }
  // Keys past Nk: their S is 0, and P = exp2(0 − LSE·log2e) overflows to
  // inf for a row whose LSE is below about −88 (few keys, large negative
  // logits): dS·K would then be inf·0, a NaN dQ. key < Nk  <=>
  //   8·(e/2) <= Nk − kv0 − 16·warp − g − 1.
  maskTiles(
      kb, s, kb.slt(keyEnd, kb.add(kv0, kb.i32(config.blockN))),
      [&] {
        return kb.sub(kb.sub(kb.sub(keyEnd, kv0), kb.mul(warp, kb.i32(16))),
                      kb.add(g, kb.i32(1)));
      },
      /*col=*/0, /*row=*/1);
  // key_range: key >= start  <=>  −8·(e/2) <= kv0 + 16·warp + g − start.
  if (keyStart)
    maskTiles(
        kb, s, kb.slt(kv0, keyStart),
        [&] {
          return kb.sub(kb.add(kb.add(kv0, kb.mul(warp, kb.i32(16))), g),
                        keyStart);
        },
        /*col=*/0, /*row=*/-1);

  // Pᵀ = exp2(Sᵀ·c − LSE·log2e), column-wise LSE from shared memory.
  Value cScale =
      backwardSoftmaxConstant(kb, params["softmax_scale"], spec.softcap);
  auto v2f32 = VectorType::get({2}, b.getF32Type());
  auto columnPair = [&](Value base, int64_t nt) {
    Value ptr = kb.gepBytes(base, kb.add(kb.shl(t, 3), kb.i32(32 * nt)));
    Value pair = LLVM::LoadOp::create(b, loc, v2f32, ptr, 8);
    return std::array<Value, 2>{
        LLVM::ExtractElementOp::create(b, loc, pair, kb.i32(0)),
        LLVM::ExtractElementOp::create(b, loc, pair, kb.i32(1))};
  };
  for (int64_t nt = 0; nt < qTiles; ++nt) {
    auto lse = columnPair(lseHere, nt);
    for (int e = 0; e < 4; ++e) {
      Value negLse = arith::NegFOp::create(b, loc, lse[e & 1]);
      s[nt][e] = kb.exp2(LLVM::FMAOp::create(b, loc, s[nt][e], cScale, negLse));
    }
  }
  auto packA = [&](SmallVector<Acc> &tiles, int64_t kk) {
    return AFrag{kb.packPair(elt, tiles[2 * kk][0], tiles[2 * kk][1]),
                 kb.packPair(elt, tiles[2 * kk][2], tiles[2 * kk][3]),
                 kb.packPair(elt, tiles[2 * kk + 1][0], tiles[2 * kk + 1][1]),
                 kb.packPair(elt, tiles[2 * kk + 1][2], tiles[2 * kk + 1][3])};
  };

  // Unpack the carried accumulators: dK [dTiles], dV [dvTiles].
  SmallVector<Acc> dK, dV;
  for (int64_t i = 0; i < dTiles; ++i)
    dK.push_back({carried[4 * i], carried[4 * i + 1], carried[4 * i + 2],
                  carried[4 * i + 3]});
  for (int64_t i = 0; i < dvTiles; ++i) {
    int64_t o = 4 * (dTiles + i);
    dV.push_back(
        {carried[o], carried[o + 1], carried[o + 2], carried[o + 3]});
  }

  // dV += Pᵀ·dO: B = dO [query][dv], transposed loads.
  SmallVector<Value> doTPtrs = bTrans->lanePointers(doTile);
  Value dVAcc = asFragment(kb, dV);
  for (int64_t kk = 0; kk < qTiles / 2; ++kk) {
    AFrag p = packA(s, kk);
    for (int64_t dp = 0; dp < dvTiles / 2; ++dp) {
      auto r = kb.ldmatrixX4(
          bTrans->address(doTPtrs, 16 * kk, sliceStart / 16 + dp),
          /*transpose=*/true);
      dVAcc = warpMma(kb, elt, p, r[0], r[1], dVAcc, 2 * dp);
      dVAcc = warpMma(kb, elt, p, r[2], r[3], dVAcc, 2 * dp + 1);
    }
  }
  dV = asTiles(kb, dVAcc);

  // dSᵀ = Pᵀ ∘ (dPᵀ − Δ).
  SmallVector<Acc> dp = warpGemmABt(kb, elt, *aRows, vPtrs, *bRows, doPtrs,
                                    qTiles, spec.mmaHeadDim());
  for (int64_t nt = 0; nt < qTiles; ++nt) {
    auto delta = columnPair(deltaHere, nt);
    for (int e = 0; e < 4; ++e)
      s[nt][e] = kb.fmul(s[nt][e], kb.fsub(dp[nt][e], delta[e & 1]));
  }
  if (spec.softcap > 0)
    scaleBySoftcapDerivative(kb, s, capT);

  // dK += dSᵀ·Q (scaled at the end): B = Q [query][d], transposed loads.
  SmallVector<Value> qTPtrs = bTrans->lanePointers(qTile);
  SmallVector<AFrag> ds;
  Value dKAcc = asFragment(kb, dK);
  for (int64_t kk = 0; kk < qTiles / 2; ++kk) {
    ds.push_back(packA(s, kk));
    for (int64_t dp2 = 0; dp2 < dTiles / 2; ++dp2) {
      auto r = kb.ldmatrixX4(
          bTrans->address(qTPtrs, 16 * kk, sliceStart / 16 + dp2),
          /*transpose=*/true);
      dKAcc = warpMma(kb, elt, ds[kk], r[0], r[1], dKAcc, 2 * dp2);
      dKAcc = warpMma(kb, elt, ds[kk], r[2], r[3], dKAcc, 2 * dp2 + 1);
    }
  }
  dK = asTiles(kb, dKAcc);

  // dSᵀ to shared memory: this warp's 16 key rows, packed pairs (for dQ,
  // unless a separate kernel computes it); then the row scalars of the
  // next step.
  for (int64_t kk = 0; kk < (config.deterministic ? 0 : qTiles / 2); ++kk)
    for (int half = 0; half < 2; ++half)  // tiles 2kk, 2kk + 1
      for (int h = 0; h < 2; ++h) {      // key rows g, g + 8
        Value row = kb.add(kb.mul(warp, kb.i32(16)), kb.add(g, kb.i32(8 * h)));
        Value addr = kb.gepBytes(
            nvvm::swizzledAddress(kb, dsTile, dsLayout, row,
                                  kb.i32(2 * kk + half)),
            kb.shl(t, 2));
        LLVM::StoreOp::create(b, loc, ds[kk][2 * half + h], addr);
      }
  ifThen(kb, kb.andb(hasNext, kb.slt(scalarIndex, kb.i32(config.blockM))),
         [&] {
           Value other = kb.xori(step.stage, kb.i32(1));
           Value off = kb.add(kb.mul(other, kb.i32(4 * config.blockM)),
                              kb.shl(scalarIndex, 2));
           storeF32(kb, nextLse, kb.gepBytes(lseRing, off));
           storeF32(kb, nextDelta, kb.gepBytes(deltaRing, off));
         });
  SmallVector<Value> out;
  for (Acc &acc : dK)
    out.append(acc.begin(), acc.end());
  for (Acc &acc : dV)
    out.append(acc.begin(), acc.end());
  if (config.deterministic)
    return out;
  kb.barrier();

  // dQ(q0 block) += dS·K: warp w takes m-tile w % mTiles of the query
  // block and a slice of the head dim, A = dS (ldmatrix.trans of dSᵀ),
  // B = K [key][d] (transposed loads), then atomic adds to the f32
  // accumulator.
  Value dqAcc = asFragment(
      kb, SmallVector<Acc>(dqTiles, Acc{zero, zero, zero, zero}));
  SmallVector<Value> dsPtrs = aTrans->lanePointers(dsTile);
  SmallVector<Value> kSlicePtrs = bTransKSlice->lanePointers(kTile);
  for (int64_t kk = 0; kk < config.blockN / 16; ++kk) {
    AFrag a = kb.ldmatrixX4(aTrans->address(dsPtrs, 16 * kk, 0),
                            /*transpose=*/true);
    for (int64_t p = 0; p < dqTiles / 2; ++p) {
      auto r = kb.ldmatrixX4(
          bTransKSlice->address(kSlicePtrs, 16 * kk, sliceStart / 16 + p),
          /*transpose=*/true);
      dqAcc = warpMma(kb, elt, a, r[0], r[1], dqAcc, 2 * p);
      dqAcc = warpMma(kb, elt, a, r[2], r[3], dqAcc, 2 * p + 1);
    }
  }
  SmallVector<Acc> dq = asTiles(kb, dqAcc);
  {
    Value accBase = dqAccumulator(kb, step.region, c.seqQ);
    Value colBase = kb.add(kb.mul(dqColGroup, kb.i32(8 * dqTiles)),
                           kb.shl(t, 1));
    if (sliceStart)
      colBase = kb.add(colBase, kb.i32(sliceStart));
    for (int h = 0; h < 2; ++h) {
      Value row = kb.add(kb.add(step.q0, kb.mul(dqMTile, kb.i32(16))),
                         kb.add(g, kb.i32(8 * h)));
      ifThen(kb, kb.slt(row, c.seqQ), [&] {
        Value rowPtr = kb.gep(
            accBase, b.getF32Type(),
            kb.add(kb.mul(kb.sext64(row), kb.i64(spec.headDim)),
                   kb.sext64(colBase)));
        for (int64_t nt = 0; nt < dqTiles; ++nt) {
          auto add = [&] {
            Value pairPtr = kb.gep(rowPtr, b.getF32Type(), kb.i64(8 * nt));
            atomicAddPairF32(kb, pairPtr, dq[nt][2 * h], dq[nt][2 * h + 1],
                             config.pairedReductions);
          };
          // A padded head dim: the column groups overshoot it.
          if (sliceStart + dqColGroups * dqTiles * 8 <= spec.headDim)
            add();
          else
            ifThen(kb,
                   kb.slt(kb.add(kb.mul(dqColGroup, kb.i32(dqTiles)),
                                 kb.i32(sliceStart / 8 + nt)),
                          kb.i32(spec.headDim / 8)),
                   add);
        }
      });
    }
  }

  return out;
}

void DkDvEmitter::emitEpilogue(ValueRange accs) {
  // dK·scale and dV, rows kv0 + 16·warp + g (+8) < Nk, packed pairs, the
  // slice's columns.
  Value scale = params["softmax_scale"];
  auto store = [&](StringRef tensor, int64_t tiles, int64_t first,
                   bool scaled) {
    Value base = headBase(kb, params, tensor, elt, batch, kvHead);
    for (int h = 0; h < 2; ++h) {
      Value row = kb.add(kb.add(kv0, kb.mul(warp, kb.i32(16))),
                         kb.add(g, kb.i32(8 * h)));
      ifThen(kb, kb.slt(row, c.seqKv), [&] {
        Value column = kb.shl(t, 1);
        if (sliceStart)
          column = kb.add(column, kb.i32(sliceStart));
        Value rowPtr =
            kb.gep(base, elt,
                   kb.add(kb.mul(kb.sext64(row), params.stride(tensor, 2)),
                          kb.sext64(column)));
        for (int64_t nt = 0; nt < tiles; ++nt) {
          Value lo = accs[4 * (first + nt) + 2 * h];
          Value hi = accs[4 * (first + nt) + 2 * h + 1];
          if (scaled) {
            lo = kb.fmul(lo, scale);
            hi = kb.fmul(hi, scale);
          }
          LLVM::StoreOp::create(b, loc, kb.packPair(elt, lo, hi),
                                kb.gep(rowPtr, elt, kb.i64(8 * nt)));
        }
      });
    }
  };
  // The head dim's tiles only (a padded head dim's rest is 0).
  int64_t tiles = std::min<int64_t>(dTiles, (spec.headDim - sliceStart) / 8);
  store("dk", tiles, 0, /*scaled=*/true);
  store("dv", tiles, dTiles, /*scaled=*/false);
}

void DkDvEmitter::emit() {
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  c = setUpCommon(kb, params);
  lane = kb.andi(c.tid, 31);
  warp = kb.lshr(c.tid, 5);
  g = kb.lshr(lane, 2);
  t = kb.andi(lane, 3);
  diagonal = spec.band.topLeft ? kb.i32(0) : kb.sub(c.seqKv, c.seqQ);

  Value kvBlock = NVVM::BlockIdXOp::create(b, loc, b.getI32Type());
  Value bhKv = NVVM::BlockIdYOp::create(b, loc, b.getI32Type());
  batch = kb.divu(bhKv, c.headsKv);
  kvHead = kb.remu(bhKv, c.headsKv);
  groupSize = kb.divu(c.headsQ, c.headsKv);
  kv0 = kb.mul(kvBlock, kb.i32(config.blockN));
  nvvm::KeyBounds bounds =
      nvvm::keyBoundsOf(kb, params, spec.keyRange, batch, c.seqKv);
  keyStart = bounds.start;
  keyEnd = bounds.end;

  nvvm::BackwardQueryWalk walk =
      nvvm::backwardQueryWalk(kb, c.seqQ, config.blockM, config.blockN, kv0,
                              diagonal, spec.band, groupSize);
  qStart = walk.qStart;
  qSteps = walk.qSteps;
  numSteps = walk.numSteps;
  if (keyStart)
    numSteps = nvvm::keyBlockSteps(kb, numSteps, kv0, config.blockN, bounds);
  qStepsDivisor = spec.band.hasLeft() || keyStart
                      ? kb.maxsi(qSteps, kb.i32(1))
                      : qSteps;

  // Shared memory: K, V, the Q and dO rings, dSᵀ, the LSE and Δ rings.
  Value smem = LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
      kSharedMemorySymbol);
  kTile = smem;
  vTile = kb.gepBytes(kTile, kb.i32(kLayout.bytes()));
  qRing = kb.gepBytes(vTile, kb.i32(vLayout.bytes()));
  doRing = kb.gepBytes(qRing, kb.i32(2 * qLayout.bytes()));
  dsTile = kb.gepBytes(doRing, kb.i32(2 * doLayout.bytes()));
  // Deterministic mode has no dSᵀ tile (flashBackwardSharedMemoryBytes).
  lseRing = kb.gepBytes(dsTile,
                        kb.i32(config.deterministic ? 0 : dsLayout.bytes()));
  deltaRing = kb.gepBytes(lseRing, kb.i32(2 * 4 * config.blockM));

  Value matrix = kb.lshr(lane, 3);
  Value rowInMatrix = kb.andi(lane, 7);
  Value lowBit = kb.andi(matrix, 1), highBit = kb.lshr(matrix, 1);
  Value warpRow = kb.mul(warp, kb.i32(16));
  // A from row-major [m][k] (K and V rows of this warp; same layout for
  // both when D = Dv) and B from [k][n] transposed share a lane mapping,
  // as do B from [n][k] and A from [k][m] transposed.
  aRows.emplace(kb, kLayout,
                kb.add(kb.add(warpRow, kb.shl(lowBit, 3)), rowInMatrix),
                highBit);
  bRows.emplace(kb, qLayout, kb.add(kb.shl(highBit, 3), rowInMatrix),
                lowBit);
  bTrans.emplace(kb, qLayout, kb.add(kb.shl(lowBit, 3), rowInMatrix),
                 highBit);
  // The warp's dQ slice enters through the lane-dependent chunk: adding a
  // chunk offset before the XOR swizzle keeps every fragment address a
  // lane part plus a constant.
  // With a padded head dim each group takes an even number of tiles
  // covering the product's width (the tiles past it read zero columns).
  int64_t mTiles = config.blockM / 16;
  dqColGroups = warps / mTiles;
  dqMTile = kb.remu(warp, kb.i32(mTiles));
  dqColGroup = kb.divu(warp, kb.i32(mTiles));
  aTrans.emplace(kb, dsLayout, kb.add(kb.shl(highBit, 3), rowInMatrix),
                 kb.add(lowBit, kb.shl(dqMTile, 1)));
  auto enterSlice = [&](FlashBackwardSpec::ColumnSlice slice) {
    sliceStart = slice.start;
    dTiles = dvTiles = slice.width / 8;
    dqTiles = llvm::alignTo(llvm::divideCeil(dTiles, dqColGroups), 2);
    bTransKSlice.emplace(
        kb, kLayout, kb.add(kb.shl(lowBit, 3), rowInMatrix),
        kb.add(highBit, kb.mul(dqColGroup, kb.i32(dqTiles))));
  };
  SmallVector<FlashBackwardSpec::ColumnSlice> slices = spec.columnSlices();
  enterSlice(slices.front());

  // Prologue: K and V of this block with step 0's Q and dO, one group;
  // step 0's row scalars straight into their shared-memory slots.
  Value kBase = headBase(kb, params, "k", elt, batch, kvHead);
  Value vBase = headBase(kb, params, "v", elt, batch, kvHead);
  Value keysLeft = kb.sub(c.seqKv, kv0);
  nvvm::loadTileAsync(kb, elt, config.threads(), c.tid, kBase,
                      params.stride("k", 2), kv0, keysLeft, kLayout, kTile,
                      spec.headDim / 8);
  nvvm::loadTileAsync(kb, elt, config.threads(), c.tid, vBase,
                      params.stride("v", 2), kv0, keysLeft, vLayout, vTile,
                      spec.valueHeadDim / 8);
  Step first = stepAt(kb.i32(0));
  auto startWalk = [&] {
    issueStepLoads(first);
    kb.cpAsyncCommit();
    ifThen(kb, kb.slt(c.tid, kb.i32(config.blockM)), [&] {
      auto [lse, delta] = loadRowScalars(first, c.tid);
      storeF32(kb, lse, kb.gepBytes(lseRing, kb.shl(c.tid, 2)));
      storeF32(kb, delta, kb.gepBytes(deltaRing, kb.shl(c.tid, 2)));
    });
  };
  startWalk();
  emitSlice();
  // Wider head dims walk the query blocks again per slice, K and V staying
  // in shared memory; the barrier: every warp is done with the last walk's
  // ring stages and row scalars.
  for (FlashBackwardSpec::ColumnSlice slice : llvm::drop_begin(slices)) {
    kb.barrier();
    enterSlice(slice);
    startWalk();
    emitSlice();
  }
  gpu::ReturnOp::create(b, loc);
}

void DkDvEmitter::emitSlice() {
  Value zero = kb.f32(0.0);
  SmallVector<Value> init(4 * (dTiles + dvTiles), zero);
  auto loop = scf::ForOp::create(
      b, loc, kb.i32(0), numSteps, kb.i32(1), init,
      [&](OpBuilder &, Location, Value it, ValueRange iterArgs) {
        SmallVector<Value> next = emitStep(it, iterArgs);
        scf::YieldOp::create(b, loc, next);
      });
  emitEpilogue(loop.getResults());
}

//===----------------------------------------------------------------------===//
// dq (deterministic mode): dQ without atomics.
//===----------------------------------------------------------------------===//

/// One thread block per (query block, batch, query head), 16 query rows per
/// warp, walking the key blocks in order: S = Q·Kᵀ, P, dP = dO·Vᵀ, dS and
/// dQ += dS·K in registers, so the sum has one fixed order.
class DqEmitter {
public:
  DqEmitter(OpBuilder &b, Location loc, gpu::GPUFuncOp func,
            const FlashBackwardSpec &spec, const FlashBackwardConfig &config)
      : kb(b, loc), b(b), loc(loc), func(func), spec(spec), config(config),
        params(boundSignature(func, spec)), elt(spec.elementType),
        rows(config.dqBlockM()), keys(config.dqBlockN()), kTiles(keys / 8),
        dTiles(spec.mmaHeadDim() / 8), qLayout(rows, spec.tileHeadDim()),
        doLayout(rows, spec.tileHeadDim()), kLayout(keys, spec.tileHeadDim()),
        vLayout(keys, spec.tileHeadDim()) {}

  void emit();

private:
  void issueKvLoads(Value block);
  SmallVector<Value> emitBlock(Value block, ValueRange dq);

  KernelBuilder kb;
  OpBuilder &b;
  Location loc;
  gpu::GPUFuncOp func;
  const FlashBackwardSpec &spec;
  const FlashBackwardConfig &config;
  nvvm::KernelSignature params;
  Type elt;
  int64_t rows, keys, kTiles, dTiles;
  TileLayout qLayout, doLayout, kLayout, vLayout;

  Common c;
  Value warp, g, t, batch, head, kvHead, q0, diagonal, firstBlock, numBlocks;
  Value keyStart, keyEnd; // as the dkdv kernel's
  std::optional<nvvm::AlibiTerm> alibi; // the (batch, head)'s, with one
  Value kPtr, vPtr, qTile, doTile, kRing, vRing;
  std::array<Value, 2> lseRow, deltaRow; // rows g and g + 8
  std::optional<FragmentAddresses> aRows, bRows, bTrans;
};

void DqEmitter::issueKvLoads(Value block) {
  Value stage = kb.andi(block, 1);
  Value kv0 = kb.mul(block, kb.i32(keys));
  Value left = kb.sub(c.seqKv, kv0);
  nvvm::loadTileAsync(
      kb, elt, config.dqThreads(), c.tid, kPtr, params.stride("k", 2), kv0,
      left, kLayout, kb.gepBytes(kRing, kb.mul(stage, kb.i32(kLayout.bytes()))),
      spec.headDim / 8);
  nvvm::loadTileAsync(
      kb, elt, config.dqThreads(), c.tid, vPtr, params.stride("v", 2), kv0,
      left, vLayout, kb.gepBytes(vRing, kb.mul(stage, kb.i32(vLayout.bytes()))),
      spec.valueHeadDim / 8);
}

SmallVector<Value> DqEmitter::emitBlock(Value block, ValueRange carried) {
  Value next = kb.add(block, kb.i32(1));
  kb.cpAsyncWait(0);
  kb.barrier();
  ifThen(kb, kb.slt(next, numBlocks), [&] { issueKvLoads(next); });
  kb.cpAsyncCommit();

  Value stage = kb.andi(block, 1);
  Value kTile = kb.gepBytes(kRing, kb.mul(stage, kb.i32(kLayout.bytes())));
  Value vTile = kb.gepBytes(vRing, kb.mul(stage, kb.i32(vLayout.bytes())));
  SmallVector<Value> qPtrs = aRows->lanePointers(qTile);
  SmallVector<Value> doPtrs = aRows->lanePointers(doTile);
  SmallVector<Value> kPtrs = bRows->lanePointers(kTile);
  SmallVector<Value> vPtrs = bRows->lanePointers(vTile);

  // S = Q·Kᵀ and dP = dO·Vᵀ for this warp's 16 rows.
  SmallVector<Acc> s = warpGemmABt(kb, elt, *aRows, qPtrs, *bRows, kPtrs,
                                   kTiles, spec.mmaHeadDim());
  SmallVector<Acc> capT;
  if (spec.softcap > 0)
    capT = applySoftcap(kb, params, s, spec.softcap);
  Value kv0 = kb.mul(block, kb.i32(keys));
  // ALiBi on element e of tile nt: key kv0 + 8·nt + 2t + e%2 of row
  // q0 + 16·warp + g + 8·(e/2).
  if (alibi) {
    Value base = alibi->rowBase(
        kb.sub(kb.add(kb.add(q0, kb.mul(warp, kb.i32(16))), kb.add(g, diagonal)),
               kb.add(kv0, kb.shl(t, 1))));
    for (int64_t nt = 0; nt < kTiles; ++nt)
      for (int e = 0; e < 4; ++e)
        s[nt][e] = alibi->apply(s[nt][e], base, 8 * (e / 2) - 8 * nt - (e & 1));
  }

  // The band: element e of tile nt is key kv0 + 8·nt + 2t + e%2 of row
  // q0 + 16·warp + g + 8·(e/2), visible iff d(row) − left <= key <=
  // d(row) + right (d(i) = i + diagonal):
  //   right: 8·nt + e%2 − 8·(e/2) <= q0 + 16·warp + g + diagonal + right
  //          − kv0 − 2t;
  //   left:  8·(e/2) − 8·nt − e%2 <= left − diagonal − q0 − 16·warp − g
  //          + kv0 + 2t.
  // Keys past Nk are masked below (P would overflow for a row whose LSE
  // is below about −88, and dS·K be inf·0).
  if (spec.band.hasRight()) {
    Value reach = diagonal;
    if (spec.band.right)
      reach = kb.add(reach, kb.i32(spec.band.right));
    maskTiles(
        kb, s, kb.slt(kb.add(q0, reach), kb.add(kv0, kb.i32(keys - 1))),
        [&] {
          return kb.sub(kb.add(kb.add(q0, kb.mul(warp, kb.i32(16))),
                               kb.add(g, reach)),
                        kb.add(kv0, kb.shl(t, 1)));
        },
        /*col=*/1, /*row=*/-1);
  }
  if (spec.band.hasLeft()) {
    // The lowest key the block's last row sees.
    Value lowest = kb.sub(kb.add(q0, diagonal),
                          kb.i32(spec.band.left - (rows - 1)));
    maskTiles(
        kb, s, kb.slt(kv0, lowest),
        [&] {
          return kb.add(
              kb.sub(kb.i32(spec.band.left),
                     kb.add(kb.add(q0, kb.mul(warp, kb.i32(16))),
                            kb.add(g, diagonal))),
              kb.add(kv0, kb.shl(t, 1)));
        },
        /*col=*/-1, /*row=*/1);
  }
  // key < Nk (or the key_range's end)  <=>  8·nt + e%2 <= end − kv0 − 2t − 1.
  maskTiles(
      kb, s, kb.slt(keyEnd, kb.add(kv0, kb.i32(keys))),
      [&] {
        return kb.sub(kb.sub(keyEnd, kv0), kb.add(kb.shl(t, 1), kb.i32(1)));
      },
      /*col=*/1, /*row=*/0);
  // key_range: key >= start  <=>  −8·nt − e%2 <= kv0 + 2t − start.
  if (keyStart)
    maskTiles(
        kb, s, kb.slt(kv0, keyStart),
        [&] { return kb.sub(kb.add(kv0, kb.shl(t, 1)), keyStart); },
        /*col=*/-1, /*row=*/0);

  Value cScale =
      backwardSoftmaxConstant(kb, params["softmax_scale"], spec.softcap);
  for (int64_t nt = 0; nt < kTiles; ++nt)
    for (int e = 0; e < 4; ++e) {
      Value negLse = arith::NegFOp::create(b, loc, lseRow[e / 2]);
      s[nt][e] = kb.exp2(LLVM::FMAOp::create(b, loc, s[nt][e], cScale, negLse));
    }
  SmallVector<Acc> dp = warpGemmABt(kb, elt, *aRows, doPtrs, *bRows, vPtrs,
                                    kTiles, spec.mmaHeadDim());
  for (int64_t nt = 0; nt < kTiles; ++nt)
    for (int e = 0; e < 4; ++e)
      s[nt][e] = kb.fmul(s[nt][e], kb.fsub(dp[nt][e], deltaRow[e / 2]));
  if (spec.softcap > 0)
    scaleBySoftcapDerivative(kb, s, capT);

  // dQ += dS·K: dS from registers (the accumulator layout is the A
  // layout), K [key][d] by transposed loads.
  SmallVector<Acc> dq;
  for (int64_t i = 0; i < dTiles; ++i)
    dq.push_back({carried[4 * i], carried[4 * i + 1], carried[4 * i + 2],
                  carried[4 * i + 3]});
  SmallVector<Value> kTPtrs = bTrans->lanePointers(kTile);
  Value dqAcc = asFragment(kb, dq);
  for (int64_t kk = 0; kk < kTiles / 2; ++kk) {
    AFrag a = {kb.packPair(elt, s[2 * kk][0], s[2 * kk][1]),
               kb.packPair(elt, s[2 * kk][2], s[2 * kk][3]),
               kb.packPair(elt, s[2 * kk + 1][0], s[2 * kk + 1][1]),
               kb.packPair(elt, s[2 * kk + 1][2], s[2 * kk + 1][3])};
    for (int64_t p = 0; p < dTiles / 2; ++p) {
      auto r = kb.ldmatrixX4(bTrans->address(kTPtrs, 16 * kk, p),
                             /*transpose=*/true);
      dqAcc = warpMma(kb, elt, a, r[0], r[1], dqAcc, 2 * p);
      dqAcc = warpMma(kb, elt, a, r[2], r[3], dqAcc, 2 * p + 1);
    }
  }
  dq = asTiles(kb, dqAcc);
  SmallVector<Value> out;
  for (Acc &acc : dq)
    out.append(acc.begin(), acc.end());
  return out;
}

void DqEmitter::emit() {
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  c = setUpCommon(kb, params);
  Value lane = kb.andi(c.tid, 31);
  warp = kb.lshr(c.tid, 5);
  g = kb.lshr(lane, 2);
  t = kb.andi(lane, 3);
  diagonal = spec.band.topLeft ? kb.i32(0) : kb.sub(c.seqKv, c.seqQ);
  Value qBlock = NVVM::BlockIdXOp::create(b, loc, b.getI32Type());
  Value bh = NVVM::BlockIdYOp::create(b, loc, b.getI32Type());
  batch = kb.divu(bh, c.headsQ);
  head = kb.remu(bh, c.headsQ);
  kvHead = kb.divu(head, kb.divu(c.headsQ, c.headsKv));
  q0 = kb.mul(qBlock, kb.i32(rows));

  nvvm::KeyBounds bounds =
      nvvm::keyBoundsOf(kb, params, spec.keyRange, batch, c.seqKv);
  keyStart = bounds.start;
  keyEnd = bounds.end;
  if (spec.alibi)
    alibi.emplace(kb, params, batch, head, alibiUnit(kb, params, spec));
  // Key blocks this query block sees: [firstBlock, numBlocks), from the
  // first row's lowest key to the last row's highest (within key_range).
  Value kvEnd = keyEnd;
  if (spec.band.hasRight()) {
    Value rowsHere = kb.minsi(kb.i32(rows), kb.sub(c.seqQ, q0));
    Value end = kb.add(kb.add(q0, rowsHere), diagonal);
    if (spec.band.right)
      end = kb.add(end, kb.i32(spec.band.right));
    kvEnd = kb.minsi(kb.maxsi(end, kb.i32(0)), keyEnd);
  }
  numBlocks = kb.divu(kb.add(kvEnd, kb.i32(keys - 1)), kb.i32(keys));
  firstBlock = kb.i32(0);
  if (spec.band.hasLeft()) {
    Value lowest = kb.sub(kb.add(q0, diagonal), kb.i32(spec.band.left));
    firstBlock = kb.minsi(
        kb.divu(kb.maxsi(lowest, kb.i32(0)), kb.i32(keys)), numBlocks);
  }
  if (keyStart)
    firstBlock = kb.minsi(
        kb.maxsi(firstBlock, kb.divu(keyStart, kb.i32(keys))), numBlocks);

  Value qPtr = headBase(kb, params, "q", elt, batch, head);
  Value doPtr = headBase(kb, params, "do", elt, batch, head);
  kPtr = headBase(kb, params, "k", elt, batch, kvHead);
  vPtr = headBase(kb, params, "v", elt, batch, kvHead);

  Value smem = LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
      kSharedMemorySymbol);
  qTile = smem;
  doTile = kb.gepBytes(qTile, kb.i32(qLayout.bytes()));
  kRing = kb.gepBytes(doTile, kb.i32(doLayout.bytes()));
  vRing = kb.gepBytes(kRing, kb.i32(2 * kLayout.bytes()));

  Value matrix = kb.lshr(lane, 3);
  Value rowInMatrix = kb.andi(lane, 7);
  Value lowBit = kb.andi(matrix, 1), highBit = kb.lshr(matrix, 1);
  aRows.emplace(kb, qLayout,
                kb.add(kb.add(kb.mul(warp, kb.i32(16)), kb.shl(lowBit, 3)),
                       rowInMatrix),
                highBit);
  bRows.emplace(kb, kLayout, kb.add(kb.shl(highBit, 3), rowInMatrix), lowBit);
  bTrans.emplace(kb, kLayout, kb.add(kb.shl(lowBit, 3), rowInMatrix),
                 highBit);

  // This thread's rows: LSE·log2e (+inf past Nq or for rows without keys,
  // so that P = 0) and Δ, read once.
  Value lseBase = headBase(kb, params, "lse", b.getF32Type(), batch, head);
  Value region = workspaceRegion(kb, params, bh, c.seqQ, spec.headDim);
  Value inf = kb.f32(std::numeric_limits<double>::infinity());
  Value negInf = kb.f32(-std::numeric_limits<double>::infinity());
  for (int h = 0; h < 2; ++h) {
    Value row = kb.add(kb.add(q0, kb.mul(warp, kb.i32(16))),
                       kb.add(g, kb.i32(8 * h)));
    auto ifOp = scf::IfOp::create(b, loc,
                                  TypeRange{b.getF32Type(), b.getF32Type()},
                                  kb.slt(row, c.seqQ), /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value lse =
          loadF32(kb, kb.gep(lseBase, b.getF32Type(), kb.sext64(row)));
      Value scaled = kb.select(kb.feq(lse, negInf), inf,
                               kb.fmul(lse, kb.f32(M_LOG2E)));
      Value delta =
          loadF32(kb, kb.gep(region, b.getF32Type(), kb.sext64(row)));
      scf::YieldOp::create(b, loc, ValueRange{scaled, delta});
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange{inf, kb.f32(0.0)});
    }
    lseRow[h] = ifOp.getResult(0);
    deltaRow[h] = ifOp.getResult(1);
  }

  Value rowsLeft = kb.sub(c.seqQ, q0);
  nvvm::loadTileAsync(kb, elt, config.dqThreads(), c.tid, qPtr,
                      params.stride("q", 2), q0, rowsLeft, qLayout, qTile,
                      spec.headDim / 8);
  nvvm::loadTileAsync(kb, elt, config.dqThreads(), c.tid, doPtr,
                      params.stride("do", 2), q0, rowsLeft, doLayout, doTile,
                      spec.valueHeadDim / 8);
  ifThen(kb, kb.slt(firstBlock, numBlocks),
         [&] { issueKvLoads(firstBlock); });
  kb.cpAsyncCommit();

  Value zero = kb.f32(0.0);
  SmallVector<Value> init(4 * dTiles, zero);
  auto loop = scf::ForOp::create(
      b, loc, firstBlock, numBlocks, kb.i32(1), init,
      [&](OpBuilder &, Location, Value block, ValueRange iterArgs) {
        scf::YieldOp::create(b, loc, emitBlock(block, iterArgs));
      });

  // dQ·scale, rows < Nq, packed pairs.
  Value dqBase = headBase(kb, params, "dq", elt, batch, head);
  Value scale = params["softmax_scale"];
  for (int h = 0; h < 2; ++h) {
    Value row = kb.add(kb.add(q0, kb.mul(warp, kb.i32(16))),
                       kb.add(g, kb.i32(8 * h)));
    ifThen(kb, kb.slt(row, c.seqQ), [&] {
      Value rowPtr =
          kb.gep(dqBase, elt,
                 kb.add(kb.mul(kb.sext64(row), params.stride("dq", 2)),
                        kb.sext64(kb.shl(t, 1))));
      for (int64_t nt = 0; nt < spec.headDim / 8; ++nt) {
        Value lo = kb.fmul(loop.getResult(4 * nt + 2 * h), scale);
        Value hi = kb.fmul(loop.getResult(4 * nt + 2 * h + 1), scale);
        LLVM::StoreOp::create(b, loc, kb.packPair(elt, lo, hi),
                              kb.gep(rowPtr, elt, kb.i64(8 * nt)));
      }
    });
  }
  gpu::ReturnOp::create(b, loc);
}

gpu::GPUFuncOp createKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                            StringRef name, int64_t threads,
                            const FlashBackwardSpec &spec) {
  MLIRContext *ctx = builder.getContext();
  Location loc = module.getLoc();
  auto func = gpu::GPUFuncOp::create(
      builder, loc, name,
      builder.getFunctionType(backwardSignature(spec).types(ctx), {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  int32_t n = static_cast<int32_t>(threads);
  func.setKnownBlockSizeAttr(builder.getDenseI32ArrayAttr({n, 1, 1}));
  func->setAttr("nvvm.maxntid", builder.getDenseI32ArrayAttr({n, 1, 1}));
  return func;
}

} // namespace

void mlir::attn::emitFlashBackwardKernels(OpBuilder &builder,
                                          gpu::GPUModuleOp module,
                                          const FlashBackwardKernelNames &names,
                                          const FlashBackwardSpec &spec,
                                          const FlashBackwardConfig &config) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  if (!module.lookupSymbol(kSharedMemorySymbol))
    LLVM::GlobalOp::create(
        builder, loc, LLVM::LLVMArrayType::get(builder.getI8Type(), 0),
        /*isConstant=*/false, LLVM::Linkage::External, kSharedMemorySymbol,
        Attribute(), /*alignment=*/16, /*addrSpace=*/3);

  if (!module.lookupSymbol(names.preprocess)) {
    builder.setInsertionPointToEnd(module.getBody());
    gpu::GPUFuncOp pre = createKernel(builder, module, names.preprocess,
                                      kBackwardAuxThreads, spec);
    builder.setInsertionPointToStart(&pre.getBody().front());
    emitPreprocess(builder, loc, boundSignature(pre, spec), spec);
  }
  // An empty dkdv name: another family's dkdv kernel takes its place.
  if (!names.dkdv.empty() && !module.lookupSymbol(names.dkdv)) {
    builder.setInsertionPointToEnd(module.getBody());
    gpu::GPUFuncOp main =
        createKernel(builder, module, names.dkdv, config.threads(), spec);
    DkDvEmitter(builder, loc, main, spec, config).emit();
  }
  if (!names.dqDeterministic.empty() &&
      !module.lookupSymbol(names.dqDeterministic)) {
    builder.setInsertionPointToEnd(module.getBody());
    gpu::GPUFuncOp dq = createKernel(
        builder, module, names.dqDeterministic, config.dqThreads(), spec);
    DqEmitter(builder, loc, dq, spec, config).emit();
  }
  if (!names.convert.empty() && !module.lookupSymbol(names.convert)) {
    builder.setInsertionPointToEnd(module.getBody());
    gpu::GPUFuncOp convert = createKernel(builder, module, names.convert,
                                          kBackwardAuxThreads, spec);
    builder.setInsertionPointToStart(&convert.getBody().front());
    emitConvert(builder, loc, boundSignature(convert, spec), spec,
                config.groupedDq);
  }
}
