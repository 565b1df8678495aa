#!/usr/bin/env bash
# GPU-host check of the sm90a backward's mask bands (issue 24). KERNELS
# (default gpu-kernels-bands, from scripts/compile-bwd-sm90a-bands.sh):
#   float64 checks of every chk/ kernel (attn-launch --check: O and LSE
#   from the float64 reference, then dQ, dK, dV against it) at Nq x Nk in
#   {200x333, 333x200, 64x700, 1x1, 5x5, 1000x1000, 700x1500}, eight at a
#   time (each 60 s at most: a deterministic kernel whose dQ order waits
#   forever shows as a timeout, not a hung run); the deterministic ones
#   rerun 5 times (gradients bit-identical); memcheck and racecheck of two
#   kernels; then speed/: each window kernel of both families timed by
#   attn-launch --time (B 2, N 8192, H 2048/D), the table last.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-gpu-kernels-bands}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT"
source scripts/gpu-build-runtime.sh
build_gpu_runtime build-gpu attn-launch attn_runtime
export L="$ROOT/build-gpu/bin/attn-launch" KERNELS

check() { # kernel dir, Nq:Nk
  local k="$1" s="$2" extra=() kr=()
  case "$k" in *_det*) extra=(--repeats 5) ;; esac
  local n="${s##*:}"
  case "$k" in *_kr_*) kr=(--key-starts 0,$(( n > 20 ? 17 : n / 2 )) --key-ends "$n",$(( n * 3 / 4 > 17 ? n * 3 / 4 : n ))) ;; esac
  local r
  r="$(timeout 60 "$L" "$k" --check --batch 2 --heads-q 4 --heads-kv 2 \
        --seq-q "${s%%:*}" --seq-kv "${s##*:}" --seed 7 "${kr[@]}" \
        "${extra[@]}" 2>&1)"
  local rc=$?
  local ok
  ok="$(echo "$r" | grep -o '"ok":[a-z]*' | head -1)"
  [ $rc -eq 124 ] && ok="TIMEOUT"
  echo "${ok:-rc=$rc} $(echo "$r" | grep -o '"d[qkv]_rel_err":[^,]*\|"bit_identical":[a-z]*\|error.*' | tr '\n' ' ') $(basename "$k") $s"
}
export -f check
for k in "$KERNELS"/chk/*; do
  for s in 200:333 333:200 64:700 1:1 5:5 1000:1000 700:1500; do
    echo "$k $s"
  done
done | xargs -P 8 -L 1 bash -c 'check "$0" "$1"' | sort -k4 >"$OUT/checks.txt"
cat "$OUT/checks.txt"
echo "checks: $(wc -l <"$OUT/checks.txt"), not ok: $(grep -vc '^"ok":true' "$OUT/checks.txt")"

sanitize() { # tool, kernel name
  echo "$1 $2: $(timeout 240 compute-sanitizer --tool "$1" "$L" \
    "$KERNELS/chk/$2" --check --batch 1 --heads-q 2 --heads-kv 1 \
    --seq-q 200 --seq-kv 333 2>&1 | tail -1)"
}
export -f sanitize
for k in chk_det_d128_br200x7 chk_d64_tl32x32; do
  for tool in memcheck racecheck; do echo "$tool $k"; done
done | xargs -P 4 -L 1 bash -c 'sanitize "$0" "$1"' | tee "$OUT/sanitize.txt"

echo "| kernel | time ms |" >"$OUT/speed.md"
echo "|---|---|" >>"$OUT/speed.md"
for k in "$KERNELS"/speed/*; do
  r="$(timeout 60 "$L" "$k" --time --reps 20 2>&1)"
  echo "| $(basename "$k") | $(echo "$r" | grep -o '"time_ms":[^,]*\|error.*' | cut -d: -f2-) |"
done >>"$OUT/speed.md"
cat "$OUT/speed.md"
