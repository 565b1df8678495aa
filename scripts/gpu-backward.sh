#!/usr/bin/env bash
# GPU-host validation of the backward kernels: every backward kernel
# directory under KERNELS (default gpu-bwd/) is checked against the float64
# host gradients with attn-launch --check over a shape matrix (tails, Nq !=
# Nk, GQA, batch 2); deterministic kernels must give bit-identical results
# over 10 reruns; compute-sanitizer memcheck on two (RACECHECK=<ERE>:
# racecheck and synccheck on the matching kernels); then, with BENCH=1,
# bench/bench_backward.py against SDPA flash and cuDNN backward. Prints a
# table last. Builds the MLIR-free runtime into build-gpu/ first.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-gpu-bwd}"
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
mkdir -p "$OUT"
RESULTS="$OUT/backward.jsonl"
: >"$RESULTS"

if [ ! -x "$BUILD/bin/attn-launch" ] || [ "${REBUILD:-1}" = 1 ]; then
  source scripts/gpu-build-runtime.sh
  build_gpu_runtime "$BUILD" attn-launch attn_runtime
fi
LAUNCH="$BUILD/bin/attn-launch"

SHAPES=${SHAPES:-"1:1 17:17 128:128 1000:1000 17:1000 1000:17 333:777"}
mapfile -t DIRS < <(find -L "$KERNELS" -name manifest.json -printf '%h\n' | sort)
fails=0
for dir in "${DIRS[@]}"; do
  rep=""
  grep -q '"deterministic": true' "$dir/manifest.json" && rep="--repeats 10"
  for s in $SHAPES; do
    nq=${s%%:*}; nk=${s##*:}
    geo="--batch 2 --heads-q 4 --heads-kv 2"
    [ "$nq" -ge 4096 ] && geo="--batch 1 --heads-q 2 --heads-kv 1"
    line="$(timeout "${CHECK_TIMEOUT:-300}" "$LAUNCH" "$dir" --check $rep $geo \
             --seq-q "$nq" --seq-kv "$nk" --seed $RANDOM 2>>"$OUT/backward.log")"
    rc=$?
    [ -z "$line" ] && line="{\"dir\":\"$dir\",\"ok\":false,\"error\":\"exit $rc\"}"
    echo "$line" | sed "s|^{|{\"kdir\":\"$(basename "$dir")\",\"nq\":$nq,\"nk\":$nk,|" >>"$RESULTS"
    [ $rc -ne 0 ] && fails=$((fails + 1))
  done
done

# compute-sanitizer: memcheck on the first and last kernel; RACECHECK=<ERE>
# adds racecheck (and synccheck) on the kernels whose directory matches.
if command -v compute-sanitizer >/dev/null && [ "${SANITIZE:-1}" = 1 ]; then
  sanitize() {
    local tool="$1" dir="$2"
    echo "== $tool $(basename "$dir")"
    timeout 300 compute-sanitizer --tool "$tool" --print-limit 6 "$LAUNCH" "$dir" \
      --check --batch 1 --heads-q 2 --heads-kv 1 --seq-q 77 --seq-kv 130 \
      >"$OUT/sanitize-$tool-$(basename "$dir").log" 2>&1
    tail -2 "$OUT/sanitize-$tool-$(basename "$dir").log"
  }
  for dir in "${DIRS[@]:0:1}" "${DIRS[@]: -1}"; do
    sanitize memcheck "$dir"
  done
  if [ -n "${RACECHECK:-}" ]; then
    for dir in "${DIRS[@]}"; do
      basename "$dir" | grep -Eq "$RACECHECK" || continue
      sanitize racecheck "$dir"
      sanitize synccheck "$dir"
    done
  fi
fi

if [ "${BENCH:-1}" = 1 ]; then
  PYTHONUNBUFFERED=1 ATTN_RUNTIME_LIB="$ROOT/$BUILD/lib/libattn_runtime.so" \
    timeout "${BENCH_TIMEOUT:-300}" python3 bench/bench_backward.py --kernels "${BENCH_KERNELS:-$KERNELS}" \
    --out "$OUT" --seqs "${BENCH_SEQS:-1024,4096,16384}" >"$OUT/bench_backward.log" 2>&1 ||
    echo "!! bench_backward.py failed (see bench_backward.log)"
  tail -n 30 "$OUT/bench_backward.log"
fi

python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'kernel':44} {'Nq':>5} {'Nk':>5} {'dq':>9} {'dk':>9} {'dv':>9} rep ok")
for r in rows:
    f = lambda k: f"{r[k]:.2e}" if isinstance(r.get(k), (int, float)) else "-"
    print(f"{r.get('kdir','?')[:44]:44} {r.get('nq','?'):>5} {r.get('nk','?'):>5} "
          f"{f('dq_rel_err'):>9} {f('dk_rel_err'):>9} {f('dv_rel_err'):>9} "
          f"{str(r.get('bit_identical','-'))[:3]:>3} {r.get('ok')}"
          + (f"  {r.get('error','')}" if not r.get('ok') else ""))
bad = [r for r in rows if not r.get("ok")]
print(f"{len(rows) - len(bad)}/{len(rows)} backward checks passed")
PY
exit $((fails > 0))
