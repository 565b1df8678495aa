"""attn's kernels as a PyTorch op: ``attn.torch.attention``.

    import attn.torch
    out = attn.torch.attention(q, k, v, causal=True)   # instead of
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

q [B, Hq, Nq, D], k [B, Hkv, Nk, D], v [B, Hkv, Nk, Dv] (PyTorch's layout),
float16 or bfloat16, on one CUDA device -- or CPU tensors (float32 too),
which run the compiler's own CPU path (attn.cpu: the tiled algorithm,
JIT-compiled once per problem, forward and backward); Hq a multiple of Hkv
(grouped-query attention through the head counts, no repeat_interleave
needed). On CUDA, strides are
free except that the last dimension must be contiguous, the other strides
positive multiples of 8 elements and the data 16-byte aligned (the kernels
move 16 bytes at a time); a tensor that breaks this (a transposed last dim,
an odd slice, a broadcast with stride 0) is copied (``.contiguous()``)
first, which costs a copy but never fails. ``causal`` masks bottom-right
aligned (row i sees key j iff j <= i + Nk - Nq), which is SDPA's
``is_causal`` when Nq == Nk (``mask_align="top_left"`` is SDPA's always);
``window``, ``softcap`` and ALiBi (``alibi_slopes``, a run-time float32
operand, or ``alibi=True`` for the standard slopes) are the compiler's
other variants (attn.variants, docs/variants.md). Rows that see no key
give 0 (never NaN).

The op is ``torch.ops.attn.attention`` (a ``torch.library.custom_op`` with a
fake implementation, so ``torch.compile(fullgraph=True)`` traces through it)
and its autograd formula launches attn's backward kernels
(``torch.ops.attn.attention_backward``). It runs on PyTorch's current CUDA
stream. The kernel family is 'auto' by default, forward and backward: the
compiler's choice by chip (Hopper's wgmma kernels on sm_90a where they
implement the call, else the sm80 mma.sync ones; set_kernel_family or
$ATTN_KERNEL_FAMILY pins one). Kernels are specialised on family, head
dims, dtype, mask and chip (the softmax scale is a launch argument); the
first use of each compiles one (with the compiler bindings) into the
on-disk cache or takes it from the AOT pack in $ATTN_KERNEL_PACK
(attn.cache); later calls only launch it. The tile is the tuning
database's winner for the call's shape class when it has one, forward
and backward (looked up as attn-compile, and attn-compile --backward,
look it up for the family: for 'auto' on sm_90a, either family's tile),
else the heuristic's (attn.tuning); ``tune=True`` tunes a missing
forward class on first use and ``explain`` says which kernel a call uses
and why.

Outside torch.compile and autograd, calls skip the dispatcher and launch
directly (same checks, same kernels); a repeated call (same shapes,
strides, dtypes, devices, causal and scale on one thread) reuses a ready
launch structure, which keeps per-call overhead low.
"""

import ctypes
import itertools
import math
import os
import struct
import threading
import warnings
import weakref
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import torch
from torch import Tensor

from . import cpu as _cpu
from . import families as _families
from . import runtime as _rt
from . import tuning as _tuning
from ._errors import CompileError, KernelNotAvailableError
from .cache import KernelSpec, kernel_dir
from .variants import make_variant
from .variants import parse_key as parse_variant

_OP = "attn.torch.attention"
_DTYPE_NAMES = {torch.float16: "f16", torch.bfloat16: "bf16"}
# 16-byte loads of 2-byte elements: strides in multiples of 8 elements.
_ALIGN_ELEMENTS = 8
_ALIGN_BYTES = 16

# attn_launch_args / attn_backward_args are all 8-byte fields (the softmax
# scale a double, then the key ranges' pointers, the ALiBi slopes' pointer
# and their batch stride): packing them in one struct call is much cheaper
# than setting 27 ctypes fields.
_FWD_FORMAT = struct.Struct("=5Q5q14qd2QQq")
_BWD_FORMAT = struct.Struct("=10Q5q26qd2QQq")
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
    if q.device.type == "cpu":
        _cpu.check_dtype(q, what)
    elif q.dtype not in _DTYPE_NAMES:
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


def _softmax_scale(scale: Optional[float], head_dim: int) -> float:
    """The scale a GPU launch passes (a kernel argument)."""
    return head_dim ** -0.5 if scale is None else scale


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
# One loaded kernel per (spec, device), shared by the call keys choosing it.
_launchers_by_spec: Dict[tuple, _Launcher] = {}
_launchers_lock = threading.Lock()
_selections: Dict[tuple, "_tuning.Selection"] = {}  # call key -> why
_devices: Dict[int, Tuple[str, int]] = {}
# The kernel family (set_kernel_family), forward and backward: auto (the
# compiler's choice by chip: sm90a on sm_90a where that family implements
# the call, else sm80; the default), sm80 (mma.sync) or sm90a (wgmma,
# Hopper). attn.families resolves it per call.
_family = _families.default_family()


def set_kernel_family(family: str) -> None:
    """Which kernel family calls use from now on, forward and backward:
    'auto' (the default: attn-compile's --family default, sm90a on sm_90a
    where that family implements the call -- forward: f16/bf16, head dims
    that are multiples of 8 up to 256, masks and score_mod included;
    backward: equal such head dims, atomic or deterministic -- else
    sm80), 'sm80' (mma.sync, every sm_80+ chip) or
    'sm90a' (Hopper's wgmma kernels); also $ATTN_KERNEL_FAMILY. The tuning
    database is looked up for the family the call resolves to (for 'auto'
    on sm_90a, the entry that tuned both families); ``explain`` says which
    family a call got and why."""
    global _family
    _family = _families.check_family(family)
    _forget_choices()


def kernel_family() -> str:
    """The family set_kernel_family / $ATTN_KERNEL_FAMILY asked for."""
    return _family


