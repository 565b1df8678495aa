#!/usr/bin/env bash
# Kernels for the GPU-host run of the sm90a kernels at padded head dims
# (not 64, 128 or 256: computed at FlashKernelSpec::tileHeadDim and
# FlashBackwardSpec::tileHeadDim with TMA's zero fill), for
# scripts/gpu-padded-dims.sh: check/ holds the variants checked against
# float64 (backward: D = 8 to 224 across both schedules, masks, softcap +
# ALiBi, f16, deterministic; forward: fwd_*, D = 8 to 224, Dqk != Dv,
# masks, softcap + ALiBi, f16, without the LSE), kr/ key_range ones
# (checked with explicit key ranges), bench/ the sm90a and sm80 backward
# kernels at the head dims of BENCH_DIMS (default 32 40 96 192;
# bench/bench_backward.py), bench-fwd/ the forward ones (bench/bench.py),
# timed against SDPA flash and cuDNN.
#
#   [BENCH_DIMS=..] scripts/compile-padded-dims.sh [DIR]
#                                            (default gpu-padded-dims/)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-padded-dims}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
rm -rf "$DIR"
mkdir -p "$DIR/check" "$DIR/kr" "$DIR/bench" "$DIR/bench-fwd"
fwd() { # subdir, name, attn-compile flags...
  local sub="$1" name="$2"; shift 2
  "$COMPILE" --chip sm_90a --tuning-db none "$@" -o "$DIR/$sub/$name" |
    sed 's/^wrote [^:]*: //'
}
one() { fwd "$1" "$2" --backward --family sm90a "${@:3}"; }
one check d8 --head-dim 8
one check d32c --head-dim 32 --causal
one check d40 --head-dim 40
one check d56c_cap30_alibi --head-dim 56 --causal --softcap 30 --alibi
one check d72 --head-dim 72
one check d80c --head-dim 80 --causal
one check d96 --head-dim 96
one check d96c --head-dim 96 --causal
one check d96_f16 --head-dim 96 --dtype f16
one check d96c_cap30_alibi --head-dim 96 --causal --softcap 30 --alibi
one check d96_w100x8_tl --head-dim 96 --window-left 100 --window-right 8 \
  --top-left
one check d96c_det --head-dim 96 --causal --deterministic
one check d112c_pipe --head-dim 112 --causal --sm90-schedule dq-pipelined
one check d160 --head-dim 160
one check d192c --head-dim 192 --causal
one check d192c_cap30_alibi --head-dim 192 --causal --softcap 30 --alibi
one check d224_f16 --head-dim 224 --dtype f16
one kr d96_kr --head-dim 96 --batch 2 --key-starts 0,3 --key-ends 128,100
f90() { fwd check "fwd_$1" --family sm90a "${@:2}"; }
f90 d8 --head-dim 8
f90 d32c --head-dim 32 --causal
f90 d40 --head-dim 40
f90 d48_f16 --head-dim 48 --dtype f16
f90 d40v64c_alibi --head-dim 40 --value-head-dim 64 --causal --alibi
f90 d72 --head-dim 72
f90 d80c --head-dim 80 --causal
f90 d96 --head-dim 96
f90 d96_f16 --head-dim 96 --dtype f16
f90 d96c_cap30_alibi --head-dim 96 --causal --softcap 30 --alibi
f90 d96_w100x8_tl --head-dim 96 --window-left 100 --window-right 8 --top-left
f90 d112_nolse --head-dim 112 --no-lse
f90 d128v96 --head-dim 128 --value-head-dim 96
f90 d160c --head-dim 160 --causal
f90 d192v128 --head-dim 192 --value-head-dim 128
f90 d224_f16 --head-dim 224 --dtype f16
fwd kr fwd_d96_kr --family sm90a --head-dim 96 --batch 2 --key-starts 0,3 \
  --key-ends 128,100
for d in ${BENCH_DIMS:-32 40 96 192}; do
  for fam in sm90a sm80; do
    for c in "" c; do
      flags=(--head-dim "$d" --family "$fam" ${c:+--causal})
      fwd bench "${fam}_d$d$c" --backward "${flags[@]}"
      fwd bench-fwd "${fam}_d$d$c" "${flags[@]}"
    done
  done
done
