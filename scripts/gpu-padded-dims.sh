#!/usr/bin/env bash
# GPU-host check and timing of the sm90a kernels at padded head dims
# (KERNELS from scripts/compile-padded-dims.sh, default gpu-padded-dims/):
#   float64 checks (attn-launch --check) of every check/ and kr/ kernel at
#   Nq:Nk in SHAPES, batch 2, Hq 4, Hkv 2, eight at a time (kr/ with
#   explicit key ranges; deterministic ones rerun 5 times, bit-identical);
#   compute-sanitizer memcheck, racecheck and synccheck of one kernel of
#   each backward schedule and of a forward; then bench/bench_backward.py
#   on bench/ and bench/bench.py on bench-fwd/ (both families at D = 96 and
#   192 against SDPA flash and cuDNN, BENCH_SEQS). Logs in $OUT.
# CHECKS=0 skips the float64 checks; SANITIZE_TOOLS and SANITIZE_TIMEOUT
# (seconds per run, default 240) narrow the sanitizers.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-gpu-padded-dims}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT"
source scripts/gpu-build-runtime.sh
build_gpu_runtime build-gpu attn-launch attn_runtime
export L="$ROOT/build-gpu/bin/attn-launch"

check() { # kernel dir, Nq:Nk
  local k="$1" s="$2" extra=() kr=()
  case "$k" in *_det*) extra=(--repeats 5) ;; esac
  local n="${s##*:}"
  case "$k" in *_kr*) kr=(--key-starts 0,$(( n > 20 ? 17 : n / 2 )) --key-ends "$n",$(( n * 3 / 4 > 17 ? n * 3 / 4 : n ))) ;; esac
  local r
  r="$(timeout 120 "$L" "$k" --check --batch 2 --heads-q 4 --heads-kv 2 \
        --seq-q "${s%%:*}" --seq-kv "$n" --seed $RANDOM "${kr[@]}" \
        "${extra[@]}" 2>&1)"
  local rc=$?
  local ok
  ok="$(echo "$r" | grep -o '"ok":[a-z]*' | head -1)"
  [ $rc -eq 124 ] && ok="TIMEOUT"
  echo "${ok:-rc=$rc} $(echo "$r" | grep -o '"[a-z]*_*rel_err":[^,]*\|"bit_identical":[a-z]*\|error.*' | tr '\n' ' ') $(basename "$k") $s"
}
export -f check
SHAPES=${SHAPES:-"1:1 17:17 1000:1000 17:1000 1000:17 333:777"}
if [ "${CHECKS:-1}" = 1 ]; then
  for k in "$KERNELS"/check/* "$KERNELS"/kr/*; do
    [ -d "$k" ] || continue # an absent check/ or kr/ is no kernel
    for s in $SHAPES; do echo "$k $s"; done
  done | xargs -r -P 8 -L 1 bash -c 'check "$0" "$1"' | sort -k4 >"$OUT/checks.txt"
  cat "$OUT/checks.txt"
  echo "checks: $(wc -l <"$OUT/checks.txt"), not ok: $(grep -vc '^"ok":true' "$OUT/checks.txt")"
fi

if command -v compute-sanitizer >/dev/null && [ "${SANITIZE:-1}" = 1 ]; then
  for k in ${SANITIZE_KERNELS:-d96c d192c fwd_d96c_cap30_alibi}; do
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
      echo "$tool $k: $(timeout "${SANITIZE_TIMEOUT:-240}" compute-sanitizer --tool "$tool" "$L" \
        "$KERNELS/check/$k" --check --batch 1 --heads-q 2 --heads-kv 1 \
        --seq-q 77 --seq-kv 130 2>&1 | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|error' | tail -1)"
    done
  done | tee "$OUT/sanitize.txt"
fi

bench() { # bench/ script, kernel subdirectory, log name
  PYTHONUNBUFFERED=1 ATTN_RUNTIME_LIB="$ROOT/build-gpu/lib/libattn_runtime.so" \
    timeout "${BENCH_TIMEOUT:-300}" python3 "bench/$1" \
    --kernels "$KERNELS/$2" --out "$OUT" \
    --seqs "${BENCH_SEQS:-1024,4096,16384}" >"$OUT/$3.log" 2>&1 ||
    echo "!! $1 failed (see $3.log)"
  tail -n 30 "$OUT/$3.log"
}
if [ "${BENCH:-1}" = 1 ]; then
  bench bench_backward.py bench bench_backward
  if [ -d "$KERNELS/bench-fwd" ]; then bench bench.py bench-fwd bench; fi
fi
