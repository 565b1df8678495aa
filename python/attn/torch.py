"""attn's kernels as a PyTorch op: ``attn.torch.attention``.

    import attn.torch
    out = attn.torch.attention(q, k, v, causal=True)   # instead of
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

q [B, Hq, Nq, D], k [B, Hkv, Nk, D], v [B, Hkv, Nk, Dv] (PyTorch's layout),
float16 or bfloat16, on one CUDA device; Hq a multiple of Hkv (grouped-query
attention through the head counts, no repeat_interleave needed). Strides are
free except that the last dimension must be contiguous, the other strides
positive multiples of 8 elements and the data 16-byte aligned (the kernels
move 16 bytes at a time); a tensor that breaks this (a transposed last dim,
an odd slice, a broadcast with stride 0) is copied (``.contiguous()``)
first, which costs a copy but never fails. ``causal`` masks bottom-right
aligned (row i sees key j iff j <= i + Nk - Nq), which is SDPA's
``is_causal`` when Nq == Nk; rows that see no key give 0 (never NaN).

The op is ``torch.ops.attn.attention`` (a ``torch.library.custom_op`` with a
fake implementation, so ``torch.compile(fullgraph=True)`` traces through it)
and its autograd formula launches attn's backward kernels
(``torch.ops.attn.attention_backward``). It runs on PyTorch's current CUDA
stream. Kernels are specialised on head dims, dtype, mask, scale and chip;
the first use of each compiles one (with the compiler bindings) into the
on-disk cache or takes it from the AOT pack in $ATTN_KERNEL_PACK
(attn.cache); later calls only launch it.

Outside torch.compile and autograd, calls skip the dispatcher and launch
directly (same checks, same kernels); a repeated call (same shapes,
strides, dtypes, devices, causal and scale on one thread) reuses a ready
launch structure, which keeps per-call overhead low.
"""

import ctypes
import itertools
import math
import struct
import threading
import weakref
from typing import Dict, Optional, Tuple

import torch
from torch import Tensor

from . import runtime as _rt
from ._errors import KernelNotAvailableError
from .cache import KernelSpec, kernel_dir

_OP = "attn.torch.attention"
_DTYPE_NAMES = {torch.float16: "f16", torch.bfloat16: "bf16"}
# 16-byte loads of 2-byte elements: strides in multiples of 8 elements.
_ALIGN_ELEMENTS = 8
_ALIGN_BYTES = 16

# attn_launch_args / attn_backward_args are all 8-byte fields: packing them
# in one struct call is much cheaper than setting 24 ctypes fields.
_FWD_FORMAT = struct.Struct("=5Q5q14q")
_BWD_FORMAT = struct.Struct("=10Q5q26q")
assert _FWD_FORMAT.size == ctypes.sizeof(_rt.LaunchArgs)
assert _BWD_FORMAT.size == ctypes.sizeof(_rt.BackwardArgs)
# The five pointers that lead attn_launch_args (q, k, v, o, lse): all a
# cached call rewrites.
_FWD_POINTERS = struct.Struct("=5Q")


def _check_shapes(q: Tensor, k: Tensor, v: Tensor, what: str = _OP) -> None:
    """Names the tensor and dimension at fault (shared by the real and the
    fake implementation, so torch.compile reports the same errors)."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{what}: {name} must be a torch.Tensor, got "
                            f"{type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{what}: {name} must be 4-D [B, H, N, D], got "
                             f"shape {tuple(t.shape)}")
    if q.dtype not in _DTYPE_NAMES:
        raise TypeError(f"{what}: q is {q.dtype}; attn's kernels take "
                        "torch.float16 or torch.bfloat16")
    for name, t in (("k", k), ("v", v)):
        if t.dtype != q.dtype:
            raise TypeError(f"{what}: {name} is {t.dtype} but q is {q.dtype}; "
                            "q, k and v must have one dtype")
        if t.device != q.device:
            raise ValueError(f"{what}: {name} is on {t.device} but q is on "
                             f"{q.device}")
    B, Hq, _, D = q.shape
    if k.shape[0] != B or v.shape[0] != B:
        raise ValueError(f"{what}: batch sizes differ: q {B}, k {k.shape[0]}, "
                         f"v {v.shape[0]}")
    if k.shape[3] != D:
        raise ValueError(f"{what}: k's head dim (shape[3]) is {k.shape[3]} "
                         f"but q's is {D}")
    if v.shape[1] != k.shape[1] or v.shape[2] != k.shape[2]:
        raise ValueError(f"{what}: v {tuple(v.shape)} must have k's heads and "
                         f"length (k is {tuple(k.shape)})")
    Hkv = k.shape[1]
    if Hkv == 0 or Hq % Hkv:
        raise ValueError(f"{what}: q has {Hq} heads and k/v {Hkv}: heads_q "
                         "must be a multiple of heads_kv (grouped-query "
                         "attention)")


def _check_cuda(tensors, what: str = _OP) -> None:
    for name, t in tensors:
        if not t.is_cuda:
            raise ValueError(f"{what}: {name} is on {t.device}; attn's kernels "
                             "run on CUDA tensors")


def _strides_ok(t: Tensor) -> bool:
    """Whether the kernels can read ``t``'s layout in place (the data
    pointer's alignment aside)."""
    s, n = t.stride(), t.shape
    # (A dimension of size 1 never multiplies its stride; a broadcast, stride
    # 0, is copied too: Hopper's TMA descriptors need positive strides.)
    return (s[3] == 1
            and (n[0] <= 1 or (s[0] > 0 and s[0] % _ALIGN_ELEMENTS == 0))
            and (n[1] <= 1 or (s[1] > 0 and s[1] % _ALIGN_ELEMENTS == 0))
            and (n[2] <= 1 or (s[2] > 0 and s[2] % _ALIGN_ELEMENTS == 0)))


