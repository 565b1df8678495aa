#!/usr/bin/env bash
# The sm90a backward with query blocks of
# 80 rows at 64 < D <= 128 (--block-m 80: dQ computed transposed, one dQ
# tile). Kernels for scripts/gpu-padded-dims.sh:
#   check/  block-m 80 at D 128, 96 (f16), 72 and 80, full, causal, window,
#           ALiBi, and the in-step dQ schedules (float64 at SHAPES);
#   kr/     with key ranges;
#   bench/  D = 128, full and causal: block-m 64 (the heuristic's) and 80,
#           pipelined and dq-first.
# On the GPU host, one call (carry DIR):
#   SANITIZE_KERNELS="d128_m80 d96c_m80_f16" BENCH_SEQS=1024,2048,4096,8192,16384 \
#     bash scripts/gpu-padded-dims.sh gpu-bwd-m80
#   scripts/compile-bwd-m80.sh [DIR]   (default gpu-bwd-m80/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-m80}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr" "$DIR/bench"
source "$ROOT/scripts/compile-sm90a-backward.sh"
one check d128_m80 --head-dim 128 --block-m 80
one check d128c_m80 --head-dim 128 --causal --block-m 80
one check d96c_m80_f16 --head-dim 96 --causal --dtype f16 --block-m 80
one check d72_m80 --head-dim 72 --block-m 80
one check d80c_m80_tl --head-dim 80 --causal --top-left --block-m 80
one check d128_m80_win --head-dim 128 --window-left 100 --window-right 8 --block-m 80
one check d128c_m80_alibi --head-dim 128 --causal --alibi --block-m 80
one check d128_m80_sdq --head-dim 128 --block-m 80 --sm90-schedule dq-first
one check d128_m80_dkf --head-dim 128 --block-m 80 --sm90-schedule dk-first
one kr d128_m80_kr --head-dim 128 --batch 2 --key-starts 0,3 --key-ends 128,100 --block-m 80
for c in "" c; do
  mask=(); [ -n "$c" ] && mask=(--causal)
  one bench "d128${c}_m64" --head-dim 128 "${mask[@]}"
  one bench "d128${c}_m80" --head-dim 128 "${mask[@]}" --block-m 80
  one bench "d128${c}_m80_sdq" --head-dim 128 "${mask[@]}" --block-m 80 \
    --sm90-schedule dq-first
done
