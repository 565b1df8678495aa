"""The attention variants of ``attn.torch.attention`` (no PyTorch needed).

What the compiler's ``attn.attention`` can compute beyond plain softmax
attention (docs/variants.md), as keyword arguments:

* ``causal``: the right side of the band bounded at the diagonal;
* ``mask_align``: ``"bottom_right"`` (FlashAttention's convention, the
  default: row i is aligned with key i + Nk - Nq) or ``"top_left"``
  (PyTorch's ``is_causal``: row i with key i); the two agree when Nq == Nk;
* ``window=(left, right)``: a sliding window, row i sees keys
  d(i) - left ... d(i) + right (-1 = unbounded on that side);
* ``softcap=c``: scores become c·tanh(s / c) (Gemma 2);
* ALiBi: scores minus slope[b, h]·|d(i) - j| after the softcap, the slopes
  a run-time float32 operand (``alibi_slopes``, [Hq] or [B, Hq]:
  FlashAttention's convention; ``alibi=True`` is the standard slopes
  2^(-8(h+1)/Hq)). ``Variant.alibi`` says that a kernel takes slopes: one
  kernel serves every slope and every shape.

``Variant`` is the canonical form (one kernel per distinct form); its
``key`` is the string the custom op carries. Bad arguments raise
ValueError/TypeError naming the argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Tuple

ALIGNS = ("bottom_right", "top_left")


@dataclass(frozen=True)
class Variant:
    """A mask band plus a score modification, canonical: ``left``/``right``
    are the band's bounds around the aligned diagonal (-1 = unbounded;
    causal is right == 0 with left unbounded), ``align`` needs a band (it
    also aligns ALiBi's distances)."""

    left: int = -1
    right: int = -1
    align: str = "bottom_right"
    softcap: float = 0.0
    alibi: bool = False

    # --- what the kernels see ----------------------------------------------
    @property
    def has_mask(self) -> bool:
        return self.left >= 0 or self.right >= 0

    @property
    def causal(self) -> bool:
        """The band is (bottom-right or top-left) causal: no window."""
        return self.left < 0 and self.right == 0

    @property
    def sliding(self) -> bool:
        return self.has_mask and not self.causal

    @property
    def top_left(self) -> bool:
        return self.align == "top_left"

    @property
    def plain(self) -> bool:
        """No mask, or the bottom-right causal mask, and no score_mod: what
        the pre-variant kernels and the tuning key cover."""
        return (not self.has_mask or (self.causal and not self.top_left)) \
            and self.softcap == 0 and not self.alibi

    def problem_fields(self) -> dict:
        """The compiler's problem fields (attn.compile keyword arguments):
        causal, top_left, window_left, window_right, softcap, alibi."""
        return dict(causal=self.causal, top_left=self.top_left,
                    window_left=self.left if self.sliding else -1,
                    window_right=self.right if self.sliding else -1,
                    softcap=self.softcap, alibi=self.alibi)

    @property
    def name(self) -> str:
        """Readable, unique per variant ("full", "causal", "causal-tl",
        "win64_0", "win32_32-tl-cap30", "alibi", ...)."""
        if not self.has_mask:
            parts = ["full"]
        elif self.causal:
            parts = ["causal"]
        else:
            parts = [f"win{self.left}_{self.right}".replace("-1", "inf")]
        if self.top_left:
            parts.append("tl")
        if self.softcap:
            parts.append(f"cap{self.softcap:g}")
        if self.alibi:
            parts.append("alibi")
        return "-".join(parts)

    @property
    def key(self) -> str:
        """The op's ``variant`` string: "" for no mask / bottom-right causal
        without score_mod (the ``causal`` flag says which), else
        "left,right,align,softcap,alibi"."""
        if self.plain:
            return ""
        return (f"{self.left},{self.right},{self.align},{self.softcap!r},"
                f"{int(self.alibi)}")

    def reference_mask(self, nq: int, nk: int):
        """(first, last) key bounds per query row i as plain Python, for
        tests: row i sees keys first(i) <= j < last(i)."""
        offset = 0 if self.top_left else nk - nq
        rows = []
        for i in range(nq):
            d = i + offset
            first = d - self.left if self.left >= 0 else 0
            last = d + self.right + 1 if self.right >= 0 else nk
            first = min(max(first, 0), nk)
            last = min(max(last, first), nk)
            rows.append((first, last))
        return rows


def _bound(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"window: {name} must be an int (-1 = unbounded), "
                        f"got {value!r}")
    if value < -1:
        raise ValueError(f"window: {name} must be >= 0, or -1 for unbounded, "
                         f"got {value}")
    return value


def make_variant(causal: bool = False, mask_align: str = "bottom_right",
                 window: Optional[Tuple[int, int]] = None,
                 softcap: Optional[float] = None,
                 alibi: bool = False) -> Variant:
    """The canonical Variant of ``attn.torch.attention``'s keyword
    arguments (``alibi``: the call has ALiBi slopes); raises naming the
    argument at fault (the same rules as attn-compile's flags)."""
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {causal!r}")
    if mask_align not in ALIGNS:
        raise ValueError(f"mask_align must be 'bottom_right' or 'top_left', "
                         f"got {mask_align!r}")
    if not isinstance(alibi, bool):
        raise TypeError(f"alibi must be a bool, got {alibi!r}")
    left, right = -1, -1
    if window is not None:
        if not (isinstance(window, (tuple, list)) and len(window) == 2):
            raise TypeError("window must be a (left, right) pair of ints "
                            f"(-1 = unbounded), got {window!r}")
        left, right = _bound("left", window[0]), _bound("right", window[1])
    if causal:
        if right > 0:
            raise ValueError(f"window: causal=True bounds the right side at "
                             f"0; window right {right} contradicts it")
        right = 0
    cap = 0.0
    if softcap is not None:
        if isinstance(softcap, bool) or not isinstance(softcap, (int, float)) \
                or not math.isfinite(softcap) or softcap <= 0:
            raise ValueError(f"softcap must be a positive finite float or "
                             f"None, got {softcap!r}")
        cap = float(softcap)
    if mask_align == "top_left" and left < 0 and right < 0:
        raise ValueError("mask_align='top_left' aligns a mask: it needs "
                         "causal=True or a window (as attn-compile's "
                         "--top-left)")
    return Variant(left, right, mask_align, cap, alibi)


def parse_key(causal: bool, key: str) -> Variant:
    """The Variant of the op's (causal, variant) arguments."""
    if not key:
        return Variant(-1, 0 if causal else -1)
    try:
        left, right, align, cap, alibi = key.split(",")
        v = Variant(int(left), int(right), align, float(cap), bool(int(alibi)))
    except ValueError:
        raise ValueError(f"variant: cannot parse {key!r} (expected "
                         "'left,right,align,softcap,alibi', as Variant.key "
                         "writes it)") from None
    if align not in ALIGNS:
        raise ValueError(f"variant: mask align {align!r} is not "
                         "'bottom_right' or 'top_left'")
    if causal != v.causal:
        raise ValueError(f"variant: causal={causal} disagrees with the "
                         f"variant {key!r}")
    return v
