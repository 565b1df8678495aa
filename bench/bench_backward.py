"""Time attn's backward kernels against the peers, in one process.

Usage on the GPU host (after scripts/gpu-host.sh built the runtime):

    ATTN_RUNTIME_LIB=build-gpu/lib/libattn_runtime.so \
    python3 bench/bench_backward.py --kernels gpu-bwd [--seqs 1024,4096]
                                    [--warmup 5] [--reps 20] [--out DIR]

For every backward kernel directory under --kernels (attn-compile
--backward), on the benchmark grid of DESIGN.md for its head dim (16k
tokens: B = 16384/N, H = 2048/D): draws Q, K, V, dO; O and the LSE come
from SDPA's flash forward (aten._scaled_dot_product_flash_attention); runs
attn's backward kernels (checked against float32 autograd through SDPA:
rel_err of dQ, dK, dV), then times attn and the backward of SDPA's flash
and cuDNN backends on the same tensors with CUDA events (median of --reps).
FLOP convention of DESIGN.md: backward = 2.5 x forward (4*B*H*N^2*D, halved
when causal). Writes bench_backward.csv and .md into --out.

ALiBi kernels (manifest problem.alibi) run with the standard slopes of their
heads: O, the LSE and the float32 reference gradients then come from an
explicit float32 attention with -slope·|i - j| on the scaled scores (the
scores in memory: keep N <= 8192), SDPA's backends (no ALiBi) are not
timed, and with --flex FlexAttention's backward (torch.compile, the same
term as its score_mod, a causal block mask) is.
"""

import argparse
import csv
import ctypes
import math
import os
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from attn.runtime import BackwardArgs  # noqa: E402
from attn.torch import standard_alibi_slopes  # noqa: E402
from bench import bench, kernel_dirs, rel_err  # noqa: E402

PEERS = {"sdpa-flash": SDPBackend.FLASH_ATTENTION,
         "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION}


def load_runtime():
    path = os.environ.get("ATTN_RUNTIME_LIB", "build-gpu/lib/libattn_runtime.so")
    lib = ctypes.CDLL(path)
    lib.attn_kernel_load.restype = ctypes.c_void_p
    lib.attn_kernel_load.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.attn_runtime_last_error.restype = ctypes.c_char_p
    lib.attn_kernel_is_backward.argtypes = [ctypes.c_void_p]
    lib.attn_kernel_workspace_bytes.restype = ctypes.c_uint64
    lib.attn_kernel_workspace_bytes.argtypes = [ctypes.c_void_p,
                                                ctypes.POINTER(BackwardArgs)]
    lib.attn_kernel_launch_backward.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(BackwardArgs), ctypes.c_void_p]
    return lib


def strides3(t):
    s = t.stride()
    return (ctypes.c_int64 * 3)(s[0], s[1], s[2])


def backward_launcher(lib, handle, q, k, v, o, do, lse, dq, dk, dv,
                      slopes=None):
    a = BackwardArgs()
    if slopes is not None:  # one [Hq] row for every batch entry
        a.alibi_slopes, a.alibi_stride_b = slopes.data_ptr(), 0
    for name, t in (("q", q), ("k", k), ("v", v), ("o", o), ("d_o", do),
                    ("lse", lse), ("dq", dq), ("dk", dk), ("dv", dv)):
        setattr(a, name, t.data_ptr())
    a.batch, a.heads_q, a.seq_q = q.shape[0], q.shape[1], q.shape[2]
    a.heads_kv, a.seq_kv = k.shape[1], k.shape[2]
    for name, t in (("q", q), ("k", k), ("v", v), ("o", o), ("do", do),
                    ("dq", dq), ("dk", dk), ("dv", dv)):
        setattr(a, name + "_stride", strides3(t))
    a.lse_stride = (ctypes.c_int64 * 2)(lse.stride(0), lse.stride(1))
    a.softmax_scale = q.shape[-1] ** -0.5  # SDPA's default, as the peers
    nbytes = lib.attn_kernel_workspace_bytes(handle, ctypes.byref(a))
    ws = torch.empty(max(nbytes, 16), dtype=torch.uint8, device="cuda")
    a.workspace = ws.data_ptr()
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def launch():
        if lib.attn_kernel_launch_backward(handle, ctypes.byref(a), stream) != 0:
            raise RuntimeError(lib.attn_runtime_last_error().decode())
    launch.workspace = ws  # keep it alive with the launcher
    return launch


