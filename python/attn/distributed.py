"""Context-parallel (ring) attention over torch.distributed with attn's kernels.

    from attn.distributed import context_parallel_attention, shard_sequence
    q_local = shard_sequence(q, world, rank)          # [B, H, N/W, D], zig-zag
    out_local = context_parallel_attention(q_local, k_local, v_local,
                                           causal=True)  # forward + backward

Each rank of `group` holds its shard of q, k and v along the sequence
(dim 2), all ranks the same length. mode="ring": K/V shards travel around
the ring (rank r sends to r+1, receives from r-1) with batch_isend_irecv,
the next shard's transfer overlapping the current shard's attention; each
rank merges its partial results exactly through the log-sum-exp
(attn.lse_merge). mode="allgather": K/V are all-gathered once, then the same
per-shard schedule runs locally. The backward pass runs the ring again:
K/V travel as in the forward and the dK/dV accumulator of each shard travels
with it, one hop behind, so after W steps each rank receives the complete
dK/dV of its own shard; dQ stays local. Per-block gradients come from the
final O and LSE (see attn.lse_merge for why that is exact).

causal=True with load_balance=True (default) expects the zig-zag layout of
shard_sequence (rank r holds chunks r and 2W-1-r of 2W): every rank does the
same work at every step (attn.cp_schedule). load_balance=False expects the
plain layout (rank r holds chunk r).

simulate_ring runs exactly the same per-step schedule for W simulated ranks
in one process (no torch.distributed), with a pluggable block function.
The block functions default to attn.torch.attention and its backward: the
GPU kernels on CUDA tensors, the compiler's CPU path on CPU tensors (so the
gloo backend runs attn's CPU code), and a float64 reference for float64
tensors.
"""

from typing import Callable, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist
from torch import Tensor

from . import cp_schedule
from .lse_merge import (empty_partial, merge, reference_block_attention,
                        reference_block_backward)

BlockFn = Callable[[Tensor, Tensor, Tensor, bool, Optional[float]],
                   Tuple[Tensor, Tensor]]
BlockBwdFn = Callable[..., Tuple[Tensor, Tensor, Tensor]]

_WHAT = "attn.distributed"


# --- sharding --------------------------------------------------------------

def _chunks(x: Tensor, world: int, load_balance: bool, dim: int) -> List[Tensor]:
    n = x.shape[dim]
    parts = world * cp_schedule.chunks_per_rank(load_balance)
    if n % parts:
        raise ValueError(f"{_WHAT}: sequence length {n} (dim {dim}) must be a "
                         f"multiple of {parts} ({'2x' if load_balance else ''}"
                         f"world size {world}) to shard it")
    return list(x.chunk(parts, dim=dim))


def shard_sequence(x: Tensor, world: int, rank: int, *,
                   load_balance: bool = True, dim: int = 2) -> Tensor:
    """Rank `rank`'s shard of the full sequence `x` (contiguous)."""
    if not 0 <= rank < world:
        raise ValueError(f"{_WHAT}: rank {rank} outside world size {world}")
    ch = _chunks(x, world, load_balance, dim)
    idx = cp_schedule.rank_chunks(rank, world, load_balance)
    return torch.cat([ch[i] for i in idx], dim=dim).contiguous()


def unshard_sequence(shards: Sequence[Tensor], *, load_balance: bool = True,
                     dim: int = 2) -> Tensor:
    """The full sequence from every rank's shard (inverse of shard_sequence)."""
    world = len(shards)
    m = cp_schedule.chunks_per_rank(load_balance)
    parts: List[Optional[Tensor]] = [None] * (world * m)
    for r, s in enumerate(shards):
        for i, c in zip(cp_schedule.rank_chunks(r, world, load_balance),
                        s.chunk(m, dim=dim)):
            parts[i] = c
    return torch.cat(parts, dim=dim)


# --- block functions -------------------------------------------------------

def kernel_block_forward(q, k, v, causal, scale):
    """attn's forward kernel: (O, LSE) of one block."""
    from . import torch as attn_torch
    return attn_torch.attention(q, k, v, causal=causal, scale=scale,
                                return_lse=True)


def kernel_block_backward(grad_out, q, k, v, out, lse, causal, scale):
    """attn's backward kernels on one block with the final O and LSE."""
    from . import torch as _attn_torch  # noqa: F401  (registers the op)
    return torch.ops.attn.attention_backward(grad_out, q, k, v, out, lse,
                                             causal, scale)


