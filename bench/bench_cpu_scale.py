"""The CPU path's run-time scale against a compile-time one, in one run.

    python bench/bench_cpu_scale.py --old OLD/libattn-c.so --new NEW/libattn-c.so
        [--rounds 6] [--reps 15] [--out FILE.md]

Since 2026-12-02 the CPU modules of attn-c/Execution.h (attn.cpu) take the
softmax scale as an argument (attn.attention's `scale(%s)` operand) instead
of a constant: one module serves every scale. This times the same calls
through a library from before (`--old`, the scale a constant of each
module) and one from after (`--new`), alternating the two in fresh
processes (old, new, old, new, ...: --rounds each) so that drift of the
machine hits both alike. Each process JIT-compiles its modules on an
untimed first call, then times --reps calls of the forward and of the
backward (attn.cpu.forward / attn.cpu.backward, the default scale) per
point; a point's figure is the median over the rounds of each round's
median. Writes a Markdown table (date, commit, machine, threads) to --out
(default: stdout). The bar: new/old within 1%.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (B, Hq, Hkv, N, D, dtype, causal)
POINTS = [
    (1, 8, 2, 512, 64, "f32", False),
    (1, 8, 2, 512, 64, "f32", True),
    (1, 8, 2, 1024, 64, "bf16", True),
    (1, 4, 4, 256, 128, "f32", False),
]


def child(reps: int) -> None:
    """One process: times every point through attn.cpu, prints JSON."""
    sys.path.insert(0, str(ROOT / "python"))
    import torch
    from attn import cpu
    from attn.variants import make_variant
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    torch.manual_seed(0)
    out = []
    for b, hq, hkv, n, d, dt, causal in POINTS:
        dtype = dtypes[dt]
        q = torch.randn(b, hq, n, d).to(dtype)
        k = torch.randn(b, hkv, n, d).to(dtype)
        v = torch.randn(b, hkv, n, d).to(dtype)
        variant = make_variant(causal)
        o, lse = cpu.forward(q, k, v, None, variant)  # compiles
        g = torch.randn_like(o)
        cpu.backward(g, q, k, v, o, lse, None, variant)  # compiles
        fwd, bwd = [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            cpu.forward(q, k, v, None, variant)
            t1 = time.perf_counter()
            cpu.backward(g, q, k, v, o, lse, None, variant)
            t2 = time.perf_counter()
            fwd.append(t1 - t0)
            bwd.append(t2 - t1)
        out.append({"fwd": statistics.median(fwd),
                    "bwd": statistics.median(bwd)})
    print(json.dumps(out))


def run_child(lib: str, reps: int) -> list:
    env = dict(os.environ, ATTN_COMPILER_LIB=lib)
    r = subprocess.run([sys.executable, __file__, "--child", "--reps",
                        str(reps)], env=env, capture_output=True, text=True,
                       check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", help="libattn-c.so with the scale a constant")
    ap.add_argument("--new", help="libattn-c.so with the scale an argument")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--out")
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    if a.child:
        child(a.reps)
        return
    runs = {"old": [], "new": []}
    for r in range(a.rounds):
        for which in ("old", "new") if r % 2 == 0 else ("new", "old"):
            runs[which].append(run_child(getattr(a, which), a.reps))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                             "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [
        f"Date: {datetime.date.today()}, commit {commit}, "
        f"{platform.machine()} {platform.processor() or ''}, "
        f"{os.cpu_count()} CPUs, torch threads "
        f"{__import__('torch').get_num_threads()}; {a.rounds} rounds of "
        f"old/new in alternating fresh processes, {a.reps} timed calls "
        "each (median of round medians).",
        "",
        f"old: `{a.old}`  ",
        f"new: `{a.new}`",
        "",
        "| B | Hq | Hkv | N | D | dtype | causal | fwd old ms | fwd new ms "
        "| new/old | bwd old ms | bwd new ms | new/old |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for i, (b, hq, hkv, n, d, dt, causal) in enumerate(POINTS):
        row = [str(x) for x in (b, hq, hkv, n, d, dt, causal)]
        for key in ("fwd", "bwd"):
            old = statistics.median(run[i][key] for run in runs["old"])
            new = statistics.median(run[i][key] for run in runs["new"])
            ratios.append(new / old)
            row += [f"{old * 1e3:.2f}", f"{new * 1e3:.2f}",
                    f"{new / old:.3f}"]
        lines.append("| " + " | ".join(row) + " |")
    geo = statistics.geometric_mean(ratios)
    lines += ["", f"Geometric mean new/old over the {len(ratios)} "
              f"figures: {geo:.4f}"]
    text = "\n".join(lines) + "\n"
    if a.out:
        Path(a.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
