"""Context-parallel (ring) attention: the zig-zag schedule, the LSE merge
and the simulated ring on CPU in float64, real torch.distributed ranks on
the CPU (gloo; float64 reference blocks and attn's own CPU path), and the
simulated ring with attn's kernels on one GPU (skipped visibly without
CUDA)."""

import itertools
import math
import os
import random

import pytest

from attn import cp_schedule


# --- the schedule (pure Python) -------------------------------------------

@pytest.mark.parametrize("world", range(1, 9))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("load_balance", [False, True])
def test_schedule_covers_every_pair_once(world, causal, load_balance):
    """Expanding each rank's blocks over all ring steps to (query chunk, key
    chunk) pairs gives the global mask exactly: every visible pair once,
    diagonal pairs causal, nothing above the diagonal."""
    m = cp_schedule.chunks_per_rank(load_balance)
    seen = {}
    for t in range(world):
        for r in range(world):
            src = cp_schedule.source_rank(r, t, world)
            qc = cp_schedule.rank_chunks(r, world, load_balance)
            kc = cp_schedule.rank_chunks(src, world, load_balance)
            for q_lo, q_hi, k_lo, k_hi, c in cp_schedule.blocks(
                    r, src, world, causal, load_balance):
                for a in range(q_lo, q_hi):
                    for b in range(k_lo, k_hi):
                        gq, gk = qc[a], kc[b]
                        kind = "full"
                        if c:  # local diagonal order within one causal call
                            kind = ("diag" if a == b else
                                    "full" if a > b else "none")
                        if kind == "none":
                            continue
                        assert (gq, gk) not in seen, (t, r, gq, gk)
                        seen[(gq, gk)] = kind
    n = world * m
    for gq, gk in itertools.product(range(n), repeat=2):
        want = ("full" if not causal or gk < gq else
                "diag" if gk == gq else None)
        assert seen.get((gq, gk)) == want, (gq, gk, seen.get((gq, gk)), want)


@pytest.mark.parametrize("world", range(2, 9))
def test_zigzag_balances_causal_work(world):
    for t in range(world):
        works = {cp_schedule.work(r, cp_schedule.source_rank(r, t, world),
                                  world, True, True) for r in range(world)}
        assert works == {2.0}, (t, works)
    # The plain layout leaves ranks idle (the motivation for zig-zag).
    assert any(cp_schedule.work(r, cp_schedule.source_rank(r, 1, world),
                                world, True, False) == 0 for r in range(world))


# --- torch on CPU ---------------------------------------------------------

def _torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


def _full_reference(torch, q, k, v, causal, scale=None):
    from attn.lse_merge import reference_block_attention
    return reference_block_attention(q, k, v, causal, scale)


def _qkv(torch, b, hq, hkv, n, d, dtype, device="cpu", seed=0):
    g = torch.Generator(device=device).manual_seed(seed)
    mk = lambda h: torch.randn(b, h, n, d, generator=g, device=device,  # noqa: E731
                               dtype=torch.float32).to(dtype)
    return mk(hq), mk(hkv), mk(hkv)


