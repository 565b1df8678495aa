#!/usr/bin/env bash
# Branch gpu/combined3: the kernels of the four unchecked changes for the
# GPU host, laid out for scripts/gpu-padded-dims.sh:
#   DIR/check/, DIR/kr/  the sm90a backward at Dqk != Dv
#       (compile-bwd-unequal.sh), the rotated deterministic turns
#       (compile-det-turn-order.sh: d*_rot_det, float64, bit-identical),
#       block-m 80 (compile-bwd-m80.sh: d*_m80*) and the transposed-dkv
#       schedule (compile-bwd-tdkv.sh: d*_tdkv*);
#   DIR-bench/bench/  atomic / ascending / rotated / no-wait deterministic
#       at D 64, 128, 256; block-m 64 against 80 at D = 128; head-split
#       against transposed-dkv at D = 256.
# On the GPU host, one call each (carry DIR, then DIR-bench):
#   SANITIZE_KERNELS="d192v128c d64_rot_det d128_m80 d256c_tdkv_det" \
#     BENCH=0 bash scripts/gpu-padded-dims.sh gpu-next
#   SANITIZE=0 BENCH_SEQS=2048,4096,16384 BENCH_TIMEOUT=450 \
#     bash scripts/gpu-padded-dims.sh gpu-next-bench
# then the op from this tree's wheel (ninja -C build attn_compiler &&
# bash scripts/build-wheel.sh --no-build; carry dist gpu-wheels):
#   PYTEST_K="unequal or padded_by_the_op or deterministic" SECTIONS= \
#     PYTEST_TIMEOUT=400 bash scripts/gpu-key-range-op.sh
# If block-m 80 (D = 128, no mask) and transposed-dkv (D > 128) are the
# faster: branch gpu/heuristic-next makes them the heuristic's (tests
# updated); the issue's bar from there: bash scripts/compile-bar.sh, then
# on the GPU host (carry gpu-bar) bash scripts/gpu-bar.sh gpu-bar.
#   scripts/compile-next-gpu.sh [DIR]   (default gpu-next/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-next}"
bash "$ROOT/scripts/compile-bwd-unequal.sh" "$DIR"
bash "$ROOT/scripts/compile-det-turn-order.sh" "$DIR.det"
mv "$DIR.det"/check/* "$DIR/check/"
rm -rf "$DIR-bench"
mkdir -p "$DIR-bench"
mv "$DIR.det/bench" "$DIR-bench/bench"
rm -rf "$DIR.det"
bash "$ROOT/scripts/compile-bwd-m80.sh" "$DIR.m80"
mv "$DIR.m80"/check/* "$DIR/check/"
mv "$DIR.m80"/kr/* "$DIR/kr/"
mv "$DIR.m80"/bench/* "$DIR-bench/bench/"
rm -rf "$DIR.m80"
bash "$ROOT/scripts/compile-bwd-tdkv.sh" "$DIR.tdkv"
mv "$DIR.tdkv"/check/* "$DIR/check/"
mv "$DIR.tdkv"/kr/* "$DIR/kr/"
mv "$DIR.tdkv"/bench/* "$DIR-bench/bench/"
rm -rf "$DIR.tdkv"
