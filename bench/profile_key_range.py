"""The plain forward kernel and its key_range ("_kr") form with every key in
range, on the same inputs, for a profiler: run it under Nsight Compute to
compare the two kernels' counters (issue 25: the _kr kernel's cost at
long causal GQA).

    ncu --kernel-name regex:attn_fwd --metrics ... \
        python bench/profile_key_range.py [--causal] [--hkv 8] [--seq 8192]
"""

import argparse

import torch

import attn.torch as attn_torch


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=8192)
    p.add_argument("--hkv", type=int, default=8)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--reps", type=int, default=2)
    a = p.parse_args()
    g = torch.Generator(device="cuda").manual_seed(0)
    mk = lambda h: torch.randn(a.batch, h, a.seq, 128, device="cuda",  # noqa: E731
                               dtype=torch.bfloat16, generator=g)
    q, k, v = mk(32), mk(a.hkv), mk(a.hkv)
    every = (torch.zeros(a.batch, dtype=torch.int32, device="cuda"),
             torch.full((a.batch,), a.seq, dtype=torch.int32, device="cuda"))
    for _ in range(a.reps):
        plain = attn_torch.attention(q, k, v, causal=a.causal)
        ranged = attn_torch.attention(q, k, v, causal=a.causal,
                                      key_range=every)
    torch.cuda.synchronize()
    assert torch.equal(plain, ranged)
    print("plain and key_range outputs equal")


if __name__ == "__main__":
    main()
