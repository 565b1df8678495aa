"""Variable-length (packed) attention: FlashAttention's varlen API over
``attn.torch.attention``'s per-batch key ranges.

    out = attn.torch.attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                      causal=True)   # q [total_q, Hq, D]

The sequences of a batch are packed along the tokens: sequence b holds
tokens ``cu_seqlens[b] <= t < cu_seqlens[b + 1]`` of q (and of k, v with
``cu_seqlens_k``). Each is attended on its own, masks aligned per sequence
as FlashAttention's are (bottom-right: query i of a sequence with key
i + len_k - len_q).

How: the sequences are gathered into a padded batch [B, H, max_len, D]
and run as one call of the op with ``key_range`` (the kernels skip the
key blocks outside each sequence's keys). The padding side keeps every
mask (and ALiBi's distances |d(i) - j|) exact: left padding of both q and
k puts each sequence's last query on its last key, so a bottom-right
aligned mask of the padded batch is the sequence's own; top-left masks
(and no mask without ALiBi) right-pad both. Padding
query rows are computed and dropped (their dO is zero, so they add
nothing to dK and dV). Cost: B x max_len_q query rows against each
sequence's own keys, instead of the sum of the query lengths; the gathers
are differentiable, so autograd and ``deterministic`` are the op's.
"""

from typing import Optional, Tuple

import torch
from torch import Tensor

__all__ = ["attention_varlen"]

_WHAT = "attn.torch.attention_varlen"


def _lengths(cu: Tensor, name: str, total: int, device) -> Tuple[list, Tensor]:
    """The sequence lengths of ``cu`` (as a list, and as an int64 tensor on
    ``device``); raises naming ``name`` for anything but a valid prefix
    sum of ``total`` tokens."""
    if not isinstance(cu, Tensor) or cu.dim() != 1 or cu.numel() < 2 or \
            cu.dtype not in (torch.int32, torch.int64):
        raise ValueError(f"{_WHAT}: {name} must be a 1-D int32 or int64 "
                         f"tensor of batch + 1 offsets, got "
                         f"{getattr(cu, 'dtype', type(cu).__name__)} "
                         f"{tuple(getattr(cu, 'shape', ()))}")
    offsets = cu.tolist()
    if offsets[0] != 0 or offsets[-1] != total or \
            any(b < a for a, b in zip(offsets, offsets[1:])):
        raise ValueError(f"{_WHAT}: {name} must rise from 0 to the packed "
                         f"token count {total}, got {offsets}")
    lengths = [b - a for a, b in zip(offsets, offsets[1:])]
    return lengths, torch.tensor(lengths, dtype=torch.int64, device=device)


def _pad_index(cu: Tensor, lengths: Tensor, padded: int, left: bool,
               total: int) -> Tuple[Tensor, Tensor]:
    """For a padded batch [B, padded]: the packed token at each position
    (``total`` = none: a zero row) and each sequence's first position."""
    device = lengths.device
    first = (padded - lengths) if left else torch.zeros_like(lengths)
    r = torch.arange(padded, device=device)
    within = r[None, :] - first[:, None]  # token index within the sequence
    valid = (within >= 0) & (within < lengths[:, None])
    token = cu[:-1].to(device=device, dtype=torch.int64)[:, None] + within
    return torch.where(valid, token, torch.full_like(token, total)), first


def _gather(x: Tensor, index: Tensor) -> Tensor:
    """x [total, H, D] gathered to [B, H, padded, D] (index [B, padded];
    index ``total`` gives zeros)."""
    zero = x.new_zeros((1,) + tuple(x.shape[1:]))
    rows = torch.cat([x, zero]).index_select(0, index.reshape(-1))
    return rows.reshape(index.shape + tuple(x.shape[1:])).transpose(1, 2)


def _check_packed(name: str, t: Tensor) -> None:
    if not isinstance(t, Tensor) or t.dim() != 3:
        raise ValueError(f"{_WHAT}: {name} must be a 3-D [total_tokens, "
                         f"heads, head_dim] tensor, got "
                         f"{getattr(t, 'shape', type(t).__name__)}")


