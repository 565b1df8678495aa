"""Launch attn's backward kernels and cuDNN's once each inside a CUDA
profiler range, for Nsight Compute (`ncu --profile-from-start off`).

Usage on the GPU host (scripts/gpu-profile-bwd.sh runs it under ncu):

    ATTN_RUNTIME_LIB=build-gpu/lib/libattn_runtime.so \
    python3 bench/profile_backward.py --kernels DIR/prof \
        --runs d256_tdkv:4096,d128:8192 [--cudnn d256_tdkv:4096]

Each run KERNEL:N takes bench_backward.py's grid for the kernel's head dim
(B = 16384/N, H = 2048/D), draws inputs, gets O and LSE from SDPA's flash
forward, warms the kernel up outside the range and launches it once
inside; --cudnn runs time SDPA's cuDNN backward the same way on the same
shape (its backward kernels, for comparison).
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from bench_backward import backward_launcher, load_runtime  # noqa: E402


def inputs(man, n):
    p = man["problem"]
    d, causal = p["head_dim"], p["causal"]
    dtype = torch.bfloat16 if p["dtype"] == "bf16" else torch.float16
    h, b = max(2048 // d, 1), max(16384 // n, 1)
    q, k, v, do = (torch.randn(b, h, n, d, device="cuda", dtype=dtype)
                   for _ in range(4))
    return q, k, v, do, causal, p["scale"]


def profiled(fn, label):
    for _ in range(3):  # warm-up outside the range
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    torch.cuda.nvtx.range_push(label)
    fn()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"profiled {label}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--runs", default="")
    ap.add_argument("--cudnn", default="")
    args = ap.parse_args()
    lib = load_runtime()
    for spec in filter(None, args.runs.split(",")):
        name, n = spec.split(":")
        kdir = Path(args.kernels) / name
        man = json.loads((kdir / "manifest.json").read_text())
        q, k, v, do, causal, scale = inputs(man, int(n))
        o, lse = torch.ops.aten._scaled_dot_product_flash_attention(
            q, k, v, 0.0, causal, False, scale=scale)[:2]
        handle = lib.attn_kernel_load(str(kdir).encode(), 0)
        if not handle:
            raise RuntimeError(lib.attn_runtime_last_error().decode())
        dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
        launch = backward_launcher(lib, handle, q, k, v, o, do,
                                   lse.contiguous(), dq, dk, dv)
        profiled(launch, f"attn {spec}")
    for spec in filter(None, args.cudnn.split(",")):
        name, n = spec.split(":")
        man = json.loads((Path(args.kernels) / name / "manifest.json")
                         .read_text())
        q, k, v, do, causal, scale = inputs(man, int(n))
        qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal,
                                                 scale=scale)
        profiled(lambda: torch.autograd.grad(out, (qg, kg, vg), do,
                                             retain_graph=True),
                 f"cudnn {spec}")


if __name__ == "__main__":
    main()
