#!/usr/bin/env bash
# Builds attn with AddressSanitizer + UndefinedBehaviorSanitizer (gcc, via
# LLVM's LLVM_USE_SANITIZER) in build-asan and runs the whole lit suite under
# it, runtime unit tests included. Any sanitizer report fails the test that
# triggered it (halt_on_error, -fno-sanitize-recover), so "all passed" means
# clean. libMLIR.so stays uninstrumented; only attn's own code is checked.
#
#   bash scripts/sanitize.sh            # build + lit
#   ATTN_ASAN_BUILD_DIR=... JOBS=2 bash scripts/sanitize.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_ASAN_BUILD_DIR:-$ROOT/build-asan}"
JOBS="${JOBS:-1}"
LLVM_PREFIX=/usr/lib/llvm-22

# Needs only what scripts/setup.sh installs (gcc ships libasan/libubsan).
# LLVM's HandleLLVMOptions turns LLVM_USE_SANITIZER=Undefined into
# ${LLVM_UBSAN_FLAGS}, which only LLVM's own top-level CMakeLists defines:
# out of tree it must be given, or UBSan is silently off.
if ! grep -q 'fsanitize=undefined' "$BUILD/CMakeCache.txt" 2>/dev/null; then
  echo "== configuring the sanitizer build in $BUILD"
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_DIR="$LLVM_PREFIX/lib/cmake/llvm" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    -DLLVM_USE_SANITIZER='Address;Undefined' \
    -DLLVM_UBSAN_FLAGS='-fsanitize=undefined -fno-sanitize=vptr -fno-sanitize-recover=all' \
    -DCMAKE_CXX_FLAGS_RELEASE='-O1 -g1 -DNDEBUG' \
    -DCMAKE_C_FLAGS_RELEASE='-O1 -g1 -DNDEBUG'
fi

# LSan: leaks are reported but not fatal (MLIR's global registries and the
# JIT keep memory until exit by design); every other report is fatal.
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:detect_odr_violation=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# lit tests that load an instrumented library into an uninstrumented
# process (python3 + ctypes) need the runtime first (test/lit.cfg.py).
export ATTN_SANITIZER_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"

echo "== building (ninja -j$JOBS)"
nice -n 10 ninja -C "$BUILD" -j"$JOBS"

echo "== lit under ASan+UBSan"
"$LLVM_PREFIX/bin/lit" -sv "$BUILD/test" "$@"
