#!/usr/bin/env bash
# The sm90a transposed-dkv backward with its grouped dQ accumulator
# (BackwardWorkspace.h, dqAccumulatorOffset: dQᵀ added as
# red.global.add.v4.f32 of 4 query rows of a column, the convert kernel
# reading the same layout). Kernels for scripts/gpu-padded-dims.sh:
#   check/, kr/  scripts/compile-bwd-tdkv.sh's (D 160-256, masks, softcap +
#                ALiBi, f16, key ranges, deterministic);
#   bench/       D = 256, full and causal, atomic and deterministic; with
#                OLD=DIR (kernel directories d256_tdkv, d256c_tdkv,
#                d256_tdkv_det, d256c_tdkv_det of an earlier compiler, e.g.
#                scripts/compile-bwd-profile.sh's prof/) also those, as old_*.
# On the GPU host, one call (carry DIR):
#   SHAPES="1:1 17:17 80:80 1000:1000 17:1000 1000:17 333:777 128:200" \
#   SANITIZE_KERNELS="d256c_tdkv d192_tdkv_f16" SANITIZE_TOOLS=memcheck \
#   BENCH_SEQS=1024,2048,4096,8192,16384 bash scripts/gpu-padded-dims.sh DIR
#   scripts/compile-bwd-grouped-dq.sh [DIR]   (default gpu-bwd-grouped/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-grouped}"
bash "$ROOT/scripts/compile-bwd-tdkv.sh" "$DIR"
rm -rf "$DIR/bench"
mkdir -p "$DIR/bench"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
source "$ROOT/scripts/compile-sm90a-backward.sh"
for c in "" c; do
  mask=(); [ -n "$c" ] && mask=(--causal)
  one bench "d256${c}_tdkv" --head-dim 256 "${mask[@]}"
  one bench "d256${c}_tdkv_det" --head-dim 256 "${mask[@]}" --deterministic
  if [ -n "${OLD:-}" ]; then
    cp -r "$OLD/d256${c}_tdkv" "$DIR/bench/old_d256${c}_tdkv"
    cp -r "$OLD/d256${c}_tdkv_det" "$DIR/bench/old_d256${c}_tdkv_det"
  fi
done
