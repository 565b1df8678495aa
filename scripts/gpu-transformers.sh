#!/usr/bin/env bash
# attn as a Hugging Face transformers backend on the GPU host (issue 25):
# installs the attn wheel (dist/attn-*.whl, with its own compiler) and the
# pinned transformers wheels (gpu-wheels/) alone into a fresh folder (no
# index, no dependencies: the host's PyTorch, Triton, numpy, jinja2,
# filelock, fsspec, ... are used), then, with HF_HUB_OFFLINE=1, runs
#   checks: bench/transformers_gpu.py (logits, gradients, generation,
#           training against sdpa/eager; exits 1 if a check fails)
#   bench:  bench/transformers_bench.py (prefill and forward+backward
#           tokens/s, attn vs sdpa vs flex_attention)
# each under a 450 s timeout, output in $OUT/{checks,bench}.log and the
# scripts' JSON and markdown in $OUT. One call per part keeps a device
# call under its 10 minutes (kernels compiled on first use are cached in
# $ATTN_CACHE_DIR, default /tmp/attn-hf-cache, for the next call):
#
#   bash scripts/build-wheel.sh                      # compiler host
#   bash scripts/gpu-transformers.sh --download      # compiler host: PyPI
#   # device calls, carrying dist and gpu-wheels (both git-ignored):
#   bash scripts/gpu-transformers.sh checks
#   bash scripts/gpu-transformers.sh bench
#
# Extra arguments after the part go to the script (e.g. checks --models
# llama,mistral; bench --shapes 1x4096). Without a part, both run.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
WHEELS="${HF_WHEELS:-$ROOT/gpu-wheels}"

if [ "${1:-}" = "--download" ]; then
  # transformers and what it imports that the GPU host lacks (PyTorch's
  # own dependencies are there), at python/requirements-dev.txt's pins,
  # for CPython 3.12 on manylinux x86_64. ~20 MB.
  PY="${PYTHON:-$ROOT/.venv/bin/python}"
  [ -x "$PY" ] || PY=python3
  mkdir -p "$WHEELS"
  for p in transformers huggingface_hub tokenizers safetensors regex PyYAML \
           tqdm packaging httpx2 httpcore2 h11 idna truststore; do
    pin="$(grep -i "^$p==" python/requirements-dev.txt | head -1)"
    [ -n "$pin" ] || { echo "no pin for $p in python/requirements-dev.txt"; exit 2; }
    "$PY" -m pip download --quiet --python-version 3.12 \
      --platform manylinux2014_x86_64 --only-binary=:all: --no-deps \
      -d "$WHEELS" "$pin" || exit 2
  done
  exclude="$(git rev-parse --git-common-dir)/info/exclude"
  grep -qx "/$(basename "$WHEELS")/" "$exclude" 2>/dev/null ||
    echo "/$(basename "$WHEELS")/" >>"$exclude"
  ls "$WHEELS"; du -sh "$WHEELS"
  exit 0
fi

part="${1:-all}"
[ $# -gt 0 ] && shift
case "$part" in checks|bench|all) ;; *)
  echo "usage: $0 [--download | checks | bench | all] [script args]"; exit 2 ;;
esac
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT"
SITE="${ATTN_WHEEL_SITE:-/tmp/attn-hf-site}"
rm -rf "$SITE"
shopt -s nullglob
wheels=("$ROOT"/dist/attn-*.whl "$WHEELS"/*.whl)
if ! ls "$ROOT"/dist/attn-*.whl >/dev/null 2>&1 ||
   ! ls "$WHEELS"/transformers-*.whl >/dev/null 2>&1; then
  echo "!! need dist/attn-*.whl (scripts/build-wheel.sh) and $WHEELS/" \
       "(scripts/gpu-transformers.sh --download), carried to the device"
  exit 2
fi
if ! python3 -m pip install --no-index --no-deps --target "$SITE" \
     "${wheels[@]}" >"$OUT/install.log" 2>&1; then
  echo "!! pip install failed; the end of $OUT/install.log:"
  tail -20 "$OUT/install.log"
  exit 2
fi
export PYTHONPATH="$SITE" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
  TOKENIZERS_PARALLELISM=false
export ATTN_CACHE_DIR="${ATTN_CACHE_DIR:-/tmp/attn-hf-cache}"
echo "== $(nvidia-smi -L 2>/dev/null | head -1 || echo 'nvidia-smi failed')"
python3 -c "import attn, transformers, torch; print('attn', attn.__version__, \
attn.__file__); print('transformers', transformers.__version__, 'torch', \
torch.__version__)" || exit 2

rc=0
run() {  # run NAME SCRIPT ARGS...
  local name="$1"; shift
  echo "== $name: python3 $*"
  timeout 450 python3 "$@" --out "$OUT" 2>&1 | tee "$OUT/$name.log"
  local r=${PIPESTATUS[0]}
  [ "$r" -eq 124 ] && echo "!! $name timed out (450 s)"
  [ "$r" -ne 0 ] && rc=1
  return 0
}
[ "$part" != bench ] && run checks bench/transformers_gpu.py "$@"
[ "$part" != checks ] && run bench bench/transformers_bench.py "$@"
exit $rc