def _device_info(index: int) -> Tuple[str, int]:
    """(name, multiprocessors): the tuning database's GPU key."""
    info = _devices.get(index)
    if info is None:
        props = torch.cuda.get_device_properties(index)
        info = _devices[index] = (props.name, props.multi_processor_count)
    return info


def _device_index(q: Tensor) -> int:
    index = q.device.index
    return torch.cuda.current_device() if index is None else index


def _spec_and_shape(kind: str, q: Tensor, k: Tensor, v: Tensor, causal: bool,
                    scale: Optional[float], vkey: str, chip: str,
                    deterministic: bool = False, key_range: bool = False):
    """The KernelSpec (heuristic tile) and run-time Shape of a call
    (``deterministic``: a backward's dQ mode)."""
    B, Hq, Nq, D = q.shape
    Hkv, Nk = k.shape[1], k.shape[2]
    # The family asked for; the selection resolves it (forward: every
    # variant the op takes has an sm90a kernel; backward: every mask, the
    # softcap and ALiBi, equal head dims, multiples of 8 up to 256, atomic
    # or deterministic). ALiBi's slopes are a
    # launch argument: one kernel for every shape and slope.
    spec = KernelSpec(kind, int(D), int(v.shape[3]), _DTYPE_NAMES[q.dtype],
                      bool(causal), chip, variant=vkey, family=_family,
                      deterministic=kind == "bwd" and bool(deterministic),
                      key_range=bool(key_range))
    shape = _tuning.Shape(int(B), int(Hq), int(Hkv), int(Nq), int(Nk))
    return spec, shape


def _launcher_key(kind, q, k, v, causal, scale, vkey, index,
                  deterministic=False, key_range=False) -> tuple:
    """What decides the kernel: its specialisation and, for the tuning
    database, the heads ratio and sequence buckets."""
    Hq, Nq = q.shape[1], q.shape[2]
    Hkv, Nk = k.shape[1], k.shape[2]
    return (kind, q.shape[3], v.shape[3], q.dtype, causal, vkey, index,
            _family,
            Hq // max(1, Hkv), _tuning.sequence_bucket(Nq),
            _tuning.sequence_bucket(Nk), deterministic, key_range)


def _select(kind: str, spec: KernelSpec, shape, index: int):
    """The database's tile for a call's shape class, else the heuristic's
    (attn.tuning.select), forward and backward; never fails a call. A
    backward is looked up under its dQ mode's key (spec.deterministic:
    atomic dQ, or deterministic)."""
    try:
        gpu, sms = _device_info(index)
        return _tuning.select(spec, shape, gpu, sms,
                              deterministic=spec.deterministic)
    except Exception as ex:  # a broken database never breaks a call
        return _tuning.Selection(spec.resolved(), "heuristic",
                                 f"{_families.resolve_reason(spec)}; lookup "
                                 f"failed: {type(ex).__name__}: {ex}")


def _launcher(kind: str, q: Tensor, k: Tensor, v: Tensor, causal: bool,
              scale: Optional[float], vkey: str = "",
              deterministic: bool = False,
              key_range: bool = False) -> _Launcher:
    index = _device_index(q)
    key = _launcher_key(kind, q, k, v, causal, scale, vkey, index,
                        deterministic, key_range)
    launcher = _launchers.get(key)
    if launcher is None:
        with _launchers_lock:
            launcher = _launchers.get(key)
            if launcher is None:
                spec, shape = _spec_and_shape(kind, q, k, v, causal, scale,
                                              vkey, _chip(index),
                                              deterministic, key_range)
                launcher, selection = _load(_select(kind, spec, shape, index),
                                            index, kind == "bwd",
                                            spec.resolved())
                _selections[key] = selection
                _launchers[key] = launcher
    return launcher


def _load(selection, index: int, backward: bool, heuristic: KernelSpec):
    """(loaded kernel, selection) of a selection; a tuned tile that cannot
    be had (not in the pack, does not compile) falls back to
    ``heuristic`` (the call's spec, its family resolved: a tile of the
    other family does not change it), and the selection says so."""
    spec = selection.spec
    launcher = _launchers_by_spec.get((spec, index))
    if launcher is None:
        try:
            launcher = _Launcher(spec, index, backward)
        except (KernelNotAvailableError, CompileError, _rt.AttnRuntimeError) \
                as ex:
            if not spec.tile:
                raise
            selection = _tuning.Selection(
                heuristic, "heuristic",
                f"the tuned tile {spec.tile} is not available ({ex}); "
                f"database: {selection.reason}", selection.db)
            return _load(selection, index, backward, heuristic)
        _launchers_by_spec[(spec, index)] = launcher
    return launcher, selection


def _check_scale(scale: Optional[float]) -> None:
    if scale is not None and not (isinstance(scale, (int, float))
                                  and math.isfinite(scale)):
        raise ValueError(f"{_OP}: scale must be a finite float or None, got "
                         f"{scale!r}")


def _key_range_tensors(q: Tensor, k: Tensor, key_start, key_end):
    """The key range as contiguous int32 tensors on q's device (None when
    not given), its shape and type checked, naming the argument."""
    if key_start is None and key_end is None:
        return None
    if key_start is None or key_end is None:
        raise ValueError(f"{_OP}: key_range needs both key_start and key_end")
    out = []
    for name, t in (("key_start", key_start), ("key_end", key_end)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{_OP}: {name} must be a tensor, got "
                            f"{type(t).__name__}")
        if t.dtype.is_floating_point or t.dtype.is_complex or \
                t.dtype == torch.bool:
            raise TypeError(f"{_OP}: {name} must hold integers, got "
                            f"{t.dtype}")
        if t.dim() != 1 or t.shape[0] != q.shape[0]:
            raise ValueError(f"{_OP}: {name} must have shape [B] = "
                             f"[{q.shape[0]}], got {list(t.shape)}")
        if t.device != q.device:
            raise ValueError(f"{_OP}: {name} is on {t.device}, q on "
                             f"{q.device}")
        out.append(t.to(torch.int32).contiguous())
    return tuple(out)


