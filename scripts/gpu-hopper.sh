#!/usr/bin/env bash
# GPU-host check of the sm90a-wgmma kernels (issue #5), one device call:
#
#   scripts/gpu-hopper.sh [KERNELS]      (default gpu-kernels-sm90/)
#
# 1. builds the MLIR-free runtime into build-gpu/;
# 2. per kernel directory: counts HGMMA instructions in the cubin's SASS,
#    then attn-launch --check (float64 reference) over SHAPES with a short
#    timeout each (a pipeline deadlock costs TIMEOUT seconds, not the call);
# 3. with BENCH=1, bench/bench.py against SDPA (cuDNN, flash) on BENCH_SEQS
#    for the kernels whose checks all passed (or BENCH_KERNELS);
#    with SETS=1, KERNELS holds variant sets (scripts/compile-hopper-
#    schedules.sh): bench/bench_sm90_schedules.py times every set against
#    the others and cuDNN, interleaved, then bench.py times the set with
#    the best geometric mean per (D, mask) on BENCH_SEQS;
# 4. prints a table last.
# Environment: OUT, BUILD_DIR, SHAPES ("Nq:Nk ..."), CHECK_SKIP (kernel
# folders not to check, a grep -E pattern), TIMEOUT, BENCH, SETS,
# BENCH_SEQS, BENCH_KERNELS (default KERNELS), SANITIZE=1 (compute-sanitizer on the first kernel).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-gpu-kernels-sm90}"
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
TIMEOUT="${TIMEOUT:-20}"
mkdir -p "$OUT"
RESULTS="$OUT/hopper.jsonl"
: >"$RESULTS"

source scripts/gpu-build-runtime.sh
build_gpu_runtime "$BUILD" attn-launch attn_runtime
LAUNCH="$BUILD/bin/attn-launch"

