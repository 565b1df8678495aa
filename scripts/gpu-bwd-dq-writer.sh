#!/usr/bin/env bash
# GPU-host check of the sm90a backward without the dQ writer's opaque moves
# (issue 23: at most 4 inline asm besides register-A wgmma). KERNELS from
# this tree's attn-compile --backward --family sm90a (bf16, D = 64/128,
# full/causal, batch 4, heads 2048/D, N = 4096), before the change into
# gpu-kernels-bwdpin/pinned_d<D>[c], after it into plain_d<D>[c]:
#   float64 checks of the plain kernels (scale 0.3, three shapes), memcheck
#   and racecheck on plain_d128c, then bench/bench_backward.py over both
#   sets in one process (two rounds, N = 4096 and 8192), tables last.
set -uo pipefail
OUT="${OUT:-gpu-out}"; mkdir -p "$OUT"
source scripts/gpu-build-runtime.sh
build_gpu_runtime build-gpu attn-launch attn_runtime
for k in gpu-kernels-bwdpin/plain_*; do for s in "17:300" "200:333" "1000:1000"; do
  build-gpu/bin/attn-launch $k --check --batch 2 --heads-q 4 --heads-kv 2 --seq-q ${s%%:*} --seq-kv ${s##*:} --seed 5 --scale 0.3 | grep -o '"ok":[a-z]*' | tr '\n' ' '; echo "$k $s"; done; done
timeout 200 compute-sanitizer --tool memcheck build-gpu/bin/attn-launch gpu-kernels-bwdpin/plain_d128c --check --batch 1 --heads-q 2 --heads-kv 1 --seq-q 200 --seq-kv 333 2>&1 | tail -1
timeout 200 compute-sanitizer --tool racecheck build-gpu/bin/attn-launch gpu-kernels-bwdpin/plain_d128c --check --batch 1 --heads-q 2 --heads-kv 1 --seq-q 200 --seq-kv 333 2>&1 | tail -1
mkdir -p $OUT/bench
for round in 1 2; do
ATTN_RUNTIME_LIB=build-gpu/lib/libattn_runtime.so timeout 200 python3 bench/bench_backward.py --kernels gpu-kernels-bwdpin --seqs 4096,8192 --reps 30 --out $OUT/bench > $OUT/bench/log$round.txt 2>&1
cat $OUT/bench/bench_backward.md
done
