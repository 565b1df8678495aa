"""A padded batch through attn.torch.attention: one call with key_range
(the padding inside the kernels) against one call per distinct padding
(slices, what attn.integrations.transformers did before) and SDPA with a
boolean [B, 1, Nq, Nk] mask; bf16, Llama-3-8B heads (32 query, 8 kv, D 128).

Cases: prefill of a left-padded batch (causal, Nq = Nk), one decode step of
it (Nq = 1), and a right-padded training batch (forward + backward). Every
sequence has its own padding (the worst case for slices). Prints a markdown
table (median of --reps CUDA-event timings after warm-up) and checks that
the three agree on the real rows.

    python bench/bench_padding.py [--batch 8] [--seq 2048] [--reps 20]
"""

import argparse
import statistics

import torch
import torch.nn.functional as F

import attn.torch as attn_torch


def timed(fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def case(name, b, nq, nk, pads, left, backward, reps):
    hq, hkv, d = 32, 8, 128
    g = torch.Generator(device="cuda").manual_seed(0)
    mk = lambda h, n: torch.randn(b, h, n, d, device="cuda",  # noqa: E731
                                  dtype=torch.bfloat16, generator=g)
    q, k, v = mk(hq, nq), mk(hkv, nk), mk(hkv, nk)
    pads = torch.tensor(pads, device="cuda")
    start = pads if left else torch.zeros_like(pads)
    end = torch.full_like(pads, nk) if left else nk - pads
    shift = nk - nq
    pos = torch.arange(nq, device="cuda") + shift
    j = torch.arange(nk, device="cuda")
    keys = (j >= start[:, None]) & (j < end[:, None])               # [B, Nk]
    mask = (j[None, :] <= pos[:, None])[None] & keys[:, None, :]     # [B, Nq, Nk]
    real = (pos >= start[:, None]) & (pos < end[:, None])            # [B, Nq]
    grad = torch.randn(b, hq, nq, d, device="cuda", dtype=torch.bfloat16)
    leaves = [t.requires_grad_(backward) for t in (q, k, v)]

    def one_call():
        out = attn_torch.attention(*leaves, causal=True,
                                   key_range=(start, end))
        if not left:  # padded rows past the end see real keys: zero them
            out = out.masked_fill(~real[:, None, :, None], 0.0)
        if backward:
            out.backward(grad)
        return out

    runs = [(int(s), int(e), r) for r, (s, e) in
            enumerate(zip(start.tolist(), end.tolist()))]

    def slices():
        out = q.new_zeros((b, hq, nq, d))
        for s, e, r in runs:
            q0, q1 = max(s - shift, 0), min(e - shift, nq)
            if e <= s or q1 <= q0:
                continue
            out[r:r + 1, :, q0:q1] = attn_torch.attention(
                leaves[0][r:r + 1, :, q0:q1], leaves[1][r:r + 1, :, s:e],
                leaves[2][r:r + 1, :, s:e], causal=True)
        if backward:
            out.backward(grad)
        return out

    def sdpa():
        out = F.scaled_dot_product_attention(
            leaves[0], leaves[1].repeat_interleave(hq // hkv, 1),
            leaves[2].repeat_interleave(hq // hkv, 1),
            attn_mask=mask[:, None]).nan_to_num(0.0)
        out = out.masked_fill(~real[:, None, :, None], 0.0)
        if backward:
            out.backward(grad)
        return out

    outs = [f().detach().float() for f in (one_call, slices, sdpa)]
    sel = real[:, None, :, None].expand_as(outs[0])
    worst = max(((o - outs[2]).abs()[sel].max().item() for o in outs[:2]))
    t = [timed(f, reps) for f in (one_call, slices, sdpa)]
    return (f"| {name} | {b}x{nq}x{nk} | {t[0]:.3f} | {t[1]:.3f} | "
            f"{t[2]:.3f} | {t[1] / t[0]:.2f}x | {t[2] / t[0]:.2f}x | "
            f"{worst:.3g} |")


def overhead(b, n, reps, causal=True, hkv=8):
    """key_range with every key against the plain call (no padding), timed
    interleaved (plain, key_range, plain: the GPU's clocks drift over a
    run), with each kernel's entry and tile."""
    g = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(b, 32, n, 128, device="cuda", dtype=torch.bfloat16,
                    generator=g)
    k, v = (torch.randn(b, hkv, n, 128, device="cuda", dtype=torch.bfloat16,
                        generator=g) for _ in range(2))
    every = (torch.zeros(b, dtype=torch.int32, device="cuda"),
             torch.full((b,), n, dtype=torch.int32, device="cuda"))
    plain = lambda: attn_torch.attention(q, k, v, causal=causal)  # noqa: E731
    ranged = lambda: attn_torch.attention(  # noqa: E731
        q, k, v, causal=causal, key_range=every)
    assert torch.equal(plain(), ranged())
    t = [timed(f, reps) for f in (plain, ranged, plain, ranged)]
    kernels = sorted({(lc.kernel.manifest.get("entry", "?"),
                       str(lc.kernel.manifest.get("tile", {})))
                      for lc in attn_torch._launchers_by_spec.values()
                      if not lc.backward})
    p_, r_ = min(t[0], t[2]), min(t[1], t[3])
    return (f"| no padding: key_range (every key) vs the plain call"
            f"{', causal' if causal else ''}, Hkv {hkv} | "
            f"{b}x{n}x{n} | {r_:.3f} | plain {p_:.3f} | | "
            f"{p_ / r_:.2f}x | | |"), kernels


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--reps", type=int, default=20)
    a = p.parse_args()
    b, n = a.batch, a.seq
    pads = [(i * 97) % (n // 2) for i in range(b)]  # distinct paddings
    print(f"# {torch.cuda.get_device_name()}, bf16, Hq 32 / Hkv 8, D 128; "
          f"paddings {pads}")
    print("| case | B x Nq x Nk | key_range ms | slices ms | SDPA mask ms "
          "| slices / key_range | SDPA / key_range | max abs diff vs SDPA |")
    print("|---|---|---|---|---|---|---|---|")
    print(case("prefill, left padding", b, n, n, pads, True, False, a.reps))
    print(case("decode step, left padding", b, 1, n, pads, True, False,
               a.reps))
    print(case("training fwd+bwd, right padding", b, n, n, pads, False, True,
               a.reps))
    kernels = set()
    for causal, hkv in ((True, 8), (False, 8), (True, 32)):
        row, used = overhead(b, n, a.reps, causal, hkv)
        kernels |= set(used)
        print(row)
    print("\nforward kernels loaded: " + "; ".join(
        f"{e} {tile}" for e, tile in sorted(kernels)))


if __name__ == "__main__":
    main()
