#!/usr/bin/env bash
# Reliability checks on the GPU host, over every kernel directory (forward
# sm80 and sm90a-wgmma, backward atomic and deterministic) under KERNELS:
#
# 1. compute-sanitizer memcheck (out-of-bounds and misaligned global/shared
#    accesses), racecheck (shared-memory hazards) and synccheck (barrier
#    misuse), each on shapes with tails (sequence lengths that are not
#    multiples of the blocks, Nq != Nk, causal rows that see no key, GQA),
#    through attn-launch --check so every run is also checked against the
#    float64 reference (backward: dQ, dK, dV against the float64 gradients;
#    N = 1 and other shapes run without a sanitizer in 2);
# 2. EDGE=1: numerical edge cases on every forward kernel, no sanitizer:
#    NaN/Inf inputs (attn-launch --special; the outputs must be non-finite
#    where the float64 reference is, and finite and right elsewhere except
#    where a non-finite V sits behind a key the mask hides in a key block
#    the row's query block visits: docs/reliability.md), a non-finite V in
#    the neighbouring head and batch (never seen), logits near +-1e4, the
#    dtype's extremes, N = 1, Nk = 1, fully masked rows, a zero-size batch;
# 3. LONG_N="16384 131072": very long sequences at batch 1 on the forward
#    kernels named by LONG_KERNELS (default: each family's first), checked
#    on sampled rows, with the device memory in use sampled while each runs
#    (alone on the GPU): FlashAttention keeps no N x N state, so it must
#    grow linearly with N;
# 4. TORCH_SMOKE=1: python/attn/runtime.py's argument checks with PyTorch
#    (test/Runtime/Inputs/torch_smoke.py).
#
#   scripts/gpu-sanitize.sh [KERNELS]      (default gpu-kernels/)
#
# Kernels are compiled where MLIR is (attn-compile ... -o KERNELS/NAME) and
# carried to the GPU host. Needs nvcc's compute-sanitizer; builds the
# MLIR-free runtime into BUILD_DIR (default build-gpu). JOBS runs (default
# 6) share the GPU at a time, except the long-N ones; SAN_MATCH (a regex on
# the kernel directory's name) limits step 1 to some kernels. Writes logs under
# $OUT (default ./gpu-out) and prints tables last. Exit status 0 when every
# run reports 0 errors and every check passes.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-gpu-kernels}"
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
TOOLS="${TOOLS:-memcheck racecheck synccheck}"
JOBS="${JOBS:-6}"
# batch:heads_q:heads_kv:seq_q:seq_kv; tails everywhere, GQA, one shape
# with causal-empty rows (seq_q > seq_kv).
SHAPES="${SHAPES:-1:2:1:77:130 2:4:2:130:17}"
mkdir -p "$OUT"
SUMMARY="$OUT/sanitize.tsv"
EDGETAB="$OUT/edge.tsv"
: >"$SUMMARY"
: >"$EDGETAB"

if [ ! -x "$BUILD/bin/attn-launch" ] || [ "${REBUILD:-0}" = 1 ]; then
  GEN=()
  command -v ninja >/dev/null && GEN=(-G Ninja)
  # Only the runtime and attn-launch: nothing else is needed here.
  cmake "${GEN[@]}" -S . -B "$BUILD" -DATTN_ENABLE_COMPILER=OFF \
    -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
    cmake --build "$BUILD" -j "$(nproc)" --target attn-launch attn_runtime \
      >>"$OUT/build.log" 2>&1 ||
    { echo "!! build failed"; tail -30 "$OUT/build.log"; exit 2; }
fi
export LAUNCH="$ROOT/$BUILD/bin/attn-launch"
export SAN="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
export OUT SUMMARY EDGETAB
[ -x "$SAN" ] || { echo "!! compute-sanitizer not found"; exit 2; }

mapfile -t DIRS < <(find -L "$KERNELS" -name manifest.json -printf '%h\n' | sort)
[ "${#DIRS[@]}" -gt 0 ] || { echo "!! no kernels under $KERNELS"; exit 2; }

# One sanitizer run: KERNEL_DIR TOOL SHAPE -> a line of $SUMMARY.
sanitize_one() {
  local dir="$1" tool="$2" s="$3" name log extra rc errors hazards ok
  name="$(basename "$dir")"
  IFS=: read -r b hq hkv nq nk <<<"$s"
  log="$OUT/$name.$tool.$b-$hq-$hkv-$nq-$nk.log"
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check no)
  [ "$tool" = racecheck ] && extra=(--racecheck-report all)
  timeout "${RUN_TIMEOUT:-300}" "$SAN" --tool "$tool" "${extra[@]}" --error-exitcode 99 \
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
}

