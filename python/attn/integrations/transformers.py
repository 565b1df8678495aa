"""attn as a Hugging Face transformers attention backend.

    import attn.integrations.transformers as attn_hf
    attn_hf.register()
    model = AutoModelForCausalLM.from_pretrained(name,
                                                 attn_implementation="attn")

``register()`` adds the name "attn" to transformers' ``AttentionInterface``
(``attention_forward``: attn.torch.attention on transformers' [B, H, N, D]
tensors) and to its ``AttentionMaskInterface`` (``attention_mask``), so
models whose config says ``_attn_implementation = "attn"`` call attn for
every self-attention layer: Llama, Mistral and Qwen2 (sliding window),
Gemma 2 and 3 (logit softcap, sliding window, query_pre_attn_scalar as
the scale), GPT-2, and any other model written against the interface.

What transformers passes maps onto attn's arguments:

- the module's ``is_causal`` (or the ``is_causal`` keyword): ``causal``,
  bottom-right aligned, which is what a KV cache means (the Nq queries are
  the last Nq positions) and equals transformers' mask when Nq == Nk;
- ``sliding_window`` W: ``window=(W - 1, 0)`` (keys less than W positions
  back, as transformers' sliding-window causal mask), ``(W, W)`` for a
  bidirectional layer (its mask: keys at most W away);
- ``softcap``: ``softcap``; ``scaling``: ``scale``.

Masks. For the standard mask functions (causal, sliding-window causal,
bidirectional) ``attention_mask`` builds no [Nq, Nk] mask: it hands the
attention function the 2-D key padding mask, or None when nothing is
padded, as transformers does for FlashAttention. Any other mask function
(packed sequences, token-type overlays, ...) gets transformers' dense
boolean mask, and so does a 4-D mask the caller passes. Padding-free
batches (sequences packed into one row: FlashAttention's varlen keywords
``cu_seq_lens_q/k`` and ``max_length_q/k``, as DataCollatorWithFlattening
gives them, or ``position_ids`` that restart) run as
``attn.torch.attention_varlen``, each sequence with its own mask. The attention
function runs a padding mask exactly, without a bias, in one call for the
whole batch: each sequence's real tokens must be one contiguous run (left
or right padding), which becomes that sequence's ``key_range`` (the
kernels skip the other keys); where a padded query row would still see a
real key (right padding under a causal or windowed mask) its output is 0.
A 4-D mask is accepted when it is that pattern (the causal or
sliding-window mask of the layer AND a key padding mask; rows of padded
queries are ignored).

What attn cannot run raises ``NotImplementedError`` naming it, rather than
falling back to SDPA: a 4-D mask that is not causal/window AND key
padding, an additive float mask with values other than 0 and -inf/min,
padding with holes, ``dropout`` > 0 (training with attention dropout),
attention sinks (``s_aux``) and position biases. A silent fallback would
hide that the model does not run on attn; the message names the model's
other choice, ``attn_implementation="sdpa"``. Under ``torch.autocast``
(mixed-precision training) the op casts q, k and v to the autocast dtype,
as SDPA does. docs/transformers.md says more.
"""

import inspect
import weakref
from typing import Optional

import torch
from torch import Tensor

from .. import torch as _attn_torch

NAME = "attn"
_WHAT = "attn.integrations.transformers"


def _unsupported(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"{_WHAT}: {what}; attn cannot run this attention, use "
        "attn_implementation=\"sdpa\" (or \"eager\") for this model")


# --- the mask function -------------------------------------------------------

def _nonlocals(fn) -> dict:
    try:
        return inspect.getclosurevars(fn).nonlocals
    except (TypeError, ValueError):
        return {}


def _is_standard(mask_function) -> bool:
    """Whether transformers' mask function is one attn runs from the layer's
    own arguments (causal, bidirectional, sliding-window causal), so the
    key padding mask is all it needs."""
    from transformers import masking_utils as mu
    if mask_function in (mu.causal_mask_function,
                         mu.bidirectional_mask_function):
        return True
    # sliding_window_{causal,bidirectional}_mask_function(W):
    # and_masks(overlay(W), the causal or bidirectional function).
    parts = _nonlocals(mask_function).get("mask_functions")
    if getattr(mask_function, "__qualname__", "") != \
            "and_masks.<locals>.and_mask" or not isinstance(parts, tuple) \
            or len(parts) != 2:
        return False
    overlay = getattr(parts[0], "__qualname__", "")
    return (parts[1] is mu.causal_mask_function and overlay ==
            "sliding_window_overlay.<locals>.inner_mask") or \
        (parts[1] is mu.bidirectional_mask_function and overlay ==
         "sliding_window_bidirectional_overlay.<locals>.inner_mask")


