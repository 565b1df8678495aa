#!/usr/bin/env bash
# Kernels for the GPU-host run of the deterministic sm90a backward above
# D = 128 (the head-dim split, dQ added from registers in key-block order),
# laid out for scripts/gpu-padded-dims.sh (SANITIZE_KERNELS="d256c_det"):
# check/ the deterministic kernels checked against float64 and for
# bit-identity (D = 256 full and causal, 192 causal, 160, key_range), bench/
# the deterministic and atomic sm90a kernels and the sm80 deterministic one
# they replace, at D = 256 full and causal.
#   scripts/compile-bwd-det-hsplit.sh [DIR]     (default gpu-bwd-det-hsplit/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-det-hsplit}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr" "$DIR/bench"
one() { # subdir, name, attn-compile flags...
  local sub="$1" name="$2"; shift 2
  "$COMPILE" --chip sm_90a --backward --dtype bf16 --tuning-db none "$@" \
    -o "$DIR/$sub/$name" | grep -o 'attn_bwd_sm90[^ ]* ([^)]*)\|attn_bwd_d[0-9]*[a-z0-9_]*dkdv[a-z0-9_]* ([^)]*)'
}
one check d256_det --family sm90a --head-dim 256 --deterministic
one check d256c_det --family sm90a --head-dim 256 --causal --deterministic
one check d192c_det --family sm90a --head-dim 192 --causal --deterministic
one check d160_det --family sm90a --head-dim 160 --deterministic
one kr d256_det_kr --family sm90a --head-dim 256 --deterministic --batch 2 \
  --key-starts 0,3 --key-ends 128,100
for c in "" c; do
  flags=(--head-dim 256 ${c:+--causal})
  one bench "sm90a_det_d256$c" --family sm90a --deterministic "${flags[@]}"
  one bench "sm90a_d256$c" --family sm90a "${flags[@]}"
  one bench "sm80_det_d256$c" --family sm80 --deterministic "${flags[@]}"
done
