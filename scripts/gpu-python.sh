#!/usr/bin/env bash
# The attn Python package on the GPU host (PyTorch, no MLIR), from the
# repository root, as a device call runs it:
#
#   ATTN_KERNEL_PACK=attn-pack scripts/gpu-python.sh [pytest args]
#
# 1. builds the MLIR-free runtime (libattn_runtime.so), attn-tune and the
#    tuning lookup library (libattn_tuning_lookup.so) into build-gpu/;
# 2. runs python/tests, or the pytest args when given (the torch tests use
#    the AOT pack -- its candidate bundles for tuning on first use;
#    everything that needs the compiler skips) and writes $OUT/pytest.log
#    and junit XML;
# 3. with TRAIN=1, runs the training example (needs the backward kernels);
# 4. prints a short table last.
# Build the pack here first: python -m attn.aot build --out attn-pack.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
mkdir -p "$OUT"
: "${ATTN_KERNEL_PACK:=$ROOT/attn-pack}"
export ATTN_KERNEL_PACK
export ATTN_RUNTIME_LIB="$ROOT/$BUILD/lib/libattn_runtime.so"
export ATTN_CACHE_DIR="$OUT/cache" PYTHONPATH="$ROOT/python"
# (python/tests/conftest.py isolates each test from these; the GPU tests
# read them back from here.)
export ATTN_GPU_TEST_PACK="$ATTN_KERNEL_PACK" ATTN_GPU_TEST_CACHE="$ATTN_CACHE_DIR"

echo "== GPU host: $(nvidia-smi -L 2>/dev/null | head -1 || echo 'nvidia-smi failed')"
echo "== building the runtime in $BUILD (ATTN_ENABLE_COMPILER=OFF)"
if ! { cmake -G Ninja -S . -B "$BUILD" -DATTN_ENABLE_COMPILER=OFF \
         -DCMAKE_BUILD_TYPE=Release &&
       cmake --build "$BUILD" -j "$(nproc)" --target attn_runtime attn-tune \
         attn_tuning_lookup; } \
       >"$OUT/build.log" 2>&1; then
  echo "!! build failed; the end of $OUT/build.log:"
  tail -30 "$OUT/build.log"
  exit 2
fi

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("$ROOT/python/tests")
echo "== pytest ${targets[*]} (pack $ATTN_KERNEL_PACK)"
python3 -m pytest -ra -s -p no:cacheprovider --durations=8 \
  --junitxml="$OUT/pytest.xml" "${targets[@]}" >"$OUT/pytest.log" 2>&1
rc=$?
grep -E "per-call wall time|per-call parts|tune on first use|^after:|^tuned |^(FAILED|ERROR)" \
  "$OUT/pytest.log" | cut -c1-400 | head -40
tail -n 1 "$OUT/pytest.log"

if [ "${TRAIN:-0}" != "0" ]; then
  echo "== training example (two-layer transformer, attn vs SDPA)"
  python3 python/examples/train_tiny_transformer.py --steps "${STEPS:-300}" \
    >"$OUT/train.log" 2>&1 || rc=1
  tail -n 16 "$OUT/train.log"
fi

echo "== results by test (file::function, parameters folded)"
python3 - "$OUT/pytest.xml" <<'PY'
import collections, sys, xml.etree.ElementTree as ET
rows = collections.defaultdict(collections.Counter)
for case in ET.parse(sys.argv[1]).iter("testcase"):
    f = (case.get("classname", "?").split(".")[-1].replace("test_", "")
         + "::" + case.get("name", "?").split("[")[0].replace("test_", ""))
    kind = "passed"
    for tag in ("failure", "error", "skipped"):
        if case.find(tag) is not None:
            kind = tag
    rows[f][kind] += 1
print(f"{'test':<52} {'passed':>7} {'failed':>7} {'error':>6} {'skipped':>8}")
for f, c in sorted(rows.items()):
    print(f"{f[:52]:<52} {c['passed']:>7} {c['failure']:>7} {c['error']:>6} {c['skipped']:>8}")
PY
exit $rc