# One edge case: KERNEL_DIR LABEL attn-launch flags... -> a line of $EDGETAB
# (with hidden_key_nan: output elements NaN from a non-finite V behind a
# hidden key, which the contract allows; docs/reliability.md).
edge_one() {
  local dir="$1" label="$2" name line rc ok hidden
  shift 2
  name="$(basename "$dir")"
  line="$(timeout 120 "$LAUNCH" "$dir" --check "$@" 2>>"$OUT/edge.log")"
  rc=$?
  echo "$name $label: $line" >>"$OUT/edge.jsonl"
  ok="$(echo "$line" | grep -o '"ok":[a-z]*' | cut -d: -f2)"
  hidden="$(echo "$line" | grep -o '"hidden_key_nan":[0-9]*' | cut -d: -f2)"
  # A zero-size batch must report that nothing was launched.
  if [ "$label" = empty-batch ] && ! echo "$line" | grep -q '"launched":false'; then
    ok="launched!"
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$label" "${ok:-?}" "$rc" "${hidden:--}" >>"$EDGETAB"
}
export -f sanitize_one edge_one

# 1. compute-sanitizer, JOBS runs at a time.
{
  for dir in "${DIRS[@]}"; do
    # SAN_MATCH: an extended regex on the kernel's directory name, to
    # sanitize only some kernels (the edge cases still run on all).
    [[ "$(basename "$dir")" =~ ${SAN_MATCH:-.} ]] || continue
    for tool in $TOOLS; do
      [ "$tool" = none ] && continue # TOOLS=none: edge cases / long N only
      for s in $SHAPES; do printf '%s\n' "$dir $tool $s"; done
    done
  done
} | xargs -r -P "$JOBS" -L 1 bash -c 'sanitize_one "$@"' _

# 2. Numerical edge cases on the forward kernels.
if [ "${EDGE:-0}" = 1 ]; then
  : >"$OUT/edge.jsonl"
  {
    for dir in "${DIRS[@]}"; do
      grep -q '"direction": *"backward"' "$dir/manifest.json" && continue
      d="$(grep -o '"head_dim": *[0-9]*' "$dir/manifest.json" | head -1 | grep -o '[0-9]*$')"
      dv="$(grep -o '"value_head_dim": *[0-9]*' "$dir/manifest.json" | head -1 | grep -o '[0-9]*$')"
      dv="${dv:-$d}"
      dtype="$(grep -o '"dtype": *"[a-z0-9]*"' "$dir/manifest.json" | head -1 | cut -d'"' -f4)"
      # q.k * scale = D * x^2 / sqrt(D) = 1e4 for x = sqrt(1e4 / sqrt(D)).
      x="$(python3 -c "print(f'{(1e4 / $d ** 0.5) ** 0.5:.4f}')")"
      big=1e36; tiny=1e-39
      [ "$dtype" = f16 ] && big=60000 && tiny=1e-7
      g="--batch 1 --heads-q 2 --heads-kv 1"
      cat <<EOF
$dir nan-q $g --seq-q 40 --seq-kv 70 --special q:0=nan
$dir nan-k $g --seq-q 40 --seq-kv 70 --special k:$((3 * d + 1))=nan
$dir nan-v $g --seq-q 40 --seq-kv 70 --special v:5=nan
$dir inf-q $g --seq-q 40 --seq-kv 70 --special q:$d=inf
$dir inf-v $g --seq-q 40 --seq-kv 70 --special v:0=inf --special v:1=-inf
$dir nan-v-late $g --seq-q 300 --seq-kv 300 --special v:$((250 * dv + 3))=nan
$dir inf-v-late $g --seq-q 300 --seq-kv 300 --special v:$((250 * dv))=inf --special v:$((250 * dv + 1))=-inf
$dir nan-v-neighbours --batch 2 --heads-q 4 --heads-kv 2 --seq-q 40 --seq-kv 70 --special v:$((70 * dv))=nan --special v:$((140 * dv + 2))=nan
$dir neg-inf-k $g --seq-q 40 --seq-kv 70 --special k:0=-inf
$dir logits+1e4 $g --seq-q 24 --seq-kv 200 --special q:*=$x --special k:*=$x
$dir logits-1e4 $g --seq-q 24 --seq-kv 200 --special q:*=$x --special k:*=-$x
$dir logits-random-big $g --seq-q 50 --seq-kv 300 --input-range 30
$dir extreme-v $g --seq-q 16 --seq-kv 64 --special v:*=$big
$dir subnormal $g --seq-q 16 --seq-kv 64 --special q:*=$tiny --special k:*=$tiny --special v:*=$tiny
$dir n1 $g --seq-q 1 --seq-kv 1
$dir nk1 $g --seq-q 77 --seq-kv 1
$dir nq1 $g --seq-q 1 --seq-kv 300
$dir masked-rows $g --seq-q 300 --seq-kv 40
$dir empty-batch --batch 0 --heads-q 2 --heads-kv 1 --seq-q 77 --seq-kv 130
EOF
    done
  } | xargs -r -P "$JOBS" -L 1 bash -c 'edge_one "$@"' _