def _default_fns(t: Tensor) -> Tuple[BlockFn, BlockBwdFn]:
    """attn's kernels: the GPU ones for CUDA tensors, the compiler's CPU
    path (attn.cpu) for CPU tensors of its dtypes; the float64 reference
    for float64, which no kernel takes."""
    from . import cpu
    if t.is_cuda or (t.device.type == "cpu" and t.dtype in cpu.DTYPES):
        return kernel_block_forward, kernel_block_backward
    return reference_block_attention, reference_block_backward


# --- one rank's step (shared by the distributed and the simulated ring) ----

def _sl(t: Tensor, lo: int, hi: int, chunk: int) -> Tensor:
    return t[:, :, lo * chunk:hi * chunk]


def _forward_step(acc: List[Tuple[Tensor, Tensor]], q: Tensor, k: Tensor,
                  v: Tensor, blocks, chunk: int, block_fn: BlockFn,
                  scale) -> None:
    """Merges this step's blocks into acc (one (O, LSE) per local q chunk)."""
    for q_lo, q_hi, k_lo, k_hi, causal in blocks:
        o, lse = block_fn(_sl(q, q_lo, q_hi, chunk), _sl(k, k_lo, k_hi, chunk),
                          _sl(v, k_lo, k_hi, chunk), causal, scale)
        for i in range(q_lo, q_hi):
            part = slice((i - q_lo) * chunk, (i - q_lo + 1) * chunk)
            acc[i] = merge(acc[i][0], acc[i][1], o[:, :, part], lse[:, :, part])


def _backward_step(dq: Tensor, dk: Tensor, dv: Tensor, grad_out: Tensor,
                   q: Tensor, k: Tensor, v: Tensor, out: Tensor, lse: Tensor,
                   blocks, chunk: int, block_bwd_fn: BlockBwdFn, scale) -> None:
    """Adds this step's block gradients into dq (local) and dk/dv (of the
    K/V shard held), all float32/float64 accumulators."""
    for q_lo, q_hi, k_lo, k_hi, causal in blocks:
        qs = lambda t: _sl(t, q_lo, q_hi, chunk)  # noqa: E731
        ks = lambda t: _sl(t, k_lo, k_hi, chunk)  # noqa: E731
        lse_q = lse[:, :, q_lo * chunk:q_hi * chunk]
        g_q, g_k, g_v = block_bwd_fn(qs(grad_out), qs(q), ks(k), ks(v), qs(out),
                                     lse_q, causal, scale)
        qs(dq).add_(g_q.to(dq.dtype))
        ks(dk).add_(g_k.to(dk.dtype))
        ks(dv).add_(g_v.to(dv.dtype))


def _local_setup(q: Tensor, load_balance: bool):
    m = cp_schedule.chunks_per_rank(load_balance)
    n = q.shape[2]
    if n % m:
        raise ValueError(f"{_WHAT}: local length {n} must be even with "
                         "load_balance=True (two zig-zag chunks per rank)")
    chunk = n // m
    acc_dt = torch.float64 if q.dtype == torch.float64 else torch.float32
    return m, chunk, acc_dt


def _finish(acc, dtype) -> Tuple[Tensor, Tensor]:
    out = torch.cat([o for o, _ in acc], dim=2).to(dtype)
    # float32 LSE, except for float64 inputs (a float32 LSE would limit the
    # float64 backward to ~1e-7).
    lse = torch.cat([l for _, l in acc], dim=2)
    lse = lse if lse.dtype == torch.float64 else lse.float()
    return out.contiguous(), lse.contiguous()


def _new_acc(q: Tensor, v: Tensor, m: int, chunk: int, acc_dt):
    B, H = q.shape[0], q.shape[1]
    return [empty_partial((B, H, chunk, v.shape[3]), q.device, acc_dt)
            for _ in range(m)]


# --- torch.distributed ------------------------------------------------------

