"""Time attn's kernels against the peers, in one process, on the same inputs.

Usage on the GPU host (after scripts/gpu-host.sh built the runtime):

    python3 bench/bench.py [--kernels gpu-kernels] [--seqs 1024,4096]
                           [--flex] [--warmup 5] [--reps 30] [--out DIR]

For every kernel directory under --kernels (any folder holding a
manifest.json), at the manifest's shape, or with --seqs on the benchmark
grid of DESIGN.md for the kernel's head dim (16k tokens: B = 16384/N,
H = 2048/D, the kernel's heads_q/heads_kv ratio kept): draws one set of
inputs, runs attn's kernel (checked against SDPA in float32: rel_err, and
LSE against a chunked float32 logsumexp), then times attn, SDPA's flash and
cuDNN backends (and FlexAttention under torch.compile with --flex) on those
same tensors with CUDA events (median of --reps). FLOP convention of
DESIGN.md: forward 4*B*Hq*Nq*Nk*D, halved when causal (D the mean of the
two head dims when they differ). ALiBi kernels (manifest problem.alibi)
run with the standard slopes of their heads; their reference adds
-slope·|i + Nk - Nq - j| to the scaled scores, SDPA's backends (which have
no ALiBi) are not timed, and FlexAttention (--flex) gets the same term as
its score_mod. Writes bench.csv and bench.md (and bench.png when
matplotlib imports) into --out (default $OUT, else .).
Any failure prints what failed and moves on to the next kernel or peer.
"""

import argparse
import csv
import math
import os
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from attn.runtime import Kernel  # noqa: E402
from attn.torch import standard_alibi_slopes  # noqa: E402

