"""Issue 24's speed bar from one run's forward and backward CSVs.

    python3 bench/bar_report.py FWD_CSV BWD_CSV

FWD_CSV is bench/bench.py's bench.csv, BWD_CSV bench/bench_backward.py's
bench_backward.csv, both from the same run (scripts/gpu-bar.sh). Joins
them on (D, causal, N) and prints a Markdown table of attn against SDPA's
cuDNN backend: forward, backward, and forward + backward, the last as the
ratio of the two pairs' total times (FLOP convention of DESIGN.md: the
backward is 2.5x the forward's FLOPs, so with TFLOP/s f and b the pair
takes 1/f + 2.5/b per forward FLOP). Then the bars: the forward + backward
geometric mean over every point and per head dim, the backward at D = 128
and N >= 4096, and its minimum at D = 64 and D = 256 for N >= 2048.
"""

import csv
import math
import sys


def rows(path, n_key):
    out = {}
    for r in csv.DictReader(open(path)):
        key = (int(r["D"]), r["causal"] == "True", int(r[n_key]))
        out[key] = r
    return out


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(fwd_csv, bwd_csv):
    fwd, bwd = rows(fwd_csv, "Nq"), rows(bwd_csv, "N")
    print("| D | causal | N | fwd TFLOP/s attn / cuDNN | fwd ratio | "
          "bwd TFLOP/s attn / cuDNN | bwd ratio | bwd vs flash | "
          "fwd+bwd ratio | checks |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    pair = {}
    for key in sorted(set(fwd) & set(bwd)):
        f, b = fwd[key], bwd[key]
        fa, fc = float(f["attn_tflops"]), float(f["sdpa-cudnn_tflops"])
        ba, bc = float(b["attn_tflops"]), float(b["sdpa-cudnn_tflops"])
        bf = float(b["sdpa-flash_tflops"])
        both = (1 / fc + 2.5 / bc) / (1 / fa + 2.5 / ba)
        pair[key] = (fa / fc, ba / bc, both)
        ok = f["ok"] == "True" and b["ok"] == "True"
        d, causal, n = key
        print(f"| {d} | {'yes' if causal else 'no'} | {n} | {fa:.0f} / {fc:.0f} "
              f"| {fa / fc:.2f} | {ba:.0f} / {bc:.0f} | {ba / bc:.2f} | "
              f"{ba / bf:.2f} | {both:.2f} | {'ok' if ok else 'FAIL'} |")
    print()
    print(f"fwd+bwd geomean vs cuDNN over the {len(pair)} points: "
          f"{geomean([v[2] for v in pair.values()]):.3f}")
    for d in sorted({k[0] for k in pair}):
        mine = {k: v for k, v in pair.items() if k[0] == d}
        long = [v[1] for k, v in mine.items() if k[2] >= 2048]
        print(f"D={d}: fwd+bwd geomean {geomean([v[2] for v in mine.values()]):.3f}; "
              f"bwd vs cuDNN at N>=2048: min {min(long) if long else float('nan'):.2f}, "
              f"geomean {geomean(long):.3f}")
    d128 = [f"{'c' if k[1] else 'nc'}{k[2]} {v[1]:.2f}" for k, v in sorted(pair.items())
            if k[0] == 128 and k[2] >= 4096]
    print("D=128 N>=4096 bwd vs cuDNN: " + ", ".join(d128))


if __name__ == "__main__":
    main(*sys.argv[1:3])