class _Ring:
    """P2P exchange with the ring neighbours of `group`."""

    def __init__(self, group):
        self.group = group
        self.world = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        g = group if group is not None else dist.group.WORLD
        self.next = dist.get_global_rank(g, (self.rank + 1) % self.world)
        self.prev = dist.get_global_rank(g, (self.rank - 1) % self.world)

    def start(self, tensors: Sequence[Tensor]):
        """Sends `tensors` to the next rank and receives same-shaped ones from
        the previous; returns (handle, received). Call wait(handle) before
        reading the received tensors or reusing the sent ones."""
        send = [t.contiguous() for t in tensors]
        recv = [torch.empty_like(t) for t in send]
        ops = [dist.P2POp(dist.isend, t, self.next, self.group) for t in send]
        ops += [dist.P2POp(dist.irecv, t, self.prev, self.group) for t in recv]
        return (dist.batch_isend_irecv(ops), send), recv

    @staticmethod
    def wait(handle) -> None:
        for req in handle[0]:
            req.wait()


def _all_gather(t: Tensor, group, world: int) -> List[Tensor]:
    t = t.contiguous()
    out = [torch.empty_like(t) for _ in range(world)]
    dist.all_gather(out, t, group=group)
    return out


def _reduce_scatter(parts: List[Tensor], group, rank: int) -> Tensor:
    """Sum over ranks of parts[i], delivered to rank i."""
    if dist.get_backend(group) == "nccl":
        out = torch.empty_like(parts[0])
        dist.reduce_scatter(out, parts, group=group)
        return out
    # gloo has no reduce_scatter: reduce everything, keep our part.
    stacked = torch.stack(parts)
    dist.all_reduce(stacked, group=group)
    return stacked[rank]


class _ContextParallelAttention(torch.autograd.Function):

    @staticmethod
    def forward(ctx, q, k, v, group, causal, scale, mode, load_balance,
                block_fn, block_bwd_fn):
        world, rank = dist.get_world_size(group), dist.get_rank(group)
        m, chunk, acc_dt = _local_setup(q, load_balance)
        acc = _new_acc(q, v, m, chunk, acc_dt)
        gathered = None
        if mode == "allgather":
            gathered = (_all_gather(k, group, world), _all_gather(v, group, world))
        ring = _Ring(group) if mode == "ring" and world > 1 else None
        k_cur, v_cur = k, v
        for t in range(world):
            src = cp_schedule.source_rank(rank, t, world)
            if gathered is not None:
                k_cur, v_cur = gathered[0][src], gathered[1][src]
            pending = None
            if ring is not None and t + 1 < world:
                pending = ring.start([k_cur, v_cur])  # overlaps this step
            _forward_step(acc, q, k_cur, v_cur,
                          cp_schedule.blocks(rank, src, world, causal,
                                             load_balance),
                          chunk, block_fn, scale)
            if pending is not None:
                _Ring.wait(pending[0])
                k_cur, v_cur = pending[1]
        out, lse = _finish(acc, q.dtype)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.args = (group, causal, scale, mode, load_balance, block_bwd_fn)
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, grad_out, _grad_lse):
        q, k, v, out, lse = ctx.saved_tensors
        group, causal, scale, mode, load_balance, block_bwd_fn = ctx.args
        world, rank = dist.get_world_size(group), dist.get_rank(group)
        _, chunk, acc_dt = _local_setup(q, load_balance)
        grad_out = grad_out.contiguous()
        dq = torch.zeros(q.shape, dtype=acc_dt, device=q.device)
        if mode == "allgather":
            ks, vs = _all_gather(k, group, world), _all_gather(v, group, world)
            dks = [torch.zeros(k.shape, dtype=acc_dt, device=k.device)
                   for _ in range(world)]
            dvs = [torch.zeros(v.shape, dtype=acc_dt, device=v.device)
                   for _ in range(world)]
            for t in range(world):
                src = cp_schedule.source_rank(rank, t, world)
                _backward_step(dq, dks[src], dvs[src], grad_out, q, ks[src],
                               vs[src], out, lse,
                               cp_schedule.blocks(rank, src, world, causal,
                                                  load_balance),
                               chunk, block_bwd_fn, scale)
            dk, dv = _reduce_scatter(dks, group, rank), _reduce_scatter(dvs, group, rank)
        else:
            ring = _Ring(group) if world > 1 else None
            k_cur, v_cur = k, v
            dk = dv = None          # accumulator of the shard held
            acc_pending = None      # accumulator of the next shard, in flight
            for t in range(world):
                src = cp_schedule.source_rank(rank, t, world)
                kv_pending = None
                if ring is not None and t + 1 < world:
                    kv_pending = ring.start([k_cur, v_cur])
                dk_blk = torch.zeros(k.shape, dtype=acc_dt, device=k.device)
                dv_blk = torch.zeros(v.shape, dtype=acc_dt, device=v.device)
                _backward_step(dq, dk_blk, dv_blk, grad_out, q, k_cur, v_cur,
                               out, lse,
                               cp_schedule.blocks(rank, src, world, causal,
                                                  load_balance),
                               chunk, block_bwd_fn, scale)
                if acc_pending is None:     # step 0: our own shard, new
                    dk, dv = dk_blk, dv_blk
                else:                       # what earlier ranks added
                    _Ring.wait(acc_pending[0])
                    dk, dv = acc_pending[1]
                    dk.add_(dk_blk)
                    dv.add_(dv_blk)
                if ring is not None:
                    # Pass it on; after the last step it arrives home.
                    acc_pending = ring.start([dk, dv])
                if kv_pending is not None:
                    _Ring.wait(kv_pending[0])
                    k_cur, v_cur = kv_pending[1]
            if acc_pending is not None:
                _Ring.wait(acc_pending[0])
                dk, dv = acc_pending[1]
        return (dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype),
                None, None, None, None, None, None, None)


