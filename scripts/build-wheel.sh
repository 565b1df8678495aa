#!/usr/bin/env bash
# Builds dist/attn-<version>-py3-none-linux_x86_64.whl: the attn package
# with its self-contained compiler (static MLIR/LLVM), the runtime, the
# tuning lookup and attn-tune (scripts/attn_wheel.py says how). Needs what
# scripts/setup.sh installs; uses $ATTN_BUILD_DIR (default build/).
#   bash scripts/build-wheel.sh [--out DIR] [--no-build]
set -euo pipefail
exec python3 "$(dirname "${BASH_SOURCE[0]}")/attn_wheel.py" "$@"
