#!/usr/bin/env bash
# Compiles the sm90a-wgmma schedule variants that scripts/gpu-hopper.sh
# (SETS=...) checks and times against each other, into DIR (default
# gpu-kernels-sm90/v4): one folder per variant set, each with the six
# benchmark kernels d<D>[_causal] (bf16, heads 2048/D, the DESIGN grid):
#   base  - the heuristic (the default grid: one thread block per query block)
#   p     - the persistent grid (--sm90-schedule pingpong+persistent)
#   s40   - base with the persistent grid's 40/232 setmaxnreg split
#           (--wide-producer; two-consumer tiles only)
#   m128  - D = 64 with two consumers (block_m 128), default grid
#   m128p - the same on the persistent grid
#
#   scripts/compile-hopper-schedules.sh [DIR]
#
# Environment: ATTN_COMPILE (default build-hopper/bin/attn-compile).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-kernels-sm90/v4}"
COMPILE="${ATTN_COMPILE:-$ROOT/build-hopper/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR"
# k SET D CAUSAL FLAGS...
k() {
  local set="$1" d="$2" causal="$3"; shift 3
  local name="d$d" flags=()
  [ "$causal" = 1 ] && { name="${name}_causal"; flags+=(--causal); }
  local h=$((2048 / d))
  "$COMPILE" --family sm90a --chip sm_90a --dtype bf16 --head-dim "$d" \
    --heads-q "$h" --heads-kv "$h" --batch 4 --seq-q 4096 "${flags[@]}" "$@" \
    -o "$DIR/$set/$name" >/dev/null
  echo "$set/$name: $(grep -o '"entry": "[^"]*"' "$DIR/$set/$name/manifest.json")"
}
for d in 64 128 256; do
  for c in 0 1; do
    k base $d $c
    k p $d $c --sm90-schedule pingpong+persistent
    [ "$d" != 64 ] && k s40 $d $c --wide-producer
  done
done
for c in 0 1; do
  k m128 64 $c --block-m 128 --block-n 128 --stages 2
  k m128p 64 $c --block-m 128 --block-n 128 --stages 2 --sm90-schedule pingpong+persistent
done