def _kernel_layout(t: Tensor) -> Tensor:
    """``t`` itself when the kernels can read it in place, else a
    contiguous copy (see the module docstring)."""
    if t.data_ptr() % _ALIGN_BYTES == 0 and _strides_ok(t):
        return t
    return t.contiguous() if not t.is_contiguous() else t.clone()


_chips: Dict[int, str] = {}


def _chip(device_index: int) -> str:
    chip = _chips.get(device_index)
    if chip is None:
        major, minor = torch.cuda.get_device_capability(device_index)
        # Hopper and later: the arch-specific ("a") target ptxas accepts.
        chip = f"sm_{major}{minor}" + ("a" if major >= 9 else "")
        _chips[device_index] = chip
    return chip


if hasattr(torch._C, "_cuda_getCurrentRawStream"):
    _current_stream = torch._C._cuda_getCurrentRawStream
else:  # pragma: no cover - older PyTorch
    def _current_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


class _Launcher:
    """One loaded kernel directory on one device, with a packed argument
    structure per thread (ctypes releases the GIL during the launch)."""

    def __init__(self, spec: KernelSpec, device_index: int, backward: bool):
        self.spec = spec
        self.kernel = _rt.Kernel(kernel_dir(spec))
        self.kernel.load(torch.device("cuda", device_index))
        self.lib = self.kernel._lib
        self.handle = self.kernel._handle
        self.backward = backward
        self.local = threading.local()
        args_type = _rt.BackwardArgs if backward else _rt.LaunchArgs
        self.args_type = args_type
        if backward and not self.lib.attn_kernel_is_backward(self.handle):
            raise _rt.AttnRuntimeError(
                f"{self.kernel.dir}: not a backward kernel directory")
        self.launch = (self.lib.attn_kernel_launch_backward if backward
                       else self.lib.attn_kernel_launch)

    def args(self):
        local = self.local
        args = getattr(local, "args", None)
        if args is None:
            args = local.args = self.args_type()
            local.ref = ctypes.byref(args)
        return args, local.ref

    def run(self, ref, stream: int) -> None:
        if self.launch(self.handle, ref, stream) != 0:
            raise _rt.AttnRuntimeError(_rt._last_error(self.lib))


_launchers: Dict[tuple, _Launcher] = {}
_launchers_lock = threading.Lock()


def _launcher(kind: str, q: Tensor, v: Tensor, causal: bool,
              scale: Optional[float]) -> _Launcher:
    index = q.device.index
    if index is None:
        index = torch.cuda.current_device()
    key = (kind, q.shape[3], v.shape[3], q.dtype, causal, scale, index)
    launcher = _launchers.get(key)
    if launcher is None:
        with _launchers_lock:
            launcher = _launchers.get(key)
            if launcher is None:
                spec = KernelSpec(kind, int(q.shape[3]), int(v.shape[3]),
                                  _DTYPE_NAMES[q.dtype], bool(causal),
                                  None if scale is None else float(scale),
                                  _chip(index))
                launcher = _Launcher(spec, index, kind == "bwd")
                _launchers[key] = launcher
    return launcher


def _check_scale(scale: Optional[float]) -> None:
    if scale is not None and not (isinstance(scale, (int, float))
                                  and math.isfinite(scale)):
        raise ValueError(f"{_OP}: scale must be a finite float or None, got "
                         f"{scale!r}")


