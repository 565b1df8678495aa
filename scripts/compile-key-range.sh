#!/usr/bin/env bash
# Compiles key_range kernels (per-batch key padding, issue 25) into DIR
# (default gpu-kernels-kr) for scripts/gpu-key-range.sh:
#   fwd/*    forward, both families, masks none/causal/window (+ softcap);
#   base/*   the same forward kernels without key_range (speed reference);
#   bwd/*    backward (when BWD=1), both families.
#   scripts/compile-key-range.sh [DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-kernels-kr}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/fwd" "$DIR/base" "$DIR/bwd"
KR=(--key-starts 0,17,333,999 --key-ends 1000,700,333,1000)
one() { # subdir, name, attn-compile flags...
  local sub="$1" name="$2"; shift 2
  "$COMPILE" --chip sm_90a --batch 4 --heads-q 4 --heads-kv 2 --seq-q 1000 \
    --seq-kv 1000 "$@" -o "$DIR/$sub/$name" | sed 's/^wrote [^:]*: //'
}
for fam in sm80 sm90a; do
  one fwd "${fam}_d128" --family "$fam" --head-dim 128 "${KR[@]}"
  one fwd "${fam}_d128c" --family "$fam" --head-dim 128 --causal "${KR[@]}"
  one fwd "${fam}_d64_br128x0" --family "$fam" --head-dim 64 \
    --window-left 128 --window-right 0 "${KR[@]}"
  one fwd "${fam}_d256c_cap50" --family "$fam" --head-dim 256 --causal \
    --softcap 50 "${KR[@]}"
  one fwd "${fam}_d128_tlc" --family "$fam" --head-dim 128 --causal \
    --top-left "${KR[@]}"
  one base "${fam}_d128c" --family "$fam" --head-dim 128 --causal
  one base "${fam}_d128" --family "$fam" --head-dim 128
done
one fwd sm80_d80c --family sm80 --head-dim 80 --causal "${KR[@]}"
if [ "${BWD:-0}" = 1 ]; then
  for fam in sm80 sm90a; do
    one bwd "${fam}_d128" --backward --family "$fam" --head-dim 128 "${KR[@]}"
    one bwd "${fam}_d128c" --backward --family "$fam" --head-dim 128 --causal "${KR[@]}"
    one bwd "${fam}_det_d64c" --backward --family "$fam" --head-dim 64 --causal \
      --deterministic "${KR[@]}"
    one bwd "${fam}_d64" --backward --family "$fam" --head-dim 64 "${KR[@]}"
  done
  one bwd sm80_d128_br128x0 --backward --family sm80 --head-dim 128 \
    --window-left 128 --window-right 0 "${KR[@]}"
  one bwd sm80_d256c_cap50 --backward --family sm80 --head-dim 256 --causal \
    --softcap 50 "${KR[@]}"
fi
