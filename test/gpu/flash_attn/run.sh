#!/usr/bin/env bash
# FlashAttention's own tests (tests/test_flash_attn.py of the flash-attn
# sdist on PyPI, run unmodified) on attn's kernels through
# attn.flash_attn_shim, which conftest.py installs as the flash_attn module
# (issue 24). Two steps, as the GPU host has no network:
#   bash test/gpu/flash_attn/run.sh --download   # here: PyPI -> gpu-wheels/
#   bash test/gpu/flash_attn/run.sh              # GPU host, gpu-wheels carried
# writes to $OUT (default ./flash-attn-out): counts.json (passed, failed,
# skipped, not_implemented: totals, per test function, by reason, rewritten
# after every test), junit.xml and pytest.log.
#
# The download (pinned and checked): flash-attn's sdist (~8 MB; its test
# file and flash_attn/bert_padding.py, which the varlen tests use) and the
# einops wheel (the tests import it; einops_compat.py stands in without).
#
# Which attn: $ATTN_WHEEL_SITE (a folder the wheel is installed in, pip
# --target), else dist/attn-*.whl installed alone into a fresh folder (as
# scripts/gpu-wheel.sh does; the wheel compiles kernels on first use), else
# this checkout's python/ (with a build: $ATTN_BUILD_DIR).
#
# Selection (FlashAttention's parametrisations are ~45000 for dropout 0):
#   ATTN_FA_FUNCTIONS=F,..  the test functions (default: the dense and
#                      varlen ones below, paged KV included through the
#                      shim's block_table; kvcache needs
#                      flash_attn_with_kvcache, which the shim has not);
#                      dropout_p != 0 is deselected;
#   ATTN_FA_SAMPLE=N   N parametrisations per test function, drawn with a
#                      seeded generator (default 12; 0 = all);
#   ATTN_FA_SEED=S     its seed (default 0: the same tests every run);
#   ATTN_FA_K=EXPR     pytest -k, applied before sampling, e.g.
#                      'bwd_overflow or bwd_transpose';
#   ATTN_FA_TIMEOUT=S  stop pytest after S seconds (default 450; the counts
#                      so far stay in counts.json).
# Kernels are cached in $ATTN_CACHE_DIR (default /tmp/attn-fa-cache), so a
# second run on the same host compiles nothing.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
WHEELS="${ATTN_FA_WHEELS:-$ROOT/gpu-wheels}"
FA_VERSION=2.8.3.post2
FA_SDIST="flash_attn-$FA_VERSION.tar.gz"
FA_SHA256=d0f9f0b08a986cdeadbffcf5ec8b3a8f514366c68ad1853d3ab061bc83cc340b
EINOPS_WHEEL=einops-0.8.1-py3-none-any.whl
EINOPS_SHA256=919387eb55330f5757c6bea9165c5ff5cfe63a642682ea788a6d472576d81737

if [ "${1:-}" = "--download" ]; then
  mkdir -p "$WHEELS"
  PY="${PYTHON:-$ROOT/.venv/bin/python}"
  [ -x "$PY" ] || PY=python3
  # The sdist file itself, from PyPI's JSON API (`pip download` would
  # build its metadata, which needs CUDA).
  if [ ! -f "$WHEELS/$FA_SDIST" ]; then
    "$PY" - "$FA_VERSION" "$WHEELS/$FA_SDIST" <<'PY' || exit 2
import json, sys, urllib.parse, urllib.request
version, dest = sys.argv[1:]
index = "https://pypi.org/pypi/flash-attn/json"
files = json.load(urllib.request.urlopen(index))["releases"][version]
url = next(f["url"] for f in files if f["packagetype"] == "sdist")
urllib.request.urlretrieve(urllib.parse.urljoin(index, url), dest)
PY
  fi
  "$PY" -m pip download --quiet --no-deps --only-binary=:all: \
    -d "$WHEELS" einops==0.8.1 || exit 2
  (cd "$WHEELS" && printf '%s  %s\n%s  %s\n' "$FA_SHA256" "$FA_SDIST" \
     "$EINOPS_SHA256" "$EINOPS_WHEEL" | sha256sum -c) || exit 2
  exit 0
