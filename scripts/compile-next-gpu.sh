#!/usr/bin/env bash
# Branch gpu/combined: the kernels of both unchecked changes for one
# GPU-host call, laid out for scripts/gpu-padded-dims.sh:
#   check/, kr/  the sm90a backward at Dqk != Dv (compile-bwd-unequal.sh)
#                and the rotated deterministic turns (compile-det-turn-
#                order.sh: d*_rot_det, float64 and bit-identical);
#   bench/       atomic / ascending / rotated / no-wait deterministic at
#                D 64, 128, 256.
# Then, on the GPU host (carry gpu-next):
#   SANITIZE_KERNELS="d192v128c d64v128_det d64_rot_det d256_rot_det" \
#     BENCH_SEQS=2048,4096,16384 bash scripts/gpu-padded-dims.sh gpu-next
# and the op from this tree's wheel (ninja -C build attn_compiler &&
# bash scripts/build-wheel.sh --no-build; carry dist gpu-wheels):
#   PYTEST_K="unequal or padded_by_the_op or deterministic" SECTIONS= \
#     PYTEST_TIMEOUT=400 bash scripts/gpu-key-range-op.sh
#   scripts/compile-next-gpu.sh [DIR]   (default gpu-next/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-next}"
bash "$ROOT/scripts/compile-bwd-unequal.sh" "$DIR"
bash "$ROOT/scripts/compile-det-turn-order.sh" "$DIR.det"
mv "$DIR.det"/check/* "$DIR/check/"
mv "$DIR.det/bench" "$DIR/bench"
rm -rf "$DIR.det"
