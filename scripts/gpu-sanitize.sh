#!/usr/bin/env bash
# compute-sanitizer over compiled forward kernels on the GPU host: memcheck
# (out-of-bounds and misaligned global/shared accesses), racecheck (shared
# memory hazards between threads) and synccheck (barrier misuse), each on
# shapes with tails (sequence lengths that are not multiples of the blocks,
# Nq != Nk, causal rows that see no key, GQA), through attn-launch --check so
# the results are also checked against the float64 reference.
#
#   scripts/gpu-sanitize.sh [KERNELS]      (default gpu-kernels/)
#
# Kernels are compiled where MLIR is (attn-compile ... -o gpu-kernels/NAME)
# and carried to the GPU host. Needs nvcc's compute-sanitizer; builds the
# MLIR-free runtime into BUILD_DIR (default build-gpu). Writes logs under
# $OUT (default ./gpu-out) and prints a table last: one row per kernel,
# tool and shape with the sanitizer's error count. Exit status 0 when every
# run reports 0 errors and every check passes.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-gpu-kernels}"
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
TOOLS="${TOOLS:-memcheck racecheck synccheck}"
# batch:heads_q:heads_kv:seq_q:seq_kv; tails everywhere, one causal-empty
# row case (seq_q > seq_kv), one single-row case.
SHAPES="${SHAPES:-1:2:1:77:130 2:4:2:130:17 1:1:1:1:1}"
mkdir -p "$OUT"
SUMMARY="$OUT/sanitize.tsv"
: >"$SUMMARY"

if [ ! -x "$BUILD/bin/attn-launch" ]; then
  cmake -G Ninja -S . -B "$BUILD" -DATTN_ENABLE_COMPILER=OFF \
    -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
    cmake --build "$BUILD" -j "$(nproc)" >>"$OUT/build.log" 2>&1 ||
    { echo "!! build failed"; tail -30 "$OUT/build.log"; exit 2; }
fi
LAUNCH="$BUILD/bin/attn-launch"
SAN="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
[ -x "$SAN" ] || { echo "!! compute-sanitizer not found"; exit 2; }

mapfile -t DIRS < <(find -L "$KERNELS" -name manifest.json -printf '%h\n' | sort)
[ "${#DIRS[@]}" -gt 0 ] || { echo "!! no kernels under $KERNELS"; exit 2; }
bad=0
for dir in "${DIRS[@]}"; do
  name="$(basename "$dir")"
  for tool in $TOOLS; do
    for s in $SHAPES; do
      IFS=: read -r b hq hkv nq nk <<<"$s"
      log="$OUT/$name.$tool.$b-$hq-$hkv-$nq-$nk.log"
      extra=()
      [ "$tool" = memcheck ] && extra=(--leak-check no)
      [ "$tool" = racecheck ] && extra=(--racecheck-report all)
      timeout 300 "$SAN" --tool "$tool" "${extra[@]}" --error-exitcode 99 \
        "$LAUNCH" "$dir" --check --batch "$b" --heads-q "$hq" --heads-kv "$hkv" \
        --seq-q "$nq" --seq-kv "$nk" --warmup 0 >"$log" 2>&1
      rc=$?
      errors="$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" | tail -1)"
      hazards="$(sed -n 's/.*RACECHECK SUMMARY: \([0-9]*\) hazard.*/\1/p' "$log" | tail -1)"
      ok="$(grep -o '"ok":[a-z]*' "$log" | tail -1 | cut -d: -f2)"
      # racecheck reports hazards in its own summary line.
      [ -n "$hazards" ] && errors="$(( ${errors:-0} + hazards ))"
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$tool" "$s" "${errors:-?}" \
        "${ok:-?}" "$rc" >>"$SUMMARY"
      if [ "$rc" -ne 0 ] || [ "${errors:-?}" != 0 ] || [ "$ok" != true ]; then
        bad=$((bad + 1))
      fi
    done
  done
done

# Very long sequences (LONG_N, e.g. "32768 131072"; off by default): the
# first kernel at batch 1, 1 head, checked on sampled rows; the device's
# memory in use is sampled while it runs (FlashAttention keeps no N x N
# state, so it should grow with the inputs only: linear in N).
LONGTAB="$OUT/long-n.tsv"
: >"$LONGTAB"
for n in ${LONG_N:-}; do
  dir="${DIRS[0]}"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 50 \
    >"$OUT/mem.$n.log" 2>/dev/null &
  smi=$!
  line="$(timeout 300 "$LAUNCH" "$dir" --check --check-rows 64 --batch 1 \
            --heads-q 1 --heads-kv 1 --seq-q "$n" --seq-kv "$n" 2>>"$OUT/long-n.log")"
  rc=$?
  kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
  peak="$(sort -n "$OUT/mem.$n.log" | tail -1)"
  ok="$(echo "$line" | grep -o '"ok":[a-z]*' | cut -d: -f2)"
  printf '%s\t%s\t%s\t%s\n' "$(basename "$dir")" "$n" "${peak:-?}" "${ok:-?}" >>"$LONGTAB"
  [ "$ok" = true ] || bad=$((bad + 1))
done

echo "kernel                                   tool       shape(b:hq:hkv:nq:nk)  errors  check  rc"
while IFS=$'\t' read -r name tool s errors ok rc; do
  printf '%-40s %-10s %-22s %-7s %-6s %s\n' "$name" "$tool" "$s" "$errors" "$ok" "$rc"
done <"$SUMMARY"
if [ -s "$LONGTAB" ]; then
  echo "long N (batch 1, 1 head): kernel, N, peak device memory in use (MiB), check"
  cat "$LONGTAB"
fi
echo "runs with errors or failed checks: $bad"
[ "$bad" -eq 0 ]
