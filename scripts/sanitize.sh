#!/usr/bin/env bash
# Builds attn with AddressSanitizer + UndefinedBehaviorSanitizer (clang-22)
# in build-asan and runs the whole test suite under it: every lit test
# (runtime unit tests and the C ABI through python3 included) and the
# Python package's pytest suite (the C API library instrumented). Any
# sanitizer report fails the test that triggered it (ASan halts on the
# first error; -fno-sanitize-recover=undefined makes every UBSan finding
# fatal), so "all passed" means clean. libMLIR.so stays uninstrumented;
# attn's own code is checked.
#
#   bash scripts/sanitize.sh            # configure if needed, build, test
#   ATTN_ASAN_BUILD_DIR=... JOBS=2 bash scripts/sanitize.sh
#   SOURCE=/path/to/a/snapshot bash scripts/sanitize.sh   (another tree)
#
# Needs clang-22 and libclang-rt-22-dev (installed here when missing, as
# scripts/fuzz.sh does). Takes about an hour on a 2-core machine (the
# whole compiler again, instrumented), so it is not part of .ci/run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SOURCE="${SOURCE:-$ROOT}"
BUILD="${ATTN_ASAN_BUILD_DIR:-$ROOT/build-asan}"
JOBS="${JOBS:-1}"
LLVM_PREFIX=/usr/lib/llvm-22

missing=()
for p in clang-22 libclang-rt-22-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# LLVM's HandleLLVMOptions turns LLVM_USE_SANITIZER='Address;Undefined'
# into -fsanitize=address plus ${LLVM_UBSAN_FLAGS}, which only LLVM's own
# top-level CMakeLists defines: out of tree it must be given, or UBSan is
# silently off. vptr needs RTTI, which LLVM builds without.
# Every executable and library uses the shared sanitizer runtime
# (-shared-libsan, found through an rpath): then a process that is not
# instrumented itself (python3 loading libattn_runtime.so or libattn-c.so)
# can have it preloaded, and the tools it starts (pytest runs attn-compile)
# inherit the preload without clashing with a second, static copy.
RTDIR="$(dirname "$(clang-22 -print-file-name=libclang_rt.asan-x86_64.so)")"
SANLINK="-shared-libsan -Wl,-rpath,$RTDIR"
if ! grep -q '^LLVM_UBSAN_FLAGS.*fno-sanitize-recover=undefined' \
       "$BUILD/CMakeCache.txt" 2>/dev/null ||
   ! grep -q '^CMAKE_EXE_LINKER_FLAGS:.*shared-libsan' "$BUILD/CMakeCache.txt"; then
  echo "== configuring the sanitizer build in $BUILD (source $SOURCE)"
  cmake -G Ninja -S "$SOURCE" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_DIR="$LLVM_PREFIX/lib/cmake/llvm" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    -DLLVM_USE_SANITIZER='Address;Undefined' \
    -DLLVM_UBSAN_FLAGS='-fsanitize=undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined' \
    -DCMAKE_CXX_FLAGS_RELEASE='-O1 -g1 -DNDEBUG' \
    -DCMAKE_C_FLAGS_RELEASE='-O1 -g1 -DNDEBUG' \
    -DCMAKE_EXE_LINKER_FLAGS="$SANLINK" \
    -DCMAKE_SHARED_LINKER_FLAGS="$SANLINK" \
    -DCMAKE_MODULE_LINKER_FLAGS="$SANLINK"
fi

echo "== building (ninja -j$JOBS)"
nice -n 10 ninja -C "$BUILD" -j"$JOBS"

# Leaks are not checked (MLIR's registries and the JIT keep memory until
# exit by design); every other report is fatal. allow_user_poisoning=0:
# LLVM's BumpPtrAllocator poisons the unused part of each slab when the
# code around it is instrumented (our headers' inline copies) but not when
# it is not (libMLIR.so), and the context's allocators are shared, so
# storage that libMLIR allocated from a slab our code opened reads as
# "use-after-poison" (Dialect/Attn/ops.mlir, AttentionOp::parse; the
# fuzzer's FileLineColRange::get; 2026-12-01).
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:detect_odr_violation=0:allow_user_poisoning=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The shared runtime, preloaded into every process the tests start (see
# above; test/lit.cfg.py passes ATTN_SANITIZER_PRELOAD on as LD_PRELOAD).
PRELOAD="$RTDIR/libclang_rt.asan-x86_64.so"

rc=0
echo "== lit under ASan+UBSan"
ATTN_SANITIZER_PRELOAD="$PRELOAD" \
  "$LLVM_PREFIX/bin/lit" -sv "$BUILD/test" "$@" || rc=1
echo "== pytest under ASan+UBSan (the instrumented libattn-c.so)"
py="$(sed -n 's/^Python_EXECUTABLE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")"
LD_PRELOAD="$PRELOAD" ATTN_BUILD_DIR="$BUILD" ATTN_REQUIRE_COMPILER=1 \
  PATH="$BUILD/bin:$PATH" \
  "${py:-/usr/bin/python3}" -m pytest -ra -q -p no:cacheprovider \
  "$SOURCE/python/tests" || rc=1
echo "== sanitizer suite: $([ "$rc" = 0 ] && echo clean || echo FAILED)"
exit "$rc"
