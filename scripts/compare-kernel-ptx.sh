#!/usr/bin/env bash
# PTX identity of two compilers over the kernel variants: for a refactor of
# the kernel IR or its lowering that must not change what the GPU runs,
# byte-identical PTX is the proof (no device time needed). Compiles each
# variant below with both attn-compile binaries (--emit ptx) and reports
# the variants whose PTX differs.
#
#   scripts/compare-kernel-ptx.sh OLD_ATTN_COMPILE NEW_ATTN_COMPILE [DIR]
#
# Exit status 0 when every variant's PTX is identical, 1 otherwise. DIR
# (default /tmp/attn-ptx-compare) keeps old/ and new/ for diffing.
set -euo pipefail
OLD="$1"
NEW="$2"
DIR="${3:-/tmp/attn-ptx-compare}"
rm -rf "$DIR"
mkdir -p "$DIR/old" "$DIR/new"

# name|flags (bf16, sm_90a unless the flags say otherwise)
VARIANTS=(
  "fwd90_d64|--family sm90a --head-dim 64"
  "fwd90_d128|--family sm90a --head-dim 128"
  "fwd90_d128_causal|--family sm90a --head-dim 128 --causal"
  "fwd90_d256_causal|--family sm90a --head-dim 256 --causal"
  "fwd90_d128_f16|--family sm90a --head-dim 128 --dtype f16"
  "fwd90_d128_window|--family sm90a --head-dim 128 --window-left 256 --window-right 16"
  "fwd90_d128_topleft|--family sm90a --head-dim 128 --causal --top-left --seq-kv 3000"
  "fwd90_d128_softcap|--family sm90a --head-dim 128 --softcap 30 --causal"
  "fwd90_d128_alibi|--family sm90a --head-dim 128 --alibi --causal"
  "fwd90_d128_nolse|--family sm90a --head-dim 128 --no-lse"
  "fwd90_d128_keyrange|--family sm90a --head-dim 128 --key-ends 3000,4096,100,7"
  "fwd90_d128_serial|--family sm90a --head-dim 128 --sm90-schedule serial"
  "fwd90_d128_overlap|--family sm90a --head-dim 128 --sm90-schedule overlap"
  "fwd90_d128_persistent|--family sm90a --head-dim 128 --causal --sm90-schedule pingpong+persistent"
  "fwd90_d128_exp2|--family sm90a --head-dim 128 --exp2-emulated 3"
  "fwd90_d128_dv64|--family sm90a --head-dim 128 --value-head-dim 64"
  "fwd80_d64|--family sm80 --head-dim 64"
  "fwd80_d128_causal|--family sm80 --head-dim 128 --causal"
  "fwd80_d96_window|--family sm80 --head-dim 96 --window-left 100"
  "fwd80_d128_softcap|--family sm80 --head-dim 128 --softcap 30"
  "fwd80_d128_alibi|--family sm80 --head-dim 128 --alibi"
  "fwd80_d128_keyrange|--family sm80 --head-dim 128 --key-ends 3000,4096,100,7"
  "fwd80_d256|--family sm80 --head-dim 256"
  "fwd80_d128_f16|--family sm80 --head-dim 128 --dtype f16 --top-left --causal"
  "bwd90_d128|--backward --family sm90a --head-dim 128"
  "bwd90_d64_causal|--backward --family sm90a --head-dim 64 --causal"
  "bwd90_d128_window|--backward --family sm90a --head-dim 128 --window-left 256"
  "bwd90_d128_det|--backward --family sm90a --head-dim 128 --causal --deterministic"
  "bwd90_d128_keyrange|--backward --family sm90a --head-dim 128 --key-ends 3000,4096,100,7"
  "bwd90_d256|--backward --family sm90a --head-dim 256"
  "bwd90_d256_causal_alibi|--backward --family sm90a --head-dim 256 --causal --alibi --softcap 30"
  "bwd90_d64_det|--backward --family sm90a --head-dim 64 --deterministic"
  "bwd90_d128_m80|--backward --family sm90a --head-dim 128 --block-m 80"
  "bwd90_d128_m80_window_keyrange|--backward --family sm90a --head-dim 128 --block-m 80 --window-left 100 --window-right 8 --key-starts 0,3,5,2 --key-ends 3000,4096,100,7"
  "bwd90_d256_tdkv|--backward --family sm90a --head-dim 256 --sm90-schedule transposed-dkv"
  "bwd90_d256_tdkv_causal_det|--backward --family sm90a --head-dim 256 --causal --block-n 80 --deterministic"
  "bwd90_d256_tdkv_window_softcap_alibi|--backward --family sm90a --head-dim 256 --window-left 100 --window-right 8 --softcap 30 --alibi --sm90-schedule transposed-dkv"
  "bwd90_d192_tdkv_topleft_keyrange|--backward --family sm90a --head-dim 192 --causal --top-left --key-starts 0,3,5,2 --key-ends 3000,4096,100,7 --sm90-schedule transposed-dkv"
  "bwd80_d128|--backward --family sm80 --head-dim 128"
  "bwd80_d64_causal|--backward --family sm80 --head-dim 64 --causal"
  "bwd80_d128_softcap|--backward --family sm80 --head-dim 128 --softcap 30"
  "bwd80_d256|--backward --family sm80 --head-dim 256"
  "bwd80_d128_det|--backward --family sm80 --head-dim 128 --deterministic"
  "bwd80_d96_window|--backward --family sm80 --head-dim 96 --window-left 100 --top-left"
)

differ=0
for entry in "${VARIANTS[@]}"; do
  name="${entry%%|*}"
  read -r -a flags <<<"${entry#*|}"
  for set in old new; do
    compile="$OLD"
    [ "$set" = new ] && compile="$NEW"
    "$compile" --chip sm_90a --dtype bf16 --heads-q 16 --heads-kv 8 \
      --batch 4 --seq-q 4096 --no-cubin "${flags[@]}" --emit ptx \
      -o "$DIR/$set/$name.ptx" 2>"$DIR/$set/$name.err" ||
      echo "$set $name: attn-compile failed ($(head -1 "$DIR/$set/$name.err"))"
  done
  if cmp -s "$DIR/old/$name.ptx" "$DIR/new/$name.ptx"; then
    echo "same    $name"
  else
    echo "DIFFERS $name"
    differ=1
  fi
done
exit "$differ"