def bench_ms(fn, warmup, reps):
    return bench(fn, warmup, reps)


def alibi_attention(q, k, v, causal, scale, slopes):
    """O and LSE of ALiBi attention in float32 (scores materialised):
    -slope·|i - j| on the scaled scores, Nq = Nk."""
    n = q.shape[2]
    idx = torch.arange(n, device=q.device)
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    s = s - slopes[None, :, None, None] * \
        (idx[:, None] - idx[None, :]).abs().float()
    if causal:
        s = s.masked_fill(idx[None, :] > idx[:, None], float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    return torch.matmul(torch.softmax(s, dim=-1), v), lse


def flex_backward(q, k, v, do, causal, scale, slopes):
    """FlexAttention's backward for the same attention (ALiBi as its
    score_mod when `slopes`), one compiled kernel per shape."""
    from torch.nn.attention.flex_attention import (create_block_mask,
                                                   flex_attention)
    torch._dynamo.config.cache_size_limit = max(
        torch._dynamo.config.cache_size_limit, 256)
    flex = torch.compile(flex_attention, dynamic=False)
    n = q.shape[2]
    bm = create_block_mask(lambda b, h, qi, ki: ki <= qi, None, None, n, n,
                           device="cuda") if causal else None
    mod = None
    if slopes is not None:
        def mod(score, b, h, qi, ki):
            return score - slopes[h] * (qi - ki).abs()
    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
    out = flex(qg, kg, vg, score_mod=mod, block_mask=bm, scale=scale)

    def fn():
        torch.autograd.grad(out, (qg, kg, vg), do, retain_graph=True)
    return fn


def run_one(lib, kdir, man, n, args):
    p = man["problem"]
    D, causal, scale = p["head_dim"], p["causal"], p["scale"]
    dtype = torch.bfloat16 if p["dtype"] == "bf16" else torch.float16
    H = max(2048 // D, 1)
    B = max(16384 // n, 1)
    flops = 2.5 * 4.0 * B * H * n * n * D / (2 if causal else 1)
    row = {"kernel": kdir.name, "dtype": p["dtype"], "causal": causal,
           "B": B, "H": H, "N": n, "D": D,
           "deterministic": man.get("tile", {}).get("deterministic", False)}
    print(f"== {kdir.name} B={B} H={H} N={n} D={D} causal={causal}", flush=True)
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    q = torch.randn(B, H, n, D, device="cuda", dtype=dtype, generator=gen)
    k = torch.randn(B, H, n, D, device="cuda", dtype=dtype, generator=gen)
    v = torch.randn(B, H, n, D, device="cuda", dtype=dtype, generator=gen)
    do = torch.randn(B, H, n, D, device="cuda", dtype=dtype, generator=gen)
    slopes = standard_alibi_slopes(H, device="cuda") \
        if p.get("alibi", False) else None
    row["alibi"] = slopes is not None
    if slopes is None:
        o, lse = torch.ops.aten._scaled_dot_product_flash_attention(
            q, k, v, 0.0, causal, False, scale=scale)[:2]
    else:
        qf, kf, vf = (t.detach().float().requires_grad_() for t in (q, k, v))
        of, lse = alibi_attention(qf, kf, vf, causal, scale, slopes)
        o, lse = of.detach().to(dtype), lse.detach()
    try:
        handle = lib.attn_kernel_load(str(kdir).encode(), 0)
        if not handle:
            raise RuntimeError(lib.attn_runtime_last_error().decode())
        dq = torch.full_like(q, float("nan"))
        dk = torch.full_like(k, float("nan"))
        dv = torch.full_like(v, float("nan"))
        launch = backward_launcher(lib, handle, q, k, v, o, do, lse.contiguous(),
                                   dq, dk, dv, slopes)
        launch()
        torch.cuda.synchronize()
        # float32 reference gradients by autograd through SDPA (ALiBi:
        # through the explicit attention above).
        if slopes is None:
            qf, kf, vf = (t.detach().float().requires_grad_()
                          for t in (q, k, v))
            with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION,
                              SDPBackend.MATH]):
                of = F.scaled_dot_product_attention(qf, kf, vf,
                                                    is_causal=causal,
                                                    scale=scale)
        gq, gk, gv = torch.autograd.grad(of, (qf, kf, vf), do.float())
        row["dq_rel_err"] = rel_err(dq, gq)
        row["dk_rel_err"] = rel_err(dk, gk)
        row["dv_rel_err"] = rel_err(dv, gv)
        row["ok"] = max(row["dq_rel_err"], row["dk_rel_err"],
                        row["dv_rel_err"]) <= 1e-2
        del qf, kf, vf, of, gq, gk, gv
        t = bench_ms(launch, args.warmup, args.reps)
        row["attn_ms"] = t
        row["attn_tflops"] = flops / (t * 1e-3) / 1e12
    except Exception as ex:
        row["attn_error"] = repr(ex)[:300]
        print(f"  attn failed: {ex!r}", flush=True)
        traceback.print_exc()

    for name, backend in PEERS.items():
        if slopes is not None:
            row[f"{name}_error"] = "no ALiBi"
            continue
        try:
            qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
            with sdpa_kernel([backend]):
                out = F.scaled_dot_product_attention(qg, kg, vg,
                                                     is_causal=causal,
                                                     scale=scale)

                def fn():
                    torch.autograd.grad(out, (qg, kg, vg), do,
                                        retain_graph=True)
                t = bench_ms(fn, args.warmup, args.reps)
            row[f"{name}_ms"] = t
            row[f"{name}_tflops"] = flops / (t * 1e-3) / 1e12
            if "attn_ms" in row:
                row[f"vs_{name}"] = t / row["attn_ms"]
            del out, qg, kg, vg
        except Exception as ex:
            row[f"{name}_error"] = str(ex).splitlines()[0][:200]
            print(f"  {name} failed: {row[f'{name}_error']}", flush=True)
    if args.flex:
        try:
            fn = flex_backward(q, k, v, do, causal, scale, slopes)
            fn()
            t = bench_ms(fn, args.warmup, args.reps)
            row["flex_ms"] = t
            row["flex_tflops"] = flops / (t * 1e-3) / 1e12
            if "attn_ms" in row:
                row["vs_flex"] = t / row["attn_ms"]
        except Exception as ex:
            row["flex_error"] = str(ex).splitlines()[0][:200]
            print(f"  flex failed: {row['flex_error']}", flush=True)
    print("  " + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in row.items() if k not in ("kernel",)),
          flush=True)
    torch.cuda.empty_cache()
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default="gpu-bwd")
    ap.add_argument("--seqs", default="1024,2048,4096,8192,16384")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--flex", action="store_true",
                    help="time FlexAttention's backward too (torch.compile)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    import json
    lib = load_runtime()
    rows = []
    for kdir in kernel_dirs(args.kernels):
        man = json.loads((kdir / "manifest.json").read_text())
        if man.get("direction") != "backward":
            continue
        for n in [int(s) for s in args.seqs.split(",") if s]:
            rows.append(run_one(lib, kdir, man, n, args))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in rows[0], k)) \
        if rows else []
    with open(out / "bench_backward.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    flex = args.flex
    lines = ["| kernel | N | ok | attn TFLOP/s | flash | cuDNN | vs flash | "
             "vs cuDNN |" + (" flex | vs flex |" if flex else ""),
             "|---|---|---|---|---|---|---|---|" + ("---|---|" if flex else "")]
    fmt = lambda x: f"{x:.1f}" if isinstance(x, float) else "-"  # noqa: E731
    fmt2 = lambda x: f"{x:.2f}" if isinstance(x, float) else "-"  # noqa: E731
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['N']} | {r.get('ok', '-')} | "
                     f"{fmt(r.get('attn_tflops'))} | "
                     f"{fmt(r.get('sdpa-flash_tflops'))} | "
                     f"{fmt(r.get('sdpa-cudnn_tflops'))} | "
                     f"{fmt2(r.get('vs_sdpa-flash'))} | "
                     f"{fmt2(r.get('vs_sdpa-cudnn'))} |"
                     + (f" {fmt(r.get('flex_tflops'))} | "
                        f"{fmt2(r.get('vs_flex'))} |" if flex else ""))
    (out / "bench_backward.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    ratios = [r["vs_sdpa-flash"] for r in rows if "vs_sdpa-flash" in r]
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"geomean vs sdpa-flash: {g:.3f}")
    ratios = [r["vs_sdpa-cudnn"] for r in rows if "vs_sdpa-cudnn" in r]
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"geomean vs sdpa-cudnn: {g:.3f}")


if __name__ == "__main__":
    main()
