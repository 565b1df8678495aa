#!/usr/bin/env bash
# GPU-host validation of every kernel directory under KERNELS (default
# gpu-kernels/): correctness against the float64 host reference over the
# GPU issue's sequence-length matrix (Nq, Nk in {1, 17, 128, 1000, 4096},
# GQA 4/2 heads, batch 2), compute-sanitizer memcheck on a few, then the
# benchmark against the peers (BENCH_SEQS, default 1024,4096,16384).
# Prints a table last. Needs the runtime build of scripts/gpu-host.sh.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-gpu-kernels}"
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
mkdir -p "$OUT"
RESULTS="$OUT/validate.jsonl"
: >"$RESULTS"

source scripts/gpu-build-runtime.sh
build_gpu_runtime "$BUILD" all
LAUNCH="$BUILD/bin/attn-launch"

SHAPES=${SHAPES:-"1:1 17:17 128:128 1000:1000 4096:4096 17:1000 1000:17 128:4096 4096:128"}
mapfile -t DIRS < <(find -L "$KERNELS" -name manifest.json -printf '%h\n' | sort)
fails=0
for dir in "${DIRS[@]}"; do
  for s in $SHAPES; do
    nq=${s%%:*}; nk=${s##*:}
    rows=""
    [ "$nq" -ge 1000 ] && rows="--check-rows 200"
    line="$(timeout 120 "$LAUNCH" "$dir" --check --batch 2 --heads-q 4 --heads-kv 2 \
             --seq-q "$nq" --seq-kv "$nk" --seed $RANDOM $rows 2>>"$OUT/validate.log")"
    rc=$?
    [ -z "$line" ] && line="{\"dir\":\"$dir\",\"ok\":false,\"error\":\"exit $rc\"}"
    echo "$line" | sed "s|^{|{\"kdir\":\"$(basename "$dir")\",|" >>"$RESULTS"
    [ $rc -ne 0 ] && fails=$((fails + 1))
  done
done

if command -v compute-sanitizer >/dev/null && [ "${SANITIZE:-1}" = 1 ]; then
  for dir in "${DIRS[@]:0:2}" "${DIRS[@]: -2}"; do
    echo "== memcheck $(basename "$dir")"
    timeout 200 compute-sanitizer --tool memcheck --leak-check no "$LAUNCH" "$dir" --check \
      --batch 1 --heads-q 2 --heads-kv 1 --seq-q 77 --seq-kv 130 2>&1 | tail -2
  done
fi

if [ "${BENCH:-1}" = 1 ]; then
  PYTHONUNBUFFERED=1 ATTN_RUNTIME_LIB="$ROOT/$BUILD/lib/libattn_runtime.so" \
    timeout 400 python3 bench/bench.py --kernels "$KERNELS" --out "$OUT" \
    --seqs "${BENCH_SEQS:-1024,4096,16384}" >"$OUT/bench.log" 2>&1 ||
    echo "!! bench.py failed (see bench.log)"
  tail -n 40 "$OUT/bench.log"
fi

python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = [r for r in rows if not r.get("ok")]
worst = {}
for r in rows:
    k = r.get("kdir", "?")
    e = r.get("rel_err")
    if isinstance(e, (int, float)):
        worst[k] = max(worst.get(k, 0), e)
print("worst rel_err per kernel:")
for k, e in sorted(worst.items()):
    print(f"  {k:<24} {e:.2e}")
for r in bad[:20]:
    s = r.get("shape", {})
    print("FAIL", r.get("kdir"), s.get("seq_q"), s.get("seq_kv"), r.get("rel_err"), r.get("lse_rel_err"), r.get("error", "")[:200])
print(f"{len(rows) - len(bad)} of {len(rows)} checks passed")
PY