def attention_varlen(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor,
                     cu_seqlens_k: Tensor, max_seqlen_q: Optional[int] = None,
                     max_seqlen_k: Optional[int] = None, *,
                     causal: bool = False, scale: Optional[float] = None,
                     return_lse: bool = False,
                     mask_align: str = "bottom_right",
                     window: Optional[Tuple[int, int]] = None,
                     softcap: Optional[float] = None, alibi: bool = False,
                     deterministic: bool = False,
                     alibi_slopes: Optional[Tensor] = None):
    """Attention of packed variable-length sequences (FlashAttention's
    ``flash_attn_varlen_func``).

    Args:
      q: [total_q, Hq, D]; k: [total_k, Hkv, D]; v: [total_k, Hkv, Dv]: the
        sequences packed along the tokens, as ``attn.torch.attention``'s
        dtypes and devices.
      cu_seqlens_q, cu_seqlens_k: int32/int64 [B + 1], the offsets of each
        sequence's tokens (0 first, the token count last); read on the
        host (one synchronisation).
      max_seqlen_q, max_seqlen_k: the longest sequence (default: computed);
        a larger value pads further, a smaller one is an error.
      causal, scale, mask_align, window, softcap, alibi, deterministic: as
        ``attn.torch.attention``'s, applied to each sequence on its own.
      alibi_slopes: ALiBi's slopes, float32 [Hq] or [B, Hq] (B = the number
        of sequences: per sequence and head), as ``attn.torch.attention``'s;
        distances are each sequence's own (aligned as ``mask_align``).
      return_lse: also return the log-sum-exp, float32 [Hq, total_q]
        (FlashAttention's varlen layout).

    Returns:
      out [total_q, Hq, Dv], or (out, lse).
    """
    from . import torch as _attn_torch

    for name, t in (("q", q), ("k", k), ("v", v)):
        _check_packed(name, t)
    if k.shape[0] != v.shape[0]:
        raise ValueError(f"{_WHAT}: k and v must hold the same tokens, got "
                         f"{k.shape[0]} and {v.shape[0]}")
    lens_q, len_q = _lengths(cu_seqlens_q, "cu_seqlens_q", q.shape[0],
                             q.device)
    lens_k, len_k = _lengths(cu_seqlens_k, "cu_seqlens_k", k.shape[0],
                             q.device)
    if len(lens_q) != len(lens_k):
        raise ValueError(f"{_WHAT}: cu_seqlens_q and cu_seqlens_k must give "
                         f"the same batch, got {len(lens_q)} and "
                         f"{len(lens_k)} sequences")
    padded = []
    for name, given, lens in (("max_seqlen_q", max_seqlen_q, lens_q),
                              ("max_seqlen_k", max_seqlen_k, lens_k)):
        longest = max(lens)
        if given is None:
            given = longest
        if isinstance(given, bool) or not isinstance(given, int) or \
                given < longest:
            raise ValueError(f"{_WHAT}: {name} must be an int >= the longest "
                             f"sequence ({longest}), got {given!r}")
        padded.append(max(given, 1))
    pad_q, pad_k = padded

    # Left padding aligns every sequence's last query with its last key:
    # what a bottom-right mask needs. Top-left masks and none: right.
    has_mask = causal or window is not None or alibi is True or \
        alibi_slopes is not None
    left = has_mask and mask_align == "bottom_right"
    index_q, _ = _pad_index(cu_seqlens_q, len_q, pad_q, left, q.shape[0])
    index_k, key_start = _pad_index(cu_seqlens_k, len_k, pad_k, left,
                                    k.shape[0])
    key_range = (key_start.to(torch.int32),
                 (key_start + len_k).to(torch.int32))
    out, lse = _attn_torch.attention(
        _gather(q, index_q), _gather(k, index_k), _gather(v, index_k),
        causal=causal, scale=scale, return_lse=True, mask_align=mask_align,
        window=window, softcap=softcap, alibi=alibi,
        deterministic=deterministic, key_range=key_range,
        alibi_slopes=alibi_slopes)
    # Back to the packed tokens: the padded rows' positions in order.
    rows = (index_q.reshape(-1) < q.shape[0]).nonzero().squeeze(1)
    out = out.transpose(1, 2).reshape((-1,) + tuple(out.shape[1:2]) +
                                      tuple(out.shape[3:]))
    out = out.index_select(0, rows)
    if not return_lse:
        return out
    lse = lse.transpose(0, 1).reshape(lse.shape[1], -1).index_select(1, rows)
    return out, lse
