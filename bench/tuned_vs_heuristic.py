"""The tuned kernels against the heuristic's, from one interleaved run.

Usage:

    python3 bench/tuned_vs_heuristic.py SCHEDULES.csv [TUNED_SET HEURISTIC_SET]

SCHEDULES.csv is what bench/bench_sm90_schedules.py wrote for a --sets
root holding two sets (default names `tuned` and `heuristic`): the tuner's
winners (bench/tuned_kernels.py's d<D>[_causal]_n<N> folders, each timed at
its N only) and the kernels attn-compile picks without a database, timed
in turn on the same inputs, median over rounds. An independent check of
the tuner's own measurement: prints per point (D, mask, N) the speed-up
heuristic ms / tuned ms, then the points >= 1.10x and the worst ratio.
Exits 1 when a point lacks either set or an output was off (rel_err
against cuDNN >= 2e-2).
"""

import csv
import sys


def main(argv):
    if len(argv) not in (1, 3):
        print(__doc__)
        return 2
    tuned_set, heur_set = argv[1:] if len(argv) == 3 else ("tuned", "heuristic")
    times, bad = {}, False
    for r in csv.DictReader(open(argv[0])):
        key = (int(r["D"]), r["causal"] == "True", int(r["N"]))
        times.setdefault(key, {})[r["set"]] = float(r["ms"])
        if not float(r["rel_err_vs_cudnn"]) < 2e-2:
            bad = True
            print(f"output off: {r['set']} at {key}")
    print("| D | mask | N | heuristic ms | tuned ms | speed-up |")
    print("|---|---|---|---|---|---|")
    speedups = []
    for key in sorted(times):
        t = times[key]
        d, causal, n = key
        if tuned_set not in t or heur_set not in t:
            bad = True
            print(f"| {d} | {'causal' if causal else 'none'} | {n} | "
                  "missing | | |")
            continue
        s = t[heur_set] / t[tuned_set]
        speedups.append(s)
        mark = "**" if s >= 1.10 else ""
        print(f"| {d} | {'causal' if causal else 'none'} | {n} | "
              f"{t[heur_set]:.4f} | {t[tuned_set]:.4f} | {mark}{s:.3f}x{mark} |")
    if speedups:
        print(f"{sum(s >= 1.10 for s in speedups)} of {len(speedups)} points "
              f">= 1.10x; worst {min(speedups):.3f}x, best {max(speedups):.3f}x")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
