#!/usr/bin/env bash
# What a tuning device call runs on the GPU host, from the repository root:
#
#   scripts/gpu-tune.sh [BUNDLES] [-- extra attn-tune flags]
#
# builds the MLIR-free part (-DATTN_ENABLE_COMPILER=OFF) into build-gpu/,
# runs attn-tune on every bundle under BUNDLES (default gpu-tune/, written
# here by `attn-compile --tune-bundle`), and leaves the database
# ($OUT/tuning.json), the table ($OUT/table.md, also printed), every
# candidate's JSON line ($OUT/candidates.jsonl) and the log in $OUT.
# Environment: OUT (default ./gpu-out), BUILD_DIR (default build-gpu),
# BUILD_JOBS.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
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
echo "== attn-tune on $BUNDLES"
"$BUILD/bin/attn-tune" --db "$OUT/tuning.json" --table "$OUT/table.md" \
  --results "$OUT/candidates.jsonl" "$@" "$BUNDLES" 2>"$OUT/tune.log"
rc=$?
grep -E "rejected|warning|error" "$OUT/tune.log" | head -20
exit $rc
