// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a" --split-input-file -verify-diagnostics
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a chip=sm_80" --split-input-file 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a block-n=64" --split-input-file 2>&1 | FileCheck %s --check-prefix=BLOCKN
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a block-m=32" --split-input-file 2>&1 | FileCheck %s --check-prefix=BLOCKM
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a stages=5" --split-input-file 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a sm90-schedule=zigzag" --split-input-file 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm80 sm90-schedule=dk-first" --split-input-file 2>&1 | FileCheck %s --check-prefix=SCHED80
// RUN: not attn-opt %s --convert-attn-to-gpu="family=auto chip=sm_80 stages=3" --split-input-file 2>&1 | FileCheck %s --check-prefix=STAGES80
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a stages=3 sm90-schedule=dk-first" --split-input-file 2>&1 | FileCheck %s --check-prefix=KNOBS
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm80 warp-rows=16" --split-input-file 2>&1 | FileCheck %s --check-prefix=WR
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a sm90-schedule=pingpong" --split-input-file 2>&1 | FileCheck %s --check-prefix=FWDSCHED
// RUN: attn-opt %s --convert-attn-to-gpu="family=auto chip=sm_80" --split-input-file | FileCheck %s --check-prefix=AUTO80
// RUN: attn-opt %s --convert-attn-to-gpu="family=auto" --split-input-file | FileCheck %s --check-prefix=AUTO90

// CHIP: cannot be compiled for the GPU: chip 'sm_80' is not supported by the sm90a-wgmma backward kernels: they need sm_90a (wgmma and setmaxnreg are sm_90a-only)
// BLOCKN: cannot be compiled for the GPU: block-n of the sm90a backward kernel at head dim 64 must be 128, two consumer warpgroups of 64 keys (got 64)
// BLOCKM: cannot be compiled for the GPU: block-m of the sm90a backward kernel must be 64, 80 or 128 (got 32)
// STAGES: cannot be compiled for the GPU: stages 5 is not supported by the sm90a-wgmma backward kernels: they take 2 to 4
// SCHED: cannot be compiled for the GPU: sm90-schedule of the sm90a backward kernel must be dq-pipelined, dq-first or dk-first (got 'zigzag')
// SCHED80: cannot be compiled for the GPU: sm90-schedule dk-first is not supported by the sm80-mma backward kernels: an sm90a-wgmma option
// STAGES80: cannot be compiled for the GPU: stages 3 is not supported by the sm80-mma backward kernels: they take 2 (family auto; and chip 'sm_80' is not supported by the sm90a-wgmma backward kernels: they need sm_90a (wgmma and setmaxnreg are sm_90a-only))
// Options of the forward kernels are refused, not dropped (a forward
// schedule is the forward ops' only where the module has some).
// WR: cannot be compiled for the GPU: warp-rows is not supported by the sm80-mma backward kernels: an sm80-mma forward option
// FWDSCHED: cannot be compiled for the GPU: sm90-schedule of the sm90a backward kernel must be dq-pipelined, dq-first or dk-first (got 'pingpong')
// The ring depth and the dQ schedule: the kernel's name and the launch
// (the head-dim-32 split below fails with family=sm90a).
// KNOBS: attn.kernel = @attn_kernels::@attn_bwd_sm90_d64_bf16_dkdv_n128m64s3_dkf
// KNOBS-SAME: attn.launch = #attn.launch<family = "sm90a-wgmma", block_m = 64, block_n = 128, stages = 3,
// KNOBS-SAME: grid = #attn.grid<key_tiles, block_rows = 128>
// KNOBS-SAME: #attn.kernel_launch<role = "dkdv", entry = "attn_bwd_sm90_d64_bf16_dkdv_n128m64s3_dkf", threads = 384,
// KNOBS-SAME: schedule = "dk-first", source = "option">
// family=auto: the sm80 dkdv kernel where the Hopper one cannot run, the
// Hopper one on sm_90a (at D = 64, 128 query rows per step).
// AUTO80: family = "sm80-mma"
// AUTO80-NOT: attn_bwd_sm90
// AUTO90: attn.kernel = @attn_kernels::@attn_bwd_sm90_d64_bf16_dkdv_n128m128s2
// AUTO90-SAME: family = "sm90a-wgmma"
// AUTO90-SAME: tensor_maps = [#attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64, box_rows = 128>, #attn.tensor_map<name = "k_tmap", tensor = "k", box_cols = 64, box_rows = 128>, #attn.tensor_map<name = "v_tmap", tensor = "v", box_cols = 64, box_rows = 128>, #attn.tensor_map<name = "do_tmap", tensor = "do", box_cols = 64, box_rows = 128>]
// AUTO90: llvm.func @attn_bwd_sm90_d64_bf16_dkdv_n128m128s2(
// AUTO90-SAME: attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32}

func.func @plain(%q: tensor<1x2x100x64xbf16>, %lse: tensor<1x2x100xf32>)
    -> tensor<1x2x100x64xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
         tensor<1x2x100x64xbf16>
  return %dq : tensor<1x2x100x64xbf16>
}
