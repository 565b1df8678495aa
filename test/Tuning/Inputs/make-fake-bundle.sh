# Builds a tuning bundle from the runtime's hand-written test kernels, for
# attn-tune through the fake driver: two correct candidates (one marked as
# the heuristic's choice) and one that writes zeros.
# usage: sh make-fake-bundle.sh <inputs-dir> <runtime-inputs-dir> <out-dir>
set -e
in=$1; rt=$2; out=$3
rm -rf "$out"
mkdir -p "$out"
cp "$in/fake-bundle.json" "$out/bundle.json"
cp -r "$rt/good/naive-f32-d64" "$out/good-a"
cp -r "$rt/good/naive-f32-d64" "$out/good-b"
cp -r "$rt/bad/zero-output-f32" "$out/wrong"
sed -e 's/"seq_q": 256/"seq_q": 1000/' -e 's/"seq_kv": 256/"seq_kv": 777/' \
  "$rt/bad/zero-output-f32/manifest.json" > "$out/wrong/manifest.json"
