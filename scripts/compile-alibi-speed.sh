#!/usr/bin/env bash
# Kernels for scripts/gpu-alibi-speed.sh: the sm90a forward (fwd/) and
# backward (bwd/) at D = 128, causal, with ALiBi and without (bf16,
# --tuning-db none).
#   scripts/compile-alibi-speed.sh [DIR]        (default gpu-alibi-speed/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-alibi-speed}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
for dir in fwd bwd; do
  flags=(--chip sm_90a --dtype bf16 --head-dim 128 --causal --tuning-db none)
  [ "$dir" = bwd ] && flags+=(--backward)
  "$COMPILE" "${flags[@]}" --alibi -o "$DIR/$dir/d128c_alibi" |
    sed 's/^wrote [^:]*: //'
  "$COMPILE" "${flags[@]}" -o "$DIR/$dir/d128c" | sed 's/^wrote [^:]*: //'
done
