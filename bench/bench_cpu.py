"""Time attn.torch.attention on CPU tensors (the compiler's own CPU path,
attn.cpu) against PyTorch's SDPA on the CPU, on the same inputs.

    python bench/bench_cpu.py [--seqs 256,512,1024] [--dtypes f32,bf16]
                              [--reps 5] [--out FILE.md]

Per point (B=1, Hq=8, Hkv=2, D=64; causal or not): the forward alone and
forward + backward (sum of the output, as a loss), each the median of
--reps timed calls after one untimed call (which JIT-compiles attn's module
for the problem; its time is reported apart, as "compile"), plus the
output's relative error against SDPA in float32. Writes a Markdown table
with the date, commit, machine and thread count to --out (default: stdout).
No bar: the CPU path is a fallback and a reference, the GPU is the product.
"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import attn.torch as attn_torch  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def sdpa(q, k, v, causal):
    group = q.shape[1] // k.shape[1]
    k, v = (t.repeat_interleave(group, dim=1) for t in (k, v))
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def ours(q, k, v, causal):
    return attn_torch.attention(q, k, v, causal=causal)


def timed(fn, reps):
    """(seconds of the first call, median seconds of the next reps)."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return first, statistics.median(times)


def point(n, dtype, causal, reps):
    g = torch.Generator().manual_seed(n)
    mk = lambda h: torch.randn(1, h, n, 64, generator=g).to(dtype)  # noqa: E731
    q, k, v = mk(8), mk(2), mk(2)
    row = {"N": n, "dtype": dtype, "causal": causal}
    out = ours(q, k, v, causal)
    ref = sdpa(q.float(), k.float(), v.float(), causal)
    row["rel_err"] = ((out.float() - ref).norm() / ref.norm()).item()
    for name, fn in (("attn", ours), ("sdpa", sdpa)):
        c, fwd = timed(lambda: fn(q, k, v, causal), reps)
        qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))

        def step():
            fn(qg, kg, vg, causal).float().sum().backward()
        cb, both = timed(step, reps)
        row[name] = (fwd, both)
        if name == "attn":
            row["compile"] = (c - fwd, cb - both)
    return row


def commit():
    try:
        return subprocess.run(["git", "-C", str(ROOT), "describe", "--always",
                               "--dirty"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seqs", default="256,512,1024")
    ap.add_argument("--dtypes", default="f32,bf16")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    lines = [
        f"# attn.torch.attention on the CPU against SDPA "
        f"({datetime.date.today().isoformat()})", "",
        f"- commit {commit()}; torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads",
        f"- machine: {cpu_model()}, {os.cpu_count()} cores",
        "- shape: B=1, Hq=8, Hkv=2 (GQA), D=64; median of "
        f"{args.reps} calls; ms",
        "- attn: the compiler's CPU path (tiled FlashAttention, LLVM JIT, "
        "one thread); compile: the first call's extra time (the module "
        "JIT-compiled for the problem, forward / forward+backward)", "",
        "| N | dtype | causal | attn fwd | SDPA fwd | attn/SDPA | "
        "attn fwd+bwd | SDPA fwd+bwd | attn/SDPA | compile (s) | rel err |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in (int(s) for s in args.seqs.split(",")):
        for dname in args.dtypes.split(","):
            for causal in (False, True):
                r = point(n, DTYPES[dname], causal, args.reps)
                (af, ab), (sf, sb) = r["attn"], r["sdpa"]
                cf, cb = r["compile"]
                lines.append(
                    f"| {n} | {dname} | {int(causal)} | {af * 1e3:.1f} | "
                    f"{sf * 1e3:.1f} | {af / sf:.2f} | {ab * 1e3:.1f} | "
                    f"{sb * 1e3:.1f} | {ab / sb:.2f} | {cf:.1f} / {cb:.1f} | "
                    f"{r['rel_err']:.1e} |")
                print(lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