def attention_mask(batch_size: int, q_length: int, kv_length: int,
                   q_offset: int = 0, kv_offset: int = 0,
                   mask_function=None, attention_mask: Optional[Tensor] = None,
                   **kwargs):
    """The "attn" entry of transformers' AttentionMaskInterface: the 2-D
    key padding mask (None: no padding) for the standard mask functions,
    transformers' dense boolean mask for any other."""
    from transformers import masking_utils as mu
    if mask_function is None:
        mask_function = mu.causal_mask_function
    if _is_standard(mask_function):
        return mu.flash_attention_mask(batch_size, q_length, kv_length,
                                       q_offset, kv_offset, mask_function,
                                       attention_mask)
    kwargs["allow_is_causal_skip"] = False
    kwargs["allow_is_bidirectional_skip"] = False
    return mu.sdpa_mask(batch_size, q_length, kv_length, q_offset, kv_offset,
                        mask_function, attention_mask, **kwargs)


# --- the attention function ------------------------------------------------

def _structure(nq: int, nk: int, causal: bool, window, device) -> Tensor:
    """[Nq, Nk] bool: what attn's causal/window mask lets row i see
    (bottom-right aligned)."""
    pos = torch.arange(nq, device=device)[:, None] + (nk - nq)
    j = torch.arange(nk, device=device)[None, :]
    seen = torch.ones((nq, nk), dtype=torch.bool, device=device)
    if causal:
        seen &= j <= pos
    if window is not None:
        left, right = window
        seen &= j >= pos - left
        if right >= 0:
            seen &= j <= pos + right
    return seen


def _key_padding_of_4d(mask: Tensor, batch: int, nq: int, nk: int,
                       causal: bool, window) -> Tensor:
    """[B, Nk] key padding mask of a 4-D mask that is the layer's
    causal/window mask AND key padding; raises for any other."""
    if mask.dim() != 4 or mask.shape[-2:] != (nq, nk) or \
            mask.shape[0] not in (1, batch):
        raise _unsupported(f"a 4-D attention mask of shape "
                           f"{tuple(mask.shape)} for queries of length {nq} "
                           f"and keys of length {nk}")
    if mask.dtype != torch.bool:
        allowed = (mask == 0) | (mask == float("-inf")) | \
            (mask == torch.finfo(mask.dtype).min)
        if not bool(allowed.all()):
            raise _unsupported("an additive attention mask with values "
                               "other than 0 and -inf (a bias)")
        mask = mask == 0
    if mask.shape[1] != 1 and not bool((mask == mask[:, :1]).all()):
        raise _unsupported("a 4-D attention mask that differs between heads")
    mask = mask[:, 0].expand(batch, nq, nk)
    keys = mask.any(dim=1)
    expected = _structure(nq, nk, causal, window, mask.device) & keys[:, None]
    # Positional rows of padded queries are 0 whatever they see.
    positional = causal or window is not None
    real = keys[:, nk - nq:] if positional and nq <= nk else None
    same = mask == expected
    if real is not None:
        same |= ~real[:, :, None]
    if not bool(same.all()):
        raise _unsupported("a 4-D attention mask that is not the layer's "
                           "causal/sliding-window mask AND a key padding "
                           "mask (packed sequences, a custom pattern)")
    return keys


def _runs(keys: Tensor):
    """(start, end) of each row's one run of real keys; raises for holes."""
    keys = keys.to(torch.bool)
    n = keys.shape[1]
    count = keys.sum(dim=1)
    idx = torch.arange(n, device=keys.device)
    start = torch.where(keys, idx, n).amin(dim=1)
    end = torch.where(keys, idx + 1, 0).amax(dim=1)
    holes = (end - start).clamp(min=0) != count
    if bool(holes.any()):
        row = int(holes.nonzero()[0])
        raise _unsupported(f"a padding mask whose sequence {row} has padding "
                           "between real tokens (only left or right padding "
                           "is run)")
    return [(int(s), int(e)) if c else (0, 0)
            for s, e, c in zip(start.tolist(), end.tolist(), count.tolist())]


# The mask transformers hands every layer is one tensor: its runs are read
# (a device-to-host copy) once, not once per layer.
_last_padding = (None, None, None)


