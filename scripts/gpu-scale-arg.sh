#!/usr/bin/env bash
# GPU-host half of the run-time softmax scale check (issue 25: the scale as
# a kernel argument costs nothing). The kernels come from
# scripts/compile-nvvm-comparison.sh OLD NEW gpu-kernels-scale, "old" with
# the last commit whose kernels compiled the scale in, "new" with this
# tree's; old kernels take the old parameter list, so each set runs on its
# own runtime: this tree's (build-gpu) and the old commit's, built from the
# source archive in gpu-old-src/ (git archive of that commit).
#
#   PART=check|time|all scripts/gpu-scale-arg.sh [KERNELS]
#                                          (default all, gpu-kernels-scale)
#
# 1. float64 checks of every new kernel at the default scale and at 0.3 and
#    1.7 with --input-range 3 (large logits), sizes off the tiles, Nq != Nk;
# 2. compute-sanitizer memcheck on one new kernel per family and direction;
# 3. forward: old and new timed interleaved (attn-launch --time, ROUNDS
#    rounds of REPS launches each, median of the rounds' medians) at the
#    compiled shape (batch 4, heads 2048/D, N = 4096);
#    backward: bench/bench_backward.py of each tree on its own kernels
#    (attn-launch's backward mode computes O and LSE in float64 on the
#    host, too slow at N = 4096), SDPA's flash and cuDNN backends timed in
#    each process as the common anchor, at BWD_SEQS (default 4096);
# 4. a table last: per forward kernel old ms, new ms, new/old; geometric
#    means; the two backward tables.
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
    cmake --build "$2" -j "$(nproc)" --target attn-launch attn_runtime; } \
    >"$LOGS/build-$(basename "$2").log" 2>&1 ||
    { echo "!! build of $1 failed"; tail -20 "$LOGS/build-$(basename "$2").log"; exit 2; }
}
PART="${PART:-all}"
mkdir -p build-gpu-old-src
tar -xzf gpu-old-src/source.tar.gz -C build-gpu-old-src
build . build-gpu
build build-gpu-old-src build-gpu-old
NEW_LAUNCH="$ROOT/build-gpu/bin/attn-launch"
OLD_LAUNCH="$ROOT/build-gpu-old/bin/attn-launch"

mapfile -t NEW_DIRS < <(find "$KERNELS" -name manifest.json -printf '%h\n' |
                        grep -E '/new/|/new_' | sort)
echo "== checks: ${#NEW_DIRS[@]} new kernels"
: >"$LOGS/checks.jsonl"
: >"$LOGS/times.jsonl"
[ "$PART" = time ] && NEW_CHECKS=() || NEW_CHECKS=("${NEW_DIRS[@]}")
for dir in "${NEW_CHECKS[@]}"; do
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
[ "$PART" = time ] || for dir in "$KERNELS/fwd/new/d128_causal" "$KERNELS/fwd80/new/d128_causal" \
           "$KERNELS/bwd/new_sm90a_d128c" "$KERNELS/bwd/new_sm80_d128c"; do
  [ -d "$dir" ] || continue
  echo "-- $dir"
  timeout 300 compute-sanitizer --tool memcheck "$NEW_LAUNCH" "$dir" --check \
    --batch 1 --heads-q 2 --heads-kv 1 --seq-q 200 --seq-kv 333 --scale 0.3 \
    2>&1 | tail -2
done 2>&1 | tee "$LOGS/memcheck.txt"

echo "== timing: $ROUNDS rounds of $REPS launches, old and new interleaved"
[ "$PART" = check ] && TIMED=() ||
  mapfile -t TIMED < <(printf '%s\n' "${NEW_DIRS[@]}" | grep -v '/bwd/')
for newdir in "${TIMED[@]}"; do
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

if [ "$PART" != check ]; then
  for set in old new; do
    rm -rf "$LOGS/bwd-$set" && mkdir -p "$LOGS/bwd-$set"
    cp -r "$KERNELS"/bwd/"${set}"_* "$LOGS/bwd-$set/"
  done
  echo "== backward, old tree"
  (cd build-gpu-old-src && ATTN_RUNTIME_LIB="$ROOT/build-gpu-old/lib/libattn_runtime.so" \
     timeout 240 python3 bench/bench_backward.py --kernels "$LOGS/bwd-old" \
     --seqs "${BWD_SEQS:-4096}" --reps 30 --out "$LOGS/bwd-old") \
     >"$LOGS/bwd-old.txt" 2>&1
  echo "== backward, this tree"
  ATTN_RUNTIME_LIB="$ROOT/build-gpu/lib/libattn_runtime.so" \
     timeout 240 python3 bench/bench_backward.py --kernels "$LOGS/bwd-new" \
     --seqs "${BWD_SEQS:-4096}" --reps 30 --out "$LOGS/bwd-new" \
     >"$LOGS/bwd-new.txt" 2>&1
fi

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
import os
for set in ("old", "new"):
    md = f"{logs}/bwd-{set}/bench_backward.md"
    if os.path.exists(md):
        print(f"-- backward, {set}:")
        print(open(md).read())
    elif os.path.exists(f"{logs}/bwd-{set}.txt"):
        print(f"-- backward, {set}: no table; log tail:")
        print("".join(open(f"{logs}/bwd-{set}.txt").readlines()[-8:]))
EOF
tar -czf "$FINAL/scale-$PART-logs.tar.gz" -C "$LOGS" .
