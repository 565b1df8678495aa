#!/usr/bin/env bash
# GPU-host end-to-end check of the host lowering (issue 23): builds the
# MLIR-free runtime's libattn_mgpu.so (the mgpu* entry points that upstream
# gpu-to-llvm calls) and runs test/gpu/host-lowering/run.py on the callers
# that scripts/compile-host-lowering.sh compiled elsewhere (default
# gpu-host-lowering/): a caller's function in destination-passing style,
# lowered to host code that makes the tensor maps, computes the grid and
# launches the sm90a or sm80 kernel, checked against float64.
#
#   scripts/gpu-host-lowering.sh [DIR]
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DIR="${1:-gpu-host-lowering}"
BUILD="${BUILD_DIR:-build-gpu}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT"
{ cmake -G Ninja -S . -B "$BUILD" -DATTN_ENABLE_COMPILER=OFF \
    -DCMAKE_BUILD_TYPE=Release &&
  cmake --build "$BUILD" -j "$(nproc)" --target attn_mgpu; } \
  >"$OUT/build-mgpu.log" 2>&1 || { echo "!! build failed"; tail -30 "$OUT/build-mgpu.log"; exit 2; }
libs=()
for f in "$DIR"/libattn_e2e_*.so; do libs+=(--lib "$f"); done
PYTHONUNBUFFERED=1 python3 test/gpu/host-lowering/run.py \
  --mgpu "$BUILD/lib/libattn_mgpu.so" "${libs[@]}" 2>&1 | tee "$OUT/host-lowering.log"