class _Padding:
    """A padded batch as attn runs it in one call: each sequence's run of
    real keys [start, end) as the op's key_range (int32 [B] on the
    queries' device) and, for positional masks, which query rows are real
    ([B, 1, Nq, 1] bool), when a padded one would otherwise see a real key
    (right padding: rows past the end); the padded rows give 0. Left
    padding under a causal mask needs none: those rows see no key."""

    def __init__(self, runs, nq: int, nk: int, window, causal: bool, device):
        self.key_range = tuple(
            torch.tensor([r[i] for r in runs], dtype=torch.int32,
                         device=device) for i in (0, 1))
        self.real_rows = None
        if causal or window is not None:  # query i at position i + Nk - Nq
            pos = torch.arange(nq, device=device) + (nk - nq)
            start, end = (t.view(-1, 1) for t in self.key_range)
            real = (pos >= start) & (pos < end)
            # The keys row pos sees under the layer's mask: [lo, hi).
            lo = pos - window[0] if window is not None else \
                torch.zeros_like(pos)
            hi = pos + 1 if causal or window[1] < 0 else pos + window[1] + 1
            if window is not None and window[1] < 0 and not causal:
                hi = torch.full_like(pos, nk)
            sees = torch.maximum(lo, start) < torch.minimum(hi, end)
            if bool((~real & sees).any()):
                self.real_rows = real.view(len(runs), 1, nq, 1)


