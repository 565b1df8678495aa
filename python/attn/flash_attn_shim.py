"""FlashAttention's ``flash_attn`` functions over ``attn.torch.attention``.

    from attn.flash_attn_shim import flash_attn_func
    out = flash_attn_func(q, k, v, causal=True)   # q [B, N, H, D]

The signatures and semantics are those of Dao-AILab/flash-attention's
``flash_attn_func``, ``flash_attn_kvpacked_func`` and
``flash_attn_qkvpacked_func`` (flash_attn/flash_attn_interface.py), so that
code written for FlashAttention, and its own tests (test/gpu/flash_attn/),
run on attn's kernels:

* tensors are [B, N, H, D] (attn's are [B, H, N, D]: transposed views in,
  a transposed view out);
* head dims that are not multiples of 8 are zero-padded to the next one
  by attn.torch.attention itself, as FlashAttention's interface pads them,
  with the scale of the original head dim;
* ``causal`` and ``window_size`` are bottom-right aligned (attn's default),
  ``softcap`` 0 is none; ``alibi_slopes`` (float32 [H] or [B, H], any
  values) subtracts slope·|i + seqlen_k - seqlen_q - j| from the scores,
  as FlashAttention does (attn's bottom-right aligned ALiBi, the slopes a
  launch argument), forward and backward, in every function (the varlen
  ones: per sequence and head);
* ``deterministic`` selects attn's deterministic backward kernels;
* the varlen functions take packed [total, H, D] tensors and
  ``cu_seqlens`` (attn.torch.attention_varlen: one call of the op over the
  sequences padded, with per-sequence key ranges);
* ``flash_attn_varlen_func``'s ``block_table`` (paged KV cache: k, v
  [num_blocks, page_block_size, Hkv, D], block_table int32 [B,
  max_num_blocks_per_seq]; key t of sequence b is row t % page_block_size
  of page block_table[b, t // page_block_size], sequence b holding
  cu_seqlens_k[b + 1] - cu_seqlens_k[b] keys) gathers each sequence's
  pages into packed k and v and runs the varlen path on them: a copy of
  the sequences' K and V on every call (attn's kernels do not read pages),
  differentiable, so gradients reach the paged caches. Any page size is
  taken (FlashAttention's kernels want multiples of 256);
* ``return_attn_probs`` returns (out, softmax_lse, None): FlashAttention
  returns the attention probabilities only with dropout, which attn has
  not.

What attn does not implement raises NotImplementedError naming the
argument (dropout_p > 0); everything else attn cannot run (a head dim's
backward) raises attn's own errors.
"""

import itertools
from typing import Optional, Tuple

import torch
from torch import Tensor

from . import torch as _attn_torch

__all__ = ["flash_attn_func", "flash_attn_kvpacked_func",
           "flash_attn_qkvpacked_func", "flash_attn_varlen_func",
           "flash_attn_varlen_kvpacked_func",
           "flash_attn_varlen_qkvpacked_func"]


def _check_alibi(alibi_slopes: Optional[Tensor], heads: int,
                 batch: int) -> Optional[Tensor]:
    """FlashAttention's ``alibi_slopes`` (None, or a tensor of shape
    (heads,) or (batch, heads)) for attn; attn checks its dtype (float32,
    as FlashAttention's) and device."""
    if alibi_slopes is None:
        return None
    if not isinstance(alibi_slopes, Tensor) or \
            tuple(alibi_slopes.shape) not in ((heads,), (batch, heads)):
        raise ValueError(f"alibi_slopes must be a tensor of shape ({heads},) "
                         f"or ({batch}, {heads}), got "
                         f"{getattr(alibi_slopes, 'shape', alibi_slopes)!r}")
    return alibi_slopes


