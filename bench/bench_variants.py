"""Time attn's variant kernels against FlexAttention (and SDPA where it has
the variant), in one process, on the same inputs.

Usage on the GPU host, with kernels from scripts/compile-variants.sh:

    ATTN_RUNTIME_LIB=build-gpu/lib/libattn_runtime.so \\
        python3 bench/bench_variants.py [--kernels DIR] [--reps 20]

For each time_* kernel directory: draws inputs at the manifest's shape,
runs attn's kernel, then FlexAttention (torch.compile) with the same mask
(block mask) or score_mod (softcap, ALiBi), checks Flex's output against
attn's (rel_err), and times both with CUDA events (median). Prints one
table; a peer that fails is reported and skipped.
"""

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import torch  # noqa: E402
from torch.nn.attention.flex_attention import (create_block_mask,  # noqa: E402
                                               flex_attention)

from attn.runtime import Kernel  # noqa: E402


def bench(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def flex_variant(p, Nq, Nk):
    """(mask_mod or None, score_mod or None) for the manifest problem `p`."""
    shift = 0 if p.get("mask_align") == "top_left" else Nk - Nq
    left = p.get("window_left", -1)
    right = 0 if p.get("causal") else p.get("window_right", -1)
    mask = None
    if left >= 0 or right >= 0:
        def mask(b, h, qi, ki):
            d = qi + shift
            ok = ki >= 0
            if right >= 0:
                ok = ok & (ki <= d + right)
            if left >= 0:
                ok = ok & (ki >= d - left)
            return ok
    score = None
    if p.get("softcap"):
        c = float(p["softcap"])

        def score(s, b, h, qi, ki):
            return c * torch.tanh(s / c)
    elif p.get("alibi"):
        H = p["heads_q"]
        slopes = torch.exp2(-8.0 * (torch.arange(H, device="cuda") + 1) / H)

        def score(s, b, h, qi, ki):
            return s - slopes[h] * (qi + shift - ki).abs()
    return mask, score


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default="build-bwd/variant-kernels")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    flex = torch.compile(flex_attention, dynamic=False)
    rows = []
    for d in sorted(Path(args.kernels).glob("time_*")):
        kern = Kernel(str(d))
        p = kern.problem
        B, Hq, Hkv, Nq, Nk = (p["batch"], p["heads_q"], p["heads_kv"],
                              p["seq_q"], p["seq_kv"])
        D, Dv = kern.head_dim, kern.value_head_dim
        gen = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(B, Hq, Nq, D, device="cuda", dtype=kern.torch_dtype,
                        generator=gen)
        k = torch.randn(B, Hkv, Nk, D, device="cuda", dtype=kern.torch_dtype,
                        generator=gen)
        v = torch.randn(B, Hkv, Nk, Dv, device="cuda", dtype=kern.torch_dtype,
                        generator=gen)
        out = torch.empty(B, Hq, Nq, Dv, device="cuda", dtype=kern.torch_dtype)
        lse = torch.empty(B, Hq, Nq, device="cuda") if kern.with_lse else None
        launch, _, _ = kern.prepare(q, k, v, out=out, lse=lse)
        row = {"kernel": d.name, "attn_ms": bench(launch, args.warmup,
                                                   args.reps)}
        try:
            mask, score = flex_variant(p, Nq, Nk)
            bm = create_block_mask(mask, None, None, Nq, Nk, device="cuda") \
                if mask else None
            fn = lambda: flex(q, k, v, score_mod=score, block_mask=bm,  # noqa
                              scale=kern.scale, enable_gqa=Hq != Hkv)
            o = fn()
            row["flex_rel_err"] = ((o.float() - out.float()).norm() /
                                   out.float().norm()).item()
            row["flex_ms"] = bench(fn, args.warmup, args.reps)
        except Exception as ex:  # a peer failing is a result, not a crash
            row["flex_error"] = str(ex).splitlines()[0][:120]
        rows.append(row)
        print(row, flush=True)
        del q, k, v, out
        torch.cuda.empty_cache()
    print(f"{'kernel':24} {'attn ms':>8} {'flex ms':>8} {'flex/attn':>9} "
          f"{'flex vs attn rel_err':>20}")
    for r in rows:
        f = r.get("flex_ms", math.nan)
        print(f"{r['kernel']:24} {r['attn_ms']:8.3f} {f:8.3f} "
              f"{f / r['attn_ms']:9.2f} {r.get('flex_rel_err', r.get('flex_error', '')):>20}")


if __name__ == "__main__":
    main()