SHAPES=${SHAPES:-"1:1 17:17 128:128 1000:1000 4096:4096 17:1000 1000:17 128:4096 4096:128"}
mapfile -t DIRS < <(find -L "$KERNELS" -name manifest.json -printf '%h\n' | sort)
: >"$OUT/hgmma.txt"
for dir in "${DIRS[@]}"; do
  n=$(cuobjdump -sass "$dir/kernel.cubin" 2>/dev/null | grep -c HGMMA)
  echo "${dir#"$KERNELS"/} $n" >>"$OUT/hgmma.txt"
  # Kernels checked by an earlier call (CHECK_SKIP, a grep -E pattern).
  [ -n "${CHECK_SKIP:-}" ] && echo "${dir#"$KERNELS"/}" | grep -qE "$CHECK_SKIP" && continue
  for s in $SHAPES; do
    nq=${s%%:*}; nk=${s##*:}
    rows=""
    [ "$nq" -ge 1000 ] && rows="--check-rows 200"
    line="$(timeout "$TIMEOUT" "$LAUNCH" "$dir" --check --batch 2 --heads-q 4 \
              --heads-kv 2 --seq-q "$nq" --seq-kv "$nk" --seed 7 $rows \
              2>>"$OUT/launch.log")"
    rc=$?
    [ -z "$line" ] && line="{\"ok\":false,\"error\":\"exit $rc\",\"shape\":{\"seq_q\":$nq,\"seq_kv\":$nk}}"
    echo "$line" | sed "s|^{|{\"kdir\":\"${dir#"$KERNELS"/}\",|" >>"$RESULTS"
    # A hang (pipeline deadlock) is not worth repeating on every shape.
    [ $rc -eq 124 ] && { echo "!! $(basename "$dir") timed out at $nq:$nk; skipping its other shapes"; break; }
  done
done

if [ "${SANITIZE:-0}" = 1 ] && [ "${#DIRS[@]}" -gt 0 ]; then
  for dir in "${DIRS[@]:0:1}" "${DIRS[@]: -1}"; do
    echo "== memcheck $(basename "$dir")"
    timeout 120 compute-sanitizer --tool memcheck "$LAUNCH" "$dir" --check \
      --batch 1 --heads-q 2 --heads-kv 1 --seq-q 77 --seq-kv 130 2>&1 | tail -2
  done
fi

if [ "${SETS:-0}" = 1 ]; then
  # Sets whose kernels failed a check are not timed.
  SET_SRC="$(mktemp -d)"
  for set in "$KERNELS"/*/; do
    s="$(basename "$set")"
    if grep "\"kdir\":\"$s/" "$RESULTS" | grep -q '"ok":false'; then
      echo "!! set $s failed a check: not timed"
    else
      cp -r "$set" "$SET_SRC/$s"
    fi
  done
  PYTHONUNBUFFERED=1 ATTN_RUNTIME_LIB="$ROOT/$BUILD/lib/libattn_runtime.so" \
    timeout "${SETS_TIMEOUT:-200}" python3 bench/bench_sm90_schedules.py \
    --sets "$SET_SRC" --out "$OUT" >"$OUT/schedules.log" 2>&1 ||
    echo "!! bench_sm90_schedules.py failed (see schedules.log)"
  grep -E "^==|N=|geomean" "$OUT/schedules.log" | cut -c1-160
  BENCH_KERNELS="$(mktemp -d)"
  while read -r d c s gm; do
    name="d$d"; [ "$c" = 1 ] && name="${name}_causal"
    cp -r "$KERNELS/$s/$name" "$BENCH_KERNELS/${s}_$name"
  done <"$OUT/choice.txt"
  [ "${BENCH:-0}" = 1 ] || BENCH=1
fi

if [ "${BENCH:-0}" = 1 ]; then
  # Only kernels whose checks all passed: one that hangs (a pipeline
  # deadlock) would otherwise stall bench.py until BENCH_TIMEOUT.
  BENCH_SRC="${BENCH_KERNELS:-$KERNELS}"
  if [ -z "${BENCH_KERNELS:-}" ]; then
    BENCH_SRC="$(mktemp -d)"
    for dir in "${DIRS[@]}"; do
      k="${dir#"$KERNELS"/}"
      if grep -q "\"kdir\":\"$k\"" "$RESULTS" &&
         ! grep "\"kdir\":\"$k\"" "$RESULTS" | grep -q '"ok":false'; then
        cp -r "$dir" "$BENCH_SRC/${k//\//_}"
      else
        echo "!! $k failed a check: not benchmarked"
      fi
    done
  fi
  PYTHONUNBUFFERED=1 ATTN_RUNTIME_LIB="$ROOT/$BUILD/lib/libattn_runtime.so" \
    timeout "${BENCH_TIMEOUT:-300}" python3 bench/bench.py --kernels "$BENCH_SRC" \
    --out "$OUT" --seqs "${BENCH_SEQS:-1024,4096,16384}" >"$OUT/bench.log" 2>&1 ||
    echo "!! bench.py failed (see bench.log)"
  grep -E "^\|" "$OUT/bench.log" | cut -d'|' -f2,4,7,10-13,16 || tail -n 30 "$OUT/bench.log"
fi

echo "== HGMMA instructions in SASS"
cat "$OUT/hgmma.txt"
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
worst = {}
for r in rows:
    e = r.get("rel_err")
    if isinstance(e, (int, float)):
        worst[r["kdir"]] = max(worst.get(r["kdir"], 0), e)
print("worst rel_err per kernel:")
for k, e in sorted(worst.items()):
    print(f"  {k:<44} {e:.2e}")
bad = [r for r in rows if not r.get("ok")]
for r in bad[:25]:
    s = r.get("shape", {})
    print("FAIL", r.get("kdir"), s.get("seq_q"), s.get("seq_kv"),
          r.get("rel_err"), r.get("lse_rel_err"), str(r.get("error", ""))[:160])
print(f"{len(rows) - len(bad)} of {len(rows)} checks passed")
PY
[ -f "$OUT/bench.csv" ] && python3 - "$OUT/bench.csv" <<'PY'
import csv, math, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if r.get("attn_tflops") and r.get("sdpa-cudnn_tflops")]
def gm(rs):
    return math.exp(sum(math.log(float(r["attn_tflops"]) /
                                 float(r["sdpa-cudnn_tflops"])) for r in rs) / len(rs)) if rs else float("nan")
for d in sorted({r["D"] for r in rows}, key=int):
    print(f"geomean D={d}: {gm([r for r in rows if r['D'] == d]):.3f}x cuDNN")
print(f"geomean over {len(rows)} points: {gm(rows):.3f}x cuDNN; not ok: "
      f"{sum(r.get('ok') != 'True' for r in rows)}")
bar = [f"{r['Nq']}:{float(r['attn_tflops']):.0f}" for r in rows
       if r["D"] == "128" and r["causal"] == "False" and int(r["Nq"]) >= 4096]
print("D=128 non-causal N>=4096 TFLOP/s:", " ".join(bar))
PY
