#!/usr/bin/env bash
# Kernels for the GPU-host run of two dQ tiles at block-m 128 (D <= 64;
# the mbarriers moved into the alignment padding to make room, which
# changes every sm90a backward kernel's layout), laid out for
# scripts/gpu-padded-dims.sh (SANITIZE_KERNELS="d64 d64c_det d256c"):
#   check/  D 8/32/40/48/56/64 at block-m 128 (full, causal, f16, window,
#           ALiBi, deterministic), the softcap's block-m 64, D = 128 and
#           256 (the moved mbarriers);
#   kr/     causal with key ranges (D 64 and 128);
#   bench/  D = 64 full and causal, atomic (new_) and deterministic
#           (newdet_), D = 128 (new_), and with OLD_COMPILE (an earlier
#           attn-compile) the same kernels (old_, olddet_).
#   scripts/compile-bwd-dq-tiles-m128.sh [DIR]   (default gpu-bwd-dq-tiles/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-dq-tiles}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr" "$DIR/bench"
source "$ROOT/scripts/compile-sm90a-backward.sh"
one check d64 --head-dim 64
one check d64c --head-dim 64 --causal
one check d64c_f16 --head-dim 64 --causal --dtype f16
one check d64_w100x8_tl --head-dim 64 --window-left 100 --window-right 8 \
  --top-left
one check d64c_alibi --head-dim 64 --causal --alibi
one check d64_det --head-dim 64 --deterministic
one check d64c_det --head-dim 64 --causal --deterministic
one check d64c_cap30 --head-dim 64 --causal --softcap 30
one check d8 --head-dim 8
one check d32c --head-dim 32 --causal
one check d40_det --head-dim 40 --deterministic
one check d48c --head-dim 48 --causal
one check d56 --head-dim 56
one check d128 --head-dim 128
one check d128c_det --head-dim 128 --causal --deterministic
one check d256c --head-dim 256 --causal
one check d256_det --head-dim 256 --deterministic
for d in 64 128; do
  one kr "d${d}c_kr" --head-dim $d --causal --batch 2 --key-starts 0,3 \
    --key-ends 128,100
done
for d in 64 128; do
  for c in "" c; do
    flags=(--head-dim "$d" ${c:+--causal})
    one bench "new_d$d$c" "${flags[@]}"
    [ "$d" = 64 ] && one bench "newdet_d$d$c" --deterministic "${flags[@]}"
    if [ -n "${OLD_COMPILE:-}" ]; then
      COMPILER="$OLD_COMPILE" one bench "old_d$d$c" "${flags[@]}"
      [ "$d" = 64 ] && COMPILER="$OLD_COMPILE" one bench "olddet_d$d$c" \
        --deterministic "${flags[@]}"
    fi
  done
done