def test_lse_merge_exact_with_empty_rows():
    torch = _torch()
    from attn.lse_merge import merge, empty_partial, reference_block_attention
    g = torch.Generator().manual_seed(1)
    q = torch.randn(2, 3, 40, 16, generator=g, dtype=torch.float64)
    k = torch.randn(2, 3, 50, 16, generator=g, dtype=torch.float64)
    v = torch.randn(2, 3, 50, 24, generator=g, dtype=torch.float64)
    o_full, lse_full = reference_block_attention(q, k, v, False, None)
    # Split the keys in three; in the first split some rows see no key.
    cuts = [0, 17, 30, 50]
    o, lse = empty_partial((2, 3, 40, 24), "cpu", torch.float64)
    for lo, hi in zip(cuts, cuts[1:]):
        ob, lb = reference_block_attention(q, k[:, :, lo:hi], v[:, :, lo:hi],
                                           False, None)
        if lo == 0:  # rows 0..9 of head 0 see nothing here
            ob[:, 0, :10] = 0
            lb[:, 0, :10] = -math.inf
            # so that the total stays exact, give those rows' keys elsewhere
        o, lse = merge(o, lse, ob, lb)
    # Rows with an emptied first split: compare against attention over
    # keys 17..49 only.
    o_tail, lse_tail = reference_block_attention(q, k[:, :, 17:], v[:, :, 17:],
                                                 False, None)
    want_o, want_lse = o_full.clone(), lse_full.clone()
    want_o[:, 0, :10], want_lse[:, 0, :10] = o_tail[:, 0, :10], lse_tail[:, 0, :10]
    assert torch.allclose(o, want_o, atol=1e-12, rtol=1e-12)
    assert torch.allclose(lse, want_lse, atol=1e-12, rtol=1e-12)
    # Merging two empty partials: O = 0, LSE = -inf, no NaN.
    e_o, e_l = empty_partial((1, 1, 4, 8), "cpu")
    mo, ml = merge(e_o, e_l, e_o, e_l)
    assert torch.equal(mo, torch.zeros_like(mo))
    assert torch.isneginf(ml).all()
    # Merging is order-independent and float32 by default.
    oa, la = reference_block_attention(q.float(), k[:, :, :25].float(),
                                       v[:, :, :25].float(), False, None)
    ob, lb = reference_block_attention(q.float(), k[:, :, 25:].float(),
                                       v[:, :, 25:].float(), False, None)
    m1 = merge(oa.float(), la.float(), ob.float(), lb.float())
    m2 = merge(ob.float(), lb.float(), oa.float(), la.float())
    assert m1[0].dtype == torch.float32
    assert torch.allclose(m1[0], m2[0]) and torch.allclose(m1[1], m2[1])
    assert torch.allclose(m1[0].double(), o_full, atol=1e-5)


def test_lse_merge_shape_errors():
    torch = _torch()
    from attn.lse_merge import merge
    with pytest.raises(ValueError, match="shapes differ"):
        merge(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3),
              torch.zeros(1, 2, 5, 4), torch.zeros(1, 2, 5))


@pytest.mark.parametrize("world, load_balance", [(1, True), (2, True), (3, True),
                                                 (4, True), (3, False)])
