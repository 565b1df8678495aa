#!/usr/bin/env bash
# Variable length and the bias operand on the GPU host: the timings, then
# every kernel of scripts/compile-varlen-bias.sh checked against the
# float64 host reference (attn-launch --check: per sequence for varlen).
# Timings: a packed causal batch (8 sequences, 16384 tokens) against the
# same batch padded to 8 x 4096, and bias vs plain at D = 128, N = 4096.
# Prints a table last.
#
#   scripts/gpu-varlen-bias.sh KERNELS   (default build-bwd/varlen-bias-kernels)
#
# Environment: OUT (default ./gpu-out), BUILD_DIR (default build-gpu).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-build-bwd/varlen-bias-kernels}"
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
mkdir -p "$OUT"
RESULTS="$OUT/varlen-bias.jsonl"
: >"$RESULTS"

source scripts/gpu-build-runtime.sh
build_gpu_runtime "$BUILD" attn-launch
LAUNCH="$BUILD/bin/attn-launch"

run() {
  local name="$1"; shift
  local line rc
  line="$(timeout 120 "$LAUNCH" "$KERNELS/$name" "$@" 2>>"$OUT/launch.log")"
  rc=$?
  [ -z "$line" ] && line="{\"ok\":false,\"error\":\"exit $rc\"}"
  echo "$line" | sed "s|^{|{\"kdir\":\"$name\",|" >>"$RESULTS"
}
# The timings first (the comparisons the issue asks for lead), then every
# kernel's check.
for d in time_varlen_causal_8seq time_padded_causal_8x4096 \
         time_varlen_plain_8seq time_padded_plain_8x4096 time_plain_4k \
         time_bias_11_4k time_bias_1h_4k time_pad_d96_4k; do
  [ -d "$KERNELS/$d" ] && run "$d" --check --check-rows 512 --time --warmup 3 --reps 20
done
for d in $(ls "$KERNELS" | grep -v '^time_'); do
  run "$d" --check
done

python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'kernel':28} {'ok':>2} {'check':>7} {'rows':>6} {'rel_err':>9} {'lse_err':>9} {'ms':>8} {'TFLOP/s':>7}")
t = {}
for r in rows:
    f = lambda k, n: str(r.get(k, ""))[:n]
    print(f"{r['kdir'][:28]:28} {f('ok', 1):>2} {f('check', 7):>7} {f('checked_rows', 6):>6} {f('rel_err', 9):>9} {f('lse_rel_err', 9):>9} {f('time_ms', 8):>8} {f('tflops', 7):>7}")
    if "time_ms" in r:
        t[r["kdir"]] = r["time_ms"]
bad = [r for r in rows if not r.get("ok")]
print(f"{len(rows) - len(bad)}/{len(rows)} passed")
for a, b in [("time_padded_causal_8x4096", "time_varlen_causal_8seq"),
             ("time_padded_plain_8x4096", "time_varlen_plain_8seq"),
             ("time_bias_11_4k", "time_plain_4k"), ("time_bias_1h_4k", "time_plain_4k")]:
    if a in t and b in t:
        print(f"{a} / {b} = {t[a] / t[b]:.3f}")
PY
