// RUN: attn-opt %s --split-input-file -verify-diagnostics
// The #attn.kernel_config verifier (above), then the options the selection
// refuses (the last case): each names the option.
// RUN: not attn-opt %s --split-input-file --attn-select-kernel-config="stages=1" 2>&1 | FileCheck %s --check-prefix=STAGES
// STAGES: error: attn-select-kernel-config: stages must be >= 2, got 1
// RUN: not attn-opt %s --split-input-file --attn-select-kernel-config="family=sm70" 2>&1 | FileCheck %s --check-prefix=FAMILY
// FAMILY: error: attn-select-kernel-config: family must be sm80, sm90a or auto, got 'sm70'
// RUN: not attn-opt %s --split-input-file --attn-select-kernel-config="exp2-emulated=9" 2>&1 | FileCheck %s --check-prefix=EXP2
// EXP2: error: attn-select-kernel-config: exp2-emulated must be from 0 to 8 (-1 = the family's choice), got 9
// RUN: not attn-opt %s --split-input-file --attn-select-kernel-config="section-mb=-2" 2>&1 | FileCheck %s --check-prefix=SECTION
// SECTION: error: attn-select-kernel-config: section-mb must be from 0 to 65536 (-1 = the family's choice), got -2
// The sm90a-only knobs on sm80 kernels.
// RUN: not attn-opt %s --split-input-file --attn-select-kernel-config="chip=sm_80 exp2-emulated=2" 2>&1 | FileCheck %s --check-prefix=EXP2-SM80
// EXP2-SM80: error: 'attn.attention' op cannot be compiled for the GPU: exp2-emulated is an option of the sm90a-wgmma forward kernel, and this attention gets sm80-mma
// RUN: not attn-opt %s --split-input-file --attn-select-kernel-config="chip=sm_80 wide-producer=true" 2>&1 | FileCheck %s --check-prefix=WIDE-SM80
// WIDE-SM80: error: 'attn.attention' op cannot be compiled for the GPU: wide-producer is an option of the sm90a-wgmma forward kernel, and this attention gets sm80-mma
// RUN: not attn-opt %s --split-input-file --attn-select-kernel-config="family=sm80 section-mb=8" 2>&1 | FileCheck %s --check-prefix=SECTION-SM80
// SECTION-SM80: error: 'attn.attention_grad' op cannot be compiled for the GPU: section-mb is an option of the sm90a-wgmma backward kernel, and this attention_grad gets sm80-mma
// A schedule of neither direction.
// RUN: not attn-opt %s --split-input-file --attn-select-kernel-config="sm90-schedule=zigzag" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// SCHEDULE: error: 'attn.attention_grad' op cannot be compiled for the GPU: sm90-schedule of the sm90a backward kernel must be dq-pipelined, dq-first or dk-first (got 'zigzag')

// expected-error @+1 {{expected family sm80 or sm90a, got 'sm70'}}
func.func @family() attributes {c = #attn.kernel_config<family = "sm70", block_m = 64, block_n = 64, source = "heuristic", reason = "">} {
  return
}

// -----

// expected-error @+1 {{expected block_m in [1, 1024], got 0}}
func.func @block_m() attributes {c = #attn.kernel_config<family = "sm80", block_m = 0, block_n = 64, source = "heuristic", reason = "">} {
  return
}

// -----

// expected-error @+1 {{expected block_n in [1, 1024], got 2048}}
func.func @block_n() attributes {c = #attn.kernel_config<family = "sm80", block_m = 64, block_n = 2048, source = "heuristic", reason = "">} {
  return
}

// -----

// expected-error @+1 {{expected warp_rows 16 or 32, got 8}}
func.func @warp_rows() attributes {c = #attn.kernel_config<family = "sm80", block_m = 64, block_n = 64, warp_rows = 8, source = "heuristic", reason = "">} {
  return
}

// -----

// expected-error @+1 {{expected stages >= 2, got 1}}
func.func @stages() attributes {c = #attn.kernel_config<family = "sm80", block_m = 64, block_n = 64, stages = 1, source = "heuristic", reason = "">} {
  return
}

// -----

// expected-error @+1 {{expected schedule pingpong, overlap or serial (forward), dq-pipelined, dq-first, dk-first, deterministic, head-split or transposed-dkv (backward) or none, got 'zigzag'}}
func.func @schedule() attributes {c = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "zigzag", source = "heuristic", reason = "">} {
  return
}

// -----

// expected-error @+1 {{expected no schedule, persistent, exp2_emulated or wide_producer with family sm80}}
func.func @sm80_schedule() attributes {c = #attn.kernel_config<family = "sm80", block_m = 64, block_n = 64, schedule = "pingpong", source = "heuristic", reason = "">} {
  return
}

// -----

// expected-error @+1 {{expected exp2_emulated in [0, 8], got 9}}
func.func @exp2() attributes {c = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "pingpong", exp2_emulated = 9, source = "heuristic", reason = "">} {
  return
}

// -----

// expected-error @+1 {{expected section_mb >= 0, got -1}}
func.func @section() attributes {c = #attn.kernel_config<family = "sm90a", block_m = 64, block_n = 128, schedule = "dq-first", section_mb = -1, source = "heuristic", reason = "">} {
  return
}

// -----

// expected-error @+1 {{expected source heuristic, option or tuning-db, got 'guess'}}
func.func @source() attributes {c = #attn.kernel_config<family = "sm80", block_m = 64, block_n = 64, source = "guess", reason = "">} {
  return
}

// -----

func.func @ops(%q: tensor<1x2x100x64xbf16>, %lse: tensor<1x2x100xf32>)
    -> (tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>) {
  %o = attn.attention %q, %q, %q
      : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16> -> tensor<1x2x100x64xbf16>
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
         tensor<1x2x100x64xbf16>
  return %o, %dq : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>
}
