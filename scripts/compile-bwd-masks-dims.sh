#!/usr/bin/env bash
# Compiles the sm80 backward kernels of issue 24's masks and head dims into
# DIR (default gpu-kernels-bwdvar) for scripts/gpu-bwd-masks-dims.sh:
#   chk/*    float64-checked: every mask band (windows, top-left causal,
#            one-sided windows), padded head dims 8..112, head dims
#            136..256 (two column slices), the softcap, deterministic;
#   bench/*  timed against SDPA by bench/bench_backward.py (head dims
#            that are not 32/64/128; no mask or causal: SDPA has no window).
#   scripts/compile-bwd-masks-dims.sh [DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-kernels-bwdvar}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/chk" "$DIR/bench"
one() { # name, attn-compile flags...
  local name="$1"; shift
  "$COMPILE" --backward --family sm80 --batch 2 --heads-q 4 --heads-kv 2 \
    --seq-q 256 --seq-kv 256 "$@" -o "$DIR/chk/$name" | sed 's/^wrote [^:]*: //'
}
one chk_d64_br64x0 --head-dim 64 --window-left 64 --window-right 0
one chk_d64_tl32x32 --head-dim 64 --window-left 32 --window-right 32 --top-left
one chk_d128_tlcausal --head-dim 128 --causal --top-left
one chk_d64_br100xinf --head-dim 64 --window-left 100 --window-right -1
one chk_d64_brinfx50 --head-dim 64 --window-left -1 --window-right 50
one chk_d128_br200x7 --head-dim 128 --window-left 200 --window-right 7
one chk_det_d64_br64x0 --head-dim 64 --window-left 64 --window-right 0 --deterministic
one chk_det_d128_tl32x32 --head-dim 128 --window-left 32 --window-right 32 --top-left --deterministic
for d in 8 16 40 80 96 112; do
  one "chk_d${d}c" --head-dim "$d" --causal
done
one chk_d80 --head-dim 80
one chk_d96_br64x0 --head-dim 96 --window-left 64 --window-right 0
one chk_det_d80c --head-dim 80 --causal --deterministic
one chk_det_d40 --head-dim 40 --deterministic
# The softcap (its gradient: dS gets the factor 1 - tanh^2).
one chk_d64_cap30 --head-dim 64 --softcap 30
one chk_d128_causal_cap50 --head-dim 128 --causal --softcap 50
one chk_d64_br64x0_cap2p5 --head-dim 64 --window-left 64 --window-right 0 --softcap 2.5
one chk_d80_tl32x32_cap5 --head-dim 80 --window-left 32 --window-right 32 --top-left --softcap 5
one chk_det_d64_causal_cap30 --head-dim 64 --causal --softcap 30 --deterministic
# Above D = 128: two column slices of dK/dV per walk (D = 136..256).
for d in 136 160 192 224 256; do
  one "chk_d${d}c" --head-dim "$d" --causal
done
one chk_d256 --head-dim 256
one chk_d256c_f16 --head-dim 256 --causal --dtype f16
one chk_d200_br64x0 --head-dim 200 --window-left 64 --window-right 0
one chk_d256_tl32x32_cap50 --head-dim 256 --window-left 32 --window-right 32 --top-left --softcap 50
one chk_det_d256c --head-dim 256 --causal --deterministic
one chk_det_d160 --head-dim 160 --deterministic
one chk_d256_n64m64 --head-dim 256 --block-n 64 --block-m 64
for d in 80 96 112 160 192 256; do
  for c in "" c; do
    "$COMPILE" --backward --family sm80 --batch 4 --heads-q $((2048 / d)) \
      --seq-q 4096 --head-dim "$d" ${c:+--causal} -o "$DIR/bench/d$d$c" |
      sed 's/^wrote [^:]*: //'
  done
done
for c in "" c; do
  "$COMPILE" --backward --family sm80 --batch 4 --heads-q 8 --seq-q 4096 \
    --head-dim 256 --block-n 64 --block-m 64 ${c:+--causal} \
    -o "$DIR/bench/d256${c}_n64m64" | sed 's/^wrote [^:]*: //'
done
du -sh "$DIR"
