// RUN: attn-opt %s --attn-select-kernel-config | FileCheck %s
// RUN: attn-opt %s --attn-select-kernel-config="chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --attn-select-kernel-config="family=sm80" | FileCheck %s --check-prefix=FAMILY
// RUN: attn-opt %s --attn-select-kernel-config="block-m=64 block-n=128" | FileCheck %s --check-prefix=TILE
// RUN: attn-opt %s --attn-select-kernel-config="stages=3" | FileCheck %s --check-prefix=STAGES
// RUN: attn-opt %s --attn-select-kernel-config="deterministic=true" | FileCheck %s --check-prefix=DET
// RUN: attn-opt %s --attn-select-kernel-config="sm90-schedule=serial+persistent" | FileCheck %s --check-prefix=SCHED
// RUN: attn-opt %s --attn-select-kernel-config="sm90-schedule=dk-first" | FileCheck %s --check-prefix=BWDSCHED
// RUN: attn-opt %s --attn-select-kernel-config="exp2-emulated=3 wide-producer=true section-mb=8" | FileCheck %s --check-prefix=KNOBS
// warp-rows is an sm80 forward option (the backward kernels refuse it):
// family auto takes sm80 for it.
// RUN: attn-opt %S/../Tuning/Inputs/causal-gqa.mlir --attn-select-kernel-config="warp-rows=32" | FileCheck %s --check-prefix=WARP
// convert-attn-to-gpu generates what the selection chose.
// RUN: attn-opt %s --attn-select-kernel-config="block-m=64 block-n=128" --convert-attn-to-gpu | FileCheck %s --check-prefix=CONVERT
// Tuning database lookups (test/Tuning/Inputs), forward and backward.
// RUN: env ATTN_COMPILER_VERSION=test-compiler attn-opt %S/../Tuning/Inputs/causal-gqa.mlir --attn-select-kernel-config="tuning-db=%S/../Tuning/Inputs/lookup-db.json family=sm80" | FileCheck %s --check-prefix=DB
// RUN: env ATTN_COMPILER_VERSION=test-compiler attn-opt %s --attn-select-kernel-config="tuning-db=%S/../Tuning/Inputs/lookup-db-bwd.json family=sm80" | FileCheck %s --check-prefix=DB-BWD
// RUN: env ATTN_COMPILER_VERSION=test-compiler attn-opt %s --attn-select-kernel-config="tuning-db=%S/../Tuning/Inputs/lookup-db-bwd.json" | FileCheck %s --check-prefix=DB-AUTO
// RUN: env ATTN_COMPILER_VERSION=test-compiler attn-opt %S/../Tuning/Inputs/causal-gqa.mlir --attn-select-kernel-config="tuning-db=none family=sm80" | FileCheck %s --check-prefix=DB-NONE

// Forward: the sm90a-wgmma heuristic on sm_90a; backward: the sm90a dkdv
// kernel with the pipelined dQ at D = 64.
// CHECK-LABEL: func.func @both
// CHECK: attn.attention
// CHECK-SAME: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "pingpong", source = "heuristic", reason = "family auto chose sm90a-wgmma (chip sm_90a, the attention fits it); sm90a-wgmma heuristic">
// CHECK: attn.attention_grad
// CHECK-SAME: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "dq-pipelined", source = "heuristic", reason = "no tuning database (tuning-db, $ATTN_TUNING_DB)">

// SM80: attn.kernel_config = #attn.kernel_config<family = "sm80", block_m = 128, block_n = 64, warp_rows = 32, source = "heuristic", reason = "family auto chose sm80-mma (chip 'sm_80' is not supported by the sm90a-wgmma forward kernels: they need sm_90a (wgmma and setmaxnreg are sm_90a-only)); no tuning database (tuning-db, $ATTN_TUNING_DB)">
// SM80: attn.kernel_config = #attn.kernel_config<family = "sm80", block_m = 64, block_n = 128, source = "heuristic", reason = "no tuning database (tuning-db, $ATTN_TUNING_DB)">

// FAMILY: attn.kernel_config = #attn.kernel_config<family = "sm80", block_m = 128, block_n = 64, warp_rows = 32, source = "heuristic", reason = "no tuning database (tuning-db, $ATTN_TUNING_DB)">
// FAMILY: attn.kernel_config = #attn.kernel_config<family = "sm80", block_m = 64, block_n = 128, source = "heuristic", reason = "no tuning database (tuning-db, $ATTN_TUNING_DB)">

// One consumer warpgroup: no ping-pong partner.
// TILE: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 64, block_n = 128, schedule = "overlap", source = "option", reason = "block-m/block-n given">
// TILE: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 64, block_n = 128, schedule = "dq-pipelined", source = "option", reason = "block-m/block-n/stages/sm90-schedule given">

// STAGES: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, stages = 3, schedule = "pingpong", source = "option", reason = "stages given">
// STAGES: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 64, block_n = 128, stages = 3, schedule = "dq-pipelined", source = "option", reason = "block-m/block-n/stages/sm90-schedule given">

// DET: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "pingpong", source = "heuristic"
// DET: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "deterministic", deterministic = true, section_mb = 0, source = "heuristic"

