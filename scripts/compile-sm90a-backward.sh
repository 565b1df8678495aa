# Sourced by the scripts that compile sm90a backward kernels for a GPU-host
# run (scripts/compile-bwd-*.sh), with DIR and COMPILE set:
#   one SUBDIR NAME FLAGS...
# compiles attn-compile --backward (sm_90a, bf16, family sm90a, no tuning
# database) FLAGS into DIR/SUBDIR/NAME with ${COMPILER:-$COMPILE} (COMPILER:
# an earlier attn-compile, for old-against-new runs) and prints the dkdv
# kernel's ptxas summary.
one() {
  local sub="$1" name="$2"; shift 2
  "${COMPILER:-$COMPILE}" --chip sm_90a --backward --dtype bf16 \
    --tuning-db none --family sm90a "$@" -o "$DIR/$sub/$name" |
    grep -o 'attn_bwd_sm90[^ ]*dkdv[^ ]* ([^)]*)'
}