def test_shard_unshard_round_trip(world, load_balance):
    torch = _torch()
    from attn.distributed import shard_sequence, unshard_sequence
    x = torch.arange(2 * 3 * 24 * 2).reshape(2, 3, 24, 2)
    shards = [shard_sequence(x, world, r, load_balance=load_balance)
              for r in range(world)]
    assert all(s.shape[2] == 24 // world for s in shards)
    assert torch.equal(unshard_sequence(shards, load_balance=load_balance), x)
    if load_balance and world == 2:  # chunks 0,3 | 1,2 of 4 (6 rows each)
        assert torch.equal(shards[0][:, :, :6], x[:, :, 0:6])
        assert torch.equal(shards[0][:, :, 6:], x[:, :, 18:24])
        assert torch.equal(shards[1], x[:, :, 6:18])
    with pytest.raises(ValueError, match="multiple of"):
        shard_sequence(x[:, :, :23], world if world > 1 else 2, 0,
                       load_balance=load_balance)


@pytest.mark.parametrize("world", [1, 2, 3, 4])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("load_balance", [False, True])
@pytest.mark.parametrize("backward", ["ring", "autograd"])
def test_simulated_ring_equals_full_attention_float64(world, causal,
                                                      load_balance, backward):
    torch = _torch()
    from attn.distributed import simulate_ring
    n = 2 * world * 6
    q, k, v = _qkv(torch, 2, 4, 2, n, 8, torch.float64, seed=world)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    out, lse = simulate_ring(q, k, v, world, causal, load_balance=load_balance,
                             return_lse=True, backward=backward)
    ref, ref_lse = _full_reference(torch, q, k, v, causal)
    assert torch.allclose(out, ref, atol=1e-12, rtol=1e-10)
    assert torch.allclose(lse.double(), ref_lse, atol=1e-12)
    g = torch.randn_like(ref)
    got = torch.autograd.grad(out, (q, k, v), g)
    want = torch.autograd.grad(ref, (q, k, v), g)
    for name, a, b in zip("qkv", got, want):
        assert torch.allclose(a, b, atol=1e-10, rtol=1e-9), (
            name, (a - b).abs().max().item())


def test_reference_block_backward_matches_autograd():
    """The identity of attn.lse_merge: per-block gradients from the final O
    and LSE sum to the full gradients."""
    torch = _torch()
    from attn.lse_merge import reference_block_attention, reference_block_backward
    q, k, v = _qkv(torch, 1, 2, 1, 20, 8, torch.float64, seed=3)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    g = torch.randn(1, 2, 20, 8, dtype=torch.float64)
    out_f, lse_f = reference_block_attention(q, k, v, False, 0.3)
    want_f = torch.autograd.grad(out_f, (q, k, v), g)
    dq2 = torch.zeros_like(q)
    dk2, dv2 = torch.zeros_like(k), torch.zeros_like(v)
    for lo, hi in [(0, 7), (7, 20)]:
        a, b, c = reference_block_backward(g, q, k[:, :, lo:hi], v[:, :, lo:hi],
                                           out_f.detach(), lse_f.detach(),
                                           False, 0.3)
        dq2 += a
        dk2[:, :, lo:hi] += b
        dv2[:, :, lo:hi] += c
    for a, b in zip((dq2, dk2, dv2), want_f):
        assert torch.allclose(a, b, atol=1e-12)


def test_context_parallel_needs_process_group():
    torch = _torch()
    from attn.distributed import context_parallel_attention
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        pytest.skip("a process group is initialized in this process")
    q = torch.zeros(1, 1, 4, 8)
    with pytest.raises(RuntimeError, match="not initialized"):
        context_parallel_attention(q, q, q)
    with pytest.raises(ValueError, match="mode must be"):
        context_parallel_attention(q, q, q, mode="tree")


# --- one GPU: the simulated ring with attn's kernels -----------------------

def _gpu_torch(monkeypatch):
    torch = _torch()
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the kernel-backed simulated ring needs a GPU")
    if os.environ.get("ATTN_GPU_TEST_PACK"):
        monkeypatch.setenv("ATTN_KERNEL_PACK", os.environ["ATTN_GPU_TEST_PACK"])
    if os.environ.get("ATTN_GPU_TEST_CACHE"):
        monkeypatch.setenv("ATTN_CACHE_DIR", os.environ["ATTN_GPU_TEST_CACHE"])
    return torch


def _rel_err(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm().clamp_min(1e-30)).item()


@pytest.mark.parametrize("world", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("load_balance", [False, True])
def test_gpu_simulated_ring_matches_single_gpu(monkeypatch, world, causal,
                                               load_balance):
    torch = _gpu_torch(monkeypatch)
    import attn.torch as attn_torch
    from attn.distributed import simulate_ring
    n = 2 * world * 96  # chunk lengths not multiples of the kernels' tiles
    q, k, v = _qkv(torch, 1, 4, 2, n, 128, torch.bfloat16, device="cuda",
                   seed=world)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    out = simulate_ring(q, k, v, world, causal, load_balance=load_balance)
    ref = attn_torch.attention(q, k, v, causal=causal)
    g = torch.randn_like(ref)
    got = torch.autograd.grad(out, (q, k, v), g)
    want = torch.autograd.grad(ref, (q, k, v), g)
    q64, k64, v64 = (t.detach().double() for t in (q, k, v))
    from attn.lse_merge import reference_block_attention
    exact = reference_block_attention(q64, k64, v64, causal, None)[0]
    errs = {"out": _rel_err(out, ref), "out_vs_f64": _rel_err(out, exact)}
    for name, a, b in zip(("dq", "dk", "dv"), got, want):
        errs[name] = _rel_err(a, b)
    print(f"\nCP-SIM world={world} causal={int(causal)} zigzag={int(load_balance)} "
          f"N={n} " + " ".join(f"{k}={e:.2e}" for k, e in errs.items()))
    assert all(e <= 1e-2 for e in errs.values()), errs


# --- real ranks on the CPU: gloo, float64 reference blocks ------------------

def _gloo_worker(rank, world, port, causal, mode, load_balance, results):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import torch
    import torch.distributed as dist
    from attn.distributed import context_parallel_attention, shard_sequence
    from attn.lse_merge import reference_block_attention
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world)
    try:
        g = torch.Generator().manual_seed(0)
        n = 2 * world * 5
        q = torch.randn(1, 4, n, 8, generator=g, dtype=torch.float64)
        k = torch.randn(1, 2, n, 8, generator=g, dtype=torch.float64)
        v = torch.randn(1, 2, n, 8, generator=g, dtype=torch.float64)
        grad = torch.randn(1, 4, n, 8, generator=g, dtype=torch.float64)
        full = [t.clone().requires_grad_() for t in (q, k, v)]
        ref = reference_block_attention(*full, causal, None)[0]
        want = torch.autograd.grad(ref, full, grad)
        sh = lambda t: shard_sequence(t, world, rank, load_balance=load_balance)  # noqa: E731
        loc = [sh(t).requires_grad_() for t in (q, k, v)]
        out = context_parallel_attention(*loc, causal=causal, mode=mode,
                                         load_balance=load_balance)
        got = torch.autograd.grad(out, loc, sh(grad))
        errs = [(out - sh(ref)).abs().max().item()]
        errs += [(a - sh(b)).abs().max().item() for a, b in zip(got, want)]
        results[rank] = max(errs)
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("world", [2, 3])
@pytest.mark.parametrize("mode", ["ring", "allgather"])
@pytest.mark.parametrize("causal, load_balance", [(False, True), (True, True),
                                                  (True, False)])
def test_gloo_ranks_equal_full_attention(world, mode, causal, load_balance):
    """The torch.distributed code path itself (P2P ring, all-gather,
    travelling dK/dV) with real processes on the CPU."""
    torch = _torch()
    import socket
    import torch.distributed as dist
    import torch.multiprocessing as mp
    if not dist.is_available():
        pytest.skip("torch.distributed is not available in this build")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    results = mp.Manager().dict()
    mp.spawn(_gloo_worker, args=(world, port, causal, mode, load_balance,
                                 results), nprocs=world, join=True)
    assert sorted(results.keys()) == list(range(world))
    assert max(results.values()) < 1e-10, dict(results)


# --- real ranks on the CPU: gloo, attn's CPU path as the block function -----

def _attn_gloo_worker(rank, world, port, causal, mode, results):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import torch
    import torch.distributed as dist
    import attn.torch as attn_torch
    from attn import cpu
    from attn.distributed import context_parallel_attention, shard_sequence
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world)
    try:
        g = torch.Generator().manual_seed(0)
        n = 2 * world * 24  # chunks of 24 rows: not a multiple of a tile
        q = torch.randn(1, 4, n, 32, generator=g)
        k = torch.randn(1, 2, n, 32, generator=g)
        v = torch.randn(1, 2, n, 32, generator=g)
        grad = torch.randn(1, 4, n, 32, generator=g)
        # Single-process attn.torch.attention on the whole sequence.
        full = [t.clone().requires_grad_() for t in (q, k, v)]
        ref = attn_torch.attention(*full, causal=causal)
        want = torch.autograd.grad(ref, full, grad)
        sh = lambda t: shard_sequence(t, world, rank)  # noqa: E731
        loc = [sh(t).requires_grad_() for t in (q, k, v)]
        before = cpu.compiled_modules()
        out = context_parallel_attention(*loc, causal=causal, mode=mode)
        got = torch.autograd.grad(out, loc, sh(grad))
        errs = {"out": _rel_err(out, sh(ref))}
        for name, a, b in zip(("dq", "dk", "dv"), got, want):
            errs[name] = _rel_err(a, sh(b))
        # The blocks ran the CPU path (no float64 reference stand-in).
        errs["compiled"] = cpu.compiled_modules() - before
        results[rank] = errs
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("world, mode, causal", [
    (2, "ring", True), (2, "allgather", False), (4, "ring", True)])
def test_gloo_ranks_with_attn_cpu_kernels(world, mode, causal):
    """context_parallel_attention over real gloo ranks with attn's own CPU
    path on float32 shards (zig-zag), forward and backward, against
    attn.torch.attention on the whole sequence in one process."""
    torch = _torch()
    import socket
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    results = mp.Manager().dict()
    mp.spawn(_attn_gloo_worker, args=(world, port, causal, mode, results),
             nprocs=world, join=True)
    assert sorted(results.keys()) == list(range(world))
    for rank, errs in results.items():
        assert errs.pop("compiled") > 0, rank
        # float32 throughout: only the merges' rounding differs.
        assert max(errs.values()) <= 1e-5, (rank, errs)
