#!/usr/bin/env bash
# The sm90a backward kernels that fall short of issue 24's bar, for one
# Nsight Compute run (scripts/gpu-profile-bwd.sh): D = 256 transposed-dkv
# (the heuristic's) atomic and deterministic, full and causal, and D = 128's
# heuristic kernel, full and causal.
#   scripts/compile-bwd-profile.sh [DIR]   (default gpu-bwd-prof/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-prof}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/prof"
source "$ROOT/scripts/compile-sm90a-backward.sh"
one prof d256_tdkv --head-dim 256
one prof d256c_tdkv --head-dim 256 --causal
one prof d256_tdkv_det --head-dim 256 --deterministic
one prof d256c_tdkv_det --head-dim 256 --causal --deterministic
one prof d128 --head-dim 128
one prof d128c --head-dim 128 --causal
