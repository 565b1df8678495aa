#!/usr/bin/env bash
# GPU-host half of the NVVM-pipeline comparison (issue 23): the kernels that
# scripts/compile-nvvm-comparison.sh compiled here with this tree's compiler
# ("new") and the last commit's ("old"), checked and timed in one run each:
#
#   scripts/gpu-nvvm-comparison.sh fwd|bwd [DIR]   (default gpu-kernels-nvvm)
#
# fwd: scripts/gpu-hopper.sh on the sm90a forward sets (float64 checks over
#      its shape matrix, memcheck on the first and last kernel, then old and
#      new timed interleaved against cuDNN on the 36-point grid:
#      bench_sm90_schedules.py), the same checks on the sm80 forward sets,
#      and racecheck + synccheck on one new kernel of each family.
# bwd: scripts/gpu-backward.sh on both backward sets (float64 checks,
#      memcheck, racecheck on the new causal D=128 ones, bench_backward.py:
#      old and new against SDPA flash and cuDNN in one process).
# Everything is logged under a scratch folder; $OUT/<part>-logs.tar.gz holds
# it all and the summary is printed last.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PART="${1:?fwd or bwd}"
DIR="${2:-gpu-kernels-nvvm}"
FINAL="${OUT:-$ROOT/gpu-out}"
LOGS="$(mktemp -d)"
mkdir -p "$FINAL"
case "$PART" in
fwd)
  OUT="$LOGS/fwd" SETS=1 SANITIZE=1 BENCH_SEQS=4096 \
    bash scripts/gpu-hopper.sh "$DIR/fwd" 2>&1 | tee "$LOGS/fwd.txt"
  OUT="$LOGS/fwd80" BUILD_DIR=build-gpu \
    bash scripts/gpu-hopper.sh "$DIR/fwd80" 2>&1 | tee "$LOGS/fwd80.txt"
  for k in "$DIR/fwd/new/d128_causal" "$DIR/fwd80/new/d128_causal"; do
    for tool in racecheck synccheck; do
      echo "== $tool $k"
      timeout 180 compute-sanitizer --tool "$tool" build-gpu/bin/attn-launch \
        "$k" --check --batch 1 --heads-q 2 --heads-kv 1 --seq-q 200 \
        --seq-kv 333 2>&1 | tail -3
    done
  done 2>&1 | tee "$LOGS/sanitize.txt"
  ;;
bwd)
  OUT="$LOGS/bwd" BENCH=1 RACECHECK='^new_(sm90a|sm80)_d128c$' \
    bash scripts/gpu-backward.sh "$DIR/bwd" 2>&1 | tee "$LOGS/bwd.txt"
  ;;
*) echo "fwd or bwd" >&2; exit 2 ;;
esac
tar -czf "$FINAL/$PART-logs.tar.gz" -C "$LOGS" .