def _window(window_size, causal: bool):
    """attn's ``window`` for FlashAttention's window_size (-1 = unbounded;
    causal bounds the right side at 0), or None."""
    try:  # a pair of ints, or of 0-d tensors, or a 2-element tensor
        left, right = (int(w) for w in window_size)
    except (TypeError, ValueError):
        raise TypeError("window_size must be a (left, right) pair, got "
                        f"{window_size!r}") from None
    if causal:
        right = 0
    if left < 0 and (causal or right < 0):
        return None
    return (max(left, -1), max(right, -1))


def _attention(q: Tensor, k: Tensor, v: Tensor, dropout_p: float,
               softmax_scale: Optional[float], causal: bool, window_size,
               softcap: float, alibi_slopes: Optional[Tensor],
               deterministic: bool, return_attn_probs: bool):
    _check_dropout(dropout_p)
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor) or t.dim() != 4:
            raise ValueError(f"{name} must be a 4-D [batch, seqlen, heads, "
                             f"head_dim] tensor, got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    slopes = _check_alibi(alibi_slopes, q.shape[2], q.shape[0])
    window = _window(window_size, bool(causal))
    out, lse = _attn_torch.attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
        causal=bool(causal), scale=softmax_scale, return_lse=True,
        window=window, softcap=softcap if softcap > 0 else None,
        alibi_slopes=slopes, deterministic=bool(deterministic))
    out = out.transpose(1, 2)
    return (out, lse, None) if return_attn_probs else out


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                    deterministic=False, return_attn_probs=False):
    """softmax(q·kᵀ·scale)·v; q [B, Nq, Hq, D], k [B, Nk, Hkv, D], v [B,
    Nk, Hkv, Dv], Hq a multiple of Hkv (FlashAttention's flash_attn_func).
    Returns out [B, Nq, Hq, Dv], or (out, softmax_lse [B, Hq, Nq], None)
    with return_attn_probs."""
    return _attention(q, k, v, dropout_p, softmax_scale, causal, window_size,
                      softcap, alibi_slopes, deterministic, return_attn_probs)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None,
                             causal=False, window_size=(-1, -1), softcap=0.0,
                             alibi_slopes=None, deterministic=False,
                             return_attn_probs=False):
    """flash_attn_func with kv [B, Nk, 2, Hkv, D] (K then V)."""
    if not isinstance(kv, Tensor) or kv.dim() != 5 or kv.shape[2] != 2:
        raise ValueError("kv must be a [batch, seqlen, 2, heads, head_dim] "
                         f"tensor, got {getattr(kv, 'shape', type(kv))}")
    return _attention(q, kv[:, :, 0], kv[:, :, 1], dropout_p, softmax_scale,
                      causal, window_size, softcap, alibi_slopes,
                      deterministic, return_attn_probs)


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None,
                              causal=False, window_size=(-1, -1), softcap=0.0,
                              alibi_slopes=None, deterministic=False,
                              return_attn_probs=False):
    """flash_attn_func with qkv [B, N, 3, H, D] (Q, K, V)."""
    if not isinstance(qkv, Tensor) or qkv.dim() != 5 or qkv.shape[2] != 3:
        raise ValueError("qkv must be a [batch, seqlen, 3, heads, head_dim] "
                         f"tensor, got {getattr(qkv, 'shape', type(qkv))}")
    return _attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], dropout_p,
                      softmax_scale, causal, window_size, softcap,
                      alibi_slopes, deterministic, return_attn_probs)


def _check_dropout(dropout_p: float) -> None:
    if dropout_p:
        raise NotImplementedError(f"dropout_p: attn's kernels have no "
                                  f"dropout (got dropout_p={dropout_p!r}); "
                                  "use 0.0")


def _varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
            dropout_p, softmax_scale, causal, window_size, softcap,
            alibi_slopes, deterministic, return_attn_probs):
    _check_dropout(dropout_p)
    batch = cu_seqlens_q.numel() - 1 if isinstance(cu_seqlens_q, Tensor) \
        else 0
    slopes = _check_alibi(alibi_slopes, q.shape[-2], batch)
    out, lse = _attn_torch.attention_varlen(
        q, k, v, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q),
        int(max_seqlen_k), causal=bool(causal), scale=softmax_scale,
        return_lse=True, window=_window(window_size, bool(causal)),
        softcap=softcap if softcap > 0 else None, alibi_slopes=slopes,
        deterministic=bool(deterministic))
    return (out, lse, None) if return_attn_probs else out


