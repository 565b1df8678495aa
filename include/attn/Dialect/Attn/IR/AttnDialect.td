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
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Mask kinds
//===----------------------------------------------------------------------===//

def Attn_MaskNone : I32EnumAttrCase<"none", 0>;
// Causal, aligned to the bottom-right corner (FlashAttention >= 2.1): query
// row i sees key j iff j <= i + (Nk - Nq). With Nq > Nk the first Nq - Nk
// rows see no key at all; their output is 0 and their LSE is -inf.
def Attn_MaskCausal : I32EnumAttrCase<"causal", 1>;

def Attn_MaskKind : I32EnumAttr<"MaskKind", "attention mask kind",
                                [Attn_MaskNone, Attn_MaskCausal]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_MaskKindAttr : EnumAttr<Attn_Dialect, Attn_MaskKind, "mask"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
