//===- AttnGPUTypes.td - attn_gpu's fragment type ----------*- tablegen -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNGPU_IR_ATTNGPUTYPES_TD
#define ATTN_DIALECT_ATTNGPU_IR_ATTNGPUTYPES_TD

include "mlir/IR/AttrTypeBase.td"

class AttnGPU_Type<string name, string typeMnemonic>
    : TypeDef<AttnGPU_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def AttnGPU_FragmentType : AttnGPU_Type<"Fragment", "frag"> {
  let summary = "One warp's 16 rows of a tile, spread over its 32 lanes";
  let description = [{
    A tile of `rows` x `cols` elements held in the registers of one warp
    (the warp's 16 rows of a warpgroup's m64 tile, or an mma.sync m16
    tile), each thread holding its part in a fixed `layout`. With
    g = lane / 4 and t = lane % 4:

    * `acc`: the f32 accumulator (C/D) layout of mma.m16n8 and
      wgmma.m64nN: `cols / 2` f32 registers; register 4·j + e holds row
      g + 8·(e / 2), column 8·j + 2t + e % 2.
    * `a`: the A-operand layout of mma.m16n8k16 and register-A wgmma,
      16-bit elements packed in pairs: `cols / 4` i32 registers; register
      4·k + r holds row g + 8·(r % 2), columns 16·k + 8·(r / 2) + 2t and
      the one after (low half first).
    * `rows`: one f32 per row (the online softmax's running max, sum and
      rescaling factor): 2 registers, rows g and g + 8, the same in the
      four threads of a row (`cols` is 1).

    The layout fixes which thread holds which element, so ops on fragments
    (masking, the online softmax, MMAs) are exact without naming lanes.
    `lower-attn-gpu-tiles` replaces each fragment by its registers.

    ```mlir
    !attn_gpu.frag<16x128xf32, acc>
    !attn_gpu.frag<16x128xbf16, a>
    !attn_gpu.frag<16x1xf32, rows>
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$cols,
                        "::mlir::Type":$elementType,
                        "::mlir::attn_gpu::FragmentLayout":$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Registers per thread (cols/2 f32, cols/4 i32, or 2 f32).
    int64_t getRegisterCount() const;
    /// f32, or i32 for the packed `a` layout.
    ::mlir::Type getRegisterType() const;
    /// An m16 fragment of `cols` columns.
    static FragmentType getAccumulator(::mlir::MLIRContext *context,
                                       int64_t cols);
    static FragmentType getRows(::mlir::MLIRContext *context);
    static FragmentType getOperandA(::mlir::Type elementType, int64_t cols);
  }];
}

def AttnGPU_RingType : AttnGPU_Type<"Ring", "ring"> {
  let summary = "A ring of shared-memory tiles as TMA writes them";
  let description = [{
    `stages` tiles of `rows` x `cols` 16-bit elements in shared memory, one
    after another, each in the layout TMA writes with 128-byte swizzle and
    wgmma reads: 64-column panels (`rows` rows of 128 bytes each, the
    16-byte chunks of row r XOR-permuted by r % 8), panel after panel. The
    K/V ring of the forward kernel, the Q/dO ring of the backward: a
    producer fills stage s while consumers read the others. The type fixes
    each tile's and panel's bytes and how a wgmma descriptor strides
    through a tile (`ring_descriptor`); `lower-attn-gpu-tiles` turns a
    ring into its base pointer.

    ```mlir
    !attn_gpu.ring<2x128x128xbf16>
    ```
  }];
  let parameters = (ins "int64_t":$stages, "int64_t":$rows, "int64_t":$cols,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of one 64-column panel (rows x 128) and of one tile.
    int64_t getPanelBytes() const { return getRows() * 128; }
    int64_t getTileBytes() const { return getRows() * getCols() * 2; }
  }];
}

def AttnGPU_AccFragment : Type<
    CPred<"::llvm::isa<::mlir::attn_gpu::FragmentType>($_self) && "
          "::llvm::cast<::mlir::attn_gpu::FragmentType>($_self).getLayout() "
          "== ::mlir::attn_gpu::FragmentLayout::Accumulator">,
    "an accumulator fragment", "::mlir::attn_gpu::FragmentType">;
def AttnGPU_OperandAFragment : Type<
    CPred<"::llvm::isa<::mlir::attn_gpu::FragmentType>($_self) && "
          "::llvm::cast<::mlir::attn_gpu::FragmentType>($_self).getLayout() "
          "== ::mlir::attn_gpu::FragmentLayout::OperandA">,
    "an A-operand fragment", "::mlir::attn_gpu::FragmentType">;
def AttnGPU_RowsFragment : Type<
    CPred<"::llvm::isa<::mlir::attn_gpu::FragmentType>($_self) && "
          "::llvm::cast<::mlir::attn_gpu::FragmentType>($_self).getLayout() "
          "== ::mlir::attn_gpu::FragmentLayout::Rows">,
    "a per-row fragment", "::mlir::attn_gpu::FragmentType">,
    BuildableType<"::mlir::attn_gpu::FragmentType::getRows($_builder.getContext())">;

#endif // ATTN_DIALECT_ATTNGPU_IR_ATTNGPUTYPES_TD