def standard_alibi_slopes(heads: int, device=None) -> Tensor:
    """ALiBi's standard slopes 2^(-8(h+1)/heads), h = 0 .. heads - 1, as a
    float32 [heads] tensor (what ``alibi=True`` uses)."""
    h = torch.arange(1, int(heads) + 1, dtype=torch.float64)
    return torch.exp2(h * (-8.0 / int(heads))).to(torch.float32).to(device)


_standard_slopes: Dict[tuple, Tensor] = {}


def _standard_alibi(q: Tensor) -> Tensor:
    """alibi=True's slopes for q's heads, on q's device (kept per heads and
    device for eager calls)."""
    heads, device = q.shape[1], q.device
    if _is_compiling() or type(q) is not Tensor or not _CAN_BYPASS or \
            _dispatch_stack_len() != 0 or device.type not in ("cpu", "cuda"):
        return standard_alibi_slopes(heads, device)
    key = (int(heads), device)
    slopes = _standard_slopes.get(key)
    if slopes is None:
        slopes = _standard_slopes[key] = standard_alibi_slopes(heads, device)
    return slopes


def _alibi_flag(alibi, alibi_slopes, what: str = _OP):
    """The variant's alibi flag for ``alibi`` and ``alibi_slopes`` (giving
    both is an error; a non-bool ``alibi`` is make_variant's to name)."""
    if alibi_slopes is None:
        return alibi
    if alibi is True:
        raise ValueError(f"{what}: give alibi=True (the standard slopes) or "
                         "alibi_slopes, not both")
    return True if alibi is False else alibi


def _alibi_tensor(q: Tensor, alibi_slopes, what: str = _OP):
    """``alibi_slopes`` checked against q (None when not given): a float32
    tensor of shape [Hq] or [B, Hq] on q's device; raises naming it."""
    if alibi_slopes is None:
        return None
    if not isinstance(alibi_slopes, Tensor):
        raise TypeError(f"{what}: alibi_slopes must be a tensor, got "
                        f"{type(alibi_slopes).__name__}")
    if alibi_slopes.dtype != torch.float32:
        raise TypeError(f"{what}: alibi_slopes must be torch.float32, got "
                        f"{alibi_slopes.dtype}")
    B, Hq = q.shape[0], q.shape[1]
    if tuple(alibi_slopes.shape) not in ((Hq,), (B, Hq)):
        raise ValueError(f"{what}: alibi_slopes must have shape [Hq] = "
                         f"[{Hq}] or [B, Hq] = [{B}, {Hq}], got "
                         f"{list(alibi_slopes.shape)}")
    if alibi_slopes.device != q.device:
        raise ValueError(f"{what}: alibi_slopes is on {alibi_slopes.device}, "
                         f"q on {q.device}")
    return alibi_slopes


def _alibi_operand(q: Tensor, causal: bool, vkey: str, alibi_slopes,
                   what: str = _OP):
    """The checked slopes of a call of the op: given exactly when the
    variant is ALiBi (the kernel takes them)."""
    alibi_slopes = _alibi_tensor(q, alibi_slopes, what)
    alibi = bool(vkey) and parse_variant(causal, vkey).alibi
    if alibi != (alibi_slopes is not None):
        raise ValueError(
            f"{what}: " + ("the ALiBi variant needs alibi_slopes" if alibi
                           else "alibi_slopes given to a variant without "
                           "ALiBi (its variant key must say ALiBi)"))
    return alibi_slopes


def _alibi_launch(slopes: Optional[Tensor]) -> Tuple[Optional[Tensor], int,
                                                     int]:
    """(tensor to keep alive, pointer, batch stride) of the kernel's
    alibi_slopes / alibi_slopes_stride_b: the last dim contiguous; [Hq]
    has stride 0 (one row for every batch entry)."""
    if slopes is None:
        return None, 0, 0
    if slopes.shape[-1] > 1 and slopes.stride(-1) != 1:
        slopes = slopes.contiguous()
    stride_b = slopes.stride(0) if slopes.dim() == 2 else 0
    return slopes, slopes.data_ptr(), stride_b


