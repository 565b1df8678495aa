#!/usr/bin/env bash
# Context-parallel attention on the GPU host (one device call), from the
# repository root:  ATTN_KERNEL_PACK=build-cp/pack scripts/gpu-context-parallel.sh
# Builds the MLIR-free runtime, runs python/tests/test_context_parallel*.py
# (CPU float64 + gloo ranks + the kernel-backed simulated ring; the NCCL file
# skips with one GPU) and prints the error table last. Pack (here):
#   ATTN_BUILD_DIR=build-dev PYTHONPATH=python python3 -m attn.aot build \
#     --out build-cp/pack --head-dims 128 --dtypes bf16 --chip sm_90a --backward on
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${OUT:-$ROOT/gpu-out}"
BUILD="${BUILD_DIR:-build-gpu}"
mkdir -p "$OUT"
: "${ATTN_KERNEL_PACK:=$ROOT/build-cp/pack}"
export ATTN_KERNEL_PACK ATTN_GPU_TEST_PACK="$ATTN_KERNEL_PACK"
export ATTN_RUNTIME_LIB="$ROOT/$BUILD/lib/libattn_runtime.so"
export ATTN_CACHE_DIR="$OUT/cache" ATTN_GPU_TEST_CACHE="$OUT/cache"
export PYTHONPATH="$ROOT/python"
nvidia-smi -L 2>/dev/null | head -2
source scripts/gpu-build-runtime.sh
build_gpu_runtime "$BUILD" attn_runtime
timeout "${PYTEST_TIMEOUT:-120}" python3 -m pytest -ra -s -p no:cacheprovider --junitxml="$OUT/pytest.xml" \
  python/tests/test_context_parallel.py python/tests/test_context_parallel_multigpu.py \
  "$@" >"$OUT/pytest.log" 2>&1
rc=$?
grep -E "^(FAILED|ERROR)|Error" "$OUT/pytest.log" | head -20
grep -E "^SKIPPED" "$OUT/pytest.log" | head -5
echo "world causal zigzag N     out     out_vs_f64 dq      dk      dv"
grep -oE "CP-SIM .*" "$OUT/pytest.log" | sed -E 's/CP-SIM //; s/[a-z_0-9]+=//g'
tail -n 1 "$OUT/pytest.log"
exit $rc
