#!/usr/bin/env bash
# What a tuning device call runs on the GPU host, from the repository root:
#
#   scripts/gpu-tune.sh [BUNDLES] [-- extra attn-tune flags]
#
# runs attn-tune on every bundle under BUNDLES (default gpu-tune/, written
# here by `attn-compile --tune-bundle`, see scripts/tune-grid.sh), one
# attn-tune process per bundle under a time limit (a hung candidate costs
# that bundle, not the run), and leaves the database ($OUT/tuning.json),
# the tables ($OUT/table.md, also printed), every candidate's JSON line
# ($OUT/candidates.jsonl) and the logs in $OUT.
# attn-tune: $BUNDLES/bin/attn-tune when it was carried along and runs
# here (saves the build), else built MLIR-free (-DATTN_ENABLE_COMPILER=OFF).
# Environment: OUT (default ./gpu-out), BUILD_DIR (default build-gpu),
# BUILD_JOBS, BUNDLE_TIMEOUT seconds per bundle (default 150), DEADLINE
# seconds after which no new bundle starts (default 100000).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
START=$(date +%s)
BUNDLES="gpu-tune"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  BUNDLES="$1"
  shift
fi
[ "${1:-}" = "--" ] && shift
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
mkdir -p "$OUT"

echo "== GPU host: $(nvidia-smi -L 2>/dev/null | head -1 || echo 'nvidia-smi failed')"
TUNE="$BUNDLES/bin/attn-tune"
if [ -x "$TUNE" ] && "$TUNE" --version >/dev/null 2>&1; then
  echo "== carried attn-tune ($("$TUNE" --version))"
else
  GEN=()
  command -v ninja >/dev/null && GEN=(-G Ninja)
  if ! { cmake "${GEN[@]}" -S . -B "$BUILD" -DATTN_ENABLE_COMPILER=OFF \
           -DCMAKE_BUILD_TYPE=Release &&
         cmake --build "$BUILD" -j "${BUILD_JOBS:-$(nproc)}" --target attn-tune; } \
         >"$OUT/build.log" 2>&1; then
    echo "!! build failed; the end of $OUT/build.log:"
    tail -30 "$OUT/build.log"
    exit 2
  fi
  TUNE="$BUILD/bin/attn-tune"
  echo "== built attn-tune ($(( $(date +%s) - START )) s)"
fi

rc=0
: >"$OUT/table.md"
: >"$OUT/candidates.jsonl"
# Forward bundles first, then the backward ones (bwd-*).
for b in $(find "$BUNDLES" -name bundle.json | sort |
           awk '/\/bwd-/ { later = later $0 "\n"; next } { print }
                END { printf "%s", later }'); do
  dir=$(dirname "$b")
  name=$(basename "$dir")
  if [ $(( $(date +%s) - START )) -ge "${DEADLINE:-100000}" ]; then
    echo "!! deadline: $name and later bundles not run"
    rc=1
    continue
  fi
  # A candidate that faults (exit 3) or hangs (timeout, 124) is skipped
  # and the bundle resumed (--skip-tuned keeps the shapes already done).
  skip=()
  for attempt in 1 2 3; do
    timeout "${BUNDLE_TIMEOUT:-150}" "$TUNE" --db "$OUT/tuning.json" \
      --table "$OUT/table-$name.md" --results "$OUT/cand-$name.jsonl" \
      "${skip[@]}" "$@" "$dir" >"$OUT/tune-$name.out" 2>"$OUT/tune-$name.log"
    r=$?
    cat "$OUT/tune-$name.log" >>"$OUT/tune-$name.all.log"
    [ $r -ne 3 ] && [ $r -ne 124 ] && break
    bad=$(grep -E '^\[' "$OUT/tune-$name.log" | tail -1 | awk '{print $NF}')
    [ $r -eq 3 ] && bad=$(grep -o 'rerun with --skip [^ ]*' "$OUT/tune-$name.log" | tail -1 | awk '{print $NF}')
    echo "!! $name: attn-tune exit $r at candidate '$bad'; skipping it"
    prev="${skip[1]:-}"
    skip=(--skip "${prev:+$prev,}$bad" --skip-tuned)
    tail -n +3 "$OUT/table-$name.md" >>"$OUT/table-$name.partial.md" 2>/dev/null
    cat "$OUT/cand-$name.jsonl" >>"$OUT/cand-$name.partial.jsonl" 2>/dev/null
  done
  [ $r -ne 0 ] && { echo "!! $name: attn-tune exit $r"; rc=1; }
  cat "$OUT/table-$name.partial.md" >>"$OUT/table.md" 2>/dev/null
  cat "$OUT/cand-$name.partial.jsonl" >>"$OUT/candidates.jsonl" 2>/dev/null
  if [ -s "$OUT/table.md" ]; then
    tail -n +3 "$OUT/table-$name.md" >>"$OUT/table.md" 2>/dev/null
  else
    cat "$OUT/table-$name.md" >>"$OUT/table.md" 2>/dev/null
  fi
  cat "$OUT/cand-$name.jsonl" >>"$OUT/candidates.jsonl" 2>/dev/null
  grep -E "rejected|warning|error|fatal" "$OUT/tune-$name.all.log" | head -5
  grep -E "^attn-tune: .*: [0-9.]+ s \(" "$OUT/tune-$name.all.log" >>"$OUT/times.log"
done
echo "== $(( $(date +%s) - START )) s in all"
cat "$OUT/table.md"
exit $rc
