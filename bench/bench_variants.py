"""Time attn's variant kernels against FlexAttention and SDPA, in one
process, on the same inputs.

Usage on the GPU host, with kernels from scripts/compile-variants.sh:

    ATTN_RUNTIME_LIB=build-gpu/lib/libattn_runtime.so \\
        python3 bench/bench_variants.py [--kernels DIR] [--reps 20] \\
        [--wait-for FILE] [--varlen LENS --varlen-heads 16 --varlen-dim 128]

For each time_* kernel directory: draws inputs at the manifest's shape,
runs attn's kernel, then FlexAttention (torch.compile) with the same mask
(block mask) or score_mod (softcap, ALiBi), and SDPA (cuDNN and flash
backends) where SDPA has the variant (no mask, or causal with Nq == Nk or
top-left); checks each peer's output against attn's (rel_err) and times
all with CUDA events (median). Kernels of one variant share the peers'
figures. `--varlen` times FlexAttention's document mask (causal within
each sequence) on the packed lengths, the peer of FlashAttention's varlen
API (attn's varlen kernel is timed by attn-launch). Prints one table; a
peer that fails is reported and skipped.

`--wait-for FILE` compiles every Flex variant first (CPU work, while
something else uses the GPU), then waits until FILE exists before timing.
"""

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
from torch.nn.attention.flex_attention import (create_block_mask,  # noqa: E402
                                               flex_attention)


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


def variant_key(p):
    """What the peers compute for manifest problem `p` (kernels of the same
    key share the peers' timings)."""
    keys = ("batch", "heads_q", "heads_kv", "seq_q", "seq_kv", "head_dim",
            "value_head_dim", "causal", "mask_align", "window_left",
            "window_right", "softcap", "alibi", "scale")
    return json.dumps({k: p.get(k) for k in keys}, sort_keys=True)


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


def sdpa_is_causal(p):
    """SDPA's is_causal for `p`, or None when SDPA lacks the variant
    (is_causal is top-left: bottom-right only matches when Nq == Nk)."""
    if p.get("softcap") or p.get("alibi") or p.get("window_left", -1) >= 0:
        return None
    if p.get("window_right", -1) > 0:
        return None
    if not p.get("causal") and p.get("window_right", -1) < 0:
        return False
    if p.get("mask_align") == "top_left" or p["seq_q"] == p["seq_kv"]:
        return True
    return None


def inputs(p, dtype):
    B, Hq, Hkv, Nq, Nk = (p["batch"], p["heads_q"], p["heads_kv"],
                          p["seq_q"], p["seq_kv"])
    gen = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(B, Hq, Nq, p["head_dim"], device="cuda", dtype=dtype,
                    generator=gen)
    k = torch.randn(B, Hkv, Nk, p["head_dim"], device="cuda", dtype=dtype,
                    generator=gen)
    v = torch.randn(B, Hkv, Nk, p["value_head_dim"], device="cuda",
                    dtype=dtype, generator=gen)
    return q, k, v


def rel_err(a, ref):
    return ((a.float() - ref.float()).norm() / ref.float().norm()).item()