def _gather_pages(k_cache: Tensor, v_cache: Tensor, block_table: Tensor,
                  cu_seqlens_k: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """FlashAttention's paged KV cache as the varlen path's packed k and v:
    (k [total_k, Hkv, D], v [total_k, Hkv, Dv], cu_seqlens_k from 0).

    Key t of sequence b is row t % page_block_size of page block_table[b,
    t // page_block_size]; sequence b has cu_seqlens_k[b + 1] -
    cu_seqlens_k[b] keys. The gather is one advanced-indexing copy of each
    cache (differentiable: a page used twice accumulates both gradients).
    Reads cu_seqlens_k and the pages used on the host (one
    synchronisation each on a GPU)."""
    for name, t in (("k", k_cache), ("v", v_cache)):
        if not isinstance(t, Tensor) or t.dim() != 4:
            raise ValueError(
                f"{name} must be a 4-D [num_blocks, page_block_size, heads, "
                f"head_dim] paged cache with block_table, got "
                f"{getattr(t, 'shape', type(t).__name__)}")
    if k_cache.shape[:3] != v_cache.shape[:3]:
        raise ValueError("k and v must be paged caches of the same "
                         "[num_blocks, page_block_size, heads], got "
                         f"{tuple(k_cache.shape)} and {tuple(v_cache.shape)}")
    num_blocks, page = k_cache.shape[0], k_cache.shape[1]
    if page < 1:
        raise ValueError(f"k: page_block_size (k.shape[1]) must be >= 1, "
                         f"got {tuple(k_cache.shape)}")
    if not isinstance(block_table, Tensor) or block_table.dim() != 2 or \
            block_table.dtype != torch.int32:
        raise ValueError(
            "block_table must be a 2-D int32 [batch, max_num_blocks_per_seq] "
            f"tensor, got {getattr(block_table, 'dtype', type(block_table))} "
            f"{tuple(getattr(block_table, 'shape', ()))}")
    if not isinstance(cu_seqlens_k, Tensor) or cu_seqlens_k.dim() != 1 or \
            cu_seqlens_k.numel() < 2 or \
            cu_seqlens_k.dtype not in (torch.int32, torch.int64):
        raise ValueError(
            "cu_seqlens_k must be a 1-D int32 (or int64) tensor of batch + 1 "
            "offsets, "
            f"got {getattr(cu_seqlens_k, 'dtype', type(cu_seqlens_k))} "
            f"{tuple(getattr(cu_seqlens_k, 'shape', ()))}")
    offsets = cu_seqlens_k.tolist()
    lengths = [b - a for a, b in zip(offsets, offsets[1:])]
    if any(n < 0 for n in lengths):
        raise ValueError(f"cu_seqlens_k must not decrease, got {offsets}")
    batch, width = block_table.shape
    if batch != len(lengths):
        raise ValueError(f"block_table has {batch} rows but cu_seqlens_k "
                         f"gives {len(lengths)} sequences")
    for b, n in enumerate(lengths):
        if -(-n // page) > width:
            raise ValueError(
                f"block_table: sequence {b} has {n} keys (cu_seqlens_k), "
                f"more than its {width} blocks of page_block_size {page} "
                f"hold ({width * page})")
    device = k_cache.device
    total = sum(lengths)
    lens = torch.tensor(lengths, dtype=torch.int64, device=device)
    seq = torch.repeat_interleave(torch.arange(batch, device=device), lens,
                                  output_size=total)
    first = torch.cumsum(lens, 0) - lens
    t = torch.arange(total, device=device) - first[seq]  # key within its seq
    pages = block_table.to(device)[seq, t // page].long()
    if total:
        lo, hi = (int(x) for x in torch.aminmax(pages))
        if lo < 0 or hi >= num_blocks:
            bad = lo if lo < 0 else hi
            raise ValueError(f"block_table: block {bad} is out of range for "
                             f"paged caches of {num_blocks} blocks")
    rows = t % page
    cu = torch.tensor([0] + list(itertools.accumulate(lengths)),
                      dtype=torch.int32, device=cu_seqlens_k.device)
    return k_cache[pages, rows], v_cache[pages, rows], cu


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                           max_seqlen_k, dropout_p=0.0, softmax_scale=None,
                           causal=False, window_size=(-1, -1), softcap=0.0,
                           alibi_slopes=None, deterministic=False,
                           return_attn_probs=False, block_table=None):
    """flash_attn_func over packed sequences: q [total_q, Hq, D], k, v
    [total_k, Hkv, D], cu_seqlens_* int32 [B + 1]. Returns out [total_q,
    Hq, Dv], or (out, softmax_lse [Hq, total_q], None).

    With ``block_table`` (int32 [B, max_num_blocks_per_seq]), k and v are
    paged caches [num_blocks, page_block_size, Hkv, D]: key t of sequence
    b is k[block_table[b, t // page_block_size], t % page_block_size], and
    sequence b has cu_seqlens_k[b + 1] - cu_seqlens_k[b] keys (only the
    differences count, as in FlashAttention). The pages are gathered into
    packed k and v (a copy of the sequences' K and V per call; gradients
    flow back to the caches) and run as the contiguous call would."""
    if block_table is not None:
        k, v, cu_seqlens_k = _gather_pages(k, v, block_table, cu_seqlens_k)
    return _varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                   max_seqlen_k, dropout_p, softmax_scale, causal,
                   window_size, softcap, alibi_slopes, deterministic,
                   return_attn_probs)


def flash_attn_varlen_kvpacked_func(q, kv, cu_seqlens_q, cu_seqlens_k,
                                    max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                                    softmax_scale=None, causal=False,
                                    window_size=(-1, -1), softcap=0.0,
                                    alibi_slopes=None, deterministic=False,
                                    return_attn_probs=False):
    """flash_attn_varlen_func with kv [total_k, 2, Hkv, D]."""
    if not isinstance(kv, Tensor) or kv.dim() != 4 or kv.shape[1] != 2:
        raise ValueError("kv must be a [total_tokens, 2, heads, head_dim] "
                         f"tensor, got {getattr(kv, 'shape', type(kv))}")
    return _varlen(q, kv[:, 0], kv[:, 1], cu_seqlens_q, cu_seqlens_k,
                   max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale,
                   causal, window_size, softcap, alibi_slopes, deterministic,
                   return_attn_probs)


def flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen,
                                     dropout_p=0.0, softmax_scale=None,
                                     causal=False, window_size=(-1, -1),
                                     softcap=0.0, alibi_slopes=None,
                                     deterministic=False,
                                     return_attn_probs=False):
    """flash_attn_varlen_func with qkv [total, 3, H, D]."""
    if not isinstance(qkv, Tensor) or qkv.dim() != 4 or qkv.shape[1] != 3:
        raise ValueError("qkv must be a [total_tokens, 3, heads, head_dim] "
                         f"tensor, got {getattr(qkv, 'shape', type(qkv))}")
    return _varlen(qkv[:, 0], qkv[:, 1], qkv[:, 2], cu_seqlens, cu_seqlens,
                   max_seqlen, max_seqlen, dropout_p, softmax_scale, causal,
                   window_size, softcap, alibi_slopes, deterministic,
                   return_attn_probs)


def install() -> None:
    """Makes this module importable as ``flash_attn`` (and
    ``flash_attn.flash_attn_interface``), replacing any installed
    FlashAttention: what test/gpu/flash_attn/ runs FlashAttention's tests
    with."""
    import sys
    module = sys.modules[__name__]
    sys.modules["flash_attn"] = module
    sys.modules["flash_attn.flash_attn_interface"] = module
