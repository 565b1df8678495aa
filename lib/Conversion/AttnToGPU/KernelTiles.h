//===- KernelTiles.h - swizzled shared-memory tiles -------------*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// Shared-memory tiles of 16-bit elements as the sm80-family kernels (forward
// and backward) use them: XOR-swizzled 16-byte chunks, filled by cp.async
// from global memory and read by ldmatrix.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELTILES_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELTILES_H

#include "KernelSignature.h"
#include "attn/Dialect/AttnGPU/Utils/KernelBuilder.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace mlir::attn::nvvm {

/// Geometry of a shared-memory tile of 16-bit elements whose rows are split
/// into 16-byte chunks, XOR-swizzled so that the 8 row addresses of an
/// ldmatrix (and of a cp.async wave) hit 8 different bank groups.
struct TileLayout {
  int64_t rows = 0;
  int64_t chunks = 0;       // 16-byte chunks per row (row width / 8)
  int64_t swizzleMod = 1;   // M: chunk ^= (row / R) % M
  int64_t swizzleShift = 0; // log2(R)

  TileLayout(int64_t rows, int64_t width) : rows(rows), chunks(width / 8) {
    swizzleMod = std::min<int64_t>(8, chunks);
    swizzleShift = llvm::Log2_64(8 / swizzleMod);
  }
  int64_t rowBytes() const { return chunks * 16; }
  int64_t bytes() const { return rows * rowBytes(); }
};

/// Address of 16-byte chunk `chunk` of row `row` (i32 values) of a tile.
Value swizzledAddress(KernelBuilder &kb, Value tileBase,
                      const TileLayout &layout, Value row, Value chunk);

/// Cooperative cp.async of a [layout.rows, width] tile of `elementType`
/// starting at global row `row0` (row stride `rowStride` elements, i64) by
/// `threads` threads; rows at or past `rowsLeft` are zero-filled.
///
/// Thread `tid` copies chunk tid % C of rows tid / C + w·(T / C), w = 0, 1..:
/// successive copies of one thread differ by one row stride multiple in
/// global memory and, when T / C is a multiple of 8 (the swizzle period),
/// by a constant in shared memory, so each copy costs an add, not a fresh
/// address computation. `validChunks` (0 = all) zero-fills the chunks of
/// each row past it: a head dim padded to the layout's width.
void loadTileAsync(KernelBuilder &kb, Type elementType, int64_t threads,
                   Value tid, Value globalBase, Value rowStride, Value row0,
                   Value rowsLeft, const TileLayout &layout, Value sharedTile,
                   int64_t validChunks = 0);

/// Addresses of one lane's ldmatrix rows in a swizzled tile, split into a
/// few lane-dependent offsets computed once and compile-time constants, so
/// that the unrolled fragment loads do not each keep an address register.
///
/// Fragment (rowBase + rowLane, 2·pair + chunkLane) lives at chunk
/// (2·pair + chunkLane) ^ swizzle(rowLane): with M = swizzleMod, pairs that
/// agree modulo M/2 share the lane-dependent part and differ by
/// M·(pair / (M/2)) chunks. rowBase must be a multiple of 8.
class FragmentAddresses {
public:
  FragmentAddresses(KernelBuilder &kb, const TileLayout &layout,
                    Value rowLane, Value chunkLane);

  /// This lane's row pointers into the tile at `tileBase`, one per pair
  /// class. They are pinned (see KernelBuilder::pin) so that LLVM cannot
  /// fold each fragment's constant offset into its own hoisted register:
  /// the offsets stay instruction immediates.
  SmallVector<Value> lanePointers(Value tileBase);

  /// Address of fragment (rowBase + rowLane, 2·pair + chunkLane).
  Value address(ArrayRef<Value> lanePtrs, int64_t rowBase, int64_t pair);

private:
  KernelBuilder &kb;
  TileLayout layout;
  SmallVector<Value> laneOffsets;
};

/// The mask of a forward key block's scores (both forward families): an
/// attn_gpu.mask_scores of the warp's score fragments `scores` (fragment
/// i: rows 16·i on) for a thread whose first key is kv0 + 2t and whose
/// first row is `firstRow()` (built after the key limit, with a band only):
/// keys from `keyEnd` on, before `keyStart` (when given, key_range) and
/// outside the band (d(row) = row + bandOffset) become -inf.
SmallVector<Value> maskScores(KernelBuilder &kb, const MaskBand &band,
                              ValueRange scores, Value kv0, Value t,
                              Value keyStart, Value keyEnd, Value bandOffset,
                              llvm::function_ref<Value()> firstRow);

