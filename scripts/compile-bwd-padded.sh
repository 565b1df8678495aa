#!/usr/bin/env bash
# Kernels for the GPU-host run of the sm90a backward at padded head dims
# (not 64, 128 or 256: computed at FlashBackwardSpec::tileHeadDim with
# TMA's zero fill): check/ holds the variants scripts/gpu-backward.sh
# checks against float64 (D = 72 to 224 across both schedules, masks,
# softcap + ALiBi, f16, deterministic), kr/ a key_range one (checked with
# explicit key ranges), bench/ the sm90a and sm80 kernels at D = 96 and 192
# that bench/bench_backward.py times against SDPA flash and cuDNN.
#
#   scripts/compile-bwd-padded.sh [DIR]        (default gpu-bwd-padded/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-padded}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr" "$DIR/bench"
one() { # subdir, name, attn-compile flags...
  local sub="$1" name="$2"; shift 2
  "$COMPILE" --chip sm_90a --backward --tuning-db none --family sm90a "$@" \
    -o "$DIR/$sub/$name" | sed 's/^wrote [^:]*: //'
}
one check d72 --head-dim 72
one check d80c --head-dim 80 --causal
one check d96 --head-dim 96
one check d96c --head-dim 96 --causal
one check d96_f16 --head-dim 96 --dtype f16
one check d96c_cap30_alibi --head-dim 96 --causal --softcap 30 --alibi
one check d96_w100x8_tl --head-dim 96 --window-left 100 --window-right 8 \
  --top-left
one check d96c_det --head-dim 96 --causal --deterministic
one check d112c_pipe --head-dim 112 --causal --sm90-schedule dq-pipelined
one check d160 --head-dim 160
one check d192c --head-dim 192 --causal
one check d192c_cap30_alibi --head-dim 192 --causal --softcap 30 --alibi
one check d224_f16 --head-dim 224 --dtype f16
one kr d96_kr --head-dim 96 --batch 2 --key-starts 0,3 --key-ends 128,100
for d in 96 192; do
  for fam in sm90a sm80; do
    "$COMPILE" --chip sm_90a --backward --tuning-db none --family "$fam" \
      --head-dim "$d" -o "$DIR/bench/${fam}_d$d" | sed 's/^wrote [^:]*: //'
    "$COMPILE" --chip sm_90a --backward --tuning-db none --family "$fam" \
      --head-dim "$d" --causal -o "$DIR/bench/${fam}_d${d}c" |
      sed 's/^wrote [^:]*: //'
  done
done
