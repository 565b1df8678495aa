#!/usr/bin/env bash
# ALiBi's speed on the GPU host: the sm90a forward and backward at D = 128,
# causal, with ALiBi (standard slopes) against FlexAttention with the same
# score_mod (torch.compile; SDPA has no ALiBi) and against the same kernels
# without ALiBi, in one process each (bench/bench.py, bench/bench_backward.py,
# N = SEQS, default 2048,8192). Kernels: scripts/compile-alibi-speed.sh.
#   bash scripts/gpu-alibi-speed.sh [DIR]        (default gpu-alibi-speed/)
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DIR="${1:-gpu-alibi-speed}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT/fwd" "$OUT/bwd"
source scripts/gpu-build-runtime.sh
build_gpu_runtime build-gpu attn-launch attn_runtime
export PYTHONUNBUFFERED=1 ATTN_RUNTIME_LIB="$ROOT/build-gpu/lib/libattn_runtime.so"
SEQS="${SEQS:-2048,8192}"
python3 bench/bench.py --kernels "$DIR/fwd" --seqs "$SEQS" --flex \
  --out "$OUT/fwd" >"$OUT/fwd.log" 2>&1 || echo "!! bench.py failed"
python3 bench/bench_backward.py --kernels "$DIR/bwd" --seqs "$SEQS" --flex \
  --out "$OUT/bwd" >"$OUT/bwd.log" 2>&1 || echo "!! bench_backward.py failed"
grep -h "failed\|Error" "$OUT/fwd.log" "$OUT/bwd.log" | head -5
cat "$OUT/fwd/bench.md" "$OUT/bwd/bench_backward.md"
