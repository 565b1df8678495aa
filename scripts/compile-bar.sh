#!/usr/bin/env bash
# The kernels of issue 24's speed bar (docs/performance.md): forward and
# backward, bf16, D in {64, 128, 256} x {full, causal}, family auto (what a
# call on sm_90a gets), no tuning database, into DIR/fwd and DIR/bwd for
# scripts/gpu-bar.sh.
#
#   scripts/compile-bar.sh [DIR]        (default gpu-bar/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bar}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/fwd" "$DIR/bwd"
for d in 64 128 256; do
  for c in "" "--causal"; do
    name="d$d${c:+c}"
    "$COMPILE" --chip sm_90a --dtype bf16 --head-dim $d $c --tuning-db none \
      -o "$DIR/fwd/$name" | sed 's/^wrote [^:]*: //'
    "$COMPILE" --chip sm_90a --dtype bf16 --head-dim $d $c --tuning-db none \
      --backward -o "$DIR/bwd/$name" | sed 's/^wrote [^:]*: //'
  done
done
