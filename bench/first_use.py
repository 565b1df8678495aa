"""First use of attn.torch.attention on a GPU host with only the wheel.

Usage on the GPU host (the wheel installed with `pip install --no-deps
--target DIR dist/attn-*.whl`, DIR on PYTHONPATH, no MLIR, no pack):

    python3 bench/first_use.py [--out DIR]

For each case (plain, Mistral's window 4096, Gemma-2's softcap 50, head dims
the compiler pads such as 80 and 96, a backward) into an empty kernel cache:
times the first call (compile + load + run) and the second (run), checks the
output against a float64 reference on fresh random inputs (outputs are
fresh allocations; the reference applies mask and softcap itself), and
prints one line per case, then a table. The package's own log lines
(logging, logger "attn") say what was compiled and how long it took.
"""

import argparse
import json
import logging
import math
import os
import sys
import tempfile
import time

import torch


def reference(q, k, v, causal, scale, window, softcap):
    """softmax(q·kᵀ·scale, softcap, bottom-right mask)·v in float64."""
    q, k, v = (t.double() for t in (q, k, v))
    g = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(g, dim=1)
    v = v.repeat_interleave(g, dim=1)
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    nq, nk = q.shape[2], k.shape[2]
    i = torch.arange(nq, device=q.device)[:, None] + (nk - nq)
    j = torch.arange(nk, device=q.device)[None, :]
    keep = torch.ones(nq, nk, dtype=torch.bool, device=q.device)
    left, right = window if window else (-1, 0 if causal else -1)
    if causal:
        right = 0
    if left >= 0:
        keep &= j >= i - left
    if right >= 0:
        keep &= j <= i + right
    s = s.masked_fill(~keep, float("-inf"))
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return torch.matmul(p, v)


CASES = [
    # name, D, causal, extra keyword arguments, N, backward
    ("plain d128 causal", 128, True, {}, 2048, False),
    ("plain d64", 64, False, {}, 2048, False),
    ("mistral window 4096 d128", 128, True, {"window": (4096, 0)}, 8192, False),
    ("gemma2 softcap 50 d256", 256, True, {"softcap": 50.0}, 2048, False),
    ("d80 (padded)", 80, False, {}, 1000, False),
    ("d96 causal (padded)", 96, True, {}, 1500, False),
    ("backward d128 causal", 128, True, {}, 2048, True),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    log = os.path.join(args.out, "first_use.log")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s",
                        handlers=[logging.StreamHandler(sys.stdout),
                                  logging.FileHandler(log)])
    os.environ["ATTN_CACHE_DIR"] = tempfile.mkdtemp(prefix="attn-first-use-")
    import attn
    import attn.torch
    print(f"attn {attn.__version__} from {os.path.dirname(attn.__file__)}; "
          f"compiler available: {attn.compiler_available()}; "
          f"GPU {torch.cuda.get_device_name()}", flush=True)
    rows = []
    for name, d, causal, extra, n, backward in CASES:
        torch.manual_seed(0)
        b, hq, hkv = 2, 8, 4
        dev, dt = "cuda", torch.bfloat16
        q = torch.randn(b, hq, n, d, device=dev, dtype=dt)
        k = torch.randn(b, hkv, n, d, device=dev, dtype=dt)
        v = torch.randn(b, hkv, n, d, device=dev, dtype=dt)
        row = {"case": name, "D": d, "N": n}
        try:
            if backward:
                for t in (q, k, v):
                    t.requires_grad_(True)
            times = []
            for _ in range(2):
                for t in (q, k, v):
                    t.grad = None
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                out = attn.torch.attention(q, k, v, causal=causal, **extra)
                if backward:
                    out.float().pow(2).sum().backward()
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
            row["first_s"], row["second_s"] = times
            ref = reference(q.detach(), k.detach(), v.detach(), causal, 1 / math.sqrt(d),
                            extra.get("window"), extra.get("softcap"))
            err = ((out.double() - ref).norm() / ref.norm()).item()
            row["rel_err"] = err
            row["ok"] = bool(err < 1e-2 and torch.isfinite(out).all().item())
            if backward:
                qr, kr, vr = (t.detach().double().requires_grad_(True) for t in (q, k, v))
                reference(qr, kr, vr, causal, 1 / math.sqrt(d), None, None).pow(2).sum().backward()
                gerr = max(((a.grad.double() - r.grad).norm() / r.grad.norm()).item()
                           for a, r in ((q, qr), (k, kr), (v, vr)))
                row["grad_rel_err"] = gerr
                row["ok"] = row["ok"] and gerr < 2e-2
        except Exception as ex:  # report and go on to the next case
            row["ok"] = False
            row["error"] = f"{type(ex).__name__}: {str(ex)[:300]}"
        print(json.dumps(row), flush=True)
        rows.append(row)
    with open(os.path.join(args.out, "first_use.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print(f"{'case':<28} {'first s':>8} {'second s':>9} {'rel_err':>9} ok")
    for r in rows:
        print(f"{r['case']:<28} {r.get('first_s', float('nan')):8.2f} "
              f"{r.get('second_s', float('nan')):9.4f} {r.get('rel_err', float('nan')):9.2e} "
              f"{'yes' if r['ok'] else 'NO ' + r.get('error', '')}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