fi

OUT="${OUT:-$PWD/flash-attn-out}"
mkdir -p "$OUT"
[ -f "$WHEELS/$FA_SDIST" ] || {
  echo "run.sh: $WHEELS/$FA_SDIST is missing: run" \
    "'bash test/gpu/flash_attn/run.sh --download' where PyPI is reachable" \
    "and carry $(basename "$WHEELS")/"; exit 2; }
echo "$FA_SHA256  $WHEELS/$FA_SDIST" | sha256sum -c --quiet || exit 2
# FlashAttention's test file with attn's conftest beside it.
UP=/tmp/attn-fa-upstream
rm -rf "$UP" && mkdir -p "$UP"
tar xzf "$WHEELS/$FA_SDIST" -C "$UP" --strip-components=1 \
  "flash_attn-$FA_VERSION/tests/test_flash_attn.py" \
  "flash_attn-$FA_VERSION/flash_attn/bert_padding.py" || exit 2
cp "$HERE/conftest.py" "$HERE/einops_compat.py" "$UP/tests/"
DEPS=/tmp/attn-fa-deps
rm -rf "$DEPS"
if [ -f "$WHEELS/$EINOPS_WHEEL" ]; then
  python3 -m pip install --quiet --no-index --no-deps --target "$DEPS" \
    "$WHEELS/$EINOPS_WHEEL" || exit 1
fi
FUNCTIONS="${ATTN_FA_FUNCTIONS:-test_flash_attn_qkvpacked,test_flash_attn_output,test_flash_attn_causal,test_flash_attn_race_condition,test_flash_attn_bwd_overflow,test_flash_attn_bwd_transpose,test_flash_attn_deterministic,test_flash_attn_varlen_qkvpacked,test_flash_attn_varlen_output,test_flash_attn_varlen_causal,test_flash_attn_bwd_varlen_overflow,test_flash_attn_varlen_deterministic}"
if [ -n "${ATTN_WHEEL_SITE:-}" ]; then
  SITE="$ATTN_WHEEL_SITE"
elif compgen -G "$ROOT/dist/attn-*.whl" >/dev/null; then
  SITE=/tmp/attn-wheel-site-fa
  rm -rf "$SITE"
  python3 -m pip install --quiet --no-index --no-deps --target "$SITE" \
    "$ROOT"/dist/attn-*.whl || exit 1
else
  SITE="$ROOT/python"
fi
export ATTN_CACHE_DIR="${ATTN_CACHE_DIR:-/tmp/attn-fa-cache}"
K=()
if [ -n "${ATTN_FA_K:-}" ]; then K=(-k "$ATTN_FA_K"); fi
cd "$UP/tests"
ATTN_FA_UPSTREAM="$UP" PYTHONPATH="$SITE:$DEPS" timeout "${ATTN_FA_TIMEOUT:-450}" python3 -m pytest -q \
  -p no:cacheprovider -rfs --attn-functions "$FUNCTIONS" --attn-sample "${ATTN_FA_SAMPLE:-12}" \
  --attn-seed "${ATTN_FA_SEED:-0}" --attn-counts "$OUT/counts.json" \
  --junitxml "$OUT/junit.xml" "${K[@]}" test_flash_attn.py \
  >"$OUT/pytest.log" 2>&1
rc=$?
tail -n 40 "$OUT/pytest.log"
[ "$rc" = 124 ] && echo "run.sh: pytest stopped after ${ATTN_FA_TIMEOUT:-450} s"
python3 -c 'import json,sys; print("counts:", json.dumps(json.load(open(sys.argv[1]))["totals"]))' \
  "$OUT/counts.json" 2>/dev/null || echo "run.sh: no counts (no test ran)"
exit "$rc"