def _forward(q: Tensor, k: Tensor, v: Tensor, causal: bool,
             scale: Optional[float]) -> Tuple[Tensor, Tensor]:
    """Checks, allocates O and LSE, launches the forward kernel."""
    _check_shapes(q, k, v)
    _check_cuda((("q", q), ("k", k), ("v", v)))
    q, k, v = _kernel_layout(q), _kernel_layout(k), _kernel_layout(v)
    B, Hq, Nq, _ = q.shape
    Hkv, Nk, Dv = k.shape[1], k.shape[2], v.shape[3]
    out = torch.empty((B, Hq, Nq, Dv), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, Hq, Nq), dtype=torch.float32, device=q.device)
    if out.numel() == 0:
        return out, lse
    if Nk == 0:  # no key at all: every row is fully masked
        out.zero_()
        lse.fill_(-math.inf)
        return out, lse
    launcher = _launcher("fwd", q, v, causal, scale)
    args, ref = launcher.args()
    qs, ks, vs, os_ = q.stride(), k.stride(), v.stride(), out.stride()
    _FWD_FORMAT.pack_into(
        args, 0, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
        lse.data_ptr(), B, Hq, Hkv, Nq, Nk, qs[0], qs[1], qs[2], ks[0], ks[1],
        ks[2], vs[0], vs[1], vs[2], os_[0], os_[1], os_[2], Hq * Nq, Nq)
    launcher.run(ref, _current_stream(q.device.index))
    return out, lse


def _backward_kernels_missing() -> Optional[str]:
    """What is missing for the backward pass (None when nothing is)."""
    lib = _rt.load_library()
    if not _rt.has_backward(lib):
        return ("the runtime library lacks the backward C ABI ("
                + ", ".join(n for n in _rt.BACKWARD_SYMBOLS
                            if not hasattr(lib, n))
                + "); rebuild libattn_runtime.so from a tree that has the "
                "GPU backward kernels")
    return None


def _backward(grad_out: Tensor, q: Tensor, k: Tensor, v: Tensor, out: Tensor,
              lse: Tensor, causal: bool,
              scale: Optional[float]) -> Tuple[Tensor, Tensor, Tensor]:
    """dQ, dK, dV with attn's backward kernels (recomputation from LSE)."""
    missing = _backward_kernels_missing()
    if missing is not None:
        raise NotImplementedError(f"{_OP} backward: {missing}")
    _check_cuda((("grad_out", grad_out), ("q", q), ("k", k), ("v", v)))
    q, k, v = _kernel_layout(q), _kernel_layout(k), _kernel_layout(v)
    grad_out, out = _kernel_layout(grad_out), _kernel_layout(out)
    lse = lse if lse.stride(-1) == 1 else lse.contiguous()
    B, Hq, Nq, _ = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    dq = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    dk = torch.empty(k.shape, dtype=k.dtype, device=k.device)
    dv = torch.empty(v.shape, dtype=v.dtype, device=v.device)
    if Nq == 0 or Nk == 0 or B * Hq == 0:
        return dq.zero_(), dk.zero_(), dv.zero_()
    try:
        launcher = _launcher("bwd", q, v, causal, scale)
    except KernelNotAvailableError as ex:
        raise NotImplementedError(f"{_OP} backward: {ex}") from ex
    args, ref = launcher.args()
    st = [t.stride() for t in (q, k, v, out, grad_out, dq, dk, dv)]
    strides = [s for t in st for s in t[:3]]
    _BWD_FORMAT.pack_into(
        args, 0, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
        grad_out.data_ptr(), lse.data_ptr(), dq.data_ptr(), dk.data_ptr(),
        dv.data_ptr(), 0, B, Hq, Hkv, Nq, Nk, *strides, lse.stride(0),
        lse.stride(1))
    nbytes = launcher.lib.attn_kernel_workspace_bytes(launcher.handle, ref)
    workspace = None
    if nbytes:
        workspace = torch.empty(nbytes, dtype=torch.uint8, device=q.device)
        args.workspace = workspace.data_ptr()
    launcher.run(ref, _current_stream(q.device.index))
    return dq, dk, dv


# --- torch.library registration ------------------------------------------

@torch.library.custom_op(
    "attn::attention", mutates_args=(),
    schema="(Tensor q, Tensor k, Tensor v, bool causal, float? scale) "
           "-> (Tensor, Tensor)")
def _attention_op(q, k, v, causal, scale):
    return _forward(q, k, v, causal, scale)


