#!/usr/bin/env bash
# Compiles the host-lowering end-to-end check (test/gpu/host-lowering) on a
# machine with MLIR, for scripts/gpu-host-lowering.sh on the GPU host: the
# caller's function of attention-dps.mlir through attn-select-kernel-config,
# convert-attn-to-gpu, convert-attn-to-gpu-launch, attn-compile-kernels
# (PTX, JIT-compiled by the driver at module load) and upstream's
# bufferization and gpu-to-llvm, translated to LLVM IR and compiled into
# DIR/libattn_e2e_<family>.so (sm90a and sm80). Its only undefined symbols
# are the mgpu* and attn* entry points of libattn_mgpu.so.
#
#   scripts/compile-host-lowering.sh [DIR]      (default gpu-host-lowering)
#
# Environment: ATTN_BUILD_DIR (default build), LLVM_PREFIX (/usr/lib/llvm-22).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-host-lowering}"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
LLVM="${LLVM_PREFIX:-/usr/lib/llvm-22}"
mkdir -p "$DIR"
for family in sm90a sm80; do
  "$BUILD/bin/attn-opt" "$ROOT/test/gpu/host-lowering/attention-dps.mlir" \
    --attn-select-kernel-config="family=$family" --convert-attn-to-gpu \
    --convert-attn-to-gpu-launch --attn-compile-kernels="chip=sm_90a format=isa" \
    --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
    --convert-linalg-to-loops --convert-scf-to-cf --gpu-to-llvm \
    --convert-arith-to-llvm --convert-cf-to-llvm --convert-func-to-llvm \
    --finalize-memref-to-llvm --reconcile-unrealized-casts \
    -o "$DIR/$family.mlir"
  "$LLVM/bin/mlir-translate" --mlir-to-llvmir "$DIR/$family.mlir" -o "$DIR/$family.ll"
  "$LLVM/bin/llc" -O2 -filetype=obj -relocation-model=pic "$DIR/$family.ll" \
    -o "$DIR/$family.o"
  g++ -shared -o "$DIR/libattn_e2e_$family.so" "$DIR/$family.o"
  rm -f "$DIR/$family.o"
  echo "$DIR/libattn_e2e_$family.so"
done