class Peers:
    """Flex (and SDPA) callables per variant key, built once."""

    def __init__(self):
        self.flex = torch.compile(flex_attention, dynamic=False)
        self.fns = {}

    def get(self, p, q, k, v):
        key = variant_key(p)
        if key not in self.fns:
            fns = {}
            Nq, Nk = p["seq_q"], p["seq_kv"]
            gqa = p["heads_q"] != p["heads_kv"]
            try:
                mask, score = flex_variant(p, Nq, Nk)
                bm = create_block_mask(mask, None, None, Nq, Nk,
                                       device="cuda") if mask else None
                fns["flex"] = lambda q, k, v: self.flex(  # noqa: E731
                    q, k, v, score_mod=score, block_mask=bm,
                    scale=p["scale"], enable_gqa=gqa)
            except Exception as ex:
                fns["flex"] = ex
            causal = sdpa_is_causal(p)
            if causal is not None:
                for name, backend in (("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION),
                                      ("sdpa_flash", SDPBackend.FLASH_ATTENTION)):
                    def run(q, k, v, backend=backend):
                        with sdpa_kernel([backend]):
                            return F.scaled_dot_product_attention(
                                q, k, v, is_causal=causal, scale=p["scale"],
                                enable_gqa=gqa)
                    fns[name] = run
            self.fns[key] = fns
        return self.fns[key]


def compile_all(peers, dirs):
    """Runs every peer once at its shape (Flex compiles here)."""
    for d in dirs:
        p = json.load(open(d / "manifest.json"))["problem"]
        dtype = torch.bfloat16 if p["dtype"] == "bf16" else torch.float16
        q, k, v = inputs(p, dtype)
        t0 = time.time()
        for name, fn in peers.get(p, q, k, v).items():
            if callable(fn):
                try:
                    fn(q, k, v)
                except Exception as ex:
                    print(f"{d.name}: {name} failed: {ex}", flush=True)
        torch.cuda.synchronize()
        print(f"compiled peers of {d.name} in {time.time() - t0:.1f} s",
              flush=True)
        del q, k, v


def time_varlen(args, flex):
    """FlexAttention with a document mask (causal within each sequence) on
    sequences packed into one row of length sum(lens)."""
    lens = [int(x) for x in args.varlen.split(",")]
    T, H, D = sum(lens), args.varlen_heads, args.varlen_dim
    doc = torch.repeat_interleave(
        torch.arange(len(lens), device="cuda"),
        torch.tensor(lens, device="cuda"))

    def mask(b, h, qi, ki):
        return (doc[qi] == doc[ki]) & (ki <= qi)
    bm = create_block_mask(mask, None, None, T, T, device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(1, H, T, D, device="cuda", dtype=torch.bfloat16,
                           generator=gen) for _ in range(3))
    fn = lambda: flex(q, k, v, block_mask=bm)  # noqa: E731
    fn()
    ms = bench(fn, args.warmup, args.reps)
    pairs = sum(n * (n + 1) // 2 for n in lens)
    return {"kernel": f"flex_document_causal_{len(lens)}seq", "flex_ms": ms,
            "tokens": T, "heads": H, "head_dim": D,
            "flex_tflops": 4 * pairs * H * D / ms / 1e9}


def emit(rows, row, jsonl):
    """Keeps `row` and writes it at once (a run cut short keeps its rows)."""
    rows.append(row)
    print(json.dumps(row), flush=True)
    if jsonl:
        with open(jsonl, "a") as f:
            f.write(json.dumps(row) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default="build-bwd/variant-kernels")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--wait-for", help="compile the peers, then wait for "
                    "this file before timing")
    ap.add_argument("--varlen", help="comma-separated sequence lengths")
    ap.add_argument("--varlen-heads", type=int, default=16)
    ap.add_argument("--varlen-dim", type=int, default=128)
    ap.add_argument("--jsonl", help="append each row here as JSON")
    args = ap.parse_args()
    dirs = sorted(Path(args.kernels).glob("time_*"))
    dirs = [d for d in dirs if "seq_lens_q" not in
            json.load(open(d / "manifest.json"))["problem"]]
    peers = Peers()
    if args.wait_for:
        compile_all(peers, dirs)
        while not os.path.exists(args.wait_for):
            time.sleep(0.5)

    from attn.runtime import Kernel
    rows = []
    for d in dirs:
        kern = Kernel(str(d))
        p = kern.problem
        q, k, v = inputs(p, kern.torch_dtype)
        launch, out, _ = kern.prepare(q, k, v)
        row = {"kernel": d.name, "attn_ms": bench(launch, args.warmup,
                                                   args.reps)}
        for name, fn in peers.get(p, q, k, v).items():
            if not callable(fn):
                row[f"{name}_error"] = str(fn).splitlines()[0][:120]
                continue
            try:
                row[f"{name}_rel_err"] = rel_err(fn(q, k, v), out)
                row[f"{name}_ms"] = bench(lambda: fn(q, k, v), args.warmup,
                                          args.reps)
            except Exception as ex:  # a peer failing is a result
                row[f"{name}_error"] = str(ex).splitlines()[0][:120]
        emit(rows, row, args.jsonl)
        del q, k, v, out
        torch.cuda.empty_cache()
    if args.varlen:
        try:
            row = time_varlen(args, peers.flex)
        except Exception as ex:
            row = {"kernel": "flex_document_causal",
                   "flex_error": str(ex).splitlines()[0][:120]}
        emit(rows, row, args.jsonl)
    print(f"{'kernel':34} {'attn ms':>8} {'flex ms':>8} {'cudnn ms':>8} "
          f"{'flash ms':>8} {'flex/attn':>9} {'flex rel_err':>12}")
    for r in rows:
        a = r.get("attn_ms", math.nan)
        f = r.get("flex_ms", math.nan)
        print(f"{r['kernel'][:34]:34} {a:8.3f} {f:8.3f} "
              f"{r.get('sdpa_cudnn_ms', math.nan):8.3f} "
              f"{r.get('sdpa_flash_ms', math.nan):8.3f} {f / a:9.2f} "
              f"{r.get('flex_rel_err', math.nan):12.2e}")


if __name__ == "__main__":
    main()
