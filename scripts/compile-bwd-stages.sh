#!/usr/bin/env bash
# The sm90a backward's ring depth (stages) against the heuristic's two, for
# the shapes the tuning run of 2026-12-01 found faster with more
# (bench/results/2026-12-01-tuning-h200-bwd.md): D = 128 causal, D = 64
# atomic and deterministic (the deterministic D = 128 kernel has no room
# for a third stage); into DIR (default
# gpu-bwd-stages/) for bench/bench_backward.py (scripts/gpu-backward.sh
# with BENCH_KERNELS).
#   scripts/compile-bwd-stages.sh [DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-stages}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR"
one() { # name, attn-compile flags...
  local name="$1"; shift
  "$COMPILE" --chip sm_90a --dtype bf16 --backward --family sm90a \
    --tuning-db none "$@" -o "$DIR/$name" | grep -o 'attn_bwd_sm90[^ ]* ([^)]*)'
}
for s in 2 3; do
  one "d128c_s$s" --head-dim 128 --causal --stages $s
  one "d64_det_s$s" --head-dim 64 --deterministic --stages $s
  one "d64c_det_s$s" --head-dim 64 --causal --deterministic --stages $s
done
for s in 2 4; do
  one "d64_s$s" --head-dim 64 --stages $s
done
one d64c_s3 --head-dim 64 --causal --stages 3
one d64c_s2 --head-dim 64 --causal --stages 2
