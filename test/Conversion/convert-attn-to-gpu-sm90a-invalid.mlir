// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a" --split-input-file -verify-diagnostics
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a chip=sm_80" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm75" 2>&1 | FileCheck %s --check-prefix=FAMILY
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a block-n=72" 2>&1 | FileCheck %s --check-prefix=BLOCKN
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a block-m=96" 2>&1 | FileCheck %s --check-prefix=BLOCKM
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a block-m=128 block-n=256 stages=4" 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm90a block-m=192 block-n=256" 2>&1 | FileCheck %s --check-prefix=REGS

// CHIP: cannot be compiled for the GPU: chip 'sm_80' is not supported by the sm90a-wgmma forward kernels: they need sm_90a (wgmma and setmaxnreg are sm_90a-only)
// FAMILY: convert-attn-to-gpu: family must be sm80, sm90a or auto, got 'sm75'
// BLOCKN: block-n must be a multiple of 16 in [16, 256] for the sm90a-wgmma family, got 72
// BLOCKM: block-m must be 64, 128 or 192 for the sm90a-wgmma family (64 query rows per consumer warpgroup), got 96
// SMEM: bytes of shared memory, more than the 232448 bytes a block gets on sm_90a; lower block-m, block-n or stages
// REGS: block-n 256 with value head dim 64 and block-m 192 needs 256 registers per consumer thread, more than its 160; lower block-n

func.func @d64(%q: tensor<1x1x16x64xbf16>) -> tensor<1x1x16x64xbf16> {
  %o = attn.attention %q, %q, %q
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16> -> tensor<1x1x16x64xbf16>
  return %o : tensor<1x1x16x64xbf16>
}

// -----

func.func @d20(%q: tensor<1x1x16x20xbf16>) -> tensor<1x1x16x20xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: head dim 20 is not supported by the sm90a-wgmma forward kernels: they take a multiple of 8 in [8, 256] (zero-padded to 64, 128 or 256 by TMA)}}
  %o = attn.attention %q, %q, %q
      : tensor<1x1x16x20xbf16>, tensor<1x1x16x20xbf16>, tensor<1x1x16x20xbf16> -> tensor<1x1x16x20xbf16>
  return %o : tensor<1x1x16x20xbf16>
}