def _forward(q: Tensor, k: Tensor, v: Tensor, causal: bool,
             scale: Optional[float], vkey: str = "", key_start=None,
             key_end=None, alibi_slopes=None) -> Tuple[Tensor, Tensor]:
    """Checks, allocates O and LSE, launches the forward kernel (with the
    batch entries' key ranges and the ALiBi slopes when given)."""
    _check_shapes(q, k, v)
    _check_cuda((("q", q), ("k", k), ("v", v)))
    key_range = _key_range_tensors(q, k, key_start, key_end)
    slopes, slopes_ptr, slopes_stride = _alibi_launch(
        _alibi_operand(q, causal, vkey, alibi_slopes))
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
    launcher = _launcher("fwd", q, k, v, causal, scale, vkey,
                         key_range=key_range is not None)
    args, ref = launcher.args()
    qs, ks, vs, os_ = q.stride(), k.stride(), v.stride(), out.stride()
    starts, ends = ((key_range[0].data_ptr(), key_range[1].data_ptr())
                    if key_range is not None else (0, 0))
    _FWD_FORMAT.pack_into(
        args, 0, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
        lse.data_ptr(), B, Hq, Hkv, Nq, Nk, qs[0], qs[1], qs[2], ks[0], ks[1],
        ks[2], vs[0], vs[1], vs[2], os_[0], os_[1], os_[2], Hq * Nq, Nq,
        _softmax_scale(scale, q.shape[3]), starts, ends, slopes_ptr,
        slopes_stride)
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
              lse: Tensor, causal: bool, scale: Optional[float],
              vkey: str = "", deterministic: bool = False, key_start=None,
              key_end=None, alibi_slopes=None
              ) -> Tuple[Tensor, Tensor, Tensor]:
    """dQ, dK, dV with attn's backward kernels (recomputation from LSE;
    ``deterministic``: dQ without atomics, bit-identical over reruns; the
    ALiBi slopes get no gradient)."""
    why = _families.backward_head_dims_unsupported(q.shape[3], v.shape[3])
    if why:
        raise NotImplementedError(f"{_OP} backward: {why}")
    d, dv = q.shape[3], v.shape[3]
    if d != dv and not _takes_unequal_head_dims(q, k, v, causal, scale, vkey,
                                                deterministic):
        return _backward_at_equal_head_dims(
            grad_out, q, k, v, out, lse, causal, scale, vkey, deterministic,
            key_start, key_end, alibi_slopes)
    missing = _backward_kernels_missing()
    if missing is not None:
        raise NotImplementedError(f"{_OP} backward: {missing}")
    _check_cuda((("grad_out", grad_out), ("q", q), ("k", k), ("v", v)))
    key_range = _key_range_tensors(q, k, key_start, key_end)
    slopes, slopes_ptr, slopes_stride = _alibi_launch(
        _alibi_operand(q, causal, vkey, alibi_slopes))
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
        launcher = _launcher("bwd", q, k, v, causal, scale, vkey,
                             deterministic, key_range is not None)
    except (KernelNotAvailableError, CompileError) as ex:
        # Not in the pack, or the compiler has no backward kernel for the
        # call (head dim 256: it names why): what attn cannot
        # differentiate raises NotImplementedError, as variants do.
        raise NotImplementedError(f"{_OP} backward: {ex}") from ex
    args, ref = launcher.args()
    st = [t.stride() for t in (q, k, v, out, grad_out, dq, dk, dv)]
    strides = [s for t in st for s in t[:3]]
    _BWD_FORMAT.pack_into(
        args, 0, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
        grad_out.data_ptr(), lse.data_ptr(), dq.data_ptr(), dk.data_ptr(),
        dv.data_ptr(), 0, B, Hq, Hkv, Nq, Nk, *strides, lse.stride(0),
        lse.stride(1), _softmax_scale(scale, q.shape[3]),
        *((key_range[0].data_ptr(), key_range[1].data_ptr())
          if key_range is not None else (0, 0)), slopes_ptr, slopes_stride)
    nbytes = launcher.lib.attn_kernel_workspace_bytes(launcher.handle, ref)
    workspace = None
    if nbytes:
        workspace = torch.empty(nbytes, dtype=torch.uint8, device=q.device)
        args.workspace = workspace.data_ptr()
    launcher.run(ref, _current_stream(q.device.index))
    return dq, dk, dv


def _takes_unequal_head_dims(q, k, v, causal, scale, vkey,
                             deterministic) -> bool:
    """Whether the backward family of the call takes Dqk ≠ Dv itself (the
    sm90a kernels do; the sm80 ones take equal head dims only)."""
    spec, _ = _spec_and_shape("bwd", q, k, v, causal, scale, vkey,
                              _chip(_device_index(q)), deterministic)
    return _families.backward_takes_unequal_head_dims(spec)


def _backward_at_equal_head_dims(grad_out, q, k, v, out, lse, causal, scale,
                                 *rest) -> Tuple[Tensor, Tensor, Tensor]:
    """Dqk ≠ Dv where the family's kernels take equal head dims (sm80):
    the backward runs at the wider one with the narrower operands
    zero-padded (q and k, or v, out and grad_out). Zero columns add 0 to
    Q·Kᵀ, dO·Vᵀ and Δ = rowsum(dO∘O), so the gradients are exact; their
    padding columns (0) are dropped. The scale stays Dqk's. Costs the
    padded width's FLOPs in the narrower products and a copy of the padded
    operands."""
    d, dv = q.shape[3], v.shape[3]
    width, _ = _families.kernel_head_dims(d, dv, backward=True)

    def padded(t: Tensor) -> Tensor:
        return torch.nn.functional.pad(t, [0, width - t.shape[3]])

    dq, dk, dvv = _backward(padded(grad_out), padded(q), padded(k),
                            padded(v), padded(out), lse, causal,
                            _softmax_scale(scale, d), *rest)
    return (dq[..., :d].contiguous(), dk[..., :d].contiguous(),
            dvv[..., :dv].contiguous())


def _kernel_operands(q: Tensor, k: Tensor, v: Tensor, backward: bool):
    """Tensors of the shapes the kernel of a call is launched with, its
    head dims padded (families.kernel_head_dims; expanded views of one
    element: no memory), for explain."""
    d, dv = _families.kernel_head_dims(q.shape[3], v.shape[3], backward)
    return tuple(t.new_empty(1).expand(*t.shape[:3], width)
                 for t, width in ((q, d), (k, d), (v, dv)))


# --- torch.library registration ------------------------------------------

@torch.library.custom_op(
    "attn::attention", mutates_args=(),
    schema="(Tensor q, Tensor k, Tensor v, bool causal, float? scale, "
           "str variant=\"\", bool deterministic=False, "
           "Tensor? key_start=None, Tensor? key_end=None, "
           "Tensor? alibi_slopes=None) -> (Tensor, Tensor)")
def _attention_op(q, k, v, causal, scale, variant="", deterministic=False,
                  key_start=None, key_end=None, alibi_slopes=None):
    # (deterministic is the backward's dQ mode: see _setup_context.)
    return _forward(q, k, v, causal, scale, variant, key_start, key_end,
                    alibi_slopes)


