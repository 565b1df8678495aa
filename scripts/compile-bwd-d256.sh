#!/usr/bin/env bash
# Kernels for the GPU-host run of the sm90a head-dim-split backward (D =
# 256, HopperBackwardConfig::splitHeadDim): check/ holds the variants that
# scripts/gpu-backward.sh checks against float64 (masks, softcap, ALiBi,
# f16, and one D = 128 kernel of the unsplit schedule), kr/ a key_range one
# (checked with explicit key ranges), bench/ the sm90a and sm80 D = 256
# kernels bench/bench_backward.py times against SDPA flash and cuDNN.
#
#   scripts/compile-bwd-d256.sh [DIR]        (default gpu-bwd-d256/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-d256}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr" "$DIR/bench"
one() { # subdir, name, attn-compile flags...
  local sub="$1" name="$2"; shift 2
  "$COMPILE" --chip sm_90a --backward --tuning-db none "$@" \
    -o "$DIR/$sub/$name" | sed 's/^wrote [^:]*: //'
}
one check d256 --family sm90a --head-dim 256
one check d256c --family sm90a --head-dim 256 --causal
one check d256_f16 --family sm90a --head-dim 256 --dtype f16
one check d256c_cap30 --family sm90a --head-dim 256 --causal --softcap 30
one check d256_w100x8_tl --family sm90a --head-dim 256 --window-left 100 \
  --window-right 8 --top-left
one check d256c_alibi --family sm90a --head-dim 256 --causal --alibi
one check d256c_cap30_alibi --family sm90a --head-dim 256 --causal \
  --softcap 30 --alibi
one check d128c_cap30_alibi --family sm90a --head-dim 128 --causal \
  --softcap 30 --alibi
one kr d256_kr --family sm90a --head-dim 256 --batch 2 --key-starts 0,3 \
  --key-ends 128,100
for fam in sm90a sm80; do
  one bench "${fam}_d256" --family "$fam" --head-dim 256
  one bench "${fam}_d256c" --family "$fam" --head-dim 256 --causal
done
