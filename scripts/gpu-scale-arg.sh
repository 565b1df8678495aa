#!/usr/bin/env bash
# GPU-host half of the run-time softmax scale check (issue 25: the scale as
# a kernel argument costs nothing). The kernels come from
# scripts/compile-nvvm-comparison.sh OLD NEW gpu-kernels-scale, "old" with
# the last commit whose kernels compiled the scale in, "new" with this
# tree's; old kernels take the old parameter list, so each set runs on its
# own runtime: this tree's (build-gpu) and the old commit's, built from the
# source archive in gpu-old-src/ (git archive of that commit).
#
#   scripts/gpu-scale-arg.sh [KERNELS]     (default gpu-kernels-scale)
#
# 1. float64 checks of every new kernel at the default scale and at 0.3 and
#    1.7 with --input-range 3 (large logits), sizes off the tiles, Nq != Nk;
# 2. compute-sanitizer memcheck on one new kernel per family and direction;
# 3. old and new timed interleaved (attn-launch --time, ROUNDS rounds of
#    REPS launches each, median of the rounds' medians) at the compiled
#    shape (batch 4, heads 2048/D, N = 4096);
# 4. a table last: per kernel old ms, new ms, new/old; geometric means.
# Logs: $OUT/scale-logs.tar.gz.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-gpu-kernels-scale}"
FINAL="${OUT:-$ROOT/gpu-out}"
ROUNDS="${ROUNDS:-5}"
REPS="${REPS:-30}"
LOGS="$(mktemp -d)"
mkdir -p "$FINAL"

build() { # build <source> <build dir>
  { cmake -G Ninja -S "$1" -B "$2" -DATTN_ENABLE_COMPILER=OFF \
      -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$2" -j "$(nproc)" --target attn-launch; } \
    >"$LOGS/build-$(basename "$2").log" 2>&1 ||
    { echo "!! build of $1 failed"; tail -20 "$LOGS/build-$(basename "$2").log"; exit 2; }
}
rm -rf /tmp/attn-old-src && mkdir -p /tmp/attn-old-src
tar -xzf gpu-old-src/source.tar.gz -C /tmp/attn-old-src
build . build-gpu
build /tmp/attn-old-src /tmp/attn-old-build
NEW_LAUNCH="$ROOT/build-gpu/bin/attn-launch"
OLD_LAUNCH=/tmp/attn-old-build/bin/attn-launch

mapfile -t NEW_DIRS < <(find "$KERNELS" -name manifest.json -printf '%h\n' |
                        grep -E '/new/|/new_' | sort)
echo "== checks: ${#NEW_DIRS[@]} new kernels"
: >"$LOGS/checks.jsonl"
for dir in "${NEW_DIRS[@]}"; do
  for scale in default 0.3 1.7; do
    flags=()
    [ "$scale" != default ] && flags+=(--scale "$scale" --input-range 3)
    for s in "1:1" "17:300" "200:333" "1000:1000" "333:200"; do
      nq=${s%%:*}; nk=${s##*:}
      line="$(timeout 60 "$NEW_LAUNCH" "$dir" --check --batch 2 --heads-q 4 \
                --heads-kv 2 --seq-q "$nq" --seq-kv "$nk" --seed 11 "${flags[@]}" \
                2>>"$LOGS/checks.err")"
      [ -z "$line" ] && line="{\"ok\":false,\"error\":\"exit $?\"}"
      echo "{\"kdir\":\"$dir\",\"scale\":\"$scale\",\"shape\":\"$s\",\"r\":$line}" \
        >>"$LOGS/checks.jsonl"
    done
  done
done

echo "== memcheck"
for dir in "$KERNELS/fwd/new/d128_causal" "$KERNELS/fwd80/new/d128_causal" \
           "$KERNELS/bwd/new_sm90a_d128c" "$KERNELS/bwd/new_sm80_d128c"; do
  [ -d "$dir" ] || continue
  echo "-- $dir"
  timeout 300 compute-sanitizer --tool memcheck "$NEW_LAUNCH" "$dir" --check \
    --batch 1 --heads-q 2 --heads-kv 1 --seq-q 200 --seq-kv 333 --scale 0.3 \
    2>&1 | tail -2
done 2>&1 | tee "$LOGS/memcheck.txt"

echo "== timing: $ROUNDS rounds of $REPS launches, old and new interleaved"
: >"$LOGS/times.jsonl"
for newdir in "${NEW_DIRS[@]}"; do
  olddir="${newdir/\/new\//\/old\/}"
  olddir="${olddir/\/new_//old_}"
  [ -d "$olddir" ] || { echo "!! no old kernel for $newdir"; continue; }
  for r in $(seq "$ROUNDS"); do
    for set in old new; do
      launch="$NEW_LAUNCH"; dir="$newdir"
      [ "$set" = old ] && { launch="$OLD_LAUNCH"; dir="$olddir"; }
      line="$(timeout 120 "$launch" "$dir" --time --warmup 5 --reps "$REPS" \
                2>>"$LOGS/times.err")"
      echo "{\"kernel\":\"${newdir#"$KERNELS"/}\",\"set\":\"$set\",\"round\":$r,\"r\":${line:-null}}" \
        >>"$LOGS/times.jsonl"
    done
  done
done

python3 - "$LOGS" <<'EOF' | tee "$LOGS/summary.txt"
import json, math, statistics, sys
logs = sys.argv[1]
checks = [json.loads(l) for l in open(f"{logs}/checks.jsonl")]
bad = [c for c in checks if not c["r"].get("ok")]
print(f"float64 checks: {len(checks) - len(bad)}/{len(checks)} passed")
for c in bad[:20]:
    print("  FAIL", c["kdir"], c["scale"], c["shape"], c["r"].get("error", ""))
times = {}
for l in open(f"{logs}/times.jsonl"):
    t = json.loads(l)
    r = t["r"] or {}
    ms = r.get("time_ms")
    if ms is not None:
        times.setdefault(t["kernel"], {}).setdefault(t["set"], []).append(ms)
groups = {}
print(f"{'kernel':34} {'old ms':>9} {'new ms':>9} {'new/old':>8}")
for k in sorted(times):
    o, n = times[k].get("old"), times[k].get("new")
    if not o or not n:
        print(f"{k:34} missing"); continue
    om, nm = statistics.median(o), statistics.median(n)
    ratio = nm / om
    groups.setdefault(k.split("/")[0] if "/" in k else k, []).append(ratio)
    print(f"{k:34} {om:9.4f} {nm:9.4f} {ratio:8.4f}")
for g, rs in groups.items():
    gm = math.exp(sum(map(math.log, rs)) / len(rs))
    print(f"{g}: {len(rs)} kernels, new/old time geomean {gm:.4f}, "
          f"worst {max(rs):.4f}, best {min(rs):.4f}")
EOF
tar -czf "$FINAL/scale-logs.tar.gz" -C "$LOGS" .