@_attention_op.register_kernel("cpu")
def _attention_cpu(q, k, v, causal, scale, variant="", deterministic=False,
                   key_start=None, key_end=None, alibi_slopes=None):
    # The compiler's own CPU path (attn.cpu): JIT-compiled once per problem,
    # the scale (and the ALiBi slopes) passed at every call.
    _check_shapes(q, k, v)
    return _cpu.forward(q, k, v, scale, parse_variant(causal, variant),
                        _key_range_tensors(q, k, key_start, key_end),
                        _alibi_operand(q, causal, variant, alibi_slopes))


@_attention_op.register_fake
def _attention_fake(q, k, v, causal, scale, variant="", deterministic=False,
                    key_start=None, key_end=None, alibi_slopes=None):
    _check_shapes(q, k, v)
    _key_range_tensors(q, k, key_start, key_end)
    _alibi_operand(q, causal, variant, alibi_slopes)
    B, Hq, Nq, _ = q.shape
    out = q.new_empty((B, Hq, Nq, v.shape[3]))
    lse = q.new_empty((B, Hq, Nq), dtype=torch.float32)
    return out, lse


@torch.library.custom_op(
    "attn::attention_backward", mutates_args=(),
    schema="(Tensor grad_out, Tensor q, Tensor k, Tensor v, Tensor out, "
           "Tensor lse, bool causal, float? scale, str variant=\"\", "
           "bool deterministic=False, Tensor? key_start=None, "
           "Tensor? key_end=None, Tensor? alibi_slopes=None) -> "
           "(Tensor, Tensor, Tensor)")
def _attention_backward_op(grad_out, q, k, v, out, lse, causal, scale,
                           variant="", deterministic=False, key_start=None,
                           key_end=None, alibi_slopes=None):
    return _backward(grad_out, q, k, v, out, lse, causal, scale, variant,
                     deterministic, key_start, key_end, alibi_slopes)


@_attention_backward_op.register_kernel("cpu")
def _attention_backward_cpu(grad_out, q, k, v, out, lse, causal, scale,
                            variant="", deterministic=False, key_start=None,
                            key_end=None, alibi_slopes=None):
    # The CPU path has no atomics: deterministic either way.
    _check_shapes(q, k, v)
    return _cpu.backward(grad_out, q, k, v, out, lse, scale,
                         parse_variant(causal, variant),
                         _key_range_tensors(q, k, key_start, key_end),
                         _alibi_operand(q, causal, variant, alibi_slopes))


@_attention_backward_op.register_fake
def _attention_backward_fake(grad_out, q, k, v, out, lse, causal, scale,
                             variant="", deterministic=False, key_start=None,
                             key_end=None, alibi_slopes=None):
    _alibi_operand(q, causal, variant, alibi_slopes)
    return (q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape))


def _setup_context(ctx, inputs, output):
    # (The dispatcher may drop a trailing argument equal to its default.)
    q, k, v, causal, scale = inputs[:5]
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.causal = causal
    ctx.scale = scale
    ctx.variant = inputs[5] if len(inputs) > 5 else ""
    ctx.deterministic = bool(inputs[6]) if len(inputs) > 6 else False
    ctx.key_start = inputs[7] if len(inputs) > 7 else None
    ctx.key_end = inputs[8] if len(inputs) > 8 else None
    ctx.alibi_slopes = inputs[9] if len(inputs) > 9 else None
    ctx.num_inputs = len(inputs)


def _autograd_backward(ctx, grad_out, grad_lse):
    # The LSE output is not differentiated (its gradient is dropped): it is
    # returned for inspection and for the backward kernels. Nor are the key
    # ranges and the ALiBi slopes (None).
    q, k, v, out, lse = ctx.saved_tensors
    dq, dk, dv = torch.ops.attn.attention_backward(
        grad_out, q, k, v, out, lse, ctx.causal, ctx.scale, ctx.variant,
        ctx.deterministic, ctx.key_start, ctx.key_end, ctx.alibi_slopes)
    return (dq, dk, dv) + (None,) * (ctx.num_inputs - 3)


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
# A call whose (shapes, strides, dtypes, devices, mask, scale) were seen
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
                scale: Optional[float], vkey: str = ""):
    """The cached launch of a call that _forward has just run directly on
    these tensors, or None when such calls must take the checked path
    (copies, empty problems)."""
    B, Hq, Nq, _ = q.shape
    Hkv, Nk, Dv = k.shape[1], k.shape[2], v.shape[3]
    if B * Hq * Nq * Dv == 0 or Nk == 0:
        return None
    if not (_strides_ok(q) and _strides_ok(k) and _strides_ok(v)):
        return None
    launcher = _launcher("fwd", q, k, v, causal, scale, vkey)
    args = _rt.LaunchArgs()
    qs, ks, vs = q.stride(), k.stride(), v.stride()
    # O is allocated contiguous and LSE [B, Hq, Nq] contiguous.
    _FWD_FORMAT.pack_into(
        args, 0, 0, 0, 0, 0, 0, B, Hq, Hkv, Nq, Nk, qs[0], qs[1], qs[2],
        ks[0], ks[1], ks[2], vs[0], vs[1], vs[2], Hq * Nq * Dv, Nq * Dv, Dv,
        Hq * Nq, Nq, _softmax_scale(scale, q.shape[3]), 0, 0, 0, 0)
    index = q.device.index
    if index is None:
        index = torch.cuda.current_device()
    return (args, ctypes.byref(args), launcher.launch,
            ctypes.c_void_p(launcher.handle), index,
            (B, Hq, Nq, Dv), (B, Hq, Nq), launcher)


def _canonical_variant(causal, mask_align, window, softcap, alibi
                       ) -> Tuple[bool, str]:
    variant = make_variant(bool(causal), mask_align, window, softcap, alibi)
    return variant.causal, variant.key


