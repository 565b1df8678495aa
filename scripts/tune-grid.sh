#!/usr/bin/env bash
# Compiles the tuning bundles of the benchmark grid (DESIGN.md: bf16, D in
# {64, 128, 256}, causal and not, N = 512 ... 16384 with 16k tokens, B =
# 16384 / N, H = 2048 / D) on the compiler host, for one device call of
# scripts/gpu-tune.sh:
#
#   scripts/tune-grid.sh [BUILD_DIR] [OUT_DIR]
#
# One bundle per (D, mask): its kernels take the sequence length and batch
# as arguments, so the six N of the grid are --tune-shapes of the same
# candidates, compiled into gpu-tune/full/. The carried copy (OUT_DIR,
# default gpu-tune/carry/, both git-ignored) keeps cubins,
# manifests and bundle.json only (no PTX: the runtime loads the cubin), plus
# the MLIR-free attn-tune of BUILD_DIR-rt when it exists.
# The backward grid (D in {64, 128} x causal and not, N = 1024 ... 16384,
# the same tokens and heads) becomes bwd-d<D>-<mask> bundles, and with
# DETERMINISTIC=1 also bwd-det-d<D>-<mask> (deterministic dQ).
# Environment: JOBS (attn-compile -j), FAMILY (default: auto, both
# families), DIMS (default "64 128 256"; "" = no forward bundles), MASKS
# (default "none causal"), BWD_DIMS (default "64 128"; "" = no backward
# bundles), DETERMINISTIC.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${1:-build-tune}"
OUT="${2:-gpu-tune/carry}"
WORK="gpu-tune/full"
rm -rf "$WORK" "$OUT"
mkdir -p "$WORK" "$OUT"
FAMILY_FLAG=()
[ -n "${FAMILY:-}" ] && FAMILY_FLAG=(--family "$FAMILY")
for d in ${DIMS-64 128 256}; do
  h=$((2048 / d))
  for mask in ${MASKS:-none causal}; do
    name="d$d-$mask"
    flags=()
    [ "$mask" = causal ] && flags=(--causal)
    start=$(date +%s)
    "$BUILD/bin/attn-compile" --head-dim "$d" --heads-q "$h" --batch 32 \
      --seq-q 512 --dtype bf16 "${flags[@]}" "${FAMILY_FLAG[@]}" \
      --tune-bundle "$WORK/$name" \
      --tune-shapes 16x1024,8x2048,4x4096,2x8192,1x16384 \
      ${JOBS:+-j "$JOBS"} >"$WORK/$name.log"
    echo "$name: $(tail -1 "$WORK/$name.log") ($(( $(date +%s) - start )) s)"
  done
done
for d in ${BWD_DIMS-64 128}; do
  h=$((2048 / d))
  for mask in ${MASKS:-none causal}; do
    for det in 0 ${DETERMINISTIC:+1}; do
      name="bwd-d$d-$mask"
      flags=(--backward)
      [ "$mask" = causal ] && flags+=(--causal)
      [ "$det" = 1 ] && { flags+=(--deterministic); name="bwd-det-d$d-$mask"; }
      start=$(date +%s)
      "$BUILD/bin/attn-compile" --head-dim "$d" --heads-q "$h" --batch 16 \
        --seq-q 1024 --dtype bf16 "${flags[@]}" \
        --tune-bundle "$WORK/$name" \
        --tune-shapes 8x2048,4x4096,2x8192,1x16384 \
        ${JOBS:+-j "$JOBS"} >"$WORK/$name.log"
      echo "$name: $(tail -1 "$WORK/$name.log") ($(( $(date +%s) - start )) s)"
    done
  done
done
# The carried copy: no PTX.
(cd "$WORK" && find . -name bundle.json -o -name manifest.json \
   -o -name kernel.cubin) | while read -r f; do
  mkdir -p "$OUT/$(dirname "$f")"
  cp "$WORK/$f" "$OUT/$f"
done
if [ -x "$BUILD-rt/bin/attn-tune" ]; then
  mkdir -p "$OUT/bin"
  cp "$BUILD-rt/bin/attn-tune" "$OUT/bin/"
fi
du -sh "$OUT"