def context_parallel_attention(q: Tensor, k: Tensor, v: Tensor, group=None, *,
                               causal: bool = False,
                               scale: Optional[float] = None,
                               mode: str = "ring", load_balance: bool = True,
                               return_lse: bool = False,
                               block_fn: Optional[BlockFn] = None,
                               block_bwd_fn: Optional[BlockBwdFn] = None):
    """Attention over a sequence sharded across the ranks of `group`.

    q [B, Hq, N_local, D], k [B, Hkv, N_local, D], v [B, Hkv, N_local, Dv]:
    this rank's shard (shard_sequence's layout; N_local equal on every rank).
    Returns this rank's rows of the output [B, Hq, N_local, Dv] (and the
    float32 LSE, float64 for float64 inputs, with return_lse). Differentiable
    in q, k, v. The block
    functions default to attn's kernels: the GPU ones for CUDA tensors, the
    CPU path for float32/bfloat16/float16 CPU tensors (e.g. with the gloo
    backend), the float64 reference for float64."""
    if mode not in ("ring", "allgather"):
        raise ValueError(f"{_WHAT}: mode must be 'ring' or 'allgather', got "
                         f"{mode!r}")
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError(f"{_WHAT}: torch.distributed is not initialized "
                           "(call dist.init_process_group first, or use "
                           "simulate_ring on one process)")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.dim() != 4:
            raise ValueError(f"{_WHAT}: {name} must be 4-D [B, H, N_local, D], "
                             f"got shape {tuple(t.shape)}")
    if k.shape[2] != q.shape[2] or v.shape[2] != q.shape[2]:
        raise ValueError(f"{_WHAT}: q, k, v shards must have one length, got "
                         f"{q.shape[2]}, {k.shape[2]}, {v.shape[2]}")
    fwd, bwd = _default_fns(q)
    out, lse = _ContextParallelAttention.apply(
        q, k, v, group, bool(causal), scale, mode, bool(load_balance),
        block_fn or fwd, block_bwd_fn or bwd)
    return (out, lse) if return_lse else out


# --- the same schedule in one process ----------------------------------------

