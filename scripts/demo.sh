#!/usr/bin/env bash
# The main job on the built-in example, from a fresh machine: sets
# everything up (scripts/setup.sh), then shows the example attention, lowers
# it with attn-opt through the tiled FlashAttention pipeline, executes the
# same attention on the CPU with attn-run against a float64 reference, and
# compiles it to a GPU kernel (PTX, cubin and launch manifest) with
# attn-compile.
#
# Each step is one `section`; later stages (PTX, cubin, ...) go in new
# sections at the end, writing their files next to the others in $OUT.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
EXAMPLE="$ROOT/examples/attention.mlir"
OUT="$BUILD/demo"

# The shape of the attention in $EXAMPLE, as attn-run flags: one batch,
# 8 query heads over 2 key/value heads, 200 x 200, head dim 64, bf16, causal.
SHAPE_FLAGS=(--batch 1 --heads-q 8 --heads-kv 2 --seq-q 200 --seq-kv 200
             --head-dim 64 --dtype bf16 --causal)

section() { printf '\n==== %s\n\n' "$*"; }

bash "$ROOT/scripts/setup.sh"
BIN="$BUILD/bin"
mkdir -p "$OUT"

section "Input: ${EXAMPLE#"$ROOT"/}"
cat "$EXAMPLE"

section "attn-opt: parse and verify"
"$BIN/attn-opt" "$EXAMPLE"

PIPELINE=(--attn-tile --attn-fuse-online-softmax --canonicalize --cse)
TILED="$OUT/attention.tiled.mlir"
section "attn-opt ${PIPELINE[*]}"
"$BIN/attn-opt" "$EXAMPLE" "${PIPELINE[@]}" -o "$TILED"
lines="$(wc -l <"$TILED")"
head -n 60 "$TILED"
echo "    ... ($((lines - 66)) lines of the online-softmax body elided) ..."
tail -n 6 "$TILED"
echo
echo "(all $lines lines in ${TILED#"$ROOT"/})"

section "attn-run --target cpu ${SHAPE_FLAGS[*]}"
# Builds the same attention, runs the tiled pipeline on the CPU on random
# inputs and compares with float64; exits 1 when over the bf16 tolerance.
"$BIN/attn-run" --target cpu "${SHAPE_FLAGS[@]}" | tee "$OUT/attn-run.json"

KERNEL="$OUT/kernel"
section "attn-compile ${EXAMPLE#"$ROOT"/} --chip sm_90a -o ${KERNEL#"$ROOT"/}"
# The GPU path: convert-attn-to-gpu generates the tensor-core FlashAttention
# kernel, LLVM's NVPTX back end emits PTX, ptxas assembles the cubin and
# reports registers and spills into the launch manifest.
"$BIN/attn-compile" "$EXAMPLE" --chip sm_90a --explain -o "$KERNEL"
echo
echo "-- manifest.json (parameter list elided; see docs/kernel-abi.md)"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); m["params"]="[%d parameters]" % len(m["params"]); print(json.dumps(m, indent=2))' "$KERNEL/manifest.json"
echo
# The instructions that do the work, for the family attn-compile chose
# (the manifest says which): Hopper's TMA/mbarrier/wgmma kernels or the
# sm80 cp.async/ldmatrix/mma.sync ones.
family="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("family", "sm80-mma"))' "$KERNEL/manifest.json")"
case "$family" in
  sm90a*) INSNS=(cp.async.bulk.tensor mbarrier.try_wait wgmma.mma_async
                 wgmma.commit_group setmaxnreg shfl.sync.bfly ex2.approx) ;;
  *) INSNS=(cp.async.cg.shared.global ldmatrix.sync.aligned.m8n8.x4.shared
            ldmatrix.sync.aligned.m8n8.x4.trans mma.sync.aligned.m16n8k16
            shfl.sync.bfly ex2.approx.ftz.f32) ;;
esac
echo "-- kernel.ptx ($family): $(wc -l <"$KERNEL/kernel.ptx") lines; the instructions that do the work:"
for insn in "${INSNS[@]}"; do
  printf '   %6d x %s\n' "$(grep -c "$insn" "$KERNEL/kernel.ptx" || true)" "$insn"
done
echo "(PTX, cubin and manifest in ${KERNEL#"$ROOT"/}; run them on a GPU host with"
echo " attn-launch, see docs/runtime.md)"
