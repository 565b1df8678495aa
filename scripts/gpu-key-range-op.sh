#!/usr/bin/env bash
# The PyTorch op's key_range and the transformers integration's one-call
# padding on the GPU host (issue 25), from the wheel (dist/attn-*.whl, its
# own compiler: kernels compile on first use) and the pinned transformers
# wheels (gpu-wheels/, scripts/gpu-transformers.sh --download):
#   1. python/tests/test_torch_gpu.py -k key_range (float64, each family);
#   2. bench/transformers_gpu.py logits, gradients and left-padded
#      generation against sdpa/eager (MODELS, default llama,gemma2,gpt2).
# Output in $OUT (pytest.log, checks.log, transformers_gpu.{json,md}).
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
timeout "${PYTEST_TIMEOUT:-240}" python3 -m pytest -q -p no:cacheprovider \
  python/tests/test_torch_gpu.py -k key_range >"$OUT/pytest.log" 2>&1
echo "pytest rc=$?: $(tail -1 "$OUT/pytest.log")"
cd bench
timeout "${CHECKS_TIMEOUT:-300}" python3 transformers_gpu.py \
  --models "${MODELS:-llama,gemma2,gpt2}" --sections logits,grads,generate \
  --out "$OUT" >"$OUT/checks.log" 2>&1
echo "checks rc=$?"
tail -30 "$OUT/checks.log"
