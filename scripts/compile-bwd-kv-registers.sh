#!/usr/bin/env bash
# Kernels for the GPU-host run of the sm90a backward with K and V as
# register A operands (HopperBackwardConfig::kvInRegisters, D <= 64), laid
# out for scripts/gpu-padded-dims.sh (SANITIZE_KERNELS="d64 d64c_det"):
#   check/  every D <= 64 kernel shape: D 8/32/40/56/64, full and causal,
#           f16, softcap + ALiBi, a window, deterministic;
#   kr/     causal with key ranges;
#   bench/  D = 64 full and causal (new_), and with OLD_COMPILE (an earlier
#           attn-compile) its kernels (old_).
#   scripts/compile-bwd-kv-registers.sh [DIR]   (default gpu-bwd-kvreg/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-kvreg}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr" "$DIR/bench"
one() { # subdir, name, attn-compile flags...
  local sub="$1" name="$2"; shift 2
  "${COMPILER:-$COMPILE}" --chip sm_90a --backward --dtype bf16 \
    --tuning-db none --family sm90a "$@" -o "$DIR/$sub/$name" |
    grep -o 'attn_bwd_sm90[^ ]*dkdv[^ ]* ([^)]*)'
}
one check d64 --head-dim 64
one check d64c --head-dim 64 --causal
one check d64c_f16 --head-dim 64 --causal --dtype f16
one check d64c_cap30_alibi --head-dim 64 --causal --softcap 30 --alibi
one check d64_w100x8_tl --head-dim 64 --window-left 100 --window-right 8 \
  --top-left
one check d64_det --head-dim 64 --deterministic
one check d64c_det --head-dim 64 --causal --deterministic
one check d8 --head-dim 8
one check d32c --head-dim 32 --causal
one check d40 --head-dim 40
one check d56c --head-dim 56 --causal
one kr d64c_kr --head-dim 64 --causal --batch 2 --key-starts 0,3 \
  --key-ends 128,100
for c in "" c; do
  one bench "new_d64$c" --head-dim 64 ${c:+--causal}
  [ -n "${OLD_COMPILE:-}" ] &&
    COMPILER="$OLD_COMPILE" one bench "old_d64$c" --head-dim 64 ${c:+--causal}
done
exit 0
