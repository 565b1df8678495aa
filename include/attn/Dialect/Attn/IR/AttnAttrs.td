//===- AttnAttrs.td - attn dialect attributes --------------*- tablegen -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"

def Attn_KernelConfigAttr : AttrDef<Attn_Dialect, "KernelConfig"> {
  let mnemonic = "kernel_config";
  let summary = "The GPU kernel chosen for one attention";
  let description = [{
    What `attn-select-kernel-config` decided for an `attn.attention` or
    `attn.attention_grad` (its dkdv kernel), and why; `convert-attn-to-gpu`
    generates exactly this kernel. Example:

    ```mlir
    #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128,
                        stages = 2, schedule = "pingpong", persistent = true,
                        source = "heuristic", reason = "sm90a-wgmma heuristic">
    ```

    * `family`: `sm80` (mma.sync/cp.async) or `sm90a` (wgmma/TMA);
    * `block_m`, `block_n`: the tile (forward: query rows per block, keys
      per K/V stage; backward: query rows per step, keys per block);
    * `warp_rows`: query rows per warp of the sm80 forward kernel (16, 32);
    * `stages`: depth of the shared-memory ring (>= 2);
    * `schedule`: the sm90a forward consumer schedule (`pingpong`,
      `overlap`, `serial`) or the sm90a backward dQ schedule
      (`dq-pipelined`, `dq-first`, `dk-first`, `deterministic`; above head
      dim 128 `head-split`); empty for sm80;
    * `persistent`: the sm90a forward kernel's persistent grid;
    * `deterministic`: backward dQ by a separate kernel, without atomics;
    * `exp2_emulated`: sm90a forward, of every 8 columns of 8 keys how many
      take their exp2 on the FMA pipe (0 to 8);
    * `wide_producer`: sm90a forward, the 40/232 setmaxnreg split on the
      plain grid too (the persistent grid's);
    * `section_mb`: sm90a causal backward, MiB of Q and dO per section of
      the longest-first walk (0 = head-major);
    * `source`: `heuristic`, `option` (a user override) or `tuning-db`;
    * `reason`: why, in words (what `attn-compile --explain` prints).
  }];
  let parameters = (ins
    StringRefParameter<"kernel family: sm80 or sm90a">:$family,
    "int64_t":$block_m,
    "int64_t":$block_n,
    DefaultValuedParameter<"int64_t", "16", "query rows per warp">:$warp_rows,
    DefaultValuedParameter<"int64_t", "2", "ring depth">:$stages,
    StringRefParameter<"sm90a schedule", [{""}]>:$schedule,
    DefaultValuedParameter<"bool", "false", "persistent grid">:$persistent,
    DefaultValuedParameter<"bool", "false", "dQ without atomics">:
        $deterministic,
    DefaultValuedParameter<"int64_t", "0", "exp2 on the FMA pipe">:
        $exp2_emulated,
    DefaultValuedParameter<"bool", "false", "40/232 register split">:
        $wide_producer,
    DefaultValuedParameter<"int64_t", "32", "backward walk section, MiB">:
        $section_mb,
    StringRefParameter<"heuristic, option or tuning-db">:$source,
    StringRefParameter<"why this kernel">:$reason
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Launch data: what convert-attn-to-gpu tells the compiler, the runtime and
// the host lowering about the kernels it generated.
//===----------------------------------------------------------------------===//

// The runtime's GridPolicy (attn/Runtime/LaunchGrid.h), which defines the
// grids; the names are the manifest's.
def Attn_GridQueryTiles : I32EnumAttrCase<"query_tiles", 0>;
def Attn_GridLengthMajor : I32EnumAttrCase<"length_major", 1>;
def Attn_GridPersistent : I32EnumAttrCase<"persistent", 2>;
def Attn_GridKeyTiles : I32EnumAttrCase<"key_tiles", 3>;

def Attn_GridPolicy : I32EnumAttr<"GridPolicy", "launch grid policy",
                                  [Attn_GridQueryTiles, Attn_GridLengthMajor,
                                   Attn_GridPersistent, Attn_GridKeyTiles]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_GridAttr : AttrDef<Attn_Dialect, "Grid"> {
  let mnemonic = "grid";
  let summary = "A kernel's launch grid: a policy and its block rows";
  let description = [{
    How a kernel's blocks cover the problem; the grid itself follows from
    the run-time sizes (docs/kernel-abi.md, "Launch";
    `attn/Runtime/LaunchGrid.h` defines it, the host lowering builds the
    same arithmetic in IR). Example:

    ```mlir
    #attn.grid<persistent, block_rows = 128>
    ```

    * `query_tiles`: (ceil(seq_q / block_rows), batch * heads_q);
    * `length_major`: (ceil(seq_q / block_rows) * heads_q, batch);
    * `persistent`: (max(1, min(T, max(floor(num_sms / batch),
      T * floor(seq_q / 4096)))), batch), T = ceil(seq_q / block_rows) *
      heads_q;
    * `key_tiles`: (ceil(seq_kv / block_rows), batch * heads_kv).
  }];
  let parameters = (ins EnumParameter<Attn_GridPolicy>:$policy,
                        "int64_t":$block_rows);
  let assemblyFormat = "`<` $policy `,` `block_rows` `=` $block_rows `>`";
  let genVerifyDecl = 1;
}

// A nested attribute, printed whole (`#attn.grid<...>`, not stripped).
class Attn_NestedAttrParameter<string cppType, string desc>
    : AttrParameter<cppType, desc> {
  let printer = [{$_printer.printAttribute($_self)}];
}

// A list of nested attributes in brackets, `[]` when empty (the default).
class Attn_NestedAttrListParameter<string elementType, string desc>
    : OptionalArrayRefParameter<elementType, desc> {
  let parser = [{::mlir::attn::parseAttrList<}] # elementType #
               [{>($_parser)}];
  let printer = [{::mlir::attn::printAttrList($_printer, $_self)}];
}

def Attn_TensorMapAttr : AttrDef<Attn_Dialect, "TensorMap"> {
  let mnemonic = "tensor_map";
  let summary = "A TMA descriptor parameter the runtime encodes";
  let description = [{
    One 128-byte `__grid_constant__` kernel parameter (docs/kernel-abi.md):
    a 4-D tiled map of `tensor` (q, k, v, o or do) with a box of
    {box_cols, box_rows, 1, 1} elements and 128-byte swizzle. Example:

    ```mlir
    #attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64,
                     box_rows = 128>
    ```
  }];
  let parameters = (ins StringRefParameter<"kernel parameter name">:$name,
                        StringRefParameter<"q, k, v, o or do">:$tensor,
                        "int64_t":$box_cols,
                        "int64_t":$box_rows);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_KernelLaunchAttr : AttrDef<Attn_Dialect, "KernelLaunch"> {
  let mnemonic = "kernel_launch";
  let summary = "One kernel of a backward launch sequence";
  let description = [{
    A kernel the runtime launches for an `attn.attention_grad`, in
    `#attn.launch`'s `kernels` order. Example:

    ```mlir
    #attn.kernel_launch<role = "preprocess", entry = "attn_bwd_..._pre",
                        threads = 128, dynamic_shared_memory = 0,
                        grid = #attn.grid<query_tiles, block_rows = 16>>
    ```

    `role` is `preprocess`, `dkdv`, `convert` or `dq` (docs/kernel-abi.md,
    "Backward").
  }];
  let parameters = (ins
    StringRefParameter<"preprocess, dkdv, convert or dq">:$role,
    StringRefParameter<"kernel symbol">:$entry,
    "int64_t":$threads,
    "int64_t":$dynamic_shared_memory,
    Attn_NestedAttrParameter<"GridAttr", "launch grid">:$grid
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_LaunchAttr : AttrDef<Attn_Dialect, "Launch"> {
  let mnemonic = "launch";
  let summary = "How to launch the kernels generated for one attention";
  let description = [{
    What `convert-attn-to-gpu` leaves on an `attn.attention` or
    `attn.attention_grad` (as `attn.launch`, next to `attn.kernel`) for
    `attn-compile`'s manifest and the host lowering
    (`convert-attn-to-gpu-launch`). Example:

    ```mlir
    #attn.launch<family = "sm90a-wgmma", block_m = 128, block_n = 128,
                 threads = 384, dynamic_shared_memory = 164944,
                 grid = #attn.grid<length_major, block_rows = 128>,
                 tensor_maps = [#attn.tensor_map<name = "q_tmap", ...>, ...],
                 source = "heuristic">
    ```

    * `family`: `sm80-mma` or `sm90a-wgmma` (the manifest's family), whose
      kernels take TMA descriptors, `tensor_maps`, after the others;
    * `block_m`, `block_n`, `warp_rows`, `stages`: the tile (as in
      `#attn.kernel_config`);
    * `threads`, `dynamic_shared_memory`, `grid`: the (main) kernel's
      block, shared memory bytes and grid; a forward grid's block rows are
      `block_m`;
    * `kernels`: a backward's launches in order, `preprocess`, `dkdv`, then
      `convert` (`dq` when `deterministic`); the top-level `threads`,
      `dynamic_shared_memory` and `grid` are the `dkdv` kernel's. Empty for
      a forward;
    * `schedule`: the sm90a-wgmma dkdv kernel's dQ schedule;
    * `source`: `heuristic`, `option` or `tuning-db` (the tile's).
  }];
  let parameters = (ins
    StringRefParameter<"sm80-mma or sm90a-wgmma">:$family,
    "int64_t":$block_m,
    "int64_t":$block_n,
    DefaultValuedParameter<"int64_t", "16", "query rows per warp">:$warp_rows,
    DefaultValuedParameter<"int64_t", "2", "ring depth">:$stages,
    "int64_t":$threads,
    "int64_t":$dynamic_shared_memory,
    Attn_NestedAttrParameter<"GridAttr", "the (main) kernel's grid">:$grid,
    Attn_NestedAttrListParameter<"TensorMapAttr", "TMA descriptors">:
        $tensor_maps,
    Attn_NestedAttrListParameter<"KernelLaunchAttr", "backward launches">:
        $kernels,
    DefaultValuedParameter<"bool", "false", "dQ without atomics">:
        $deterministic,
    StringRefParameter<"sm90a-wgmma backward dQ schedule", [{""}]>:$schedule,
    StringRefParameter<"heuristic, option or tuning-db">:$source
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
