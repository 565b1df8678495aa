#!/usr/bin/env bash
# The sm90a backward's transposed-dkv
# schedule above D = 128 (FlashAttention-3's at D = 256: 80 keys per block,
# dKᵀ, dVᵀ and dQᵀ with the head dim as M). Kernels for
# scripts/gpu-padded-dims.sh:
#   check/  transposed-dkv at D 256 (full, causal, window, softcap + ALiBi,
#           deterministic full and causal), 224, 192 (f16) and 160 (causal,
#           top-left): float64 at SHAPES, the deterministic ones
#           bit-identical;
#   kr/     with key ranges (atomic, and deterministic at D = 192);
#   bench/  D = 256, full and causal: head-split (the heuristic's) and
#           transposed-dkv, atomic and deterministic.
# On the GPU host, one call (carry DIR):
#   SANITIZE_KERNELS="d256c_tdkv d256_tdkv_det" BENCH_SEQS=1024,2048,4096,8192,16384 \
#     bash scripts/gpu-padded-dims.sh gpu-bwd-tdkv
#   scripts/compile-bwd-tdkv.sh [DIR]   (default gpu-bwd-tdkv/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-tdkv}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr" "$DIR/bench"
source "$ROOT/scripts/compile-sm90a-backward.sh"
T=(--sm90-schedule transposed-dkv)
one check d256_tdkv --head-dim 256 "${T[@]}"
one check d256c_tdkv --head-dim 256 --causal "${T[@]}"
one check d256_tdkv_win --head-dim 256 --window-left 100 --window-right 8 "${T[@]}"
one check d224_tdkv --head-dim 224 "${T[@]}"
one check d192_tdkv_f16 --head-dim 192 --dtype f16 "${T[@]}"
one check d160c_tdkv_tl --head-dim 160 --causal --top-left "${T[@]}"
one check d256c_tdkv_cap30_alibi --head-dim 256 --causal --softcap 30 --alibi \
  "${T[@]}"
one kr d256_tdkv_kr --head-dim 256 --batch 2 --key-starts 0,3 --key-ends 128,100 \
  "${T[@]}"
one kr d192c_tdkv_det_kr --head-dim 192 --causal --batch 2 --key-starts 0,3 \
  --key-ends 128,100 --block-n 80 --deterministic
one check d256_tdkv_det --head-dim 256 --block-n 80 --deterministic
one check d256c_tdkv_det --head-dim 256 --causal --block-n 80 --deterministic
for c in "" c; do
  mask=(); [ -n "$c" ] && mask=(--causal)
  one bench "d256${c}_hsplit" --head-dim 256 "${mask[@]}"
  one bench "d256${c}_tdkv" --head-dim 256 "${mask[@]}" "${T[@]}"
  one bench "d256${c}_hsplit_det" --head-dim 256 "${mask[@]}" --deterministic
  one bench "d256${c}_tdkv_det" --head-dim 256 "${mask[@]}" --block-n 80 \
    --deterministic
done