class _SimulatedRing(torch.autograd.Function):

    @staticmethod
    def forward(ctx, q, k, v, world, causal, scale, load_balance, block_fn,
                block_bwd_fn):
        qs = [shard_sequence(q, world, r, load_balance=load_balance)
              for r in range(world)]
        ks = [shard_sequence(k, world, r, load_balance=load_balance)
              for r in range(world)]
        vs = [shard_sequence(v, world, r, load_balance=load_balance)
              for r in range(world)]
        m, chunk, acc_dt = _local_setup(qs[0], load_balance)
        accs = [_new_acc(qs[r], vs[r], m, chunk, acc_dt) for r in range(world)]
        for t in range(world):          # ring step
            for r in range(world):      # what each rank does in that step
                src = cp_schedule.source_rank(r, t, world)
                _forward_step(accs[r], qs[r], ks[src], vs[src],
                              cp_schedule.blocks(r, src, world, causal,
                                                 load_balance),
                              chunk, block_fn, scale)
        outs, lses = zip(*[_finish(a, q.dtype) for a in accs])
        ctx.save_for_backward(q, k, v)
        ctx.shards = (qs, ks, vs, list(outs), list(lses))
        ctx.args = (world, causal, scale, load_balance, block_bwd_fn, chunk,
                    acc_dt)
        out = unshard_sequence(outs, load_balance=load_balance)
        lse = unshard_sequence(lses, load_balance=load_balance)
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, grad_out, _grad_lse):
        qs, ks, vs, outs, lses = ctx.shards
        world, causal, scale, load_balance, block_bwd_fn, chunk, acc_dt = ctx.args
        gos = [shard_sequence(grad_out, world, r, load_balance=load_balance)
               for r in range(world)]
        dqs = [torch.zeros(t.shape, dtype=acc_dt, device=t.device) for t in qs]
        # dK/dV accumulators travel with their shard; added to in ring order.
        dks = [torch.zeros(t.shape, dtype=acc_dt, device=t.device) for t in ks]
        dvs = [torch.zeros(t.shape, dtype=acc_dt, device=t.device) for t in vs]
        for t in range(world):
            for r in range(world):
                src = cp_schedule.source_rank(r, t, world)
                _backward_step(dqs[r], dks[src], dvs[src], gos[r], qs[r],
                               ks[src], vs[src], outs[r], lses[r],
                               cp_schedule.blocks(r, src, world, causal,
                                                  load_balance),
                               chunk, block_bwd_fn, scale)
        q, k, v = ctx.saved_tensors
        un = lambda ts, like: unshard_sequence(  # noqa: E731
            ts, load_balance=load_balance).to(like.dtype)
        return (un(dqs, q), un(dks, k), un(dvs, v),
                None, None, None, None, None, None)


def _simulate_autograd(q, k, v, world, causal, scale, load_balance, block_fn):
    """The forward schedule without a custom backward: autograd
    differentiates through the block function and the merges."""
    qs = [shard_sequence(q, world, r, load_balance=load_balance)
          for r in range(world)]
    ks = [shard_sequence(k, world, r, load_balance=load_balance)
          for r in range(world)]
    vs = [shard_sequence(v, world, r, load_balance=load_balance)
          for r in range(world)]
    m, chunk, acc_dt = _local_setup(qs[0], load_balance)
    accs = [_new_acc(qs[r], vs[r], m, chunk, acc_dt) for r in range(world)]
    for t in range(world):
        for r in range(world):
            src = cp_schedule.source_rank(r, t, world)
            _forward_step(accs[r], qs[r], ks[src], vs[src],
                          cp_schedule.blocks(r, src, world, causal,
                                             load_balance),
                          chunk, block_fn, scale)
    outs, lses = zip(*[(torch.cat([o for o, _ in a], 2).to(q.dtype),
                        torch.cat([l for _, l in a], 2)) for a in accs])
    return (unshard_sequence(outs, load_balance=load_balance),
            unshard_sequence(lses, load_balance=load_balance))


def simulate_ring(q: Tensor, k: Tensor, v: Tensor, world_size: int,
                  causal: bool = False, *, scale: Optional[float] = None,
                  load_balance: bool = True, return_lse: bool = False,
                  block_fn: Optional[BlockFn] = None,
                  block_bwd_fn: Optional[BlockBwdFn] = None,
                  backward: str = "ring"):
    """context_parallel_attention for `world_size` simulated ranks in one
    process: q, k, v are the *full* sequences [B, H, N, D]; they are sharded
    (shard_sequence), every rank's ring steps run in order with the same
    per-step schedule and merges as the distributed version, and the output
    is unsharded. backward="ring" differentiates with the reverse-ring
    schedule and block_bwd_fn (as the distributed backward does);
    backward="autograd" lets autograd differentiate through block_fn and the
    merges instead. Block functions default as in
    context_parallel_attention."""
    if world_size < 1:
        raise ValueError(f"{_WHAT}: world_size must be >= 1, got {world_size}")
    if backward not in ("ring", "autograd"):
        raise ValueError(f"{_WHAT}: backward must be 'ring' or 'autograd', got "
                         f"{backward!r}")
    fwd, bwd = _default_fns(q)
    block_fn, block_bwd_fn = block_fn or fwd, block_bwd_fn or bwd
    if backward == "autograd":
        out, lse = _simulate_autograd(q, k, v, world_size, bool(causal), scale,
                                      bool(load_balance), block_fn)
    else:
        out, lse = _SimulatedRing.apply(q, k, v, world_size, bool(causal),
                                        scale, bool(load_balance), block_fn,
                                        block_bwd_fn)
    return (out, lse) if return_lse else out
