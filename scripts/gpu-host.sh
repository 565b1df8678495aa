#!/usr/bin/env bash
# What a device call runs on the GPU host (which has nvcc, CMake, ninja and
# PyTorch but no MLIR), from the repository root:
#
#   scripts/gpu-host.sh [KERNELS] [-- extra attn-launch flags]
#
# 1. builds the MLIR-free part (-DATTN_ENABLE_COMPILER=OFF) into build-gpu/;
# 2. runs the runtime's unit tests;
# 3. runs `attn-launch --check --time` on every kernel directory (a folder
#    with a manifest.json) under KERNELS (default gpu-kernels/), collecting
#    the JSON lines into $OUT/results.jsonl;
# 4. with BENCH=1, runs bench/bench.py on the same folder (BENCH_FLAGS);
# 5. prints a short table (last, so it ends the device call's output).
#
# A failing kernel is reported and the next one runs. Exit status: 0 when
# every kernel passed, 1 otherwise, 2 when the build failed.
# Environment: OUT (default ./gpu-out), BUILD_DIR (default build-gpu),
# BUILD_JOBS, LAUNCH_TIMEOUT seconds per kernel (default 300), BENCH,
# BENCH_FLAGS.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="gpu-kernels"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  KERNELS="$1"
  shift
fi
[ "${1:-}" = "--" ] && shift
EXTRA=("$@")
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
mkdir -p "$OUT"
RESULTS="$OUT/results.jsonl"
LOG="$OUT/launch.log"
: >"$RESULTS"
: >"$LOG"

echo "== GPU host: $(nvidia-smi -L 2>/dev/null | head -1 || echo 'nvidia-smi failed')"
echo "== nvcc: $(nvcc --version 2>/dev/null | tail -1 || echo 'not found')"

echo "== building the runtime in $BUILD (ATTN_ENABLE_COMPILER=OFF)"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
if ! { cmake "${GEN[@]}" -S . -B "$BUILD" -DATTN_ENABLE_COMPILER=OFF \
         -DCMAKE_BUILD_TYPE=Release &&
       cmake --build "$BUILD" -j "${BUILD_JOBS:-$(nproc)}"; } >"$OUT/build.log" 2>&1; then
  echo "!! build failed; the end of $OUT/build.log:"
  tail -30 "$OUT/build.log"
  exit 2
fi
LAUNCH="$BUILD/bin/attn-launch"

echo "== unit tests"
if "$BUILD/bin/attn-runtime-tests" >"$OUT/unit.log" 2>&1; then
  tail -1 "$OUT/unit.log"
else
  echo "!! unit tests failed:"
  grep -E "FAIL" "$OUT/unit.log" | head -20
fi

mapfile -t DIRS < <(find -L "$KERNELS" -name manifest.json -printf '%h\n' 2>/dev/null | sort)
if [ "${#DIRS[@]}" -eq 0 ]; then
  echo "!! no kernel directories (manifest.json) under $KERNELS"
fi
failed=0
for dir in "${DIRS[@]}"; do
  echo "== $dir" | tee -a "$LOG"
  line="$(timeout "${LAUNCH_TIMEOUT:-300}" "$LAUNCH" "$dir" --check --time \
            "${EXTRA[@]}" 2>>"$LOG")"
  rc=$?
  if [ -z "$line" ]; then
    # No JSON at all: it crashed or timed out; say so in the results.
    why="attn-launch exited with status $rc and printed nothing"
    [ $rc -eq 124 ] && why="attn-launch timed out after ${LAUNCH_TIMEOUT:-300} s"
    line="{\"dir\":\"$dir\",\"ok\":false,\"error\":\"$why\"}"
  fi
  echo "$line" >>"$RESULTS"
  if [ $rc -eq 1 ]; then
    failed=$((failed + 1))
    echo "!! $dir: over tolerance: $line"
  elif [ $rc -ne 0 ]; then
    failed=$((failed + 1))
    echo "!! $dir: exit $rc ($(tail -1 "$LOG"))"
  fi
done

if [ "${BENCH:-0}" != "0" ]; then
  echo "== bench/bench.py ${BENCH_FLAGS:-}"
  # shellcheck disable=SC2086
  PYTHONUNBUFFERED=1 ATTN_RUNTIME_LIB="$ROOT/$BUILD/lib/libattn_runtime.so" \
    python3 bench/bench.py --kernels "$KERNELS" --out "$OUT" ${BENCH_FLAGS:-} \
    >"$OUT/bench.log" 2>&1 || echo "!! bench.py failed (see $OUT/bench.log)"
  tail -n 25 "$OUT/bench.log"
fi

echo "== results ($RESULTS)"
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fmt = "{:<34} {:<28} {:>5} {:>9} {:>9} {:>9} {:>8} {}"
print(fmt.format("kernel dir", "shape B,Hq/Hkv,Nq,Nk,D", "mod", "rel_err",
                 "lse_err", "ms", "TFLOP/s", "ok"))
for r in rows:
    s = r.get("shape", {})
    shape = (f"{s['batch']},{s['heads_q']}/{s['heads_kv']},{s['seq_q']},"
             f"{s['seq_kv']},{s['head_dim']} {s['dtype']}{' c' if s['causal'] else ''}"
             if s else "")
    num = lambda k, f: (f.format(r[k]) if isinstance(r.get(k), (int, float))
                        else str(r.get(k, "")))
    print(fmt.format(r.get("dir", "")[-34:], shape, r.get("module", "")[:5],
                     num("rel_err", "{:.2e}"), num("lse_rel_err", "{:.2e}"),
                     num("time_ms", "{:.3f}"), num("tflops", "{:.1f}"),
                     "yes" if r.get("ok") else "NO " + r.get("error", "over tolerance")[:150]))
PY
echo "== $((${#DIRS[@]} - failed)) of ${#DIRS[@]} kernel directories passed"
[ $failed -eq 0 ]
