"""attn.torch.attention on CPU tensors: the compiler's own CPU path.

The forward and backward run attn.attention / attn.attention_grad through
the tiled FlashAttention pipeline and LLVM's JIT, in libattn-c.so's
attn-c/Execution.h (attnCPUAttentionForward / attnCPUAttentionBackward):
the same compiler that makes the GPU kernels, lowered for the host, so
this is a real fallback rather than a reference. The library compiles one
module per problem (shapes, dtype, mask, variant) on its first call and
keeps it for the process; compiled_modules() counts them. The softmax scale
is not part of the problem's module: every call passes it (the module's
`scale(%s)` operand), so one module serves every scale.

float32, bfloat16 and float16; every variant, forward and backward
(causal and window masks in either alignment, softcap, ALiBi with its
slopes read at call time, f32 [B, Hq]: no module per slope).
"""

import ctypes
import math
from typing import Optional, Tuple

import torch
from torch import Tensor

from . import _native
from ._errors import KernelNotAvailableError
from .variants import Variant

_OP = "attn.torch.attention"
_DTYPES = {torch.float16: 0, torch.bfloat16: 1, torch.float32: 2}
DTYPES = tuple(_DTYPES)
_LIB_NAME = "libattn-c.so"


class _Problem(ctypes.Structure):
    """AttnCPUProblem (attn-c/Execution.h), field for field."""
    _fields_ = [("batch", ctypes.c_int64), ("headsQ", ctypes.c_int64),
                ("headsKv", ctypes.c_int64), ("seqQ", ctypes.c_int64),
                ("seqKv", ctypes.c_int64), ("headDim", ctypes.c_int64),
                ("valueHeadDim", ctypes.c_int64), ("dtype", ctypes.c_int32),
                ("causal", ctypes.c_bool), ("topLeft", ctypes.c_bool),
                ("windowLeft", ctypes.c_int64), ("windowRight", ctypes.c_int64),
                ("hasScale", ctypes.c_bool), ("scale", ctypes.c_double),
                ("softcap", ctypes.c_double),
                ("alibiSlopes", ctypes.POINTER(ctypes.c_float)),
                ("keyStart", ctypes.POINTER(ctypes.c_int32)),
                ("keyEnd", ctypes.POINTER(ctypes.c_int32))]


def library_candidates():
    """Where _library looks: the compiler's library, as attn.compiler
    loads it (attn._native: the wheel's libattn_compiler.so, else a build
    tree's libattn-c.so)."""
    return _native.candidates(**_native.COMPILER_LIB)


_lib = None