if hasattr(torch.compiler, "assume_constant_result"):
    # Under torch.compile the arguments are constants: run the validation
    # at trace time and keep only its (bool, str) result in the graph.
    _canonical_variant = torch.compiler.assume_constant_result(
        _canonical_variant)


def _variant_key(causal, mask_align, window, softcap, alibi) -> Tuple[bool, str]:
    """(causal flag, variant key) of the keyword arguments; the common case
    (no variant) costs four comparisons."""
    if mask_align == "bottom_right" and window is None and softcap is None \
            and alibi is False:
        return causal, ""
    return _canonical_variant(causal, mask_align, window, softcap, alibi)


_autocast_enabled = torch.is_autocast_enabled
_AUTOCAST_DEVICES = ("cuda", "cpu")  # (meta tensors have no autocast state)


def _autocast_inputs(q, k, v):
    """Inside torch.autocast, floating-point q, k, v in the autocast dtype,
    as SDPA casts them (a float32 query from a rotary embedding meets a
    bfloat16 value: the kernels take one 16-bit type)."""
    dtype = torch.get_autocast_dtype(q.device.type)
    return tuple(t.to(dtype) if isinstance(t, Tensor) and
                 t.is_floating_point() else t for t in (q, k, v))


def _needs_head_dim_padding(q, k, v) -> bool:
    return (type(q) is Tensor and type(k) is Tensor and type(v) is Tensor
            and q.is_cuda and q.dim() == 4 and k.dim() == 4 and v.dim() == 4
            and _families.kernel_head_dims(q.shape[3], v.shape[3]) !=
            (q.shape[3], v.shape[3]))


def _attention_padded(q, k, v, *, scale, return_lse, **kwargs):
    """attention() on head dims zero-padded to multiples of 8: the padding
    adds 0 to every score and its output columns are dropped; F.pad and
    the slice are differentiable, so gradients come back unpadded."""
    d, dv = q.shape[3], v.shape[3]
    if scale is None:
        scale = d ** -0.5
    width, value_width = _families.kernel_head_dims(d, dv)
    q, k = torch.nn.functional.pad(q, [0, width - d]), \
        torch.nn.functional.pad(k, [0, width - d])
    v = torch.nn.functional.pad(v, [0, value_width - dv])
    out, lse = attention(q, k, v, scale=scale, return_lse=True, **kwargs)
    out = out[..., :dv].contiguous()
    return (out, lse) if return_lse else out


