"""Context-parallel attention over real ranks: torch.multiprocessing + NCCL,
one process per GPU, each rank's output and gradients against single-GPU
attn.torch.attention on the gathered sequence. Skipped visibly with fewer
than two GPUs."""

import os
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

PYTHON_DIR = str(Path(__file__).resolve().parents[1])


def _rel_err(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm().clamp_min(1e-30)).item()


def _worker(rank, world, port, causal, mode, load_balance, n, env, results):
    os.environ.update(env)
    sys.path.insert(0, PYTHON_DIR)
    import torch.distributed as dist
    import attn.torch as attn_torch
    from attn.distributed import context_parallel_attention, shard_sequence
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world)
    try:
        g = torch.Generator(device="cuda").manual_seed(0)
        mk = lambda h: torch.randn(1, h, n, 128, generator=g, device="cuda",  # noqa: E731
                                   dtype=torch.bfloat16)
        q, k, v, = mk(8), mk(2), mk(2)
        grad = torch.randn(1, 8, n, 128, generator=g, device="cuda",
                           dtype=torch.bfloat16)
        full = [t.clone().requires_grad_() for t in (q, k, v)]
        ref = attn_torch.attention(*full, causal=causal)
        want = torch.autograd.grad(ref, full, grad)
        sh = lambda t: shard_sequence(t, world, rank, load_balance=load_balance)  # noqa: E731
        loc = [sh(t).requires_grad_() for t in (q, k, v)]
        out = context_parallel_attention(*loc, causal=causal, mode=mode,
                                         load_balance=load_balance)
        got = torch.autograd.grad(out, loc, sh(grad))
        errs = {"out": _rel_err(out, sh(ref))}
        for name, a, b in zip(("dq", "dk", "dv"), got, want):
            errs[name] = _rel_err(a, sh(b))
        results[rank] = errs
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("mode", ["ring", "allgather"])
@pytest.mark.parametrize("causal, load_balance", [(False, True), (True, True),
                                                  (True, False)])
def test_multi_gpu_matches_single_gpu(mode, causal, load_balance):
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        pytest.skip("needs >= 2 CUDA devices (NCCL ranks); "
                    f"found {torch.cuda.device_count() if torch.cuda.is_available() else 0}")
    import socket
    import torch.multiprocessing as mp
    world = torch.cuda.device_count()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: os.environ[k] for k in ("ATTN_GPU_TEST_PACK", "ATTN_GPU_TEST_CACHE",
                                      "ATTN_RUNTIME_LIB") if k in os.environ}
    if "ATTN_GPU_TEST_PACK" in env:
        env["ATTN_KERNEL_PACK"] = env["ATTN_GPU_TEST_PACK"]
    if "ATTN_GPU_TEST_CACHE" in env:
        env["ATTN_CACHE_DIR"] = env["ATTN_GPU_TEST_CACHE"]
    n = 2 * world * 256
    results = mp.Manager().dict()
    mp.spawn(_worker, args=(world, port, causal, mode, load_balance, n, env,
                            results), nprocs=world, join=True)
    print(f"\nCP-NCCL world={world} mode={mode} causal={int(causal)} "
          f"zigzag={int(load_balance)}: {dict(results)}")
    assert len(results) == world
    for errs in results.values():
        assert all(e <= 1e-2 for e in errs.values()), errs
