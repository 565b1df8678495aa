#!/usr/bin/env bash
# One GPU-host call for the unchecked sm90a backward work (branch
# exp/m80-regdq on gpu/combined3), under a deadline of BUDGET_S seconds
# (default 545), each part's logs under $OUT/<part> as it finishes:
#   1. checks/  float64 checks of gpu-next/{check,kr} (compile-next-gpu.sh
#      and compile-bwd-m80-det.sh), deterministic ones bit-identical;
#   2. a/       the decision set (gpu-nb-a/bench): block-m 64 against 80 at
#      D = 128 atomic and deterministic, head-split against transposed-dkv
#      at D = 256 atomic and deterministic, full and causal;
#   3. b/       the deterministic turn orders (gpu-nb-b/bench);
#   4. s/       memcheck and racecheck of the new schedules.
# Carry gpu-next, gpu-nb-a, gpu-nb-b.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
O="${OUT:-$ROOT/gpu-out}"
START=$(date +%s)
until_s() { echo $((START + $1 - $(date +%s))); }
export BENCH_SEQS="${BENCH_SEQS:-4096,16384}"
OUT=$O/checks CHECKS=1 SANITIZE=0 BENCH=0 timeout "$(until_s 230)" \
  bash scripts/gpu-padded-dims.sh gpu-next >/dev/null 2>&1
echo "checks: $(wc -l <"$O/checks/checks.txt"), not ok: $(grep -vc '^"ok":true' "$O/checks/checks.txt")"
grep -v '^"ok":true' "$O/checks/checks.txt" | head -20
for part in a b; do
  OUT=$O/$part CHECKS=0 SANITIZE=0 BENCH_TIMEOUT="$(until_s "$([ $part = a ] && echo 430 || echo 480)")" \
    bash scripts/gpu-padded-dims.sh "gpu-nb-$part" >/dev/null 2>&1
done
OUT=$O/s CHECKS=0 BENCH=0 SANITIZE_TOOLS="memcheck racecheck" SANITIZE_TIMEOUT=45 \
  SANITIZE_KERNELS="d128_m80_det d256c_tdkv_det d128_m80" \
  timeout "$(until_s "${BUDGET_S:-545}")" bash scripts/gpu-padded-dims.sh gpu-next >/dev/null 2>&1
cat "$O/s/sanitize.txt" 2>/dev/null
# One line per timed point (the log's, complete or not).
for part in a b; do
  python3 - "$O/$part/bench_backward.log" <<'PY'
import re, sys
name = None
for line in open(sys.argv[1]):
    m = re.match(r"== (\S+) .*N=(\d+)", line)
    if m:
        name = f"{m[1]} N={m[2]}"
    elif name and "attn_tflops=" in line:
        kv = dict(re.findall(r"(\S+?)=(\S+)", line))
        print(name, "ok=" + kv.get("ok", "?"), "attn=" + kv.get("attn_tflops", "?"),
              "cudnn=" + kv.get("sdpa-cudnn_tflops", "?"), "vs_cudnn=" + kv.get("vs_sdpa-cudnn", "?"))
        name = None
PY
done
