"""Time sm90a-wgmma kernel variants against each other and cuDNN, interleaved.

Usage on the GPU host (after the runtime is built, ATTN_RUNTIME_LIB set):

    python3 bench/bench_sm90_schedules.py --sets ROOT [--seqs 512,...,16384]
                                          [--rounds 3] [--reps 20] [--out DIR]

ROOT holds one folder per variant set (e.g. v3/, nolp/, p/), each with
kernel folders (manifest.json). Kernels of the same head dim and mask are
compared on the benchmark grid of DESIGN.md (B = 16384/N, H = 2048/D, bf16)
with the same inputs: per shape, cuDNN once, then `--rounds` rounds that
run every variant in turn (median of --reps each; the reported time is the
median over rounds), so clock drift hits every variant alike. Each output
is compared with cuDNN's (rel_err, a sanity check only: the float64 checks
are attn-launch --check's). Writes schedules.csv and prints, per (D, mask),
the TFLOP/s table and each set's geometric mean of ours/cuDNN; choice.txt
names the set with the best geometric mean per (D, mask) (--baseline sets
are timed, never chosen). A kernel folder named ..._n<N> (what
bench/tuned_kernels.py writes: the tuner's winner for that N) is timed at
N only, so a set of tuned winners runs against the heuristic's kernels
interleaved.
"""

import argparse
import csv
import math
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from attn.runtime import Kernel  # noqa: E402
from bench import bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", required=True)
    ap.add_argument("--seqs", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--baseline", default="v3",
                    help="comma-separated sets timed for comparison only "
                         "(never chosen: an older compiler's kernels)")
    args = ap.parse_args()
    baseline = set(args.baseline.split(","))
    seqs = [int(s) for s in args.seqs.split(",") if s]

    groups = {}  # (D, causal) -> [(set, Kernel, N or None)]
    for man in sorted(Path(args.sets).glob("*/*/manifest.json")):
        kern = Kernel(man.parent)
        key = (kern.head_dim, kern.causal)
        only = re.search(r"_n(\d+)$", man.parent.name)
        groups.setdefault(key, []).append(
            (man.parent.parent.name, kern, int(only[1]) if only else None))

    rows, choice = [], []
    for (d, causal), group in sorted(groups.items()):
        names = list(dict.fromkeys(s for s, _, _ in group))
        print(f"== D={d} causal={causal}: " + ", ".join(names), flush=True)
        for n in seqs:
            kerns = [(s, k) for s, k, only in group if only in (None, n)]
            if not kerns:
                continue
            b, h = max(16384 // n, 1), 2048 // d
            flops = 4.0 * b * h * n * n * d / (2 if causal else 1)
            gen = torch.Generator(device="cuda").manual_seed(0)
            q, k, v = (torch.randn(b, h, n, d, device="cuda",
                                   dtype=torch.bfloat16, generator=gen)
                       for _ in range(3))
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                def cudnn():
                    return F.scaled_dot_product_attention(q, k, v,
                                                          is_causal=causal)
                want = cudnn().double()
                t_cudnn = bench(cudnn, args.warmup, args.reps)
            launches, errs = [], []
            for _, kern in kerns:
                out = torch.empty(b, h, n, d, device="cuda",
                                  dtype=torch.bfloat16)
                lse = torch.empty(b, h, n, device="cuda") \
                    if kern.with_lse else None
                launch, _, _ = kern.prepare(q, k, v, out=out, lse=lse)
                launch()
                torch.cuda.synchronize()
                errs.append(((out.double() - want).norm() /
                             want.norm()).item())
                launches.append(launch)
            times = [[] for _ in kerns]
            for _ in range(args.rounds):
                for i, launch in enumerate(launches):
                    times[i].append(bench(launch, args.warmup, args.reps))
            line = f"  N={n:<6} cudnn {flops / t_cudnn / 1e9:6.1f}"
            for (name, _), ts, err in zip(kerns, times, errs):
                t = sorted(ts)[len(ts) // 2]
                rows.append({"set": name, "D": d, "causal": causal, "N": n,
                             "B": b, "H": h, "ms": t,
                             "tflops": flops / t / 1e9,
                             "cudnn_tflops": flops / t_cudnn / 1e9,
                             "ratio": t_cudnn / t, "rel_err_vs_cudnn": err})
                line += f"  {name} {flops / t / 1e9:6.1f}"
                if not err < 2e-2:
                    line += " (!rel_err %.1e)" % err
            print(line, flush=True)
            del q, k, v, want
            torch.cuda.empty_cache()
        best = None
        for name in names:
            rs = [r for r in rows if r["set"] == name and r["D"] == d and
                  r["causal"] == causal]
            ok = all(r["rel_err_vs_cudnn"] < 2e-2 for r in rs)
            gm = math.exp(sum(math.log(r["ratio"]) for r in rs) / len(rs))
            print(f"  geomean {name}: {gm:.3f}x cuDNN"
                  + ("" if ok else " (output off: not chosen)"), flush=True)
            if ok and name not in baseline and (best is None or gm > best[1]):
                best = (name, gm)
        if best:
            choice.append(f"{d} {int(causal)} {best[0]} {best[1]:.3f}")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "schedules.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (out / "choice.txt").write_text("\n".join(choice) + "\n")
    print("choice (D causal set geomean):\n" + "\n".join(choice))
    return 0


if __name__ == "__main__":
    sys.exit(main())