// SCHED: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "serial", persistent = true, source = "heuristic"
// SCHED: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "dq-pipelined", source = "heuristic"

// BWDSCHED: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "pingpong", source = "heuristic"
// BWDSCHED: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "dk-first", source = "option", reason = "block-m/block-n/stages/sm90-schedule given">

// KNOBS: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "pingpong", exp2_emulated = 3, wide_producer = true, source = "heuristic"
// KNOBS: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "dq-pipelined", section_mb = 8, source = "heuristic"

// WARP: attn.kernel_config = #attn.kernel_config<family = "sm80", block_m = 128, block_n = 64, warp_rows = 32, source = "option", reason = "family auto chose sm80-mma (warp-rows is not supported by the sm90a-wgmma forward kernels: an sm80-mma forward option); block-m/block-n/warp-rows given">

// CONVERT: attn.kernel = @attn_kernels::@attn_fwd_sm90_d128_bf16_causal_m64n128s2
// CONVERT-SAME: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 64, block_n = 128
// CONVERT-SAME: attn.launch = #attn.launch<family = "sm90a-wgmma", block_m = 64, block_n = 128,
// CONVERT-SAME: grid = #attn.grid<length_major, block_rows = 64>
// CONVERT: attn.kernel = @attn_kernels::@attn_bwd_sm90_d64_bf16_causal_dkdv_n128m64s2
// CONVERT-SAME: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 64, block_n = 128
// CONVERT-SAME: attn.launch = #attn.launch<family = "sm90a-wgmma", block_m = 64, block_n = 128,
// CONVERT-SAME: grid = #attn.grid<key_tiles, block_rows = 128>
// CONVERT-SAME: kernels = [#attn.kernel_launch<role = "preprocess",
// CONVERT-SAME: schedule = "dq-pipelined"

// DB: attn.kernel_config = #attn.kernel_config<family = "sm80", block_m = 64, block_n = 32, source = "tuning-db", reason = "tuning database '{{.*}}lookup-db.json': hit: Test GPU (8 SMs): fwd bf16 d64 g4 causal q256 kv512 sm_90a sm80-mma compiler=test-compiler -> m64n32r16s2">
// DB-NONE: attn.kernel_config = #attn.kernel_config<family = "sm80", block_m = 128, block_n = 64, warp_rows = 32, source = "heuristic", reason = "no tuning database (tuning-db, $ATTN_TUNING_DB)">

// The backward database holds no forward entry (a miss, the heuristic);
// its sm80-mma entry for the grad op, or with family auto its
// sm90a-wgmma winner.
// DB-BWD: attn.kernel_config = #attn.kernel_config<family = "sm80", block_m = 128, block_n = 64, warp_rows = 32, source = "heuristic", reason = "tuning database '{{.*}}lookup-db-bwd.json': miss: no entry for fwd bf16 d128 g4 causal q256 kv512 sm_90a sm80-mma compiler=test-compiler">
// DB-BWD: attn.kernel_config = #attn.kernel_config<family = "sm80", block_m = 32, block_n = 64, source = "tuning-db", reason = "tuning database '{{.*}}lookup-db-bwd.json': hit: Test GPU (8 SMs): bwd bf16 d64 g1 causal q1024 kv1024 sm_90a sm80-mma compiler=test-compiler -> m32n64r16s2">
// DB-AUTO: attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 64, block_n = 128, stages = 3, schedule = "dq-first", source = "tuning-db", reason = "tuning database '{{.*}}lookup-db-bwd.json': hit: Test GPU (8 SMs): bwd bf16 d64 g1 causal q1024 kv1024 sm_90a auto compiler=test-compiler -> wg-m64n128s3-dqfirst">

// One module with both directions: a forward sm90-schedule name is the
// forward op's, a backward one the attention_grad's.
func.func @both(%q: tensor<1x8x200x128xbf16>, %k: tensor<1x2x300x128xbf16>,
                %v: tensor<1x2x300x128xbf16>, %g: tensor<1x2x1000x64xbf16>,
                %glse: tensor<1x2x1000xf32>)
    -> (tensor<1x8x200x128xbf16>, tensor<1x2x1000x64xbf16>) {
  %o, %lse = attn.attention %q, %k, %v mask <causal>
      : tensor<1x8x200x128xbf16>, tensor<1x2x300x128xbf16>,
        tensor<1x2x300x128xbf16> -> tensor<1x8x200x128xbf16>, tensor<1x8x200xf32>
  %dq, %dk, %dv = attn.attention_grad %g, %g, %g, %g, %g, %glse mask <causal>
      : tensor<1x2x1000x64xbf16>, tensor<1x2x1000x64xbf16>,
        tensor<1x2x1000x64xbf16>, tensor<1x2x1000x64xbf16>,
        tensor<1x2x1000x64xbf16>, tensor<1x2x1000xf32>
      -> tensor<1x2x1000x64xbf16>, tensor<1x2x1000x64xbf16>,
         tensor<1x2x1000x64xbf16>
  return %o, %dq : tensor<1x8x200x128xbf16>, tensor<1x2x1000x64xbf16>
}
