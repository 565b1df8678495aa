#!/usr/bin/env bash
# Installs every Debian package attn needs and the Python test dependencies
# (a virtual environment), then configures and builds it.
# Idempotent: safe to run again; a second run only rebuilds what changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
# The project's Python environment (gitignored); scripts/test.sh runs the
# Python suite with its interpreter.
VENV="${ATTN_VENV:-$ROOT/.venv}"
REQUIREMENTS="$ROOT/python/requirements-dev.txt"
LLVM_PREFIX=/usr/lib/llvm-22

PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          cmake ninja-build g++ lld python3 python3-venv zlib1g-dev libzstd-dev)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# Python: PyTorch, numpy and pytest at the pinned versions
# (python/requirements-dev.txt), in a venv of Debian's python3. The plain
# `pip install torch==2.11.0` from PyPI brings its CUDA libraries too
# (4.7 GB): measured on the 2-core CI machine, 111 s for the whole venv
# (171 s while a build ran). `--no-deps` (0.5 GB, 55 s) is not enough:
# `import torch` then fails, libtorch_cuda.so needs libcufile.so.0 and
# more even on a machine without a GPU. The requirements are copied into
# the venv once installed, so a second run compares two files and does
# nothing.
if ! cmp -s "$REQUIREMENTS" "$VENV/requirements-installed.txt"; then
  echo "== python environment: $VENV"
  [ -x "$VENV/bin/python" ] || /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    --progress-bar off -r "$REQUIREMENTS"
  cp "$REQUIREMENTS" "$VENV/requirements-installed.txt"
fi

if [ ! -f "$BUILD/build.ninja" ]; then
  echo "== configuring in $BUILD"
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_DIR="$LLVM_PREFIX/lib/cmake/llvm" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit"
fi
echo "== building"
# The demo's tools (scripts/demo.sh); scripts/test.sh builds the rest.
cmake --build "$BUILD" --target attn-opt attn-run attn-compile
