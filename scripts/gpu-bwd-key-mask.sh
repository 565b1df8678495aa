#!/usr/bin/env bash
# GPU-host check of the backward kernels masking keys past Nk (issue 24:
# P = exp2(0 - LSE·log2e) of those zero-filled keys overflowed for rows
# whose LSE is below about -88, making dQ NaN). KERNELS (default
# gpu-kernels-mask) holds this tree's backward kernels as new_<family>_d<D>[c]
# (bf16, batch 4, heads 2048/D, N = 4096; newdet_sm80_d64 the deterministic
# one) and the previous commit's as old_<family>_d<D>[c]:
#   float64 checks of every kernel at Nq = Nk in {1, 2, 5} with scale 1.7
#   and inputs in ±3 (large logits), and of the new ones at 200x333 and
#   1000x1000; memcheck on new_sm90a_d128c; then bench/bench_backward.py
#   over old and new in one process (N = 4096, 8192), the table last.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-gpu-kernels-mask}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT/bench"
source scripts/gpu-build-runtime.sh
build_gpu_runtime build-gpu attn-launch attn_runtime
L=build-gpu/bin/attn-launch
for k in "$KERNELS"/*; do
  shapes="1:1 2:2 5:5"
  case "$k" in */new*) shapes="$shapes 200:333 1000:1000" ;; esac
  for s in $shapes; do
    flags=(--scale 1.7 --input-range 3)
    case "$s" in 200:333|1000:1000) flags=(--scale 0.3) ;; esac
    r="$(timeout 60 $L "$k" --check --batch 2 --heads-q 4 --heads-kv 2 \
          --seq-q "${s%%:*}" --seq-kv "${s##*:}" --seed 11 "${flags[@]}" 2>&1)"
    echo "$(echo "$r" | grep -o '"dq_nonfinite":[0-9]*\|"dq_rel_err":[^,]*\|"dk_rel_err":[^,]*\|"ok":[a-z]*' | tr '\n' ' ') $(basename "$k") $s"
  done
done | tee "$OUT/checks.txt"
timeout 200 compute-sanitizer --tool memcheck $L "$KERNELS/new_sm90a_d128c" \
  --check --batch 1 --heads-q 2 --heads-kv 1 --seq-q 200 --seq-kv 333 2>&1 | tail -1
ATTN_RUNTIME_LIB=build-gpu/lib/libattn_runtime.so timeout 240 \
  python3 bench/bench_backward.py --kernels "$KERNELS" --seqs 4096,8192 \
  --reps 30 --out "$OUT/bench" >"$OUT/bench/log.txt" 2>&1
cat "$OUT/bench/bench_backward.md"