def attention(q: Tensor, k: Tensor, v: Tensor, *, causal: bool = False,
              scale: Optional[float] = None, return_lse: bool = False,
              mask_align: str = "bottom_right",
              window: Optional[Tuple[int, int]] = None,
              softcap: Optional[float] = None, alibi: bool = False,
              tune: Optional[bool] = None, deterministic: bool = False,
              key_range: Optional[Tuple[Tensor, Tensor]] = None,
              alibi_slopes: Optional[Tensor] = None):
    """softmax(q·kᵀ·scale [+ mask])·v with attn's FlashAttention kernels: a
    drop-in for ``F.scaled_dot_product_attention(q, k, v, is_causal=causal,
    scale=scale)`` (with GQA through the head counts; SDPA's ``is_causal``
    is ``causal=True, mask_align="top_left"``).

    Args:
      q: [B, Hq, Nq, D]; k: [B, Hkv, Nk, D]; v: [B, Hkv, Nk, Dv]; float16 or
        bfloat16 CUDA tensors, or float32/bfloat16/float16 CPU tensors (the
        compiler's CPU path), Hq a multiple of Hkv.
      causal: causal mask, aligned as ``mask_align`` says.
      scale: softmax scale, default 1/sqrt(D): a launch argument of the
        GPU kernels and a call argument of the CPU path's modules (one
        kernel, one module, serves every scale).
      return_lse: also return the row log-sum-exp (float32 [B, Hq, Nq],
        natural log, -inf for fully masked rows); it is not differentiated.
      mask_align: "bottom_right" (FlashAttention: row i aligned with key
        i + Nk - Nq; the default) or "top_left" (PyTorch's is_causal: row
        i with key i); it aligns ``causal``, ``window`` and ALiBi.
      window: (left, right) sliding window around the aligned diagonal,
        -1 = unbounded on that side (with ``causal``, right is 0).
      softcap: scores become softcap·tanh(score / softcap) (Gemma 2).
      alibi: ALiBi with the standard slopes slope_h = 2^(-8(h+1)/Hq)
        (standard_alibi_slopes); not together with ``alibi_slopes``.
      alibi_slopes: ALiBi with these slopes: float32 [Hq] or [B, Hq] on
        q's device; scores (after the softcap) minus
        slope[b, h]·|d(i) - j|, d(i) the row's aligned diagonal
        (``mask_align``): FlashAttention's ``alibi_slopes``. A launch
        argument (one kernel for every slope and shape); no gradient.
      tune: tune this call's shape class on first use when the tuning
        database has no entry (attn.tuning; default: $ATTN_TUNE == "1").
        Ignored under torch.compile.
      deterministic: gradients bit-identical over reruns: the backward's
        dQ from its own kernel instead of atomic adds (attn-compile
        --backward --deterministic; a kernel of its own, "-det"). The
        forward is the same. CPU tensors are deterministic either way.
      key_range: (key_start, key_end), integer tensors [B] on q's device:
        batch entry b sees only keys key_start[b] <= j < key_end[b]
        (clamped to [0, Nk]), on top of the mask, whose diagonal still
        aligns with the whole Nq and Nk: a padded batch (left padding:
        start = the pad; right padding: end = the length) in one call,
        FlashAttention's cache_leftpad and seqused_k. Rows left with no
        key give 0 (LSE -inf); masked keys get zero gradients. A kernel of
        its own ("-kr"), one for every padding.

    Under ``torch.autocast``, q, k and v are cast to the autocast dtype
    first, as SDPA's are (mixed-precision training with float32 weights).

    Gradients: the backward covers every variant (masks in both
    alignments, windows, the softcap, ALiBi); on CUDA at head dims up to
    256, Dqk ≠ Dv at the wider one with zero-padded operands (other head
    dims raise NotImplementedError naming why when differentiated).

    Head dims of CUDA tensors that are not multiples of 8 are zero-padded
    to the next one, as FlashAttention's interface does (the scale stays
    the original head dim's; out is sliced back).

    Returns:
      out [B, Hq, Nq, Dv] (contiguous), or (out, lse).
    """
    if type(q) is Tensor and q.device.type in _AUTOCAST_DEVICES and \
            _autocast_enabled(q.device.type):
        q, k, v = _autocast_inputs(q, k, v)
    if _needs_head_dim_padding(q, k, v):
        return _attention_padded(q, k, v, causal=causal, scale=scale,
                                 return_lse=return_lse,
                                 mask_align=mask_align, window=window,
                                 softcap=softcap, alibi=alibi, tune=tune,
                                 deterministic=deterministic,
                                 key_range=key_range,
                                 alibi_slopes=alibi_slopes)
    causal, vkey = _variant_key(
        causal, mask_align, window, softcap,
        alibi if alibi_slopes is None else _alibi_flag(alibi, alibi_slopes))
    if not isinstance(deterministic, bool):
        raise TypeError(f"{_OP}: deterministic must be a bool, got "
                        f"{deterministic!r}")
    if alibi is True or alibi_slopes is not None:
        # ALiBi: the slopes are a launch argument (alibi=True: the standard
        # ones), checked here so that errors name them before dispatch.
        _check_shapes(q, k, v)
        alibi_slopes = _standard_alibi(q) if alibi_slopes is None else \
            _alibi_tensor(q, alibi_slopes)
    if key_range is not None or alibi_slopes is not None:
        start = end = None
        if key_range is not None:
            if not (isinstance(key_range, (tuple, list))
                    and len(key_range) == 2):
                raise TypeError(f"{_OP}: key_range must be a (key_start, "
                                "key_end) pair of tensors, got "
                                f"{type(key_range).__name__}")
            start, end = key_range
        if scale is not None:
            _check_scale(scale)
            scale = float(scale)
        if _direct_call_ok(q, k, v) and not any(
                type(t) is Tensor and _is_functorch_wrapped(t)
                for t in (start, end, alibi_slopes)):
            # The checked direct launch (no fast entry: the ranges' and
            # slopes' values change from call to call, and _forward
            # converts them).
            out, lse = _forward(q, k, v, bool(causal), scale, vkey, start,
                                end, alibi_slopes)
        else:
            out, lse = torch.ops.attn.attention(q, k, v, bool(causal), scale,
                                                vkey, deterministic, start,
                                                end, alibi_slopes)
        return (out, lse) if return_lse else out
    if (tune or (tune is None and _TUNE_FROM_ENV)) and not _is_compiling():
        _tune_once(q, k, v, causal, scale, vkey)
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
               causal, scale, vkey)
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
        out, lse = _forward(q, k, v, bool(causal), scale, vkey)
        if key is not None and key not in entries:
            if len(entries) >= _MAX_FAST_ENTRIES:
                entries.clear()
            entries[key] = _fast_entry(q, k, v, bool(causal), scale, vkey)
    else:
        out, lse = torch.ops.attn.attention(q, k, v, bool(causal), scale,
                                            vkey, deterministic)
    return (out, lse) if return_lse else out


# --- which kernel, and tuning ----------------------------------------------

_TUNE_FROM_ENV = os.environ.get("ATTN_TUNE") == "1"
_tune_attempts: Dict[tuple, str] = {}


@dataclass
class KernelChoice:
    """Which kernel a call uses (``explain``): its specialisation, the
    kernel directory, the tile and whether the tuning database or the
    heuristic chose it, and why."""

    spec: str
    kernel_dir: str
    entry: str
    tile: dict
    source: str      # "tuning-db", "heuristic" or "cpu"
    reason: str

    def __str__(self) -> str:
        t = self.tile
        tile = (f"block_m {t.get('block_m')} block_n {t.get('block_n')} "
                f"warp_rows {t.get('warp_rows')} stages {t.get('stages')}")
        return (f"{self.entry} ({self.spec}): {tile}, {self.source}; "
                f"{self.reason}; from {self.kernel_dir}")


def explain(q: Tensor, k: Tensor, v: Tensor, *, causal: bool = False,
            scale: Optional[float] = None, mask_align: str = "bottom_right",
            window: Optional[Tuple[int, int]] = None,
            softcap: Optional[float] = None, alibi: bool = False,
            backward: bool = False, deterministic: bool = False,
            alibi_slopes: Optional[Tensor] = None) -> KernelChoice:
    """The kernel ``attention(q, k, v, ...)`` with these arguments uses (the
    backward kernel with ``backward=True``, of the dQ mode
    ``deterministic`` says): loads it as a call would (ALiBi, by
    ``alibi`` or ``alibi_slopes``: one kernel for every slope)."""
    what = "attn.torch.explain"
    causal, vkey = _variant_key(causal, mask_align, window, softcap,
                                _alibi_flag(alibi, alibi_slopes, what))
    _check_shapes(q, k, v, what)
    _alibi_tensor(q, alibi_slopes, what)
    if scale is not None:
        _check_scale(scale)
        scale = float(scale)
    if q.device.type == "cpu":
        return _explain_cpu(q, causal, scale, vkey, backward)
    _check_cuda((("q", q), ("k", k), ("v", v)), "attn.torch.explain")
    kind = "bwd" if backward else "fwd"
    deterministic = backward and bool(deterministic)
    # The kernel's head dims: padded to multiples of 8 (_attention_padded),
    # the backward's at the wider one where its family takes equal head
    # dims only (_backward_at_equal_head_dims).
    scale = _softmax_scale(scale, q.shape[3])
    q, k, v = _kernel_operands(q, k, v, backward=False)
    if backward and q.shape[3] != v.shape[3] and not _takes_unequal_head_dims(
            q, k, v, causal, scale, vkey, deterministic):
        q, k, v = _kernel_operands(q, k, v, backward=True)
    launcher = _launcher(kind, q, k, v, causal, scale, vkey, deterministic)
    sel = _selections[_launcher_key(kind, q, k, v, causal, scale, vkey,
                                    _device_index(q), deterministic)]
    manifest = launcher.kernel.manifest
    return KernelChoice(launcher.spec.name, launcher.kernel.dir,
                        manifest.get("entry", ""), manifest.get("tile", {}),
                        sel.source, sel.reason)


