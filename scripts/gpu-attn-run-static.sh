#!/usr/bin/env bash
# GPU-host check of attn-run-static (issue 23: attn-run --target cuda on a
# host without MLIR): the binary built here (`ninja attn-run-static`,
# stripped, xz-compressed into gpu-attn-run/attn-run-static.xz) compiles
# each kernel at run time (ptxas from the host's CUDA), launches it through
# the runtime and, with --host-lowering, through host code MLIR lowered and
# JIT-compiled (attn's mgpu* functions from the binary itself), and checks
# it against float64: sm_90a (the sm90a family) and sm_80 (the sm80 family,
# its PTX JIT-compiled for the H200), forward (also through the host
# lowering, also with key ranges) and backward.
#
#   scripts/gpu-attn-run-static.sh
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BIN="$(mktemp -d)/attn-run-static"
xz -dc gpu-attn-run/attn-run-static.xz >"$BIN" && chmod +x "$BIN"
ldd "$BIN" | grep -i -E "mlir|llvm" && echo "!! links a shared MLIR/LLVM"
run() {
  line="$(timeout 120 "$BIN" --target cuda "$@" 2>&1 | tail -1)"
  ok=$(echo "$line" | grep -o '"ok":[a-z]*')
  echo "${ok:-FAILED} $* :: $(echo "$line" | grep -o '"rel_err":[^,]*\|"dq_rel_err":[^,]*\|"time_ms":[^,]*\|error.*' | tr '\n' ' ')"
}
for chip in sm_90a sm_80; do  # auto family: sm90a on sm_90a, sm80 on sm_80
  for causal in "" --causal; do
    run --chip "$chip" --dtype bf16 --head-dim 128 --heads-q 8 --heads-kv 2 \
      --seq-q 300 --seq-kv 1000 $causal --reps 5
    run --chip "$chip" --dtype bf16 --head-dim 64 --heads-q 4 --batch 2 \
      --seq-q 777 --seq-kv 777 $causal --host-lowering --scale 0.3
    run --chip "$chip" --dtype bf16 --head-dim 128 --heads-q 4 --heads-kv 4 \
      --seq-q 200 --seq-kv 333 $causal --backward
    # key_range (an empty range, a single key), launched by the runtime and
    # by the lowered host code.
    for how in "" --host-lowering; do
      run --chip "$chip" --dtype bf16 --head-dim 64 --heads-q 4 --heads-kv 2 \
        --batch 4 --seq-q 300 --seq-kv 700 $causal $how \
        --key-starts 0,17,699,350 --key-ends 700,600,700,350
    done
  done
done
