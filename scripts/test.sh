#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh), then runs every test suite and
# exits non-zero if any of them fails. This is what CI runs (.ci/run).
#
# Each suite is a function named suite_<name> that returns non-zero on
# failure; add a new suite (Python tests, GPU-host tests, ...) by writing
# its function and listing it in SUITES.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
VENV="${ATTN_VENV:-$ROOT/.venv}"  # as scripts/setup.sh

bash "$ROOT/scripts/setup.sh"

# Counts over all suites, for the closing "N passed, N failed" line.
TOTAL_PASSED=0
TOTAL_FAILED=0
TOTAL_SKIPPED=0

# Adds lit's summary counts from the log in $1 to the totals.
count_lit_results() {
  local log="$1" n
  lit_count() {
    sed -n "s/^ *$1 *: *\([0-9][0-9]*\).*/\1/p" "$log" | tail -n 1
  }
  n="$(lit_count 'Passed')"; TOTAL_PASSED=$((TOTAL_PASSED + ${n:-0}))
  n="$(lit_count 'Expectedly Failed')"; TOTAL_PASSED=$((TOTAL_PASSED + ${n:-0}))
  for what in 'Failed' 'Unresolved' 'Timed Out' 'Unexpectedly Passed'; do
    n="$(lit_count "$what")"; TOTAL_FAILED=$((TOTAL_FAILED + ${n:-0}))
  done
  for what in 'Unsupported' 'Skipped'; do
    n="$(lit_count "$what")"; TOTAL_SKIPPED=$((TOTAL_SKIPPED + ${n:-0}))
  done
}

# lit + FileCheck: dialect, passes, tools and executed numerics (test/).
# ninja first builds whatever check-attn depends on.
suite_lit() {
  local log rc=0
  log="$(mktemp)"
  ninja -C "$BUILD" check-attn 2>&1 | tee "$log" || rc=$?
  count_lit_results "$log"
  rm -f "$log"
  return "$rc"
}

# The downstream example (test/Downstream) against the *installed* package:
# install into a temporary prefix, configure the example there with
# find_package(AttnCompiler), build it and run its checks (ctest): a
# compiler that embeds attn's pipeline and a C program on the C API.
suite_downstream() {
  local prefix dbuild log rc=0 n
  prefix="$(mktemp -d)"
  dbuild="$BUILD/downstream"
  log="$(mktemp)"
  # (The whole build first: `cmake --install` installs every target.)
  {
    cmake --build "$BUILD" &&
      cmake --install "$BUILD" --prefix "$prefix" >/dev/null &&
      rm -rf "$dbuild" &&
      cmake -G Ninja -S "$ROOT/test/Downstream" -B "$dbuild" \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
        -DCMAKE_PREFIX_PATH="$prefix" &&
      cmake --build "$dbuild" &&
      ctest --test-dir "$dbuild" --output-on-failure 2>&1 | tee "$log"
  } || rc=$?
  # ctest: "N% tests passed, F tests failed out of T".
  n="$(sed -n 's/.* tests passed, \([0-9][0-9]*\) tests failed out of \([0-9][0-9]*\).*/\2 \1/p' "$log")"
  if [ -n "$n" ]; then
    set -- $n
    TOTAL_PASSED=$((TOTAL_PASSED + $1 - $2))
    TOTAL_FAILED=$((TOTAL_FAILED + $2))
  fi
  rm -rf "$prefix" "$log"
  return "$rc"
}

# Every diagnostic and user-facing error message in lib/ and tools/ is
# expected by some test (scripts/check-diagnostics.py; the few no input can
# reach are listed with reasons in scripts/diagnostics-allowlist.txt).
suite_diagnostics() {
  if python3 "$ROOT/scripts/check-diagnostics.py"; then
    TOTAL_PASSED=$((TOTAL_PASSED + 1))
  else
    TOTAL_FAILED=$((TOTAL_FAILED + 1))
    return 1
  fi
}

# The attn Python package (python/tests, pytest) with the venv's
# interpreter (scripts/setup.sh installs PyTorch and pytest there): the
# libraries and tools the package loads are built first (libattn-c.so for
# the compiler and the op's CPU path). Only tests that need a GPU skip, and
# each says so.
suite_python() {
  local log rc=0 n what targets
  log="$(mktemp)"
  targets=(AttnCAPI attn-compile attn-tune attn_tuning_lookup attn-fake-cuda)
  {
    ninja -C "$BUILD" "${targets[@]}" &&
      ATTN_BUILD_DIR="$BUILD" ATTN_REQUIRE_COMPILER=1 \
        "$VENV/bin/python" -m pytest -ra -q -p no:cacheprovider \
        "$ROOT/python/tests" 2>&1 | tee "$log"
  } || rc=$?
  # pytest's last line: "N passed, N skipped, N failed in 9.9s".
  for what in passed failed skipped error errors; do
    n="$(tail -n 1 "$log" | grep -Eo "[0-9]+ $what\b" | grep -Eo '^[0-9]+' || true)"
    case "$what" in
      passed) TOTAL_PASSED=$((TOTAL_PASSED + ${n:-0})) ;;
      skipped) TOTAL_SKIPPED=$((TOTAL_SKIPPED + ${n:-0})) ;;
      *) TOTAL_FAILED=$((TOTAL_FAILED + ${n:-0})) ;;
    esac
  done
  rm -f "$log"
  return "$rc"
}

SUITES=(lit downstream diagnostics python)

failed_suites=()
for suite in "${SUITES[@]}"; do
  echo "== test suite: $suite"
  if ! "suite_$suite"; then
    failed_suites+=("$suite")
  fi
done

echo
if [ "${#failed_suites[@]}" -gt 0 ]; then
  echo "== FAILED suites: ${failed_suites[*]}"
  # A suite that failed before running its tests (e.g. a build error) still
  # counts as a failure.
  [ "$TOTAL_FAILED" -eq 0 ] && TOTAL_FAILED="${#failed_suites[@]}"
fi
echo "tests: $TOTAL_PASSED passed, $TOTAL_FAILED failed, $TOTAL_SKIPPED skipped"
[ "${#failed_suites[@]}" -eq 0 ]