def _padding(mask: Optional[Tensor], batch: int, nq: int, nk: int,
             causal: bool, window, device) -> Optional[_Padding]:
    """None when nothing is masked, else the batch's _Padding."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise _unsupported(f"an attention mask of type {type(mask).__name__}")
    global _last_padding
    ref, key, padding = _last_padding
    try:
        version = mask._version
    except RuntimeError:  # an inference-mode tensor has none: no caching
        version = None
    here = (version, batch, nq, nk, causal, window, device)
    if version is not None and ref is not None and ref() is mask and \
            key == here:
        return padding
    keys = mask
    if keys.dim() == 4:
        keys = _key_padding_of_4d(keys, batch, nq, nk, causal, window)
    if keys.dim() != 2 or keys.shape[0] != batch or keys.shape[1] > nk:
        raise _unsupported(f"an attention mask of shape "
                           f"{tuple(keys.shape)} for batch {batch} and "
                           f"{nk} keys")
    keys = keys.to(torch.bool)
    if keys.shape[1] < nk:  # a static cache's unused slots
        keys = torch.nn.functional.pad(keys, (0, nk - keys.shape[1]))
    padding = None
    if not bool(keys.all()):
        padding = _Padding(_runs(keys), nq, nk, window, causal, device)
    if version is not None:
        _last_padding = (weakref.ref(mask), here, padding)
    return padding


def _packed_sequences(kwargs, attention_mask, batch: int, nq: int, nk: int):
    """(cu_seqlens_q, cu_seqlens_k, max_q, max_k) of a padding-free batch --
    FlashAttention's varlen keywords (``cu_seq_lens_q/k``,
    ``max_length_q/k``: DataCollatorWithFlattening) or one row of packed
    sequences found from ``position_ids`` restarting, as transformers'
    FlashAttention path finds them -- or None. Only without a padding mask
    (transformers gives these batches none, or the dense mask of the
    packed sequences)."""
    if attention_mask is not None and (
            not isinstance(attention_mask, Tensor) or
            attention_mask.dim() != 4):
        return None
    names = ("cu_seq_lens_q", "cu_seq_lens_k", "max_length_q", "max_length_k")
    given = [kwargs.get(n) for n in names]
    if all(x is not None for x in given):
        cu_q, cu_k, max_q, max_k = given
        return cu_q, cu_k, int(max_q), int(max_k)
    position_ids = kwargs.get("position_ids")
    if position_ids is None or batch != 1 or nq != nk or nq == 1 or \
            position_ids.numel() != nq:
        return None
    position_ids = position_ids.reshape(-1)
    starts = (position_ids == position_ids.min()).nonzero().view(-1)
    if starts.numel() <= 1:
        return None
    cu = torch.cat([starts, starts.new_tensor([nq])]).to(torch.int32)
    longest = int(cu.diff().max())
    return cu, cu, longest, longest


def _check_packed_mask(mask: Optional[Tensor], cu: Tensor, n: int,
                       causal: bool, window) -> None:
    """A dense mask beside packed sequences must be theirs: the layer's
    causal/window mask within each sequence, nothing across."""
    if mask is None:
        return
    if mask.dtype != torch.bool:
        mask = mask == 0
    if tuple(mask.shape[-2:]) != (n, n):
        raise _unsupported(f"a 4-D attention mask of shape "
                           f"{tuple(mask.shape)} beside packed sequences of "
                           f"{n} tokens")
    segment = torch.zeros(n, dtype=torch.int64, device=mask.device)
    segment[cu[1:-1].to(device=mask.device, dtype=torch.int64)] = 1
    segment = segment.cumsum(0)
    expected = (segment[:, None] == segment[None, :]) & \
        _structure(n, n, causal, window, mask.device)
    if not bool((mask == expected).all()):
        raise _unsupported("a 4-D attention mask beside packed sequences "
                           "that is not theirs (the layer's mask within "
                           "each sequence)")


def attention_forward(module: torch.nn.Module, query: Tensor, key: Tensor,
                      value: Tensor, attention_mask: Optional[Tensor],
                      scaling: Optional[float] = None, dropout: float = 0.0,
                      sliding_window: Optional[int] = None,
                      softcap: Optional[float] = None,
                      is_causal: Optional[bool] = None, **kwargs):
    """The "attn" entry of transformers' AttentionInterface: query [B, Hq,
    Nq, D], key/value [B, Hkv, Nk, D] -> (out [B, Nq, Hq, Dv], None)."""
    if dropout:
        raise _unsupported(f"dropout={dropout} (attention dropout while "
                           "training; attn has none)")
    for name in ("s_aux", "position_bias"):
        if kwargs.get(name) is not None:
            raise _unsupported(f"{name} (attn adds no term to the scores)")
    if is_causal is None:
        is_causal = getattr(module, "is_causal", True)
    causal = bool(is_causal)
    B, _, Nq, _ = query.shape
    Nk = key.shape[2]
    window = None
    # transformers' masks: causal keys less than W back, bidirectional ones
    # at most W away. A window of W >= Nk masks nothing and is left out
    # (Mistral's is 4096): the plain kernel, not a window kernel's mask.
    if sliding_window is not None and int(sliding_window) < Nk:
        w = int(sliding_window)
        window = (w - 1, 0) if causal else (w, w)
    call = dict(causal=causal, scale=scaling, window=window,
                softcap=softcap if softcap else None)

    packed = _packed_sequences(kwargs, attention_mask, B, Nq, Nk)
    if packed is not None:
        # Padding-free batches: the sequences run as attn.torch's varlen
        # call, each with its own mask (transformers' dense block-diagonal
        # mask says the same and is not read).
        cu_q, cu_k, max_q, max_k = packed
        if attention_mask is not None:
            if B != 1 or not torch.equal(cu_q.cpu(), cu_k.cpu()):
                raise _unsupported("a 4-D attention mask beside varlen "
                                   "keywords of several rows or of "
                                   "different query and key sequences")
            _check_packed_mask(attention_mask.reshape(-1, Nq, Nk).all(0)
                               if attention_mask.dtype == torch.bool
                               else (attention_mask == 0).reshape(
                                   -1, Nq, Nk).all(0),
                               cu_q, Nq, causal, window)
        tokens = lambda t: t.transpose(1, 2).reshape(  # noqa: E731
            (-1,) + tuple(t.shape[1:2]) + tuple(t.shape[3:]))
        out = _attn_torch.attention_varlen(
            tokens(query), tokens(key), tokens(value), cu_q, cu_k, max_q,
            max_k, **call)
        return out.reshape((B, Nq) + tuple(out.shape[1:])), None

    padding = _padding(attention_mask, B, Nq, Nk, causal, window,
                       query.device)
    if padding is None:
        out = _attn_torch.attention(query, key, value, **call)
        return out.transpose(1, 2).contiguous(), None

    # One call for the whole batch: each sequence sees its run [s, e) of
    # real keys (the op's key_range, in the kernels), with the causal or
    # window mask aligned on the padded positions as transformers aligns
    # it. Where the mask is positional, rows of padded queries are 0 (as
    # transformers' other backends leave them unread), so their output
    # gradients reach nothing.
    out = _attn_torch.attention(query, key, value,
                                key_range=padding.key_range, **call)
    if padding.real_rows is not None:
        out = out.masked_fill(~padding.real_rows, 0.0)
    return out.transpose(1, 2).contiguous(), None


def register(name: str = NAME) -> None:
    """Registers attn under ``name`` in transformers' AttentionInterface and
    AttentionMaskInterface (idempotent)."""
    try:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface
    except ImportError as ex:
        raise ImportError(f"{_WHAT}.register: transformers with "
                          "AttentionInterface and AttentionMaskInterface is "
                          f"not installed ({ex})") from ex
    AttentionInterface.register(name, attention_forward)
    AttentionMaskInterface.register(name, attention_mask)
