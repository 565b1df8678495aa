#!/usr/bin/env bash
# GPU-host check of the key_range kernels (scripts/compile-key-range.sh,
# default DIR gpu-kernels-kr): attn-launch --check (float64 reference,
# outputs poisoned) of every kernel over several shapes and key ranges
# (empty, one key, full, Nq != Nk, decode Nq = 1); memcheck of two; then
# the forward's speed with key_range against the same kernel without it
# (every range full, same process), the table last.
set -uo pipefail
# SETS="fwd bwd" (default) picks the checked kernel sets.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DIR="${1:-gpu-kernels-kr}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT"
source scripts/gpu-build-runtime.sh
build_gpu_runtime build-gpu attn-launch attn_runtime
L=build-gpu/bin/attn-launch
# shape: batch seq_q seq_kv key_starts key_ends
SHAPES=(
  "4 1000 1000 0,17,333,999 1000,700,333,1000"
  "3 333 1000 5,0,600 900,1,1000"
  "3 1 777 0,100,776 777,777,777"
  "2 200 64 10,0 64,33"
  "2 1000 300 0,0 300,300"
  "1 130 130 129 130"
)
# SETS: which kernel sets to check (default both).
for k in $(for set in ${SETS:-fwd bwd}; do echo "$DIR/$set"/*; done); do
  [ -d "$k" ] || continue
  for s in "${SHAPES[@]}"; do
    set -- $s
    r="$(timeout 120 $L "$k" --check --batch "$1" --heads-q 4 --heads-kv 2 \
          --seq-q "$2" --seq-kv "$3" --key-starts "$4" --key-ends "$5" \
          --seed 11 --input-range 3 2>&1)"
    ok="$(echo "$r" | grep -o '"ok":[a-z]*' | head -1)"
    echo "$ok $(echo "$r" | grep -o '"\(rel_err\|d[qkv]_rel_err\)":[^,]*' | tr '\n' ' ') $(basename "$(dirname "$k")")/$(basename "$k") [$s]"
    [ "$ok" = '"ok":true' ] || echo "$r" | head -c 600 >>"$OUT/failures.txt"
  done
done | tee "$OUT/checks.txt"
echo "checks: $(grep -c '"ok":true' "$OUT/checks.txt") ok, $(grep -vc '"ok":true' "$OUT/checks.txt") not ok"
for k in "$DIR"/bwd/*det*; do
  echo "repeats $(basename "$k"): $($L "$k" --repeats 5 --batch 3 --heads-q 4 --heads-kv 2 \
    --seq-q 1000 --seq-kv 1000 --key-starts 5,0,600 --key-ends 900,1000,1000 2>&1 | grep -o '"bit_identical":[a-z]*')"
done | tee "$OUT/repeats.txt"
for k in fwd/sm90a_d128c fwd/sm80_d128c bwd/sm90a_d128c bwd/sm80_det_d64c bwd/sm90a_det_d64c; do
  [ -d "$DIR/$k" ] || continue
  echo "memcheck $k: $(timeout 200 compute-sanitizer --tool memcheck $L "$DIR/$k" \
    --check --batch 3 --heads-q 2 --heads-kv 1 --seq-q 333 --seq-kv 1000 \
    --key-starts 5,0,600 --key-ends 900,1,1000 2>&1 | tail -1)"
done | tee "$OUT/sanitize.txt"
# Speed: key_range (every range full) against the kernel without it.
echo "| kernel | N | without key_range ms | with ms | with/without |" >"$OUT/speed.md"
echo "|---|---|---|---|---|" >>"$OUT/speed.md"
for fam in sm80 sm90a; do
  for m in d128 d128c; do
    for n in 4096 16384; do
      b=$((32768 / n)); ks="$(yes 0 | head -n $b | paste -sd,)"; ke="$(yes $n | head -n $b | paste -sd,)"
      t0="$($L "$DIR/base/${fam}_$m" --time --batch $b --heads-q 16 --heads-kv 16 --seq-q $n --seq-kv $n 2>&1 | grep -o '"time_ms":[^,}]*' | cut -d: -f2)"
      t1="$($L "$DIR/fwd/${fam}_$m" --time --batch $b --heads-q 16 --heads-kv 16 --seq-q $n --seq-kv $n --key-starts "$ks" --key-ends "$ke" 2>&1 | grep -o '"time_ms":[^,}]*' | cut -d: -f2)"
      t2="$($L "$DIR/base/${fam}_$m" --time --batch $b --heads-q 16 --heads-kv 16 --seq-q $n --seq-kv $n 2>&1 | grep -o '"time_ms":[^,}]*' | cut -d: -f2)"
      echo "| ${fam}_$m | $n | $t0 / $t2 | $t1 | $(python3 -c "print(round($t1/min($t0,$t2),3))" 2>/dev/null) |" >>"$OUT/speed.md"
    done
  done
done
cat "$OUT/speed.md"
