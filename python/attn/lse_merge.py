"""Exact merging of partial attention results through the log-sum-exp.

Attention over a key set split into blocks A and B can be computed block by
block: each block gives O_x = softmax(S_x)·V_x and LSE_x = log Σ exp(S_x)
(per query row, natural log). The result over A ∪ B is

    LSE = log(exp(LSE_a) + exp(LSE_b))
    O   = exp(LSE_a - LSE)·O_a + exp(LSE_b - LSE)·O_b

which is exact (no approximation, only rounding). A row that sees no key in
a block has LSE_x = -inf and contributes weight 0; a row that sees no key in
either block keeps O = 0 and LSE = -inf (never NaN). Context-parallel (ring)
attention merges one such partial per key shard (attn.distributed).

Backward identity. With the final O and LSE over all keys, the gradient of
every key block is computed independently from that block alone:

    P_x   = exp(S_x - LSE)            (the *global* probabilities of block x)
    delta = rowsum(dO ∘ O)             (O final; = Σ over all blocks P·dP)
    dS_x  = P_x ∘ (dO·V_xᵀ - delta)
    dQ   += scale·dS_x·K_x,  dK_x = scale·dS_xᵀ·Q,  dV_x = P_xᵀ·dO

This is exactly what a FlashAttention backward kernel computes when it is
given (q, k_x, v_x) together with the final O and LSE instead of the block's
own: it recomputes P from S and the LSE it is handed, and delta from the O it
is handed. Because softmax couples the blocks only through the row
normaliser (LSE) and delta, and both are passed in as the global values,
each block's dK_x, dV_x and its share of dQ are the exact gradients of the
full attention; summing the dQ shares over blocks gives dQ. So the ring
backward calls attention_backward(dO, q, k_x, v_x, O_final, LSE_final) per
block, with no merging step.

Torch only; works on CPU and CUDA tensors. Merging is done in float32 (or
float64 when the inputs are float64).
"""

import math
from typing import Optional, Tuple

import torch
from torch import Tensor


def _acc_dtype(*tensors: Tensor) -> torch.dtype:
    return (torch.float64 if any(t.dtype == torch.float64 for t in tensors)
            else torch.float32)


def merge(o_a: Tensor, lse_a: Tensor, o_b: Tensor,
          lse_b: Tensor) -> Tuple[Tensor, Tensor]:
    """(O_a, LSE_a) ⊕ (O_b, LSE_b) -> (O, LSE), exactly.

    o_*: [..., N, Dv]; lse_*: [..., N] (natural log, -inf for rows with no
    key). Returns O in float32 (float64 for float64 inputs) and LSE in the
    same dtype; rows with no key in either input give O = 0, LSE = -inf.
    Differentiable (no in-place updates)."""
    if o_a.shape != o_b.shape or lse_a.shape != lse_b.shape:
        raise ValueError(f"lse_merge.merge: shapes differ: o {tuple(o_a.shape)} "
                         f"vs {tuple(o_b.shape)}, lse {tuple(lse_a.shape)} vs "
                         f"{tuple(lse_b.shape)}")
    if o_a.shape[:-1] != lse_a.shape:
        raise ValueError(f"lse_merge.merge: lse {tuple(lse_a.shape)} must be "
                         f"o's shape without its last dim ({tuple(o_a.shape)})")
    dt = _acc_dtype(o_a, lse_a, o_b, lse_b)
    la, lb = lse_a.to(dt), lse_b.to(dt)
    m = torch.maximum(la, lb)
    # Both -inf: shift by 0 so exp(-inf - 0) = 0 instead of exp(nan).
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    wa, wb = torch.exp(la - m), torch.exp(lb - m)
    total = wa + wb
    has_keys = total > 0
    lse = m + torch.log(total)  # log(0) = -inf for rows with no key
    safe = torch.where(has_keys, total, torch.ones_like(total))
    wa, wb = (wa / safe).unsqueeze(-1), (wb / safe).unsqueeze(-1)
    o = wa * o_a.to(dt) + wb * o_b.to(dt)
    return o, lse


def empty_partial(shape_o, device, dtype=torch.float32) -> Tuple[Tensor, Tensor]:
    """The neutral element of merge: O = 0, LSE = -inf ("no key yet")."""
    o = torch.zeros(shape_o, device=device, dtype=dtype)
    lse = torch.full(tuple(shape_o[:-1]), -math.inf, device=device, dtype=dtype)
    return o, lse


def _expand_kv(q: Tensor, t: Tensor) -> Tensor:
    group = q.shape[1] // t.shape[1]
    return t.repeat_interleave(group, dim=1) if group > 1 else t


def _scores(q, k, causal, scale):
    s = torch.matmul(q, _expand_kv(q, k).transpose(-1, -2)) * scale
    if causal:
        nq, nk = q.shape[-2], k.shape[-2]
        # Bottom-right aligned, as attn's kernels: row i sees j <= i + nk - nq.
        i = torch.arange(nq, device=q.device).unsqueeze(1)
        j = torch.arange(nk, device=q.device).unsqueeze(0)
        s = s.masked_fill(j > i + (nk - nq), -math.inf)
    return s


def reference_block_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool,
                              scale: Optional[float]) -> Tuple[Tensor, Tensor]:
    """float64 (O, LSE) of one block with attn's semantics (GQA through the
    head counts, bottom-right causal, rows with no key: O = 0, LSE = -inf).
    Differentiable: the CPU stand-in for attn.torch.attention(return_lse)."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    q64, k64, v64 = q.double(), k.double(), v.double()
    s = _scores(q64, k64, causal, scale)
    lse = torch.logsumexp(s, dim=-1)
    has_keys = torch.isfinite(lse).unsqueeze(-1)
    p = torch.exp(s - torch.where(has_keys, lse.unsqueeze(-1),
                                  torch.zeros_like(lse).unsqueeze(-1)))
    p = torch.where(has_keys, p, torch.zeros_like(p))
    return torch.matmul(p, _expand_kv(q64, v64)), lse


def _reduce_groups(t: Tensor, hkv: int) -> Tensor:
    b, hq = t.shape[0], t.shape[1]
    return t.reshape(b, hkv, hq // hkv, *t.shape[2:]).sum(2) if hq != hkv else t


def reference_block_backward(grad_out: Tensor, q: Tensor, k: Tensor, v: Tensor,
                             out: Tensor, lse: Tensor, causal: bool,
                             scale: Optional[float]) -> Tuple[Tensor, Tensor, Tensor]:
    """float64 dQ, dK, dV of one key block from the *final* O and LSE (the
    identity in the module docstring), with torch.ops.attn.attention_backward's
    signature: the CPU stand-in for attn's backward kernels."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    q64, k64, v64 = q.double(), k.double(), v.double()
    do, o, l = grad_out.double(), out.double(), lse.double()
    s = _scores(q64, k64, causal, scale)
    finite = torch.isfinite(l).unsqueeze(-1)
    p = torch.exp(s - torch.where(finite, l.unsqueeze(-1), torch.zeros_like(l).unsqueeze(-1)))
    p = torch.where(finite, p, torch.zeros_like(p))
    delta = (do * o).sum(-1, keepdim=True)
    dp = torch.matmul(do, _expand_kv(q64, v64).transpose(-1, -2))
    ds = p * (dp - delta)
    dq = torch.matmul(ds, _expand_kv(q64, k64)) * scale
    hkv = k.shape[1]
    dk = _reduce_groups(torch.matmul(ds.transpose(-1, -2), q64) * scale, hkv)
    dv = _reduce_groups(torch.matmul(p.transpose(-1, -2), do), hkv)
    return dq, dk, dv
