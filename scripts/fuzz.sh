#!/usr/bin/env bash
# Builds one libFuzzer target in build-fuzz (clang-22, ASan + UBSan +
# coverage on attn's code) and runs it for SECONDS, seeded from the test
# corpus. Findings land in build-fuzz/fuzz/TARGET/crashes/; each one
# becomes a regression test under test/Fuzz (see docs/reliability.md).
#
#   bash scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags]
#   TARGET: mlir (MLIR text -> parse -> verify -> attn-to-cpu, attn-to-ptx)
#           flags (the tools' shape flags), manifest (runtime JSON/manifest)
#           launch-flags, tune-flags (attn-launch's and attn-tune's own
#           command-line parsers)
#   bash scripts/fuzz.sh TARGET repro FILE...   # re-run saved inputs
#
# Not part of CI. Installs clang-22 and libclang-rt-22-dev when missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
LLVM_PREFIX=/usr/lib/llvm-22
TARGET="${1:?usage: fuzz.sh mlir|flags|manifest|launch-flags|tune-flags SECONDS|repro FILE...}"
SECONDS_TO_RUN="${2:?usage: fuzz.sh TARGET SECONDS}"
shift 2

case "$TARGET" in
  mlir | flags | manifest | launch-flags | tune-flags) ;;
  *) echo "fuzz.sh: unknown target '$TARGET' (mlir, flags, manifest," \
       "launch-flags or tune-flags)" >&2
     exit 2 ;;
esac

missing=()
for p in clang-22 libclang-rt-22-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# (LLVM_UBSAN_FLAGS: out of tree, LLVM_USE_SANITIZER=Undefined adds nothing
# without it; a build configured without it is configured again.)
if ! grep -q 'ATTN_ENABLE_FUZZERS:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null ||
   ! grep -q '^LLVM_UBSAN_FLAGS.*fsanitize=undefined' "$BUILD/CMakeCache.txt"; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_DIR="$LLVM_PREFIX/lib/cmake/llvm" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    -DATTN_ENABLE_FUZZERS=ON \
    -DLLVM_USE_SANITIZER='Address;Undefined' \
    -DLLVM_UBSAN_FLAGS='-fsanitize=undefined -fno-sanitize=vptr,function -fno-sanitize-recover=all' \
    -DLLVM_USE_SANITIZE_COVERAGE=ON \
    -DCMAKE_CXX_FLAGS_RELEASE='-O1 -g -DNDEBUG' \
    -DCMAKE_C_FLAGS_RELEASE='-O1 -g -DNDEBUG'
fi
nice -n 10 ninja -C "$BUILD" -j"${JOBS:-1}" "attn-fuzz-$TARGET"
FUZZER="$BUILD/bin/attn-fuzz-$TARGET"

# allow_user_poisoning=0: see scripts/sanitize.sh (slabs shared between
# instrumented attn code and the uninstrumented libMLIR.so).
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:allow_user_poisoning=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

if [ "$SECONDS_TO_RUN" = repro ]; then
  exec "$FUZZER" "$@"
fi

# Seeds: the test corpus (each `// -----` case of a .mlir file on its own),
# manifests and tuning files, and shape-flag lines.
WORK="$BUILD/fuzz/$TARGET"
SEEDS="$WORK/seeds"
mkdir -p "$WORK/corpus" "$WORK/crashes" "$SEEDS"
case "$TARGET" in
  mlir)
    find "$ROOT/test" "$ROOT/examples" -name '*.mlir' -print0 |
      python3 -c '
import sys, os, hashlib
out = sys.argv[1]
for path in sys.stdin.read().split("\0"):
    if not path:
        continue
    text = open(path, errors="replace").read()
    for case in text.split("// -----"):
        data = case.encode()
        if 0 < len(data) <= 16384:
            name = hashlib.sha1(data).hexdigest()
            open(os.path.join(out, name), "wb").write(data)
' "$SEEDS" ;;
  manifest)
    i=0
    for f in $(find "$ROOT/test" "$ROOT/docs" -name '*.json'); do
      cp "$f" "$SEEDS/seed-$i.json"; i=$((i + 1))
    done ;;
  flags)
    printf '%s\n' \
      '--batch=2 --heads-q=8 --heads-kv=2 --seq-q=1000 --seq-kv=17 --head-dim=128 --dtype=bf16 --causal' \
      '--seq-q 1 --seq-kv 1 --head-dim 64 --value-head-dim 32 --no-lse' \
      '--dtype=f16 --scale=0.125 --batch 9223372036854775807' \
      '--heads-q=3 --heads-kv=2 --scale=-1' > "$SEEDS/flags.txt"
    split -l 1 "$SEEDS/flags.txt" "$SEEDS/line-"
    rm "$SEEDS/flags.txt" ;;
  launch-flags)
    printf '%s\n' \
      'kernels/d128 --batch 2 --heads-q=8 --heads-kv 2 --seq-q=1000 --seq-kv 17 --check --check-rows 64' \
      'dir --time --warmup=0 --reps 3 --ptx --device 0 --seed=42 --input-range 1e4' \
      'dir --repeats 10 --check --seq-q 9223372036854775807 --seq-kv 1' \
      'dir --special q:0=nan --special=k:*=-inf --special v:7=1e36 --batch 0' \
      'dir --special x:1=2 --special q:=1 --special q:99999999999999999999=1' \
      'a b --help --check=1 --reps' > "$SEEDS/flags.txt"
    split -l 1 "$SEEDS/flags.txt" "$SEEDS/line-"
    rm "$SEEDS/flags.txt" ;;
  tune-flags)
    printf '%s\n' \
      '--db tuning.json --warmup 2 --reps 5 --check-rows 64 --seed 1 bundles' \
      '--db a.json --table t.md --results r.jsonl b1 b2' \
      '--db a.json --show' '--db a.json --merge b.json c.json' \
      '--version' '--reps -1 --bogus' > "$SEEDS/flags.txt"
    split -l 1 "$SEEDS/flags.txt" "$SEEDS/line-"
    rm "$SEEDS/flags.txt" ;;
esac
# The tools' parsers print a usage error for most inputs (and --help the
# usage): close the target's stdout and stderr; libFuzzer keeps its own
# copy of stderr for its messages and the sanitizers' reports.
case "$TARGET" in
  launch-flags | tune-flags) set -- -close_fd_mask=3 "$@" ;;
esac

cd "$WORK"
echo "== fuzzing attn-fuzz-$TARGET for ${SECONDS_TO_RUN}s (corpus $WORK/corpus)"
rc=0
nice -n 19 "$FUZZER" -max_total_time="$SECONDS_TO_RUN" -timeout=60 \
  -rss_limit_mb=4096 -artifact_prefix="$WORK/crashes/" -print_final_stats=1 \
  "$@" "$WORK/corpus" "$SEEDS" || rc=$?
# slow-unit-* files are only the slowest inputs seen, not findings.
findings="$(find "$WORK/crashes" -type f \( -name 'crash-*' -o -name 'timeout-*' \
  -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)"
echo "== attn-fuzz-$TARGET: exit $rc; findings: $findings in $WORK/crashes"
exit "$rc"
