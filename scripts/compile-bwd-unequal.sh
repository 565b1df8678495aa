#!/usr/bin/env bash
# Kernels for the GPU-host check of the sm90a backward at Dqk != Dv
# (computed at the wider head dim; V and dO zero-filled past Dv by TMA),
# laid out for scripts/gpu-padded-dims.sh
# (SANITIZE_KERNELS="d192v128c d64v128_det"):
#   check/  192/128 full, causal, deterministic; 128/64; 64/128 causal and
#           deterministic; 96/64 causal; 64/32 (block-m 128) deterministic;
#           256/128 causal; f16 192/128 causal;
#   kr/     192/128 causal with key ranges.
#   scripts/compile-bwd-unequal.sh [DIR]   (default gpu-bwd-unequal/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-unequal}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr"
source "$ROOT/scripts/compile-sm90a-backward.sh"
one check d192v128 --head-dim 192 --value-head-dim 128
one check d192v128c --head-dim 192 --value-head-dim 128 --causal
one check d192v128_det --head-dim 192 --value-head-dim 128 --deterministic
one check d192v128c_f16 --head-dim 192 --value-head-dim 128 --causal \
  --dtype f16
one check d128v64 --head-dim 128 --value-head-dim 64
one check d64v128c --head-dim 64 --value-head-dim 128 --causal
one check d64v128_det --head-dim 64 --value-head-dim 128 --deterministic
one check d96v64c --head-dim 96 --value-head-dim 64 --causal
one check d64v32_det --head-dim 64 --value-head-dim 32 --deterministic
one check d256v128c --head-dim 256 --value-head-dim 128 --causal
one kr d192v128c_kr --head-dim 192 --value-head-dim 128 --causal --batch 2 \
  --key-starts 0,3 --key-ends 128,100
