#!/usr/bin/env bash
# EXPERIMENT (branch exp/det-turn-order): what holds the deterministic
# sm90a backward without a mask under 0.9x the atomic one. Kernels for
# scripts/gpu-padded-dims.sh (BENCH_SEQS=2048,4096,16384
# SANITIZE_KERNELS="d64_rot_det d256_rot_det"):
#   check/  the rotated order (ATTN_EXP_DET_ORDER=rotated) at D 64, 128,
#           256 and f16 D 128 (float64, bit-identical over 5 runs);
#   bench/  per D: atomic, deterministic ascending (main), rotated, and
#           "nowait" (the turns not waited for: order lost, timing only).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-det-order}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/bench"
source "$ROOT/scripts/compile-sm90a-backward.sh"
for d in 64 128 256; do
  ATTN_EXP_DET_ORDER=rotated one check "d${d}_rot_det" --head-dim $d --deterministic
  one bench "d${d}_atomic" --head-dim $d
  one bench "d${d}_asc_det" --head-dim $d --deterministic
  ATTN_EXP_DET_ORDER=rotated one bench "d${d}_rot_det" --head-dim $d --deterministic
  ATTN_EXP_DET_ORDER=nowait one bench "d${d}_nowait_det" --head-dim $d --deterministic
done
ATTN_EXP_DET_ORDER=rotated one check d128_rot_det_f16 --head-dim 128 \
  --deterministic --dtype f16
