#!/usr/bin/env bash
# GPU-host check of the ALiBi kernels (scripts/compile-alibi.sh, default
# DIR gpu-kernels-alibi): attn-launch --check (float64 reference, outputs
# poisoned, slopes 2^(-8(h+1)/Hq)·(1 + b/8) per batch entry) of every
# kernel over several shapes (Nq != Nk both ways, decode Nq = 1, lengths
# off the tiles); the deterministic kernels' bit-identity; memcheck of
# four; then ALiBi's cost against the same kernel without it (same
# process), the table last.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DIR="${1:-gpu-kernels-alibi}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT"
source scripts/gpu-build-runtime.sh
build_gpu_runtime build-gpu attn-launch attn_runtime
L=build-gpu/bin/attn-launch
# shape: batch seq_q seq_kv
# SHAPES="b nq nk;b nq nk;..." overrides them.
SHAPES_LIST=("3 1000 1200" "2 333 1000" "3 1 777" "2 200 64" "1 130 130")
[ -n "${SHAPES:-}" ] && IFS=';' read -ra SHAPES_LIST <<<"$SHAPES"
for k in "$DIR"/fwd/* "$DIR"/bwd/*; do
  for s in "${SHAPES_LIST[@]}"; do
    set -- $s
    r="$(timeout 150 $L "$k" --check --batch "$1" --heads-q 4 --heads-kv 2 \
          --seq-q "$2" --seq-kv "$3" --seed 7 --input-range 3 2>&1)"
    ok="$(echo "$r" | grep -o '"ok":[a-z]*' | head -1)"
    echo "$ok $(echo "$r" | grep -o '"\(rel_err\|d[qkv]_rel_err\)":[^,]*' | tr '\n' ' ') $(basename "$(dirname "$k")")/$(basename "$k") [$s]"
    [ "$ok" = '"ok":true' ] || echo "$k [$s]: $(echo "$r" | head -c 600)" >>"$OUT/failures.txt"
  done
done | tee "$OUT/checks.txt"
echo "$(date +%T) checks: $(grep -c '"ok":true' "$OUT/checks.txt") ok, $(grep -vc '"ok":true' "$OUT/checks.txt") not ok"
for k in "$DIR"/bwd/*det*; do
  echo "repeats $(basename "$k"): $($L "$k" --repeats 10 --batch 3 --heads-q 4 --heads-kv 2 \
    --seq-q 1000 --seq-kv 1200 2>&1 | grep -o '"bit_identical":[a-z]*')"
done | tee "$OUT/repeats.txt"
for k in ${MEMCHECK:-fwd/sm90a_d128c fwd/sm80_d64 bwd/sm90a_d128c bwd/sm80_det_d64c}; do
  echo "memcheck $k: $(timeout 240 compute-sanitizer --tool memcheck $L "$DIR/$k" \
    --check --batch 2 --heads-q 2 --heads-kv 1 --seq-q 333 --seq-kv 1000 2>&1 | tail -1)"
done | tee "$OUT/sanitize.txt"
# Speed: ALiBi against the kernel without it, batch 4 x 16 heads.
echo "| kernel | N | without ALiBi ms | with ms | with/without |" >"$OUT/speed.md"
echo "|---|---|---|---|---|" >>"$OUT/speed.md"
t() { $L "$@" --time --heads-q 16 --heads-kv 16 2>&1 | grep -o '"time_ms":[^,}]*' | cut -d: -f2; }
for pair in "fwd/sm90a_d128 base/sm90a_d128" "fwd/sm90a_d128c base/sm90a_d128c" \
            "fwd/sm80_d128c base/sm80_d128c" "bwd/sm90a_d128c base/bwd_sm90a_d128c" \
            "bwd/sm80_d128c base/bwd_sm80_d128c"; do
  set -- $pair
  for n in ${SPEED_N:-4096 16384}; do
    b=$((65536 / n))
    t0="$(t "$DIR/$2" --batch $b --seq-q $n --seq-kv $n)"
    t1="$(t "$DIR/$1" --batch $b --seq-q $n --seq-kv $n)"
    t2="$(t "$DIR/$2" --batch $b --seq-q $n --seq-kv $n)"
    echo "| $1 | $n | $t0 / $t2 | $t1 | $(python3 -c "print(round($t1/min($t0,$t2),3))" 2>/dev/null) |" >>"$OUT/speed.md"
  done
done
cat "$OUT/speed.md"
