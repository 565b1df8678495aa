#!/usr/bin/env bash
# Compiles the kernels scripts/gpu-sanitize.sh checks on the GPU host (which
# has no MLIR) into DIR (default build-asan/sanitize-kernels): one directory
# per kernel of every family (sm80 forward, sm90a-wgmma forward, backward
# with atomic and with deterministic dQ, sm80 family named: attn-compile
# defaults to family auto), causal and not, both 16-bit
# dtypes, and sliding-window kernels (block skipping at the band's edges);
# the sm90a-wgmma family in each of its tile shapes (D=64: three consumer
# warpgroups, block_m 192; D=128; D=256: block_n 64) and schedules
# (ping-pong, overlap, persistent query blocks: the `_p` kernels). Shapes
# are chosen at launch.
#
#   scripts/compile-sanitize-kernels.sh [DIR]  (ATTN_COMPILE: the attn-compile)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/build-asan/sanitize-kernels}"
COMPILE="${ATTN_COMPILE:-$ROOT/build-asan/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR"
k() {
  local name="$1"; shift
  "$COMPILE" --chip sm_90a "$@" -o "$DIR/$name" >/dev/null
  echo "$name"
}
# A kernel the family may not build yet: skipped, with the reason, instead
# of stopping the script.
k_if_supported() {
  local name="$1" why; shift
  if why="$("$COMPILE" --chip sm_90a "$@" -o "$DIR/$name" 2>&1 >/dev/null)"; then
    echo "$name"
  else
    rm -rf "${DIR:?}/$name"
    echo "$name: skipped: $(echo "$why" | head -1)"
  fi
}
k fwd-sm80-f16-d64 --family sm80 --dtype f16 --head-dim 64
k fwd-sm80-bf16-d128-causal --family sm80 --dtype bf16 --head-dim 128 --causal
k fwd-sm80-bf16-d64-sliding --family sm80 --dtype bf16 --head-dim 64 --causal --window-left 40
k fwd-sm90a-bf16-d128-causal --family sm90a --dtype bf16 --head-dim 128 --causal
k fwd-sm90a-f16-d64 --family sm90a --dtype f16 --head-dim 64
k fwd-sm90a-bf16-d64-causal --family sm90a --dtype bf16 --head-dim 64 --causal
k fwd-sm90a-f16-d128-overlap --family sm90a --dtype f16 --head-dim 128 --sm90-schedule overlap
k fwd-sm90a-bf16-d256 --family sm90a --dtype bf16 --head-dim 256
k fwd-sm90a-bf16-d128-persistent --family sm90a --dtype bf16 --head-dim 128 --sm90-schedule pingpong+persistent
k fwd-sm90a-f16-d64-causal-persistent --family sm90a --dtype f16 --head-dim 64 --causal --sm90-schedule pingpong+persistent
k_if_supported fwd-sm90a-bf16-d64-sliding --family sm90a --dtype bf16 --head-dim 64 --causal --window-left 40
k bwd-atomic-bf16-d128-causal --backward --family sm80 --dtype bf16 --head-dim 128 --causal
k bwd-atomic-f16-d64 --backward --family sm80 --dtype f16 --head-dim 64
k bwd-det-bf16-d64-causal --backward --family sm80 --deterministic --dtype bf16 --head-dim 64 --causal
k_if_supported bwd-sm90a-bf16-d128-causal --backward --family sm90a --dtype bf16 --head-dim 128 --causal
k_if_supported bwd-sm90a-f16-d64 --backward --family sm90a --dtype f16 --head-dim 64
