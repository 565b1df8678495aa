#!/usr/bin/env bash
# Kernels for the GPU-host run of the deterministic sm90a backward's turn
# order (HopperBackwardEmitter::descendingTurns and the deterministic
# sections), laid out for scripts/gpu-padded-dims.sh
# (SANITIZE_KERNELS="d128c_det d256c_det"):
#   check/  deterministic kernels against float64 and for bit-identity:
#           D = 64/128/256 full and causal, f16, windows with a right edge
#           (bottom-right and top-left);
#   kr/     causal deterministic kernels with key ranges (the descending
#           order's last block is the range's);
#   bench/  per D = 64/128/256, full and causal: the atomic kernel (atomic_)
#           and the deterministic one (det_); with SECTIONS=1, causal, the
#           deterministic one in 32 MiB sections (detsec_, shortest first);
#           with OLD_COMPILE (an earlier attn-compile), its deterministic
#           kernels (detold_; not D = 256 without a mask).
#   scripts/compile-bwd-det-order.sh [DIR]     (default gpu-bwd-det-order/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-det-order}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr" "$DIR/bench"
source "$ROOT/scripts/compile-sm90a-backward.sh"
for d in 64 128 256; do
  for c in "" c; do
    flags=(--head-dim "$d" ${c:+--causal})
    one check "d$d${c}_det" --deterministic "${flags[@]}"
    one bench "atomic_d$d$c" "${flags[@]}"
    one bench "det_d$d$c" --deterministic "${flags[@]}"
    [ -n "$c" ] && [ -n "${SECTIONS:-}" ] &&
      one bench "detsec_d$d$c" --deterministic --section-mb 32 "${flags[@]}"
    if [ -n "${OLD_COMPILE:-}" ] && [ "$d" != 256 -o -n "$c" ]; then
      COMPILER="$OLD_COMPILE" one bench "detold_d$d$c" --deterministic "${flags[@]}"
    fi
  done
done
one check d64c_det_f16 --deterministic --head-dim 64 --causal --dtype f16
one check d128_w100x8_det --deterministic --head-dim 128 --window-left 100 \
  --window-right 8
one check d128_w100x8_tl_det --deterministic --head-dim 128 --window-left 100 \
  --window-right 8 --top-left
one check d256_w100x8_det --deterministic --head-dim 256 --window-left 100 \
  --window-right 8
one kr d128c_det_kr --deterministic --head-dim 128 --causal --batch 2 \
  --key-starts 0,3 --key-ends 128,100
one kr d256c_det_kr --deterministic --head-dim 256 --causal --batch 2 \
  --key-starts 0,3 --key-ends 128,100