fi

# 3. Very long sequences, one run at a time (the device's memory in use is
# sampled every 20 ms, so nothing else may run).
LONGTAB="$OUT/long-n.tsv"
: >"$LONGTAB"
if [ -n "${LONG_N:-}" ]; then
  if [ -n "${LONG_KERNELS:-}" ]; then
    read -r -a LDIRS <<<"$LONG_KERNELS"
  else
    LDIRS=()
    for fam in sm80 sm90a; do
      for dir in "${DIRS[@]}"; do
        grep -q '"direction": *"backward"' "$dir/manifest.json" && continue
        grep -q "\"family\": *\"$fam" "$dir/manifest.json" && { LDIRS+=("$dir"); break; }
      done
    done
  fi
  for dir in "${LDIRS[@]}"; do
    for n in 1 $LONG_N; do
      nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 20 \
        >"$OUT/mem.$(basename "$dir").$n.log" 2>/dev/null &
      smi=$!
      sleep 0.3
      line="$(timeout 300 "$LAUNCH" "$dir" --check --check-rows 64 --batch 1 \
                --heads-q 1 --heads-kv 1 --seq-q "$n" --seq-kv "$n" 2>>"$OUT/long-n.log")"
      kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
      peak="$(sort -n "$OUT/mem.$(basename "$dir").$n.log" | tail -1)"
      ok="$(echo "$line" | grep -o '"ok":[a-z]*' | cut -d: -f2)"
      echo "$line" >>"$OUT/long-n.jsonl"
      printf '%s\t%s\t%s\t%s\n' "$(basename "$dir")" "$n" "${peak:-?}" "${ok:-?}" >>"$LONGTAB"
    done
  done
fi

# 4. runtime.py's argument checks with PyTorch.
SMOKE="not run"
if [ "${TORCH_SMOKE:-0}" = 1 ]; then
  cmake --build "$BUILD" --target attn_runtime >>"$OUT/build.log" 2>&1
  if ATTN_RUNTIME_LIB="$ROOT/$BUILD/lib/libattn_runtime.so" timeout 120 \
       python3 test/Runtime/Inputs/torch_smoke.py "$ROOT" >"$OUT/torch-smoke.log" 2>&1; then
    SMOKE="$(tail -1 "$OUT/torch-smoke.log")"
  else
    SMOKE="FAILED: $(tail -1 "$OUT/torch-smoke.log")"
  fi
fi

bad=0
echo "kernel                              tool       shape(b:hq:hkv:nq:nk)  errors  check  rc"
sort "$SUMMARY" | while IFS=$'\t' read -r name tool s errors ok rc; do
  printf '%-35s %-10s %-22s %-7s %-6s %s\n' "$name" "$tool" "$s" "$errors" "$ok" "$rc"
done
bad=$((bad + $(awk -F'\t' '$4 != "0" || $5 != "true" || $6 != "0"' "$SUMMARY" | wc -l)))
if [ -s "$EDGETAB" ]; then
  echo "edge cases: kernel, case, check, rc, hidden_key_nan"
  sort "$EDGETAB" | awk -F'\t' '{printf "%-35s %-18s %-9s %-3s %s\n", $1, $2, $3, $4, $5}'
  bad=$((bad + $(awk -F'\t' '$3 != "true" || $4 != "0"' "$EDGETAB" | wc -l)))
fi
if [ -s "$LONGTAB" ]; then
  echo "long N (batch 1, 1 head): kernel, N, peak device memory in use (MiB), check"
  cat "$LONGTAB"
  bad=$((bad + $(awk -F'\t' '$4 != "true"' "$LONGTAB" | wc -l)))
fi
echo "torch smoke: $SMOKE"
case "$SMOKE" in FAILED*) bad=$((bad + 1)) ;; esac
echo "runs with errors or failed checks: $bad"
[ "$bad" -eq 0 ]