@_attention_op.register_fake
def _attention_fake(q, k, v, causal, scale):
    _check_shapes(q, k, v)
    B, Hq, Nq, _ = q.shape
    out = q.new_empty((B, Hq, Nq, v.shape[3]))
    lse = q.new_empty((B, Hq, Nq), dtype=torch.float32)
    return out, lse


@torch.library.custom_op(
    "attn::attention_backward", mutates_args=(),
    schema="(Tensor grad_out, Tensor q, Tensor k, Tensor v, Tensor out, "
           "Tensor lse, bool causal, float? scale) -> (Tensor, Tensor, Tensor)")
def _attention_backward_op(grad_out, q, k, v, out, lse, causal, scale):
    return _backward(grad_out, q, k, v, out, lse, causal, scale)


@_attention_backward_op.register_fake
def _attention_backward_fake(grad_out, q, k, v, out, lse, causal, scale):
    return (q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape))


def _setup_context(ctx, inputs, output):
    q, k, v, causal, scale = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.causal = causal
    ctx.scale = scale


def _autograd_backward(ctx, grad_out, grad_lse):
    # The LSE output is not differentiated (its gradient is dropped): it is
    # returned for inspection and for the backward kernels.
    q, k, v, out, lse = ctx.saved_tensors
    dq, dk, dv = torch.ops.attn.attention_backward(
        grad_out, q, k, v, out, lse, ctx.causal, ctx.scale)
    return dq, dk, dv, None, None


_attention_op.register_autograd(_autograd_backward,
                                setup_context=_setup_context)

_dispatch_stack_len = getattr(torch._C, "_len_torch_dispatch_stack", None)
_is_functorch_wrapped = getattr(getattr(torch._C, "_functorch", None),
                                "is_functorch_wrapped_tensor", None)
# Hoisted once: the per-call path makes no module attribute lookups.
_is_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled
_FLOAT32 = torch.float32
_CAN_BYPASS = _dispatch_stack_len is not None and \
    _is_functorch_wrapped is not None


def _direct_call_ok(q: Tensor, k: Tensor, v: Tensor) -> bool:
    """Whether a call may bypass the dispatcher: plain CUDA tensors, no
    autograd to record, no tracing, no dispatch mode, no functorch
    transform. Anything else goes through torch.ops.attn.attention."""
    if _is_compiling() or not _CAN_BYPASS:
        return False
    if not (type(q) is Tensor and type(k) is Tensor and type(v) is Tensor):
        return False
    if not (q.is_cuda and k.is_cuda and v.is_cuda):
        return False  # meta, CPU: the dispatcher (fake impl or the error)
    if _grad_enabled() and (q.requires_grad or k.requires_grad
                            or v.requires_grad):
        return False
    if _dispatch_stack_len() != 0:
        return False
    return not (_is_functorch_wrapped(q) or _is_functorch_wrapped(k)
                or _is_functorch_wrapped(v))


# --- the cached direct path ------------------------------------------------
# A call whose (shapes, strides, dtypes, devices, causal, scale) were seen
# before, on this thread, with a layout the kernel reads in place, skips
# every check that key settles: it allocates O and LSE, writes five pointers
# into a ready attn_launch_args and makes one ctypes call. What the key does
# not settle is checked on each call: tracing, autograd, dispatch modes,
# functorch wrappers and the 16-byte alignment of the data pointers.
# Entries are per thread because ctypes releases the GIL during the launch
# while the structure is read.

class _FastEntries(dict):
    """One thread's entries (a dict subclass, so it can be weakly
    referenced; dicts are unhashable, hence the numbered registry)."""


_MAX_FAST_ENTRIES = 256
# Every thread's entries, for clear_kernel_cache; a thread's go with it.
_all_fast_entries: "weakref.WeakValueDictionary[int, _FastEntries]" = \
    weakref.WeakValueDictionary()
_fast_entries_made = itertools.count()
_fast_local = threading.local()


def _fast_entries() -> _FastEntries:
    entries = _FastEntries()
    with _launchers_lock:
        _all_fast_entries[next(_fast_entries_made)] = entries
    _fast_local.entries = entries
    return entries


