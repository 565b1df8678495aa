#!/usr/bin/env bash
# The release check on a GPU host, with only the wheel as a user gets it (no
# MLIR, no build, no kernel pack; carry dist/). scripts/gpu-wheel.sh checks
# the wheel's parts; this one measures first use and the README's figures.
#
#   bash scripts/gpu-release-check.sh [STEPS]     STEPS: any of "first-use figures"
#                                          (default both)
#
# 1. installs the wheel alone (pip --no-deps --target) into $SITE;
# 2. first-use: bench/first_use.py (compile on first use into an empty cache:
#    plain, window 4096, softcap 50, padded head dims, a backward; times and
#    float64 checks);
# 3. figures: the shipped default kernels (bf16, D 64/128/256, causal or not,
#    compiled by the wheel's own compiler with no tuning database, i.e. what
#    attn.torch.attention uses out of the box) on the 36-point grid, timed by
#    bench/bench.py against SDPA flash, cuDNN and FlexAttention in one process
#    (one bench.py run per head dim, so a cut-off call keeps what ran).
# Writes logs and CSVs under $OUT.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${OUT:-$ROOT/gpu-out}"
SITE="${SITE:-/tmp/attn-site}"
STEPS="${1:-first-use figures}"
mkdir -p "$OUT"
echo "== $(nvidia-smi -L | head -1); $(python3 -c 'import torch; print("torch", torch.__version__)')"
wheel="${WHEEL:-$(ls dist/attn-*.whl | head -1)}"
echo "== installing $wheel ($(du -h "$wheel" | cut -f1)) into $SITE"
python3 -m pip install -q --no-deps --no-index --target "$SITE" "$wheel" || exit 2
export PYTHONPATH="$SITE" PYTHONUNBUFFERED=1
export ATTN_RUNTIME_LIB="$SITE/attn/_lib/libattn_runtime.so"

if [[ " $STEPS " == *" first-use "* ]]; then
  echo "== first use"
  python3 bench/first_use.py --out "$OUT" 2>&1 | tail -n 30
fi

if [[ " $STEPS " == *" figures "* ]]; then
  K=/tmp/attn-default-kernels
  rm -rf "$K"
  echo "== compiling the default kernels with the wheel's compiler"
  python3 - "$K" <<'PY'
import sys, time
import attn
root = sys.argv[1]
for d in (64, 128, 256):
    for causal in (False, True):
        t = time.perf_counter()
        k = attn.compile(batch=4, heads_q=2048 // d, heads_kv=2048 // d,
                         seq_q=4096, seq_kv=4096, head_dim=d, dtype="bf16",
                         causal=causal, chip="sm_90a")
        path = f"{root}/d{d}/{'causal' if causal else 'full'}"
        k.write(path)
        print(f"{path}: {k.manifest['entry']} in {time.perf_counter() - t:.2f} s",
              flush=True)
PY
  for d in 64 128 256; do
    echo "== bench.py D=$d"
    python3 bench/bench.py --kernels "$K/d$d" --flex \
      --seqs 512,1024,2048,4096,8192,16384 --out "$OUT/bench-d$d" \
      >"$OUT/bench-d$d.log" 2>&1 || echo "!! bench.py D=$d failed"
    tail -n 14 "$OUT/bench-d$d.log"
  done
  # One CSV of the grid (the device tool brings back few files).
  python3 - "$OUT" <<'PY'
import csv, glob, os, shutil, sys
out = sys.argv[1]
rows = [r for f in sorted(glob.glob(f"{out}/bench-d*/bench.csv"))
        for r in csv.DictReader(open(f))]
if rows:
    with open(f"{out}/figures.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
for d in glob.glob(f"{out}/bench-d*/"):
    shutil.rmtree(d)
print(f"{len(rows)} points in {out}/figures.csv")
PY
fi
