#!/usr/bin/env bash
# Compiles the attention-variant kernels that scripts/gpu-variants.sh runs
# on the GPU host (which has no MLIR), into DIR (default
# build-bwd/variant-kernels): one directory per kernel, PTX, cubin and
# manifest, named <family>_<variant>. Kernels named time_* are timed at
# their compiled shape (bf16, the DESIGN grid); the others are checked at
# several shapes (tails, Nq != Nk, GQA, rows that see no key).
#
#   scripts/compile-variants.sh [DIR]
#
# Environment: ATTN_COMPILE (the attn-compile to use), FAMILIES (default
# "sm80 sm90a": the families whose score_mod check kernels to build),
# MASK_FAMILIES (default "sm90a": the same for the mask-only kernels; the
# sm80 ones were checked on 2026-11-29, docs/variants.md). The timing set
# always covers what the bar compares.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/build-bwd/variant-kernels}"
COMPILE="${ATTN_COMPILE:-$ROOT/build-bwd/bin/attn-compile}"
FAMILIES="${FAMILIES:-sm80 sm90a}"
MASK_FAMILIES="${MASK_FAMILIES:-sm90a}"
rm -rf "$DIR"
mkdir -p "$DIR"
# k NAME FAMILY FLAGS...; DTYPE (default bf16) and the environment pass on.
k() {
  local name="$1" family="$2"; shift 2
  "$COMPILE" --family "$family" --chip sm_90a --dtype "${DTYPE:-bf16}" "$@" \
    -o "$DIR/$name" >/dev/null
  echo "$name"
}
# Correctness (launched at other shapes too).
for f in $MASK_FAMILIES; do
  k ${f}_causal_tl_d128 $f --head-dim 128 --causal --top-left
  k ${f}_sliding_br_d128 $f --head-dim 128 --causal --window-left 256
  k ${f}_sliding_tl_2sided_d64 $f --head-dim 64 --window-left 100 --window-right 50 --top-left
  k ${f}_sliding_br_right_d64 $f --head-dim 64 --window-right 40
  k ${f}_sliding_tl_d256 $f --head-dim 256 --causal --window-left 300 --top-left
  DTYPE=f16 k ${f}_sliding_br_2sided_f16_d128 $f --head-dim 128 --window-left 64 --window-right 64
  k ${f}_dv64_d128 $f --head-dim 128 --value-head-dim 64 --causal --top-left
done
for f in $FAMILIES; do
  k ${f}_softcap5_d128 $f --head-dim 128 --softcap 5 --scale 1.0
  k ${f}_softcap30_causal_d64 $f --head-dim 64 --softcap 30 --causal
  # ALiBi's offsets are compiled for its shape: checked there only.
  k ${f}_alibi_d64 $f --head-dim 64 --alibi --batch 2 --heads-q 8 --heads-kv 2 --seq-q 1000 --seq-kv 1300
  k ${f}_alibi_causal_d128 $f --head-dim 128 --alibi --causal --heads-q 4 --seq-q 1500 --seq-kv 1000
done
# The bar: N = 16k (B = 1, H = 16) and D = 128, N = 4096 (B = 4, H = 16).
G16K="--head-dim 128 --batch 1 --heads-q 16 --seq-q 16384"
G4K="--head-dim 128 --batch 4 --heads-q 16 --seq-q 4096"
for f in sm90a sm80; do
  k time_${f}_plain_4k $f $G4K
  k time_${f}_softcap30_4k $f $G4K --softcap 30
done
k time_sm90a_alibi_4k sm90a $G4K --alibi
k time_sm90a_causal_16k sm90a $G16K --causal
k time_sm90a_sliding4096_16k sm90a $G16K --causal --window-left 4096
k time_sm90a_causal_tl_4k sm90a $G4K --causal --top-left --seq-kv 8192
# Variable length (sm80 only): a packed causal batch of 8 sequences (16384
# tokens, max 4096) against the same batch padded to 8 x 4096.
LENS="512,1024,2048,4096,256,3072,1536,3840"
k time_sm80_varlen_causal_8seq sm80 --head-dim 128 --heads-q 16 --causal --seq-lens-q $LENS
k time_sm80_padded_causal_8x4096 sm80 --head-dim 128 --heads-q 16 --causal --batch 8 --seq-q 4096
