#!/usr/bin/env bash
# Experiment (issue 10) as run on 2026-11-29: softcap with its constants
# folded (then ATTN_SOFTCAP_FOLD=1, now the sm90a default: tanh(s · scale/C)
# and C · log2(e) in the softmax's one FMA) against the region as written
# and plain attention, sm90a, D = 128, N = 4096; float64 checks of the
# folded kernels. KERNELS: time_plain_4k, time_softcap30_4k,
# time_softcap30_fold_4k, fold_softcap5_d128 (--scale 1.0) and
# fold_softcap30_causal_d64, compiled with attn-compile --family sm90a.
set -uo pipefail
KERNELS="${1:-build-bwd/fold-kernels}"
OUT="${OUT:-gpu-out}"; BUILD="${BUILD_DIR:-build-gpu}"; mkdir -p "$OUT"
R="$OUT/fold.jsonl"; : >"$R"
source scripts/gpu-build-runtime.sh
build_gpu_runtime "$BUILD" attn-launch
run() { local n="$1"; shift; timeout 30 "$BUILD/bin/attn-launch" "$KERNELS/$n" "$@" 2>>"$OUT/launch.log" | sed "s|^{|{\"kdir\":\"$n\",|" >>"$R"; }
for d in fold_softcap5_d128 fold_softcap30_causal_d64; do
  run $d --check --check-rows 256 --batch 2 --heads-q 4 --heads-kv 2 --seq-q 1000 --seq-kv 1500
  run $d --check --check-rows 256 --batch 2 --heads-q 4 --heads-kv 2 --seq-q 1500 --seq-kv 1000
  run $d --check --batch 1 --heads-q 2 --heads-kv 1 --seq-q 17 --seq-kv 333
done
for rep in 1 2; do for d in time_plain_4k time_softcap30_4k time_softcap30_fold_4k; do
  run $d --check --check-rows 64 --time --warmup 3 --reps 20; done; done
python3 - "$R" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(f"{r['kdir']:28} ok={r.get('ok')} rel={r.get('rel_err')} lse={r.get('lse_rel_err')} ms={r.get('time_ms', '')}")
PY