def _fast_entry(q: Tensor, k: Tensor, v: Tensor, causal: bool,
                scale: Optional[float]):
    """The cached launch of a call that _forward has just run directly on
    these tensors, or None when such calls must take the checked path
    (copies, empty problems)."""
    B, Hq, Nq, _ = q.shape
    Hkv, Nk, Dv = k.shape[1], k.shape[2], v.shape[3]
    if B * Hq * Nq * Dv == 0 or Nk == 0:
        return None
    if not (_strides_ok(q) and _strides_ok(k) and _strides_ok(v)):
        return None
    launcher = _launcher("fwd", q, v, causal, scale)
    args = _rt.LaunchArgs()
    qs, ks, vs = q.stride(), k.stride(), v.stride()
    # O is allocated contiguous and LSE [B, Hq, Nq] contiguous.
    _FWD_FORMAT.pack_into(
        args, 0, 0, 0, 0, 0, 0, B, Hq, Hkv, Nq, Nk, qs[0], qs[1], qs[2],
        ks[0], ks[1], ks[2], vs[0], vs[1], vs[2], Hq * Nq * Dv, Nq * Dv, Dv,
        Hq * Nq, Nq)
    index = q.device.index
    if index is None:
        index = torch.cuda.current_device()
    return (args, ctypes.byref(args), launcher.launch,
            ctypes.c_void_p(launcher.handle), index,
            (B, Hq, Nq, Dv), (B, Hq, Nq), launcher)


def attention(q: Tensor, k: Tensor, v: Tensor, *, causal: bool = False,
              scale: Optional[float] = None, return_lse: bool = False):
    """softmax(q·kᵀ·scale [+ causal mask])·v with attn's FlashAttention
    kernels: a drop-in for ``F.scaled_dot_product_attention(q, k, v,
    is_causal=causal, scale=scale)`` (with GQA through the head counts).

    Args:
      q: [B, Hq, Nq, D]; k: [B, Hkv, Nk, D]; v: [B, Hkv, Nk, Dv]; float16 or
        bfloat16 CUDA tensors, Hq a multiple of Hkv.
      causal: bottom-right aligned causal mask.
      scale: softmax scale, default 1/sqrt(D) (compiled into the kernel:
        each distinct value is its own kernel).
      return_lse: also return the row log-sum-exp (float32 [B, Hq, Nq],
        natural log, -inf for fully masked rows); it is not differentiated.

    Returns:
      out [B, Hq, Nq, Dv] (contiguous), or (out, lse).
    """
    key = None
    if (not _is_compiling() and _CAN_BYPASS and type(q) is Tensor
            and type(k) is Tensor and type(v) is Tensor):
        try:
            entries = _fast_local.entries
        except AttributeError:
            entries = _fast_entries()
        # (A scale or causal flag that is not hashable takes the checked
        # path, which names it.)
        key = (q.shape, k.shape, v.shape, q.stride(), k.stride(), v.stride(),
               q.dtype, k.dtype, v.dtype, q.device, k.device, v.device,
               causal, scale)
        try:
            entry = entries.get(key)
        except TypeError:
            entry = key = None
        if (entry is not None
                and not (_grad_enabled() and (q.requires_grad
                                              or k.requires_grad
                                              or v.requires_grad))
                and _dispatch_stack_len() == 0
                and not (_is_functorch_wrapped(q) or _is_functorch_wrapped(k)
                         or _is_functorch_wrapped(v))):
            qp, kp, vp = q.data_ptr(), k.data_ptr(), v.data_ptr()
            if not (qp | kp | vp) & 15:  # _ALIGN_BYTES
                args, ref, launch, handle, index, out_shape, lse_shape, _ = \
                    entry
                out = q.new_empty(out_shape)
                lse = q.new_empty(lse_shape, dtype=_FLOAT32)
                _FWD_POINTERS.pack_into(args, 0, qp, kp, vp, out.data_ptr(),
                                        lse.data_ptr())
                if launch(handle, ref, _current_stream(index)):
                    raise _rt.AttnRuntimeError(_rt._last_error(entry[7].lib))
                return (out, lse) if return_lse else out
    if scale is not None:
        _check_scale(scale)
        scale = float(scale)
    if _direct_call_ok(q, k, v):
        out, lse = _forward(q, k, v, bool(causal), scale)
        if key is not None and key not in entries:
            if len(entries) >= _MAX_FAST_ENTRIES:
                entries.clear()
            entries[key] = _fast_entry(q, k, v, bool(causal), scale)
    else:
        out, lse = torch.ops.attn.attention(q, k, v, bool(causal), scale)
    return (out, lse) if return_lse else out


def clear_kernel_cache() -> None:
    """Forgets the loaded kernels (the on-disk cache is kept)."""
    from . import cache
    with _launchers_lock:
        # The cached direct calls hold the handles closed below.
        for entries in list(_all_fast_entries.values()):
            entries.clear()
        for launcher in _launchers.values():
            launcher.kernel.close()
        _launchers.clear()
    cache._resolved.clear()
