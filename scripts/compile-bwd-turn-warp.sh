#!/usr/bin/env bash
# Kernels for the GPU-host run of the deterministic head-dim split's turn
# warp (producer warp 2 acquires and passes the dQ turns; the consumers
# neither spin nor fence), laid out for scripts/gpu-padded-dims.sh
# (SANITIZE_KERNELS="d256c_det d256_det"):
#   check/  deterministic D = 256 full and causal, f16, a window, softcap +
#           ALiBi, and the padded D = 160 and 192 (computed at 256);
#   kr/     causal with key ranges;
#   bench/  D = 256 full and causal, deterministic (newdet_) and atomic
#           (new_), and with OLD_COMPILE (an earlier attn-compile) the
#           deterministic ones (olddet_).
#   scripts/compile-bwd-turn-warp.sh [DIR]   (default gpu-bwd-turns/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-turns}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr" "$DIR/bench"
source "$ROOT/scripts/compile-sm90a-backward.sh"
one check d256_det --head-dim 256 --deterministic
one check d256c_det --head-dim 256 --causal --deterministic
one check d256c_det_f16 --head-dim 256 --causal --deterministic --dtype f16
one check d256_w100x8_det --head-dim 256 --window-left 100 \
  --window-right 8 --deterministic
one check d256c_det_cap30_alibi --head-dim 256 --causal --deterministic \
  --softcap 30 --alibi
one check d192_det --head-dim 192 --deterministic
one check d160c_det --head-dim 160 --causal --deterministic
one kr d256c_det_kr --head-dim 256 --causal --deterministic --batch 2 \
  --key-starts 0,3 --key-ends 128,100
for c in "" c; do
  flags=(--head-dim 256 ${c:+--causal})
  one bench "new_d256$c" "${flags[@]}"
  one bench "newdet_d256$c" --deterministic "${flags[@]}"
  if [ -n "${OLD_COMPILE:-}" ]; then
    COMPILER="$OLD_COMPILE" one bench "olddet_d256$c" --deterministic \
      "${flags[@]}"
  fi
done