/// The keys batch entry `batch` sees, [start, end): with `keyRange`, read
/// from the kernel's key_start/key_end parameters (i32 [B]) and clamped to
/// [0, seqKv], end at least start; without, start is null and end seqKv.
struct KeyBounds {
  Value start, end;
};
KeyBounds keyBoundsOf(KernelBuilder &kb, const KernelSignature &params,
                      bool keyRange, Value batch, Value seqKv);
/// A backward dkdv block's walk length `numSteps`, or 0 when its keys
/// [kv0, kv0 + blockN) miss `bounds` (dK and dV stay 0).
Value keyBlockSteps(KernelBuilder &kb, Value numSteps, Value kv0,
                    int64_t blockN, const KeyBounds &bounds);

/// The key blocks a forward query block walks (both forward families):
/// rows [q0, q0 + rows) see keys [d(q0) − left, d(q0 + rows − 1) + right]
/// within `keys`, with d(i) = i + bandOffset, so the blocks outside are
/// never loaded; blocks in [firstFull, numFull) lie inside the band and
/// the key range for every row and need no mask.
struct ForwardKeyWalk {
  Value firstBlock, numBlocks; // blocks [firstBlock, numBlocks)
  Value firstFull, numFull;    // unmasked blocks [firstFull, numFull)
};
ForwardKeyWalk forwardKeyWalk(KernelBuilder &kb, const MaskBand &band,
                              int64_t blockN, Value q0, Value rows,
                              Value bandOffset, Value seqKv,
                              const KeyBounds &keys);

/// The query blocks a backward dkdv thread block walks for its keys
/// [kv0, kv0 + blockN) (both backward families): from the first whose rows
/// can see one of them to the last, for each of the `groupSize` query heads
/// of the kv head. Row i sees key j iff d(i) − left <= j <= d(i) + right
/// with d(i) = i + diagonal (MaskBand; an unbounded side bounds nothing).
/// A key block no row sees walks no block (qSteps = 0).
struct BackwardQueryWalk {
  Value qStart;   // first query block
  Value qSteps;   // query blocks per query head
  Value numSteps; // qSteps · groupSize
};
BackwardQueryWalk backwardQueryWalk(KernelBuilder &kb, Value seqQ,
                                    int64_t blockM, int64_t blockN, Value kv0,
                                    Value diagonal, const MaskBand &band,
                                    Value groupSize);

/// What multiplies a (masked) score in the backward's P = exp2(score · c −
/// LSE·log2e) (both families): scale·log2e, or C·log2e where the score is
/// the softcap C's t = tanh(s · scale / C).
Value backwardSoftmaxConstant(KernelBuilder &kb, Value softmaxScale,
                              double softcap);

/// ALiBi in a kernel (all four): a score u that the softmax multiplies by
/// c (raw Q·Kᵀ with c = scale·log2e, the softcap's t with c = C·log2e, a
/// natural-domain score with c = log2e) becomes u + factor·|d(i) − j| with
/// factor = −slope / (c / log2e), so that c·u' = c·u − slope·log2e·|d(i) −
/// j|: one FADD and one FFMA per score beside the softmax's own.
class AlibiTerm {
public:
  /// Reads the slope of (`batch`, query `head`) from the kernel's
  /// alibi_slopes (f32, alibi_slopes[batch · alibi_slopes_stride_b + head])
  /// and divides it by `unit` (c / log2e; null: 1).
  AlibiTerm(KernelBuilder &kb, const KernelSignature &params, Value batch,
            Value head, Value unit);
  /// The f32 form of `base` (i32): a thread's d(i) − j at its first
  /// element; each element adds a compile-time offset (exact below 2^24).
  Value rowBase(Value base) const;
  /// u + factor · |rowBase + offset|.
  Value apply(Value u, Value rowBaseF32, int64_t offset) const;

private:
  KernelBuilder &kb;
  Value factor;
};

} // namespace mlir::attn::nvvm

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_KERNELTILES_H
