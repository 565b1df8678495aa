#!/usr/bin/env bash
# FlashAttention's own tests (test_flash_attn.py, vendored from
# Dao-AILab/flash-attention) on attn's kernels through attn.flash_attn_shim,
# on a GPU host (issue 24):
#   bash test/gpu/flash_attn/run.sh
# writes to $OUT (default ./flash-attn-out): counts.json (passed, failed,
# skipped, not_implemented: totals, per test function, by reason, rewritten
# after every test), junit.xml and pytest.log.
#
# Which attn: $ATTN_WHEEL_SITE (a folder the wheel is installed in, pip
# --target), else dist/attn-*.whl installed alone into a fresh folder (as
# scripts/gpu-wheel.sh does; the wheel compiles kernels on first use), else
# this checkout's python/ (with a build: $ATTN_BUILD_DIR).
#
# Selection (FlashAttention's parametrisations are ~45000 for dropout 0):
#   ATTN_FA_SAMPLE=N   N parametrisations per test function, drawn with a
#                      seeded generator (default 12; 0 = all);
#   ATTN_FA_SEED=S     its seed (default 0: the same tests every run);
#   ATTN_FA_K=EXPR     pytest -k, applied before sampling, e.g.
#                      'bwd_overflow or bwd_transpose', or
#                      'deterministic and dtype1' (ids are the parameters in
#                      test_flash_attn.py's decorator order, bottom first:
#                      test_flash_attn_causal[113-203-True-96-True-dtype0]
#                      is seqlen_q-seqlen_k-swap_sq_sk-d-local-dtype);
#   ATTN_FA_TIMEOUT=S  stop pytest after S seconds (default 450; the counts
#                      so far stay in counts.json).
# Kernels are cached in $ATTN_CACHE_DIR (default /tmp/attn-fa-cache), so a
# second run on the same host compiles nothing.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
OUT="${OUT:-$PWD/flash-attn-out}"
mkdir -p "$OUT"
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
cd "$HERE"
PYTHONPATH="$SITE" timeout "${ATTN_FA_TIMEOUT:-450}" python3 -m pytest -q \
  -p no:cacheprovider -rfs --attn-sample "${ATTN_FA_SAMPLE:-12}" \
  --attn-seed "${ATTN_FA_SEED:-0}" --attn-counts "$OUT/counts.json" \
  --junitxml "$OUT/junit.xml" "${K[@]}" test_flash_attn.py \
  >"$OUT/pytest.log" 2>&1
rc=$?
tail -n 40 "$OUT/pytest.log"
[ "$rc" = 124 ] && echo "run.sh: pytest stopped after ${ATTN_FA_TIMEOUT:-450} s"
python3 -c 'import json,sys; print("counts:", json.dumps(json.load(open(sys.argv[1]))["totals"]))' \
  "$OUT/counts.json" 2>/dev/null || echo "run.sh: no counts (no test ran)"
exit "$rc"