PEERS = {"sdpa-flash": SDPBackend.FLASH_ATTENTION,
         "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION}


def bench(fn, warmup, reps):
    """Median milliseconds of `fn` by CUDA events, as shared/bench/peers.py."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def kernel_dirs(root):
    root = Path(root)
    if (root / "manifest.json").is_file():
        return [root]
    return sorted(p.parent for p in root.rglob("manifest.json"))


def shapes_for(kern, seqs):
    """(B, Hq, Hkv, Nq, Nk) to run: the manifest's, or the benchmark grid."""
    p = kern.problem
    if not seqs:
        return [(p["batch"], p["heads_q"], p["heads_kv"], p["seq_q"], p["seq_kv"])]
    group = p["heads_q"] // p["heads_kv"]
    out = []
    for n in seqs:
        hq = max(2048 // kern.head_dim, group)
        hq -= hq % group
        out.append((max(16384 // n, 1), hq, hq // group, n, n))
    return out


def causal_mask(nq, nk):
    """The ABI's bottom-right aligned causal mask for SDPA (None: plain)."""
    from torch.nn.attention.bias import causal_lower_right
    return causal_lower_right(nq, nk)


def sdpa(q, k, v, causal, scale, gqa):
    nq, nk = q.shape[2], k.shape[2]
    kw = {"scale": scale}
    if gqa:
        kw["enable_gqa"] = True
    if causal and nq == nk:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, **kw)
    if causal:
        return F.scaled_dot_product_attention(q, k, v,
                                              attn_mask=causal_mask(nq, nk), **kw)
    return F.scaled_dot_product_attention(q, k, v, **kw)


def reference(q, k, v, causal, scale, with_lse, slopes=None):
    """O by SDPA on float32 inputs (GQA heads expanded) and LSE by a float32
    logsumexp over query chunks (the scores never all in memory); where
    SDPA refuses, or with ALiBi `slopes` ([Hq]: -slope·|i + Nk - Nq - j| on
    the scaled scores), O from the same chunks. Rows that see no key: O = 0."""
    group = q.shape[1] // k.shape[1]
    kf = k.float().repeat_interleave(group, dim=1)
    vf = v.float().repeat_interleave(group, dim=1)
    qf = q.float()
    o = None
    try:
        if slopes is None:
            with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
                o = torch.nan_to_num(sdpa(qf, kf, vf, causal, scale, False),
                                     nan=0.0)
    except Exception as ex:
        print(f"  SDPA float32 reference failed ({str(ex).splitlines()[0][:120]}); "
              "using the chunked float32 one", flush=True)
    if not with_lse and o is not None:
        return o, None, "sdpa-f32"
    nq, nk = q.shape[2], k.shape[2]
    lse = torch.empty(q.shape[:3], dtype=torch.float32, device=q.device)
    o_chunked = None
    if o is None:
        o_chunked = torch.empty(*qf.shape[:3], vf.shape[-1], device=q.device)
    cols = torch.arange(nk, device=q.device)
    step = max(1, (1 << 28) // max(1, q.shape[0] * q.shape[1] * nk))
    for r0 in range(0, nq, step):
        r1 = min(nq, r0 + step)
        s = torch.matmul(qf[:, :, r0:r1], kf.transpose(-1, -2)) * scale
        rows = torch.arange(r0, r1, device=q.device)[:, None]
        if slopes is not None:
            s -= slopes[None, :, None, None] * \
                (rows + (nk - nq) - cols[None, :]).abs().float()
        if causal:
            s.masked_fill_(cols[None, :] > rows + (nk - nq), float("-inf"))
        lse[:, :, r0:r1] = torch.logsumexp(s, dim=-1)
        if o_chunked is not None:
            p = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
            o_chunked[:, :, r0:r1] = torch.matmul(p, vf)
        del s
    if o is None:
        return o_chunked, (lse if with_lse else None), "chunked-f32"
    return o, (lse if with_lse else None), "sdpa-f32"


def rel_err(got, want):
    got, want = got.double(), want.double()
    finite = torch.isfinite(want)
    if not torch.equal(torch.isfinite(got), finite) or \
            not torch.equal(got[~finite], want[~finite]):
        return math.inf
    d = (got[finite] - want[finite]).norm()
    n = want[finite].norm()
    return (d / n).item() if n > 0 else d.item()


def run_one(kern, shape, args, rows):
    B, Hq, Hkv, Nq, Nk = shape
    D, Dv = kern.head_dim, kern.value_head_dim
    dtype = kern.torch_dtype
    causal, scale = kern.causal, kern.scale
    flops = 4.0 * B * Hq * Nq * Nk * 0.5 * (D + Dv) / (2 if causal else 1)
    row = {"kernel": Path(kern.dir).name, "entry": kern.entry,
           "dtype": kern.problem["dtype"], "causal": causal, "B": B, "Hq": Hq,
           "Hkv": Hkv, "Nq": Nq, "Nk": Nk, "D": D, "Dv": Dv}
    print(f"== {row['kernel']} B={B} Hq={Hq} Hkv={Hkv} Nq={Nq} Nk={Nk} "
          f"D={D} {row['dtype']} causal={causal}", flush=True)
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    q = torch.randn(B, Hq, Nq, D, device="cuda", dtype=dtype, generator=gen)
    k = torch.randn(B, Hkv, Nk, D, device="cuda", dtype=dtype, generator=gen)
    v = torch.randn(B, Hkv, Nk, Dv, device="cuda", dtype=dtype, generator=gen)
    slopes = standard_alibi_slopes(Hq, device="cuda") if kern.alibi else None
    row["alibi"] = kern.alibi

    # attn: check, then time.
    try:
        out = torch.full((B, Hq, Nq, Dv), float("nan"), dtype=dtype, device="cuda")
        lse = torch.full((B, Hq, Nq), float("nan"), device="cuda") \
            if kern.with_lse else None
        launch, _, _ = kern.prepare(q, k, v, out=out, lse=lse,
                                    alibi_slopes=slopes)
        launch()
        torch.cuda.synchronize()
        row["module"] = kern.loaded_from
        o_ref, lse_ref, row["reference"] = reference(q, k, v, causal, scale,
                                                     kern.with_lse, slopes)
        row["rel_err"] = rel_err(out, o_ref)
        if lse is not None:
            row["lse_rel_err"] = rel_err(lse, lse_ref)
        # The reference is float32, so f32 kernels get a float32 bound.
        tol = 1e-4 if row["dtype"] == "f32" else 1e-2
        row["ok"] = row["rel_err"] <= tol and row.get("lse_rel_err", 0) <= tol
        del o_ref, lse_ref
        t = bench(launch, args.warmup, args.reps)
        row["attn_ms"] = t
        row["attn_tflops"] = flops / (t * 1e-3) / 1e12
    except Exception as ex:
        row["attn_error"] = repr(ex)[:300]
        print(f"  attn failed: {ex!r}", flush=True)
        traceback.print_exc()

    gqa = Hq != Hkv
    for name, backend in PEERS.items():
        if slopes is not None:
            row[f"{name}_error"] = "no ALiBi"
            continue
        try:
            with sdpa_kernel([backend]):
                fn = lambda: sdpa(q, k, v, causal, scale, gqa)  # noqa: E731
                fn()
                t = bench(fn, args.warmup, args.reps)
            row[f"{name}_ms"] = t
            row[f"{name}_tflops"] = flops / (t * 1e-3) / 1e12
        except Exception as ex:
            row[f"{name}_error"] = repr(ex)[:200]
            print(f"  {name} unavailable: {str(ex).splitlines()[0][:160]}", flush=True)
    if args.flex:
        try:
            from torch.nn.attention.flex_attention import (create_block_mask,
                                                           flex_attention)
            # One compiled kernel per shape (dynamic=False, as FlexAttention's
            # own benchmarks): past dynamo's recompile limit (8) it would
            # silently run flex_attention unfused, at a few TFLOP/s.
            torch._dynamo.config.cache_size_limit = max(
                torch._dynamo.config.cache_size_limit, 256)
            flex = args._flex or torch.compile(flex_attention, dynamic=False)
            args._flex = flex
            bm = None
            if causal:
                shift = Nk - Nq
                bm = create_block_mask(
                    lambda b, h, qi, ki: ki <= qi + shift, None, None, Nq, Nk,
                    device="cuda")
            mod = None
            if slopes is not None:
                shift = Nk - Nq
                def mod(score, b, h, qi, ki):
                    return score - slopes[h] * (qi + shift - ki).abs()
            fn = lambda: flex(q, k, v, score_mod=mod,  # noqa: E731
                              block_mask=bm, scale=scale, enable_gqa=gqa)
            fn()
            t = bench(fn, args.warmup, args.reps)
            row["flex_ms"] = t
            row["flex_tflops"] = flops / (t * 1e-3) / 1e12
        except Exception as ex:
            row["flex_error"] = repr(ex)[:200]
            print(f"  flex failed: {str(ex).splitlines()[0][:160]}", flush=True)
    summary = "  " + "  ".join(
        f"{n} {row[n + '_tflops']:.1f}" for n in ["attn", *PEERS, "flex"]
        if n + "_tflops" in row)
    if "rel_err" in row:
        summary += f"  (TFLOP/s)  rel_err {row['rel_err']:.2e}"
    print(summary, flush=True)
    rows.append(row)
    del q, k, v
    torch.cuda.empty_cache()


IMPLS = ["attn", *PEERS, "flex"]


def write_outputs(rows, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(out_dir / "bench.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)

    def cell(r, impl):
        if f"{impl}_tflops" in r:
            return f"{r[impl + '_tflops']:.1f}"
        return "err" if f"{impl}_error" in r else ""

    impls = [i for i in IMPLS if any(f"{i}_tflops" in r or f"{i}_error" in r
                                     for r in rows)]
    lines = ["| kernel | dtype | causal | B | Hq/Hkv | Nq | Nk | D | "
             + " | ".join(f"{i} TFLOP/s" for i in impls)
             + " | attn/cudnn | rel_err | lse_rel_err | ok |",
             "|" + "---|" * (8 + len(impls) + 4)]
    for r in rows:
        ratio = ""
        if "attn_tflops" in r and "sdpa-cudnn_tflops" in r:
            ratio = f"{r['attn_tflops'] / r['sdpa-cudnn_tflops']:.2f}"
        lines.append(
            f"| {r['kernel']} | {r['dtype']} | {'yes' if r['causal'] else 'no'} "
            f"| {r['B']} | {r['Hq']}/{r['Hkv']} | {r['Nq']} | {r['Nk']} | {r['D']} | "
            + " | ".join(cell(r, i) for i in impls)
            + f" | {ratio} | {r.get('rel_err', float('nan')):.2e} "
            f"| {r.get('lse_rel_err', float('nan')):.2e} "
            f"| {'yes' if r.get('ok') else 'NO'} |")
    note = ("\nbf16 FLOP convention: 4*B*Hq*Nq*Nk*D, halved when causal. "
            f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}.\n")
    (out_dir / "bench.md").write_text("\n".join(lines) + "\n" + note)
    print("\n".join(lines) + note)

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return
    try:
        # Only rows with a figure; a kernel that failed its check gets no bar.
        rows = [r for r in rows if any(f"{i}_tflops" in r for i in impls)]
        if not rows:
            return
        labels = [f"{r['kernel']}\nN={r['Nq']}" for r in rows]
        fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(rows)), 4))
        width = 0.8 / max(1, len(impls))
        for i, impl in enumerate(impls):
            ys = [0 if impl == "attn" and not r.get("ok") else
                  r.get(f"{impl}_tflops", 0) for r in rows]
            ax.bar([x + i * width for x in range(len(rows))], ys, width, label=impl)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(rows))])
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_ylabel("TFLOP/s")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out_dir / "bench.png", dpi=120)
    except Exception as ex:
        print(f"plot failed: {ex!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", default="gpu-kernels")
    ap.add_argument("--seqs", default="",
                    help="comma-separated N: run the DESIGN.md grid instead "
                         "of the manifest's shape")
    ap.add_argument("--flex", action="store_true",
                    help="also FlexAttention under torch.compile (slow to compile)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    args._flex = None
    seqs = [int(s) for s in args.seqs.split(",") if s]

    dirs = kernel_dirs(args.kernels)
    if not dirs:
        print(f"no kernel directories (manifest.json) under {args.kernels}")
        return 1
    rows = []
    for d in dirs:
        try:
            kern = Kernel(d)
            for shape in shapes_for(kern, seqs):
                run_one(kern, shape, args, rows)
        except Exception as ex:
            print(f"== {d}: failed: {ex!r}", flush=True)
            rows.append({"kernel": Path(d).name, "attn_error": repr(ex)[:300],
                         "dtype": "?", "causal": False, "B": 0, "Hq": 0,
                         "Hkv": 0, "Nq": 0, "Nk": 0, "D": 0})
    write_outputs(rows, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
