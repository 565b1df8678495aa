#!/usr/bin/env bash
# Compiles the kernels that scripts/gpu-nvvm-comparison.sh checks and times
# on the GPU host (issue 23: the kernels through the attn_gpu kernel IR and
# NVVM ops against the last commit's, which emitted inline PTX), one set per
# compiler into DIR (default gpu-kernels-nvvm):
#   fwd/<set>/d<D>[_causal]     sm90a-wgmma forward, bf16, D = 64/128/256,
#                               heads 2048/D (the DESIGN grid's kernels)
#   fwd80/<set>/d<D>[_causal]   sm80-mma forward, bf16, D = 64/128
#   bwd/<set>_<family>_d<D>[c]  backward, bf16, sm90a and sm80, D = 64/128
#
#   scripts/compile-nvvm-comparison.sh OLD_ATTN_COMPILE NEW_ATTN_COMPILE [DIR]
#
# Each attn-compile is a build of the commit to compare (e.g. a worktree of
# the last commit built with its own build directory).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OLD="$1"
NEW="$2"
DIR="${3:-$ROOT/gpu-kernels-nvvm}"
rm -rf "$DIR"
mkdir -p "$DIR"
for set in old new; do
  compile="$OLD"
  [ "$set" = new ] && compile="$NEW"
  for d in 64 128 256; do
    h=$((2048 / d))
    for causal in "" 1; do
      name="d$d"; flags=()
      [ -n "$causal" ] && { name="${name}_causal"; flags+=(--causal); }
      "$compile" --family sm90a --chip sm_90a --dtype bf16 --head-dim "$d" \
        --heads-q "$h" --heads-kv "$h" --batch 4 --seq-q 4096 "${flags[@]}" \
        -o "$DIR/fwd/$set/$name" | sed "s|^|$set |"
      [ "$d" = 256 ] && continue
      "$compile" --family sm80 --chip sm_90a --dtype bf16 --head-dim "$d" \
        --heads-q "$h" --heads-kv "$h" --batch 4 --seq-q 4096 "${flags[@]}" \
        -o "$DIR/fwd80/$set/$name" | sed "s|^|$set |"
      for family in sm90a sm80; do
        "$compile" --backward --family "$family" --chip sm_90a --dtype bf16 \
          --head-dim "$d" --heads-q "$h" --heads-kv "$h" --batch 4 \
          --seq-q 4096 "${flags[@]}" \
          -o "$DIR/bwd/${set}_${family}_d$d${causal:+c}" | sed "s|^|$set |"
      done
    done
  done
done
