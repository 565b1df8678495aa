#!/usr/bin/env bash
# Issue 24's speed bar on the GPU host, one run: bench/bench.py (forward)
# and bench/bench_backward.py (backward) over DIR/fwd and DIR/bwd
# (scripts/compile-bar.sh), N = 512..16k, SDPA flash and cuDNN in the same
# processes, then bench/bar_report.py's table (forward, backward and
# forward + backward against cuDNN, geometric means). Logs under $OUT.
#
#   scripts/gpu-bar.sh [DIR]        (default gpu-bar/)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DIR="${1:-gpu-bar}"
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
SEQS="${SEQS:-512,1024,2048,4096,8192,16384}"
mkdir -p "$OUT/fwd" "$OUT/bwd"
if [ ! -f "$BUILD/lib/libattn_runtime.so" ]; then
  source scripts/gpu-build-runtime.sh
  build_gpu_runtime "$BUILD" attn-launch attn_runtime
fi
export ATTN_RUNTIME_LIB="$ROOT/$BUILD/lib/libattn_runtime.so" PYTHONUNBUFFERED=1
python3 bench/bench.py --kernels "$DIR/fwd" --seqs "$SEQS" --reps "${FWD_REPS:-20}" \
  --out "$OUT/fwd" >"$OUT/fwd.log" 2>&1 || echo "!! bench.py failed (fwd.log)"
python3 bench/bench_backward.py --kernels "$DIR/bwd" --seqs "$SEQS" \
  --reps "${BWD_REPS:-15}" --out "$OUT/bwd" >"$OUT/bwd.log" 2>&1 ||
  echo "!! bench_backward.py failed (bwd.log)"
python3 bench/bar_report.py "$OUT/fwd/bench.csv" "$OUT/bwd/bench_backward.csv" \
  | tee "$OUT/bar.md"
