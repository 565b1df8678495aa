#!/usr/bin/env bash
# GPU-host check of the sm80 backward's mask bands and padded head dims
# (issue 24). KERNELS (default gpu-kernels-bwdvar, from
# scripts/compile-bwd-masks-dims.sh):
#   float64 checks of every chk/ kernel (attn-launch --check: O and the
#   LSE from the float64 reference, then dQ, dK, dV against it) at
#   Nq x Nk in {200x333, 333x200, 64x700, 1x1, 5x5}, the mask kernels also
#   at 1000x1000; memcheck and racecheck of two mask kernels and two above
#   D = 128; then bench/bench_backward.py over the bench/ kernels (N =
#   $SEQS, default 4096,8192)
#   against SDPA flash and cuDNN, the table last.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-gpu-kernels-bwdvar}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT/bench"
source scripts/gpu-build-runtime.sh
build_gpu_runtime build-gpu attn-launch attn_runtime
L=build-gpu/bin/attn-launch
fails=0
for k in "$KERNELS"/chk/*; do
  shapes="200:333 333:200 64:700 1:1 5:5"
  case "$k" in *_br*|*_tl*) shapes="$shapes 1000:1000" ;; esac
  case "$k" in *cap*) shapes="$shapes 300:300s" ;; esac
  for s in $shapes; do
    # 300:300s: scale 1.5 and inputs in +-3, logits well into the cap.
    flags=(); case "$s" in *s) flags=(--scale 1.5 --input-range 3) ;; esac
    r="$(timeout 120 $L "$k" --check --batch 2 --heads-q 4 --heads-kv 2 \
          --seq-q "${s%%:*}" --seq-kv "$(echo "${s##*:}" | tr -d s)" --seed 7 \
          "${flags[@]}" 2>&1)"
    ok="$(echo "$r" | grep -o '"ok":[a-z]*' | head -1)"
    [ "$ok" = '"ok":true' ] || fails=$((fails + 1))
    echo "$ok $(echo "$r" | grep -o '"d[qkv]_rel_err":[^,]*' | tr '\n' ' ') $(basename "$k") $s"
  done
done | tee "$OUT/checks.txt"
echo "checks not ok: $(grep -vc '"ok":true' "$OUT/checks.txt")"
for k in chk_d64_tl32x32 chk_d96_br64x0 chk_d200_br64x0 chk_det_d256c; do
  for tool in memcheck racecheck; do
    echo "$tool $k: $(timeout 200 compute-sanitizer --tool $tool $L \
      "$KERNELS/chk/$k" --check --batch 1 --heads-q 2 --heads-kv 1 --seq-q 200 \
      --seq-kv 333 2>&1 | tail -1)"
  done
done | tee "$OUT/sanitize.txt"
[ "${NOBENCH:-0}" = 1 ] && exit 0
ATTN_RUNTIME_LIB=build-gpu/lib/libattn_runtime.so timeout 300 \
  python3 bench/bench_backward.py --kernels "$KERNELS/bench" \
  --seqs "${SEQS:-4096,8192}" --reps 20 --out "$OUT/bench" >"$OUT/bench/log.txt" 2>&1
cat "$OUT/bench/bench_backward.md"
