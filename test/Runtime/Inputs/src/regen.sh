#!/usr/bin/env bash
# Regenerates the PTX and cubins of the runtime's test kernel directories
# from naive.cu (needs nvcc; the manifests are written by hand). Run from
# anywhere; prints ptxas's resource report for the manifests' "ptxas".
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
IN="$(dirname "$SRC")"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"

# build <dir> <define> <virtual arch> [<real arch>]
build() {
  local dir="$IN/$1" def="$2" virt="$3" real="${4:-}"
  "$NVCC" -ptx -D"$def" -gencode=arch="$virt",code="$virt" \
    -o "$dir/kernel.ptx" "$SRC/naive.cu"
  if [ -n "$real" ]; then
    "$NVCC" -cubin -D"$def" -gencode=arch="$virt",code="$real" -Xptxas -v \
      -o "$dir/kernel.cubin" "$SRC/naive.cu" 2>&1 | grep -E "registers|spill" || true
  fi
}

# sm_90a cubin + PTX: the cubin path on an H100/H200.
build good/naive-f32-d64 KERNEL_F32 compute_90a sm_90a
# sm_80 cubin + compute_80 PTX: on Hopper the cubin does not load and the
# runtime must fall back to JIT-compiling the PTX.
build good/naive-bf16-d64-causal KERNEL_BF16_CAUSAL compute_80 sm_80
build bad/zero-output-f32 KERNEL_ZERO compute_90a
build bad/bad-entry KERNEL_ZERO compute_90a
