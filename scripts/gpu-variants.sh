#!/usr/bin/env bash
# The attention variants on the GPU host: correctness of every variant
# kernel against the float64 host reference (attn-launch --check), then
# the timings of issue #10's bar: sliding window 4096 vs full causal at
# N = 16k, softcap / ALiBi vs plain at D = 128, N = 4096 (bf16, the DESIGN
# grid: B = 16384 / N, H = 2048 / D). Prints a table last.
#
#   scripts/gpu-variants.sh KERNELS    (default build-bwd/variant-kernels)
#
# KERNELS is what scripts/compile-variants.sh wrote here (no MLIR on the
# GPU host). Environment: OUT (default ./gpu-out), BUILD_DIR (build-gpu).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-build-bwd/variant-kernels}"
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
mkdir -p "$OUT"
RESULTS="$OUT/variants.jsonl"
: >"$RESULTS"

cmake -G Ninja -S . -B "$BUILD" -DATTN_ENABLE_COMPILER=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
  cmake --build "$BUILD" -j "$(nproc)" --target attn-launch >>"$OUT/build.log" 2>&1 ||
  { echo "!! build failed"; tail -30 "$OUT/build.log"; exit 2; }
LAUNCH="$BUILD/bin/attn-launch"

# name: launch flags (shapes); the check samples rows of long sequences.
run() {
  local name="$1"; shift
  local line rc
  line="$(timeout 120 "$LAUNCH" "$KERNELS/$name" "$@" 2>>"$OUT/launch.log")"
  rc=$?
  [ -z "$line" ] && line="{\"ok\":false,\"error\":\"exit $rc\"}"
  echo "$line" | sed "s|^{|{\"kdir\":\"$name\",\"flags\":\"$*\",|" >>"$RESULTS"
}
CHECK="--check --check-rows 256"
for d in $(ls "$KERNELS"); do
  case "$d" in
    time_*) ;;
    alibi_*) run "$d" $CHECK ;;  # ALiBi's offsets are compiled for its shape
    *)
      run "$d" $CHECK --batch 2 --heads-q 4 --heads-kv 2 --seq-q 1000 --seq-kv 1500
      run "$d" $CHECK --batch 2 --heads-q 4 --heads-kv 2 --seq-q 1500 --seq-kv 1000
      run "$d" $CHECK --batch 1 --heads-q 2 --heads-kv 1 --seq-q 17 --seq-kv 333
      ;;
  esac
done
for d in $(ls "$KERNELS" | grep '^time_'); do
  run "$d" --check --check-rows 64 --time --reps 20
done

python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'kernel':26} {'shape':30} {'ok':>2} {'rel_err':>9} {'lse_err':>9} {'ms':>8} {'TFLOP/s':>7}")
for r in rows:
    p = r.get("shape", {})
    shape = f"B{p.get('batch')} H{p.get('heads_q')}/{p.get('heads_kv')} {p.get('seq_q')}x{p.get('seq_kv')} d{p.get('head_dim')}"
    f = lambda k, n: str(r.get(k, ""))[:n]
    print(f"{r['kdir'][:26]:26} {shape:30} {f('ok', 1):>2} {f('rel_err', 9):>9} {f('lse_rel_err', 9):>9} {f('time_ms', 8):>8} {f('tflops', 7):>7}")
bad = [r for r in rows if not r.get("ok")]
print(f"{len(rows) - len(bad)}/{len(rows)} passed")
PY