def _library() -> ctypes.CDLL:
    """libattn-c.so with the CPU entry points, loaded once."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in library_candidates():
        if not path.is_file():
            continue
        lib = ctypes.CDLL(str(path))
        if not hasattr(lib, "attnCPUAttentionForward"):
            tried.append(f"{path} (no attnCPUAttentionForward: rebuild it)")
            continue
        # AttnCPUProblem's layout is the compiler C API version's.
        from .compiler import CAPI_VERSION
        lib.attnCompilerCAPIVersion.restype = ctypes.c_int
        got = lib.attnCompilerCAPIVersion()
        if got != CAPI_VERSION:
            tried.append(f"{path} (C API version {got}, expected "
                         f"{CAPI_VERSION}: rebuild it)")
            continue
        ptr, prob = ctypes.c_void_p, ctypes.POINTER(_Problem)
        fwd = lib.attnCPUAttentionForward
        fwd.argtypes = [prob] + [ptr] * 5
        fwd.restype = ctypes.c_char_p
        bwd = lib.attnCPUAttentionBackward
        bwd.argtypes = [prob] + [ptr] * 9
        bwd.restype = ctypes.c_char_p
        lib.attnCPUCompiledModules.restype = ctypes.c_int64
        lib.attnCPUClearCache.restype = None
        _lib = lib
        return lib
    where = ", ".join(tried) or ", ".join(
        str(p) for p in library_candidates())
    raise KernelNotAvailableError(
        f"{_OP}: CPU tensors need the compiler's CPU path, {_LIB_NAME} "
        f"(build the AttnCAPI target; set ATTN_BUILD_DIR) or the attn "
        f"wheel's libattn_compiler.so; looked in {where}")


def available() -> bool:
    try:
        _library()
        return True
    except (KernelNotAvailableError, OSError):
        return False


def compiled_modules() -> int:
    """How many CPU modules this process has compiled (a repeated problem
    compiles none, nor does one that differs only in its scale)."""
    return int(_library().attnCPUCompiledModules())


def clear_cache() -> None:
    """Drops the compiled CPU modules."""
    _library().attnCPUClearCache()


def dtype_name(dtype: torch.dtype) -> str:
    return ("f16", "bf16", "f32")[_DTYPES[dtype]]


def check_dtype(q: Tensor, what: str = _OP) -> None:
    if q.dtype not in _DTYPES:
        raise TypeError(f"{what}: q is {q.dtype}; on the CPU attn takes "
                        "torch.float32, torch.bfloat16 or torch.float16")


def _problem(q: Tensor, k: Tensor, v: Tensor, scale: Optional[float],
             variant: Variant, key_range=None, alibi=None) -> _Problem:
    B, Hq, Nq, D = q.shape
    f = variant.problem_fields()
    p = _Problem(
        batch=B, headsQ=Hq, headsKv=k.shape[1], seqQ=Nq, seqKv=k.shape[2],
        headDim=D, valueHeadDim=v.shape[3], dtype=_DTYPES[q.dtype],
        causal=f["causal"], topLeft=f["top_left"],
        windowLeft=f["window_left"], windowRight=f["window_right"],
        hasScale=scale is not None,
        scale=0.0 if scale is None else float(scale),
        softcap=float(f["softcap"]))
    if alibi is not None:
        p.alibiSlopes = ctypes.cast(alibi.data_ptr(),
                                    ctypes.POINTER(ctypes.c_float))
    if key_range is not None:
        int_p = ctypes.POINTER(ctypes.c_int32)
        p.keyStart = ctypes.cast(key_range[0].data_ptr(), int_p)
        p.keyEnd = ctypes.cast(key_range[1].data_ptr(), int_p)
    return p


def _key_range(key_range):
    """The (start, end) pair as contiguous int32 CPU tensors (kept alive by
    the caller for the call)."""
    if key_range is None:
        return None
    return tuple(t.to(torch.int32).contiguous() for t in key_range)


def _alibi(alibi_slopes: Optional[Tensor], variant: Variant, batch: int,
           heads: int) -> Optional[Tensor]:
    """The slopes as the contiguous float32 [B, Hq] CPU tensor the library
    reads (kept alive by the caller for the call), or None; ``alibi_slopes``
    [Hq] or [B, Hq] (checked by the caller) is given exactly when
    ``variant`` is ALiBi."""
    if variant.alibi != (alibi_slopes is not None):
        raise ValueError(
            f"{_OP}: alibi_slopes must be given exactly when the variant is "
            f"ALiBi (variant {variant.name}, alibi_slopes "
            f"{'given' if alibi_slopes is not None else 'None'})")
    if alibi_slopes is None:
        return None
    return alibi_slopes.to(torch.float32).expand(batch, heads).contiguous()


def _check(err: Optional[bytes]) -> None:
    if err is not None:
        raise RuntimeError(f"{_OP}: {err.decode(errors='replace')}")


def _dense(t: Tensor) -> Tensor:
    return t if t.is_contiguous() else t.contiguous()


def forward(q: Tensor, k: Tensor, v: Tensor, scale: Optional[float],
            variant: Variant, key_range=None,
            alibi_slopes: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """(out, lse) of one attention on CPU tensors; shapes already checked
    (``key_range``: the (key_start, key_end) int32 [B] pair, or None;
    ``alibi_slopes``: float32 [Hq] or [B, Hq] with an ALiBi variant)."""
    check_dtype(q)
    q, k, v = _dense(q), _dense(k), _dense(v)
    B, Hq, Nq, _ = q.shape
    Nk, Dv = k.shape[2], v.shape[3]
    out = torch.empty((B, Hq, Nq, Dv), dtype=q.dtype)
    lse = torch.empty((B, Hq, Nq), dtype=torch.float32)
    if out.numel() == 0:
        return out, lse
    if q.shape[3] == 0:
        raise ValueError(f"{_OP}: q and k have head dim 0")
    if Nk == 0:  # no key at all: every row is fully masked
        out.zero_()
        lse.fill_(-math.inf)
        return out, lse
    key_range = _key_range(key_range)
    alibi = _alibi(alibi_slopes, variant, B, Hq)
    p = _problem(q, k, v, scale, variant, key_range, alibi)
    _check(_library().attnCPUAttentionForward(
        ctypes.byref(p), q.data_ptr(), k.data_ptr(), v.data_ptr(),
        out.data_ptr(), lse.data_ptr()))
    return out, lse


def backward(grad_out: Tensor, q: Tensor, k: Tensor, v: Tensor, out: Tensor,
             lse: Tensor, scale: Optional[float],
             variant: Variant, key_range=None,
             alibi_slopes: Optional[Tensor] = None
             ) -> Tuple[Tensor, Tensor, Tensor]:
    """dq, dk, dv on CPU tensors from the given out and lse (the slopes
    get no gradient)."""
    check_dtype(q)
    dt = q.dtype
    q, k, v = _dense(q), _dense(k), _dense(v)
    grad_out, out = _dense(grad_out.to(dt)), _dense(out.to(dt))
    lse = _dense(lse.to(torch.float32))
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    if q.shape[2] == 0 or k.shape[2] == 0 or q.numel() == 0 or \
            v.shape[3] == 0:
        return dq.zero_(), dk.zero_(), dv.zero_()
    key_range = _key_range(key_range)
    alibi = _alibi(alibi_slopes, variant, q.shape[0], q.shape[1])
    p = _problem(q, k, v, scale, variant, key_range, alibi)
    _check(_library().attnCPUAttentionBackward(
        ctypes.byref(p), q.data_ptr(), k.data_ptr(), v.data_ptr(),
        out.data_ptr(), grad_out.data_ptr(), lse.data_ptr(), dq.data_ptr(),
        dk.data_ptr(), dv.data_ptr()))
    return dq, dk, dv
