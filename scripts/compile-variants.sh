#!/usr/bin/env bash
# Compiles the attention-variant kernels that scripts/gpu-variants.sh runs
# on the GPU host (which has no MLIR), into DIR (default
# build-bwd/variant-kernels): one directory per kernel, PTX, cubin and
# manifest. Kernels named time_* are timed at their compiled shape (bf16,
# the DESIGN grid); the others are checked at several shapes.
#
#   scripts/compile-variants.sh [DIR]    (ATTN_COMPILE: the attn-compile to use)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/build-bwd/variant-kernels}"
COMPILE="${ATTN_COMPILE:-$ROOT/build-bwd/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR"
k() {
  local name="$1"; shift
  "$COMPILE" --family sm80 --chip sm_90a --dtype bf16 "$@" -o "$DIR/$name" >/dev/null
  echo "$name"
}
# Correctness (launched at other shapes too).
k causal_tl_d128 --head-dim 128 --causal --top-left
k sliding_br_d128 --head-dim 128 --causal --window-left 256
k sliding_tl_2sided_d64 --head-dim 64 --window-left 100 --window-right 50 --top-left
k sliding_br_right_d64 --head-dim 64 --window-right 40
k softcap5_d128 --head-dim 128 --softcap 5 --scale 1.0
k softcap30_causal_d64 --head-dim 64 --softcap 30 --causal
k dv64_d128 --head-dim 128 --value-head-dim 64 --causal --top-left
k alibi_d64 --head-dim 64 --alibi --batch 2 --heads-q 8 --heads-kv 2 --seq-q 1000 --seq-kv 1300
k alibi_causal_d128 --head-dim 128 --alibi --causal --heads-q 4 --seq-q 1500 --seq-kv 1000
# The bar: N = 16k (B = 1, H = 16) and D = 128, N = 4096 (B = 4, H = 16).
G16K="--head-dim 128 --batch 1 --heads-q 16 --seq-q 16384"
G4K="--head-dim 128 --batch 4 --heads-q 16 --seq-q 4096"
k time_causal_16k $G16K --causal
k time_sliding4096_16k $G16K --causal --window-left 4096
k time_plain_4k $G4K
k time_softcap30_4k $G4K --softcap 30
k time_alibi_4k $G4K --alibi
