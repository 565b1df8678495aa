#!/usr/bin/env bash
# Compiles the sm90a backward kernels that measure the dkdv kernel's
# experiment knobs (HopperBackwardConfig: sectionBytes, the causal tile
# order, --section-mb; dqBeforeDk, dQ issued and stored under dK or not,
# --sm90-schedule dq-first / dk-first) into DIR (default gpu-bwd-variants), one
# directory per kernel for scripts/gpu-backward.sh (checks, racecheck,
# BENCH=1 timing against SDPA; the bench's "kernel" column is the
# directory name):
#   d<D>[c]_<variant>   bf16, D = 64/128, causal or not;
#   d<D>[c]_det         the deterministic kernels (dQ added in key-block
#                       order) with the default knobs.
#
#   scripts/compile-backward-variants.sh [DIR]
#
# Environment: ATTN_COMPILE (default build/bin/attn-compile), VARIANTS
# (name=--flag=value[,--flag=value], attn-compile flags; "base=" is the
# default configuration).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/gpu-bwd-variants}"
COMPILE="${ATTN_COMPILE:-$ROOT/build/bin/attn-compile}"
VARIANTS="${VARIANTS:-base= nosec=--section-mb=0 sec16=--section-mb=16 nodqf=--sm90-schedule=dk-first}"
rm -rf "$DIR"
mkdir -p "$DIR"
report() { # the dkdv kernel's entry and ptxas report
  python3 - "$1/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
l = [x for x in m["launches"] if x["role"] == "dkdv"][0]
print(sys.argv[1].rsplit("/", 2)[-2] + ":", l["entry"], l["ptxas"])
PY
}
for v in $VARIANTS; do
  name=${v%%=*}; knobs=${v#*=}
  for d in 64 128; do
    for causal in "" c; do
      # The tile order only matters with a causal mask; dQ-first only for
      # the in-step dQ (D = 128).
      case "$knobs" in *section*) [ -z "$causal" ] && continue ;; esac
      case "$knobs" in *dk-first*) [ "$d" = 64 ] && continue ;; esac
      out="$DIR/d$d${causal}_$name"
      "$COMPILE" --backward --chip sm_90a --dtype bf16 ${knobs//,/ } \
        --head-dim "$d" ${causal:+--causal} -o "$out" >/dev/null
      report "$out"
    done
  done
done
for d in 64 128; do
  for causal in "" c; do
    "$COMPILE" --backward --chip sm_90a --dtype bf16 --head-dim "$d" \
      ${causal:+--causal} --deterministic -o "$DIR/d$d${causal}_det" \
      >/dev/null && report "$DIR/d$d${causal}_det"
  done
done
