#!/usr/bin/env bash
# Compiles the kernels that measure the sm90a family's exp2 emulation
# (HopperKernelConfig::exp2Emulated: k of every 8 score columns take exp2 on
# the FMA pipe, KernelBuilder::exp2Poly) on the GPU host, into DIR (default
# gpu-kernels-exp2):
#   sets/e<k>/d<D>[_causal]  the six benchmark kernels (bf16, heads 2048/D,
#                            compiled at B 4, N 4096) for
#                            scripts/gpu-hopper.sh SETS=1;
#   variants/                softcap 30, ALiBi and plain at D = 128,
#                            N = 4096 (time_*) and check kernels for
#                            scripts/gpu-variants.sh.
#
#   scripts/compile-exp2-emulation.sh [DIR]
#
# Environment: ATTN_COMPILE (default build/bin/attn-compile), EMULATED
# (default "0 1 2 3 4": the k of the sets and timed variants).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-kernels-exp2}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
EMULATED="${EMULATED:-0 1 2 3 4}"
rm -rf "$DIR"
mkdir -p "$DIR/sets" "$DIR/variants"
c() {
  local out="$1" e="$2"; shift 2
  # k = 0 is the default (and the only value the sm80 family takes).
  local knob=()
  [ "$e" != 0 ] && knob=(--exp2-emulated "$e")
  "$COMPILE" --chip sm_90a --dtype bf16 "${knob[@]}" "$@" \
    -o "$out" >/dev/null
  echo "$out: $(grep -o '"entry": "[^"]*"' "$out/manifest.json")"
}
for e in $EMULATED; do
  for d in 64 128 256; do
    h=$((2048 / d))
    c "$DIR/sets/e$e/d$d" "$e" --family sm90a --head-dim $d --heads-q $h \
      --batch 4 --seq-q 4096
    c "$DIR/sets/e$e/d${d}_causal" "$e" --family sm90a --head-dim $d \
      --heads-q $h --batch 4 --seq-q 4096 --causal
  done
done
V="$DIR/variants"
G4K="--head-dim 128 --batch 4 --heads-q 16 --seq-q 4096"
for e in $EMULATED; do
  c "$V/time_sm90a_plain_4k_e$e" "$e" --family sm90a $G4K
  c "$V/time_sm90a_softcap30_4k_e$e" "$e" --family sm90a $G4K --softcap 30
  c "$V/time_sm90a_alibi_4k_e$e" "$e" --family sm90a $G4K --alibi
done
c "$V/time_sm80_plain_4k" 0 --family sm80 $G4K
c "$V/time_sm80_alibi_4k" 0 --family sm80 $G4K --alibi
# Checks: rows that see no key (bottom-right causal with Nq > Nk), tails,
# GQA, softcap at scale 1, ALiBi in both families.
c "$V/sm90a_causal_d128_e4" 4 --family sm90a --head-dim 128 --causal
c "$V/sm90a_sliding_tl_2sided_d64_e3" 3 --family sm90a --head-dim 64 \
  --window-left 100 --window-right 50 --top-left
c "$V/sm90a_softcap5_d128_e3" 3 --family sm90a --head-dim 128 --softcap 5 \
  --scale 1.0
c "$V/sm90a_alibi_d64_e3" 3 --family sm90a --head-dim 64 --alibi --batch 2 \
  --heads-q 8 --heads-kv 2 --seq-q 1000 --seq-kv 1300
c "$V/sm90a_alibi_causal_d128" 0 --family sm90a --head-dim 128 --alibi \
  --causal --heads-q 4 --seq-q 1500 --seq-kv 1000
c "$V/sm80_alibi_d64" 0 --family sm80 --head-dim 64 --alibi --batch 2 \
  --heads-q 8 --heads-kv 2 --seq-q 1000 --seq-kv 1300
c "$V/sm80_alibi_causal_d128" 0 --family sm80 --head-dim 128 --alibi \
  --causal --heads-q 4 --seq-q 1500 --seq-kv 1000
du -sh "$DIR"
