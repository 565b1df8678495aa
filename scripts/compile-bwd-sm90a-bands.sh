#!/usr/bin/env bash
# Compiles the sm90a backward kernels of the mask bands (issue 24: windows
# and top-left masks on the wgmma family) into DIR (default
# gpu-kernels-bands) for scripts/gpu-bwd-sm90a-bands.sh:
#   chk/*    float64-checked: one-sided and two-sided windows in either
#            alignment, top-left causal, deterministic, with key ranges;
#   speed/*  the same window in both families (sm80-*, sm90a-*), timed
#            against each other (SDPA has no window).
#   scripts/compile-bwd-sm90a-bands.sh [DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-kernels-bands}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/chk" "$DIR/speed"
one() { # name, attn-compile flags...
  local name="$1"; shift
  "$COMPILE" --backward --family sm90a --batch 2 --heads-q 4 --heads-kv 2 \
    --seq-q 256 --seq-kv 256 "$@" -o "$DIR/chk/$name" | sed 's/^wrote [^:]*: //'
}
one chk_d64_br64x0 --head-dim 64 --window-left 64 --window-right 0
one chk_d64_tl32x32 --head-dim 64 --window-left 32 --window-right 32 --top-left
one chk_d128_tlcausal --head-dim 128 --causal --top-left
one chk_d64_br100xinf --head-dim 64 --window-left 100 --window-right -1
one chk_d64_brinfx50 --head-dim 64 --window-left -1 --window-right 50
one chk_d128_br200x7 --head-dim 128 --window-left 200 --window-right 7
one chk_d128_br1023x0 --head-dim 128 --window-left 1023 --window-right 0
one chk_det_d64_br64x0 --head-dim 64 --window-left 64 --window-right 0 --deterministic
one chk_det_d128_tl32x32 --head-dim 128 --window-left 32 --window-right 32 --top-left --deterministic
one chk_det_d128_br200x7 --head-dim 128 --window-left 200 --window-right 7 --deterministic
KR=(--key-starts 0,17 --key-ends 256,200)
one chk_kr_d64_br64x0 --head-dim 64 --window-left 64 --window-right 0 "${KR[@]}"
one chk_det_kr_d128_br100x0 --head-dim 128 --window-left 100 --window-right 0 \
  --deterministic "${KR[@]}"
for fam in sm80 sm90a; do
  for d in 64 128; do
    "$COMPILE" --backward --family "$fam" --batch 2 --heads-q $((2048 / d)) \
      --seq-q 8192 --head-dim "$d" --window-left 1023 --window-right 0 \
      -o "$DIR/speed/$fam-d$d-br1023x0" | sed 's/^wrote [^:]*: //'
    "$COMPILE" --backward --family "$fam" --batch 2 --heads-q $((2048 / d)) \
      --seq-q 8192 --head-dim "$d" --causal \
      -o "$DIR/speed/$fam-d$d-causal" | sed 's/^wrote [^:]*: //'
  done
done
du -sh "$DIR"
