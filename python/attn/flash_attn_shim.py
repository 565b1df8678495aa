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
  ``softcap`` 0 is none, ``alibi_slopes`` must be attn's ALiBi slopes
  2^(-8(h+1)/H) (per head, or per batch and head);
* ``deterministic`` selects attn's deterministic backward kernels;
* the varlen functions take packed [total, H, D] tensors and
  ``cu_seqlens`` (attn.torch.attention_varlen: one call of the op over the
  sequences padded, with per-sequence key ranges); ``block_table`` (paged
  KV) is not implemented;
* ``return_attn_probs`` returns (out, softmax_lse, None): FlashAttention
  returns the attention probabilities only with dropout, which attn has
  not.

What attn does not implement raises NotImplementedError naming the
argument (dropout_p > 0, other ALiBi slopes); everything else attn cannot
run (a backward of a variant, a head dim) raises attn's own errors.
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

from . import torch as _attn_torch

__all__ = ["flash_attn_func", "flash_attn_kvpacked_func",
           "flash_attn_qkvpacked_func", "flash_attn_varlen_func",
           "flash_attn_varlen_kvpacked_func",
           "flash_attn_varlen_qkvpacked_func", "attn_alibi_slopes"]

def attn_alibi_slopes(heads: int, device=None) -> Tensor:
    """attn's ALiBi slopes 2^(-8(h+1)/H), float32 [heads]: the only
    ``alibi_slopes`` the shim takes."""
    h = torch.arange(1, heads + 1, dtype=torch.float64, device=device)
    return torch.exp2(-8.0 * h / heads).to(torch.float32)


def _check_alibi(alibi_slopes: Optional[Tensor], heads: int,
                 batch: int) -> bool:
    """Whether the call is ALiBi; raises for slopes attn's kernels lack."""
    if alibi_slopes is None:
        return False
    if not isinstance(alibi_slopes, Tensor) or \
            tuple(alibi_slopes.shape) not in ((heads,), (batch, heads)):
        raise ValueError(f"alibi_slopes must be a tensor of shape ({heads},) "
                         f"or ({batch}, {heads}), got "
                         f"{getattr(alibi_slopes, 'shape', alibi_slopes)!r}")
    want = attn_alibi_slopes(heads, alibi_slopes.device)
    if not torch.allclose(alibi_slopes.float(), want.expand_as(alibi_slopes),
                          rtol=1e-6, atol=0.0):
        raise NotImplementedError(
            "alibi_slopes: attn's ALiBi kernels compile in the slopes "
            f"2^(-8(h+1)/H) (attn.flash_attn_shim.attn_alibi_slopes({heads}))"
            "; other slopes are not implemented")
    return True


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
    alibi = _check_alibi(alibi_slopes, q.shape[2], q.shape[0])
    window = _window(window_size, bool(causal))
    out, lse = _attn_torch.attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
        causal=bool(causal), scale=softmax_scale, return_lse=True,
        window=window, softcap=softcap if softcap > 0 else None,
        alibi=alibi, deterministic=bool(deterministic))
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
    alibi = _check_alibi(alibi_slopes, q.shape[-2], batch)
    out, lse = _attn_torch.attention_varlen(
        q, k, v, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q),
        int(max_seqlen_k), causal=bool(causal), scale=softmax_scale,
        return_lse=True, window=_window(window_size, bool(causal)),
        softcap=softcap if softcap > 0 else None, alibi=alibi,
        deterministic=bool(deterministic))
    return (out, lse, None) if return_attn_probs else out


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                           max_seqlen_k, dropout_p=0.0, softmax_scale=None,
                           causal=False, window_size=(-1, -1), softcap=0.0,
                           alibi_slopes=None, deterministic=False,
                           return_attn_probs=False, block_table=None):
    """flash_attn_func over packed sequences: q [total_q, Hq, D], k, v
    [total_k, Hkv, D], cu_seqlens_* int32 [B + 1]. Returns out [total_q,
    Hq, Dv], or (out, softmax_lse [Hq, total_q], None)."""
    if block_table is not None:
        raise NotImplementedError("block_table: attn has no paged KV cache "
                                  "yet; pass contiguous k and v")
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
