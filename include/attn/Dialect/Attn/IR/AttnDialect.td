//===- AttnDialect.td - attn dialect definition ------------*- tablegen -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
#define ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Exact attention (FlashAttention) as a first-class operation";
  let description = [{
    The `attn` dialect represents scaled dot-product attention as one operation
    on whole tensors (`attn.attention`) and the tile-level operations that the
    FlashAttention lowering produces on the way to CPU and GPU code.
  }];
  let useDefaultAttributePrinterParser = 1;
  // The softcap sugar expands into arith and math ops.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Mask kinds
//===----------------------------------------------------------------------===//

def Attn_MaskNone : I32EnumAttrCase<"none", 0>;
// Every mask is a band of keys around a diagonal. Query row i is aligned
// with key row d(i) = i + (Nk - Nq) (bottom-right, FlashAttention >= 2.1's
// convention) or d(i) = i (top-left, PyTorch's `is_causal`); row i sees key j
// iff d(i) - left <= j <= d(i) + right. The two coincide when Nq == Nk. Rows
// that see no key (e.g. the first Nq - Nk rows of a bottom-right causal mask
// with Nq > Nk) give output 0 and LSE -inf.
// causal: left unbounded, right 0, bottom-right.
def Attn_MaskCausal : I32EnumAttrCase<"causal", 1>;
// causal_top_left: left unbounded, right 0, top-left (torch is_causal=True).
def Attn_MaskCausalTopLeft : I32EnumAttrCase<"causal_top_left", 2>;
// sliding / sliding_top_left: `window [left, right]` gives both bounds; -1
// leaves a side unbounded (FlashAttention's window_size).
def Attn_MaskSliding : I32EnumAttrCase<"sliding", 3>;
def Attn_MaskSlidingTopLeft : I32EnumAttrCase<"sliding_top_left", 4>;

def Attn_MaskKind : I32EnumAttr<"MaskKind", "attention mask kind",
                                [Attn_MaskNone, Attn_MaskCausal,
                                 Attn_MaskCausalTopLeft, Attn_MaskSliding,
                                 Attn_MaskSlidingTopLeft]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_MaskKindAttr : EnumAttr<Attn_Dialect, Attn_MaskKind, "mask"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
