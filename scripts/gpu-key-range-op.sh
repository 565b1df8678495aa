#!/usr/bin/env bash
# The PyTorch op's key_range and the transformers integration on the GPU
# host (issue 25), from the wheel (dist/attn-*.whl, its own compiler:
# kernels compile on first use) and the pinned transformers wheels
# (gpu-wheels/, scripts/gpu-transformers.sh --download):
#   1. python/tests/test_torch_gpu.py -k "$PYTEST_K" (default key_range:
#      float64 checks of each family, the direct launch);
#   2. bench/transformers_gpu.py --sections "$SECTIONS" (default logits,
#      grads, generate) for MODELS (default llama,gemma2,gpt2), then, for
#      each seed in TRAIN_SEEDS (default none), its training section
#      (--train-precision "$PRECISION", default mixed) and the trained
#      model's generation;
#   3. with PADDING_BENCH=1, bench/bench_padding.py at N 2048 and 8192.
# Output in $OUT (pytest.log, checks.log, train-<seed>.log,
# padding-<n>.log, the scripts' JSON and markdown).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT"
SITE=/tmp/attn-kr-site
rm -rf "$SITE"
python3 -m pip install --no-index --no-deps --target "$SITE" dist/attn-*.whl \
  gpu-wheels/*.whl >"$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 2; }
export PYTHONPATH="$SITE" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
  TOKENIZERS_PARALLELISM=false ATTN_CACHE_DIR=/tmp/attn-kr-cache \
  ATTN_COMPILER_LIB="$SITE/attn/_lib/libattn_compiler.so" \
  ATTN_RUNTIME_LIB="$SITE/attn/_lib/libattn_runtime.so"
echo "== $(nvidia-smi -L 2>/dev/null | head -1)"
if [ -n "${PYTEST_K-key_range}" ]; then
  timeout "${PYTEST_TIMEOUT:-240}" python3 -m pytest -q -p no:cacheprovider \
    python/tests/test_torch_gpu.py -k "${PYTEST_K:-key_range}" >"$OUT/pytest.log" 2>&1
  echo "pytest rc=$?: $(tail -1 "$OUT/pytest.log")"
fi
cd bench
if [ -n "${SECTIONS-logits,grads,generate}" ]; then
  timeout "${CHECKS_TIMEOUT:-300}" python3 transformers_gpu.py \
    --models "${MODELS:-llama,gemma2,gpt2}" \
    --sections "${SECTIONS:-logits,grads,generate}" \
    --out "$OUT" >"$OUT/checks.log" 2>&1
  echo "checks rc=$?"
  tail -25 "$OUT/checks.log"
fi
for seed in ${TRAIN_SEEDS:-}; do
  mkdir -p "$OUT/train-$seed"
  timeout "${TRAIN_TIMEOUT:-200}" python3 transformers_gpu.py --models "" \
    --sections train --train-seed "$seed" \
    --train-precision "${PRECISION:-mixed}" --out "$OUT/train-$seed" \
    >"$OUT/train-$seed.log" 2>&1
  echo "train seed $seed rc=$?"
  grep -E "^\[(train|generate)\]" "$OUT/train-$seed.log" | cut -c1-300
done
if [ "${PADDING_BENCH:-0}" = 1 ]; then
  for n in 2048 8192; do
    timeout 200 python3 bench_padding.py --seq "$n" \
      --reps "$([ "$n" = 8192 ] && echo 10 || echo 20)" >"$OUT/padding-$n.log" 2>&1
    echo "bench_padding N=$n rc=$?"
    cat "$OUT/padding-$n.log"
  done
fi
