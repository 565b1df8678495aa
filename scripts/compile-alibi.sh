#!/usr/bin/env bash
# Compiles ALiBi kernels (run-time slopes, attn.attention's alibi_slopes)
# into DIR (default gpu-kernels-alibi) for scripts/gpu-alibi.sh:
#   fwd/*   forward, both families: no mask, causal (Nq != Nk), top-left
#           causal, a window, softcap + ALiBi; head dims 64, 128, 256;
#   bwd/*   backward, both families, atomic and deterministic, softcap + ALiBi;
#   base/*  the same shapes without ALiBi (speed reference).
#   scripts/compile-alibi.sh [DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-kernels-alibi}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/fwd" "$DIR/bwd" "$DIR/base"
one() { # subdir, name, attn-compile flags...
  local sub="$1" name="$2"; shift 2
  "$COMPILE" --chip sm_90a --batch 3 --heads-q 4 --heads-kv 2 --seq-q 1000 \
    --seq-kv 1200 "$@" -o "$DIR/$sub/$name" | sed 's/^wrote [^:]*: //'
}
for fam in sm80 sm90a; do
  for d in 64 128 256; do
    one fwd "${fam}_d$d" --family "$fam" --head-dim $d --alibi
    one fwd "${fam}_d${d}c" --family "$fam" --head-dim $d --causal --alibi
  done
  one fwd "${fam}_d128_tlc" --family "$fam" --head-dim 128 --causal --top-left --alibi
  one fwd "${fam}_d64_br256x0" --family "$fam" --head-dim 64 --window-left 256 \
    --window-right 0 --alibi
  one fwd "${fam}_d128c_cap30" --family "$fam" --head-dim 128 --causal \
    --softcap 30 --alibi
  one base "${fam}_d128c" --family "$fam" --head-dim 128 --causal
  one base "${fam}_d128" --family "$fam" --head-dim 128
  for d in 64 128; do
    one bwd "${fam}_d$d" --backward --family "$fam" --head-dim $d --alibi
    one bwd "${fam}_d${d}c" --backward --family "$fam" --head-dim $d --causal --alibi
    one bwd "${fam}_det_d${d}c" --backward --family "$fam" --head-dim $d --causal \
      --deterministic --alibi
  done
  one bwd "${fam}_d128c_cap30" --backward --family "$fam" --head-dim 128 \
    --causal --softcap 30 --alibi
  one bwd "${fam}_d64_tlc" --backward --family "$fam" --head-dim 64 --causal \
    --top-left --alibi
  one base "bwd_${fam}_d128c" --backward --family "$fam" --head-dim 128 --causal
done
one bwd sm80_d256c --backward --family sm80 --head-dim 256 --causal --alibi
