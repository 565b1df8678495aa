#!/usr/bin/env bash
# Kernels for the GPU-host run of the sm90a backward's pipelined dQ behind
# per-consumer "step done" barriers (the default up to D = 128) and of K
# and V as register A operands (block-m 64 at D <= 64: since block-m 128
# became the default there, the softcap kernels), laid out for
# scripts/gpu-padded-dims.sh (SANITIZE_KERNELS="d64c d128c d128c_det"):
#   check/  D 8/32/40/56/64/96/112/128, full and causal, f16, softcap +
#           ALiBi, windows, deterministic;
#   kr/     causal with key ranges;
#   bench/  D = 64 and 128, full and causal, atomic (new_) and
#           deterministic (newdet_), and with OLD_COMPILE (an earlier
#           attn-compile) its kernels (old_, olddet_).
#   scripts/compile-bwd-dq-pipeline.sh [DIR]   (default gpu-bwd-dq-pipeline/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-dq-pipeline}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr" "$DIR/bench"
source "$ROOT/scripts/compile-sm90a-backward.sh"
for d in 64 128; do
  one check "d$d" --head-dim $d
  one check "d${d}c" --head-dim $d --causal
  one check "d${d}c_f16" --head-dim $d --causal --dtype f16
  one check "d${d}c_cap30_alibi" --head-dim $d --causal --softcap 30 --alibi
  one check "d${d}_w100x8_tl" --head-dim $d --window-left 100 \
    --window-right 8 --top-left
  one check "d${d}_det" --head-dim $d --deterministic
  one check "d${d}c_det" --head-dim $d --causal --deterministic
  one kr "d${d}c_kr" --head-dim $d --causal --batch 2 --key-starts 0,3 \
    --key-ends 128,100
done
one check d8 --head-dim 8
one check d32c --head-dim 32 --causal
one check d40 --head-dim 40
one check d56c --head-dim 56 --causal
one check d96c --head-dim 96 --causal
one check d112_w100x8 --head-dim 112 --window-left 100 --window-right 8
one check d96c_det_cap30 --head-dim 96 --causal --deterministic --softcap 30
for d in 64 128; do
  for c in "" c; do
    flags=(--head-dim "$d" ${c:+--causal})
    one bench "new_d$d$c" "${flags[@]}"
    one bench "newdet_d$d$c" --deterministic "${flags[@]}"
    if [ -n "${OLD_COMPILE:-}" ]; then
      COMPILER="$OLD_COMPILE" one bench "old_d$d$c" "${flags[@]}"
      COMPILER="$OLD_COMPILE" one bench "olddet_d$d$c" --deterministic \
        "${flags[@]}"
    fi
  done
done
