#!/usr/bin/env bash
# The attention variants on the GPU host, in one call: correctness of every
# variant kernel against the float64 host reference (attn-launch --check),
# the timings of issue #10's bar with attn-launch (sliding window 4096 vs
# full causal at N = 16k; softcap / ALiBi vs plain at D = 128, N = 4096;
# varlen vs padded), then bench/bench_variants.py against FlexAttention
# and SDPA (Flex compiles its kernels on the CPU while the checks run; it
# times once attn-launch is done). Prints tables last.
#
#   scripts/gpu-variants.sh KERNELS    (default build-bwd/variant-kernels)
#
# KERNELS is what scripts/compile-variants.sh wrote here (no MLIR on the
# GPU host). Environment: OUT (default ./gpu-out), BUILD_DIR (build-gpu),
# PEERS=0 skips the Python comparison.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-build-bwd/variant-kernels}"
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
mkdir -p "$OUT"
RESULTS="$OUT/variants.jsonl"
: >"$RESULTS"
GO="$OUT/attn-launch-done"
rm -f "$GO"
LENS="512,1024,2048,4096,256,3072,1536,3840"

PEERS_PID=
if [ "${PEERS:-1}" = 1 ]; then
  PYTHONUNBUFFERED=1 ATTN_RUNTIME_LIB="$BUILD/lib/libattn_runtime.so" \
    timeout 400 python3 bench/bench_variants.py --kernels "$KERNELS" \
    --wait-for "$GO" --varlen "$LENS" --jsonl "$OUT/peers.jsonl" \
    >"$OUT/peers.log" 2>&1 &
  PEERS_PID=$!
fi

cmake -G Ninja -S . -B "$BUILD" -DATTN_ENABLE_COMPILER=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
  cmake --build "$BUILD" -j "$(nproc)" --target attn-launch attn_runtime \
    >>"$OUT/build.log" 2>&1 ||
  { echo "!! build failed"; tail -30 "$OUT/build.log"; touch "$GO"; exit 2; }
LAUNCH="$BUILD/bin/attn-launch"

# name: launch flags (shapes); the check samples rows of long sequences.
run() {
  local name="$1"; shift
  local line rc
  line="$(timeout 30 "$LAUNCH" "$KERNELS/$name" "$@" 2>>"$OUT/launch.log")"
  rc=$?
  [ -z "$line" ] && line="{\"ok\":false,\"error\":\"exit $rc\"}"
  echo "$line" | sed "s|^{|{\"kdir\":\"$name\",\"flags\":\"$*\",|" >>"$RESULTS"
}
CHECK="--check --check-rows 256"
for d in $(ls "$KERNELS" | grep -v '^time_'); do
  case "$d" in
    *alibi_*) run "$d" $CHECK ;;  # ALiBi's offsets are compiled for its shape
    sm80_*)  # the sm80 family's masks were checked before: one shape
      run "$d" $CHECK --batch 2 --heads-q 4 --heads-kv 2 --seq-q 1500 --seq-kv 1000 ;;
    *)
      run "$d" $CHECK --batch 2 --heads-q 4 --heads-kv 2 --seq-q 1000 --seq-kv 1500
      run "$d" $CHECK --batch 2 --heads-q 4 --heads-kv 2 --seq-q 1500 --seq-kv 1000
      run "$d" $CHECK --batch 1 --heads-q 2 --heads-kv 1 --seq-q 17 --seq-kv 333
      ;;
  esac
done
for d in $(ls "$KERNELS" | grep '^time_'); do
  run "$d" --check --check-rows 64 --time --warmup 3 --reps 20
done
touch "$GO"

python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'kernel':34} {'shape':28} {'ok':>2} {'rel_err':>9} {'lse_err':>9} {'ms':>8} {'TFLOP/s':>7}")
t = {}
for r in rows:
    p = r.get("shape", {})
    shape = f"B{p.get('batch')} H{p.get('heads_q')}/{p.get('heads_kv')} {p.get('seq_q')}x{p.get('seq_kv')}"
    f = lambda k, n: str(r.get(k, ""))[:n]
    print(f"{r['kdir'][:34]:34} {shape:28} {f('ok', 1):>2} {f('rel_err', 9):>9} {f('lse_rel_err', 9):>9} {f('time_ms', 8):>8} {f('tflops', 7):>7}")
    if "time_ms" in r:
        t[r["kdir"]] = r["time_ms"]
bad = [r for r in rows if not r.get("ok")]
print(f"{len(rows) - len(bad)}/{len(rows)} passed")
# score_mod kernels against plain attention of the same family and suffix.
pairs = [(a, a.replace(m, "plain")) for a in t for m in ("softcap30", "alibi")
         if m in a]
pairs += [("time_sm90a_causal_16k", "time_sm90a_sliding4096_16k"),
          ("time_sm80_padded_causal_8x4096", "time_sm80_varlen_causal_8seq")]
for a, b in pairs:
    if a in t and b in t:
        print(f"{a} / {b} = {t[a] / t[b]:.3f}")
PY
if [ -n "$PEERS_PID" ]; then
  wait "$PEERS_PID"
  tail -30 "$OUT/peers.log"
fi
