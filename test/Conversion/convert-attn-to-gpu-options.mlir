// RUN: not attn-opt %s --convert-attn-to-gpu="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm80 block-m=24" 2>&1 | FileCheck %s --check-prefix=BM
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm80 block-n=48" 2>&1 | FileCheck %s --check-prefix=BN
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm80 block-m=256 block-n=256" 2>&1 | FileCheck %s --check-prefix=SMEM
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm80 warp-rows=8" 2>&1 | FileCheck %s --check-prefix=WR
// RUN: not attn-opt %s --convert-attn-to-gpu="family=sm80 stages=3" 2>&1 | FileCheck %s --check-prefix=STAGES

// CHIP: error: 'attn.attention' op cannot be compiled for the GPU: chip 'sm_75' is not supported by the sm80-mma forward kernels: they need sm_80 or newer (mma.sync m16n8k16, cp.async)
// BM: error: 'attn.attention' op cannot be compiled for the GPU: block-m must be a multiple of warp-rows (16) with at most 16 warps, got 24
// BN: error: 'attn.attention' op cannot be compiled for the GPU: block-n must be a power of two in [16, 256], got 48
// SMEM: error: 'attn.attention' op cannot be compiled for the GPU: the tile configuration needs {{[0-9]+}} bytes of shared memory, more than the 232448 bytes a block gets on sm_90a; lower block-m or block-n
// WR: error: 'attn.attention' op cannot be compiled for the GPU: warp-rows must be 16 or 32, got 8
// STAGES: error: 'attn.attention' op cannot be compiled for the GPU: stages 3 is not supported by the sm80-mma forward kernels: they take 2
func.func @f(%q: tensor<1x1x16x256xbf16>) -> tensor<1x1x16x256xbf16> {
  %o = attn.attention %q, %q, %q
      : tensor<1x1x16x256xbf16>, tensor<1x1x16x256xbf16>, tensor<1x1x16x256xbf16> -> tensor<1x1x16x256xbf16>
  return %o : tensor<1x1x16x256xbf16>
}
