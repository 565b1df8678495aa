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
      (`dq-pipelined`, `dq-first`, `dk-first`, `deterministic`); empty for
      sm80;
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

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
