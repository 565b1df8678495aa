#!/usr/bin/env bash
# Compiles the variable-length and bias kernels that
# scripts/gpu-varlen-bias.sh runs on the GPU host (no MLIR there) into DIR
# (default build-bwd/varlen-bias-kernels): one directory per kernel. A
# varlen kernel's manifest records the lengths it is checked with, so each
# length mix is its own directory (same kernel). time_* kernels are timed.
#
#   scripts/compile-varlen-bias.sh [DIR]   (ATTN_COMPILE: the attn-compile)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/build-bwd/varlen-bias-kernels}"
COMPILE="${ATTN_COMPILE:-$ROOT/build-bwd/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR"
k() {
  local name="$1"; shift
  "$COMPILE" --family sm80 --chip sm_90a --dtype bf16 "$@" -o "$DIR/$name" >/dev/null
  echo "$name"
}
GQA="--heads-q 8 --heads-kv 2"
# Variable length: mixes with empty sequences, keys-only and queries-only
# sequences, one-token sequences, lengths that are not block multiples.
k varlen_causal_d128_mixA --head-dim 128 $GQA --causal --seq-lens-q 100,0,1000,17 --seq-lens-kv 300,5,1000,17
k varlen_causal_d128_mixB --head-dim 128 $GQA --causal --seq-lens-q 1,4096,333,0,64 --seq-lens-kv 1,4096,333,0,80
k varlen_causal_d128_mixC --head-dim 128 $GQA --causal --seq-lens-q 129,7,0,2049 --seq-lens-kv 0,7,13,2049
k varlen_plain_d64_mixA --head-dim 64 $GQA --seq-lens-q 7,300,64,129,0 --seq-lens-kv 700,3,64,1,9
k varlen_window_tl_d64 --head-dim 64 $GQA --window-left 64 --window-right 16 --top-left --seq-lens-q 500,31,1200 --seq-lens-kv 600,31,900
k varlen_softcap_d128 --head-dim 128 $GQA --causal --softcap 30 --seq-lens-q 300,1000 --seq-lens-kv 300,1200
# Bias: full, broadcast over batch, heads, both; with a mask and softcap.
k bias_bh_d128 --head-dim 128 --batch 2 --heads-q 4 --heads-kv 2 --seq-q 1000 --seq-kv 1500 --bias bh
k bias_1h_causal_d64 --head-dim 64 --batch 2 --heads-q 4 --heads-kv 2 --seq-q 1500 --seq-kv 1000 --causal --bias 1h
k bias_b1_d64 --head-dim 64 --batch 3 --heads-q 4 --seq-q 333 --seq-kv 17 --bias b1
k bias_11_window_d128 --head-dim 128 --batch 2 --heads-q 2 --seq-q 700 --seq-kv 700 --causal --window-left 100 --bias 11
k bias_bh_softcap_d64 --head-dim 64 --batch 1 --heads-q 2 --seq-q 17 --seq-kv 333 --softcap 5 --scale 1.0 --bias bh
# Head dims that are not powers of two (zero-padded to 128 / 256).
PAD="--batch 2 --heads-q 4 --heads-kv 2 --seq-q 1000 --seq-kv 1500"
k pad_d80_causal --head-dim 80 --causal $PAD
k pad_d96 --head-dim 96 $PAD
k pad_d192_causal --head-dim 192 --causal $PAD
k pad_d192v128 --head-dim 192 --value-head-dim 128 $PAD
k pad_d96_varlen --head-dim 96 --causal $GQA --seq-lens-q 300,0,77 --seq-lens-kv 500,9,77
# Timing: a packed batch of 8 causal sequences (16384 tokens, max 4096)
# against the same batch padded to 8 x 4096; bias vs plain at D = 128,
# N = 4096 (B = 4, H = 16).
LENS="512,1024,2048,4096,256,3072,1536,3840"
k time_varlen_causal_8seq --head-dim 128 --heads-q 16 --causal --seq-lens-q $LENS
k time_padded_causal_8x4096 --head-dim 128 --heads-q 16 --causal --batch 8 --seq-q 4096
k time_varlen_plain_8seq --head-dim 128 --heads-q 16 --seq-lens-q $LENS
k time_padded_plain_8x4096 --head-dim 128 --heads-q 16 --batch 8 --seq-q 4096
G4K="--head-dim 128 --batch 4 --heads-q 16 --seq-q 4096"
k time_plain_4k $G4K
k time_bias_11_4k $G4K --bias 11
k time_bias_1h_4k $G4K --bias 1h
G4K96="--batch 4 --heads-q 16 --seq-q 4096"
k time_pad_d96_4k --head-dim 96 $G4K96