def _explain_cpu(q: Tensor, causal: bool, scale: Optional[float], vkey: str,
                 backward: bool) -> KernelChoice:
    """What a call on CPU tensors runs: the compiler's CPU path (no tile
    database, no kernel directory: one JIT-compiled module per problem,
    whatever the scale, which every call passes)."""
    variant = parse_variant(causal, vkey)
    kind = "bwd" if backward else "fwd"
    spec = (f"cpu-{kind}-d{q.shape[3]}-{_cpu.dtype_name(q.dtype)}-"
            f"{variant.name}")
    return KernelChoice(spec, "", "attention_grad" if backward else
                        "attention", {}, "cpu",
                        "CPU tensors run the compiler's CPU path (attn-c "
                        "Execution: the tiled algorithm, JIT-compiled once "
                        "per problem, the scale (and ALiBi's slopes) call "
                        "arguments); the "
                        "tuning database is for GPU kernels")


def tune(q: Tensor, k: Tensor, v: Tensor, *, causal: bool = False,
         scale: Optional[float] = None, mask_align: str = "bottom_right",
         window: Optional[Tuple[int, int]] = None,
         softcap: Optional[float] = None, alibi: bool = False,
         reps: int = 10, warmup: int = 3):
    """Tunes the forward kernel for this call's shape class now (attn-tune
    on the candidate bundle; attn.tuning.tune), records the winner in the
    tuning database and makes later calls use it. Returns the
    attn.tuning.TuneResult (selection, attn-tune's table, seconds)."""
    causal, vkey = _variant_key(causal, mask_align, window, softcap, alibi)
    _check_shapes(q, k, v, "attn.torch.tune")
    _check_cuda((("q", q), ("k", k), ("v", v)), "attn.torch.tune")
    if scale is not None:
        _check_scale(scale)
        scale = float(scale)
    index = _device_index(q)
    spec, shape = _spec_and_shape("fwd", q, k, v, causal, scale, vkey,
                                  _chip(index))
    gpu, sms = _device_info(index)
    result = _tuning.tune(spec, shape, gpu, sms, device_index=index,
                          reps=reps, warmup=warmup)
    _forget_choices()
    return result


def _tune_once(q, k, v, causal, scale, vkey) -> None:
    """tune=True / ATTN_TUNE=1: tune a shape class the database lacks,
    once per process; a failure warns and the heuristic kernel runs."""
    if not (isinstance(q, Tensor) and q.is_cuda and q.dim() == 4
            and isinstance(k, Tensor) and k.dim() == 4
            and isinstance(v, Tensor) and v.dim() == 4):
        return  # the call itself reports what is wrong
    index = _device_index(q)
    key = _launcher_key("fwd", q, k, v, causal, scale, vkey, index)
    if key in _tune_attempts:
        return
    with _launchers_lock:
        if key in _tune_attempts:
            return
        _tune_attempts[key] = "running"
    try:
        spec, shape = _spec_and_shape("fwd", q, k, v, causal, scale, vkey,
                                      _chip(index))
        why_not = _tuning.cannot_tune(spec)
        if why_not:
            _tune_attempts[key] = "untunable: " + why_not
            return
        if _select("fwd", spec, shape, index).source == "tuning-db":
            _tune_attempts[key] = "already tuned"
            return
        gpu, sms = _device_info(index)
        result = _tuning.tune(spec, shape, gpu, sms, device_index=index)
        _tune_attempts[key] = f"tuned in {result.seconds:.1f} s"
        _forget_choices()
    except (_tuning.TuneError, KernelNotAvailableError, CompileError,
            OSError) as ex:
        _tune_attempts[key] = f"failed: {ex}"
        warnings.warn(f"{_OP}: tuning on first use failed, the heuristic "
                      f"kernel runs: {ex}", RuntimeWarning, stacklevel=3)


def _forget_choices() -> None:
    """Drops the per-call kernel choices (and cached launches) so that the
    next calls look the database up again; loaded kernels stay loaded."""
    with _launchers_lock:
        for entries in list(_all_fast_entries.values()):
            entries.clear()
        _launchers.clear()
        _selections.clear()


def clear_kernel_cache() -> None:
    """Forgets the loaded kernels (the on-disk cache is kept)."""
    from . import cache
    with _launchers_lock:
        # The cached direct calls hold the handles closed below.
        for entries in list(_all_fast_entries.values()):
            entries.clear()
        for launcher in _launchers_by_spec.values():
            launcher.kernel.close()
        _launchers.clear()
        _launchers_by_spec.clear()
        _selections.clear()
        _tune_attempts.clear()
    cache._resolved.clear()


# Packed variable-length sequences (FlashAttention's varlen API) over the
# op's key ranges: attn/varlen.py.
from .varlen import attention_varlen  # noqa: E402,F401
