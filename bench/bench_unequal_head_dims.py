"""The PyTorch op's backward at Dqk != Dv against SDPA's backends, in one
process.

Usage on the GPU host, with attn importable (the wheel, or python/ and a
runtime library):

    python3 bench/bench_unequal_head_dims.py [--dims 192/128,128/64]
        [--seqs 2048,8192] [--reps 15] [--out DIR]

The op's backward kernels take equal head dims; at Dqk != Dv it runs at the
wider one with the narrower operands zero-padded
(attn.torch._backward_at_equal_head_dims). This times that backward
(torch.autograd.grad of attn.torch.attention's output, the forward not
timed) against the same of SDPA's cuDNN and flash backends where they take
the head dims (a backend that refuses is reported as such), bf16, 16k
tokens (B = 16384/N, H = 16). Gradients are checked against float32
autograd through SDPA's math backend (rel_err of dQ, dK, dV). FLOP
convention of DESIGN.md with unequal dims: forward 2·B·H·N²·(Dqk + Dv)
(halved when causal), backward 2.5x that. Writes bench_unequal.csv and .md
into --out and prints the table.
"""

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import attn.torch as attn_torch  # noqa: E402
from bench import bench, rel_err  # noqa: E402

PEERS = {"sdpa-cudnn": SDPBackend.CUDNN_ATTENTION,
         "sdpa-flash": SDPBackend.FLASH_ATTENTION}


def sdpa(backend):
    def run(q, k, v, causal):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return run


def attn(q, k, v, causal):
    return attn_torch.attention(q, k, v, causal=causal)


def backward_ms(fn, q, k, v, grad, causal, reps):
    """Median ms of the backward alone, and the gradients."""
    leaves = [t.detach().clone().requires_grad_(True) for t in (q, k, v)]
    out = fn(*leaves, causal)
    grads = torch.autograd.grad(out, leaves, grad, retain_graph=True)
    ms = bench(lambda: torch.autograd.grad(out, leaves, grad,
                                           retain_graph=True), 3, reps)
    return ms, grads


def reference_grads(q, k, v, grad, causal):
    """float32 gradients through SDPA's math backend."""
    leaves = [t.float().requires_grad_(True) for t in (q, k, v)]
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
    grads = torch.autograd.grad(out, leaves, grad.float())
    del out
    return grads


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dims", default="192/128,128/64",
                    help="Dqk/Dv pairs, comma-separated")
    ap.add_argument("--seqs", default="2048,8192")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    rows = []
    for pair in args.dims.split(","):
        d, dv = (int(x) for x in pair.split("/"))
        for n in (int(x) for x in args.seqs.split(",")):
            for causal in (False, True):
                b, h = max(1, 16384 // n), 16
                gen = torch.Generator(device="cuda").manual_seed(n + d)
                mk = lambda w: torch.randn(b, h, n, w, device="cuda",  # noqa: E731
                                           dtype=torch.bfloat16,
                                           generator=gen)
                q, k, v, grad = mk(d), mk(d), mk(dv), mk(dv)
                want = reference_grads(q, k, v, grad, causal)
                flops = 2.5 * 2.0 * b * h * n * n * (d + dv) / (
                    2 if causal else 1)
                row = {"Dqk": d, "Dv": dv, "N": n, "B": b, "H": h,
                       "causal": causal}
                for name, fn in [("attn", attn)] + [
                        (p, sdpa(be)) for p, be in PEERS.items()]:
                    try:
                        ms, got = backward_ms(fn, q, k, v, grad, causal,
                                              args.reps)
                    except RuntimeError as ex:  # the backend refuses the dims
                        row[f"{name}_tflops"] = ""
                        row[f"{name}_note"] = str(ex).splitlines()[0][:80]
                        continue
                    err = max(rel_err(g, w) for g, w in zip(got, want))
                    row[f"{name}_tflops"] = round(flops / ms / 1e9, 1)
                    row[f"{name}_rel_err"] = f"{err:.2e}"
                rows.append(row)
                print(row, flush=True)
    keys = sorted({k for r in rows for k in r}, key=lambda k: (
        k not in ("Dqk", "Dv", "N", "B", "H", "causal"), k))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "bench_unequal.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    lines = ["| Dqk/Dv | causal | N | attn TFLOP/s | cuDNN | flash | "
             "attn / cuDNN | attn rel_err |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a, c = r.get("attn_tflops"), r.get("sdpa-cudnn_tflops")
        ratio = f"{a / c:.2f}" if a and c else "n/a"
        lines.append(
            f"| {r['Dqk']}/{r['Dv']} | {r['causal']} | {r['N']} | {a or 'n/a'} "
            f"| {c or 'n/a'} | {r.get('sdpa-flash_tflops') or 'n/a'} | "
            f"{ratio} | {r.get('attn_rel_err', '')} |")
    (out / "bench_unequal.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
