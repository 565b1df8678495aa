"""Launch attn kernel directories on PyTorch tensors, through libattn_runtime.so.

A kernel directory is what `attn-compile` writes: manifest.json, kernel.ptx
and kernel.cubin (docs/kernel-abi.md). This module needs no MLIR: build the
runtime with `cmake -DATTN_ENABLE_COMPILER=OFF` (docs/runtime.md), then

    from attn.runtime import Kernel
    kern = Kernel("gpu-kernels/d128-bf16-causal")
    out, lse = kern(q, k, v)          # q [B, Hq, Nq, D], k/v [B, Hkv, Nk, D]

The library is found through $ATTN_RUNTIME_LIB, else in the repository's
build-gpu/, build/ or build-rt/ lib folders. Launches go on PyTorch's current
stream of the tensors' device, asynchronously, like any PyTorch op.
"""

import ctypes
import json
import os
from pathlib import Path

from ._native import PACKAGE_LIB

ABI_VERSION = 4

_REPO = Path(__file__).resolve().parents[2]
# The wheel's copy first (attn._native), then the build trees'.
_SEARCH = [PACKAGE_LIB / "libattn_runtime.so"] + [
    _REPO / d / "lib" / "libattn_runtime.so"
    for d in ("build-gpu", "build", "build-rt")]


class AttnRuntimeError(RuntimeError):
    """A failure reported by libattn_runtime (the message names the CUDA
    call and error where there is one)."""


class LaunchArgs(ctypes.Structure):
    """Mirror of attn_launch_args in include/attn/Runtime/RuntimeCAPI.h."""
    _fields_ = [
        ("q", ctypes.c_uint64), ("k", ctypes.c_uint64),
        ("v", ctypes.c_uint64), ("o", ctypes.c_uint64),
        ("lse", ctypes.c_uint64),
        ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64),
        ("heads_kv", ctypes.c_int64), ("seq_q", ctypes.c_int64),
        ("seq_kv", ctypes.c_int64),
        ("q_stride", ctypes.c_int64 * 3), ("k_stride", ctypes.c_int64 * 3),
        ("v_stride", ctypes.c_int64 * 3), ("o_stride", ctypes.c_int64 * 3),
        ("lse_stride", ctypes.c_int64 * 2),
        ("softmax_scale", ctypes.c_double),
        ("key_start", ctypes.c_uint64), ("key_end", ctypes.c_uint64),
        # ALiBi kernels: f32 slopes, (b, h) at alibi_slopes[b *
        # alibi_stride_b + h] (stride 0: one [heads_q] row for every b).
        ("alibi_slopes", ctypes.c_uint64), ("alibi_stride_b", ctypes.c_int64),
    ]


class BackwardArgs(ctypes.Structure):
    """Mirror of attn_backward_args in include/attn/Runtime/RuntimeCAPI.h
    (the backward kernels' launch; present in runtimes that have them)."""
    _fields_ = [
        ("q", ctypes.c_uint64), ("k", ctypes.c_uint64),
        ("v", ctypes.c_uint64), ("o", ctypes.c_uint64),
        ("d_o", ctypes.c_uint64), ("lse", ctypes.c_uint64),
        ("dq", ctypes.c_uint64), ("dk", ctypes.c_uint64),
        ("dv", ctypes.c_uint64), ("workspace", ctypes.c_uint64),
        ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64),
        ("heads_kv", ctypes.c_int64), ("seq_q", ctypes.c_int64),
        ("seq_kv", ctypes.c_int64),
        ("q_stride", ctypes.c_int64 * 3), ("k_stride", ctypes.c_int64 * 3),
        ("v_stride", ctypes.c_int64 * 3), ("o_stride", ctypes.c_int64 * 3),
        ("do_stride", ctypes.c_int64 * 3), ("dq_stride", ctypes.c_int64 * 3),
        ("dk_stride", ctypes.c_int64 * 3), ("dv_stride", ctypes.c_int64 * 3),
        ("lse_stride", ctypes.c_int64 * 2),
        ("softmax_scale", ctypes.c_double),
        ("key_start", ctypes.c_uint64), ("key_end", ctypes.c_uint64),
        # ALiBi kernels: f32 slopes, (b, h) at alibi_slopes[b *
        # alibi_stride_b + h] (stride 0: one [heads_q] row for every b).
        ("alibi_slopes", ctypes.c_uint64), ("alibi_stride_b", ctypes.c_int64),
    ]


# The backward half of the C ABI, which older runtimes lack.
BACKWARD_SYMBOLS = ("attn_kernel_is_backward", "attn_kernel_workspace_bytes",
                    "attn_kernel_launch_backward")


def has_backward(lib):
    """Whether `lib` exports the backward launch functions."""
    return all(hasattr(lib, name) for name in BACKWARD_SYMBOLS)


_lib = None


def load_library(path=None):
    """Loads libattn_runtime.so once and declares its C signatures."""
    global _lib
    if _lib is not None and path is None:
        return _lib
    candidates = [Path(path)] if path else (
        [Path(os.environ["ATTN_RUNTIME_LIB"])]
        if os.environ.get("ATTN_RUNTIME_LIB") else _SEARCH)
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        raise AttnRuntimeError(
            "libattn_runtime.so not found (looked in: "
            + ", ".join(str(c) for c in candidates)
            + "); build it with scripts/gpu-host.sh or set ATTN_RUNTIME_LIB")
    lib = ctypes.CDLL(str(found))
    lib.attn_runtime_abi_version.restype = ctypes.c_int
    lib.attn_runtime_last_error.restype = ctypes.c_char_p
    lib.attn_kernel_load.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.attn_kernel_load.restype = ctypes.c_void_p
    lib.attn_kernel_destroy.argtypes = [ctypes.c_void_p]
    lib.attn_kernel_destroy.restype = None
    lib.attn_kernel_entry.argtypes = [ctypes.c_void_p]
    lib.attn_kernel_entry.restype = ctypes.c_char_p
    lib.attn_kernel_loaded_from.argtypes = [ctypes.c_void_p]
    lib.attn_kernel_loaded_from.restype = ctypes.c_char_p
    lib.attn_kernel_grid.argtypes = [ctypes.c_void_p,
                                     ctypes.POINTER(LaunchArgs),
                                     ctypes.POINTER(ctypes.c_uint32)]
    lib.attn_kernel_grid.restype = ctypes.c_int
    lib.attn_kernel_launch.argtypes = [ctypes.c_void_p,
                                       ctypes.POINTER(LaunchArgs),
                                       ctypes.c_void_p]
    lib.attn_kernel_launch.restype = ctypes.c_int
    if has_backward(lib):
        lib.attn_kernel_is_backward.argtypes = [ctypes.c_void_p]
        lib.attn_kernel_is_backward.restype = ctypes.c_int
        lib.attn_kernel_workspace_bytes.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(BackwardArgs)]
        lib.attn_kernel_workspace_bytes.restype = ctypes.c_uint64
        lib.attn_kernel_launch_backward.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(BackwardArgs), ctypes.c_void_p]
        lib.attn_kernel_launch_backward.restype = ctypes.c_int
    version = lib.attn_runtime_abi_version()
    if version != ABI_VERSION:
        raise AttnRuntimeError(
            f"{found}: C ABI version {version}, this module speaks "
            f"{ABI_VERSION}; rebuild the runtime")
    _lib = lib
    return lib


def _last_error(lib):
    return lib.attn_runtime_last_error().decode(errors="replace")


_TORCH_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}


class Kernel:
    """One kernel directory, loaded into the CUDA context of one device on
    first use (PyTorch's primary context, so it shares memory and streams
    with PyTorch)."""

    def __init__(self, kernel_dir, prefer_ptx=False, lib_path=None):
        self.dir = str(kernel_dir)
        try:
            with open(os.path.join(self.dir, "manifest.json")) as f:
                self.manifest = json.load(f)
        except (OSError, ValueError) as ex:
            raise AttnRuntimeError(f"{self.dir}: cannot read manifest.json: {ex}")
        fmt = self.manifest.get("format")
        if fmt != "attn-kernel/1":
            raise AttnRuntimeError(
                f"{self.dir}/manifest.json: unsupported manifest format "
                f"{fmt!r} (this runtime reads 'attn-kernel/1')")
        self.problem = self.manifest.get("problem", {})
        self.prefer_ptx = prefer_ptx
        self._lib = load_library(lib_path)
        self._handle = None
        self._device = None

    # What the manifest fixes at compile time.
    @property
    def head_dim(self):
        return self.problem["head_dim"]

    @property
    def value_head_dim(self):
        return self.problem.get("value_head_dim", self.head_dim)

    @property
    def causal(self):
        return bool(self.problem.get("causal", False))

    @property
    def with_lse(self):
        return bool(self.problem.get("with_lse", True))

    @property
    def scale(self):
        return self.problem.get("scale", self.head_dim ** -0.5)

    @property
    def torch_dtype(self):
        import torch
        return getattr(torch, _TORCH_DTYPES[self.problem["dtype"]])

    @property
    def entry(self):
        return self.manifest.get("entry", "")

    @property
    def loaded_from(self):
        """"cubin" or "ptx" once loaded, else None."""
        if self._handle is None:
            return None
        return self._lib.attn_kernel_loaded_from(self._handle).decode()

    def load(self, device=None):
        """Loads the module on `device` (default: PyTorch's current one)."""
        import torch
        device = torch.device(device if device is not None else "cuda")
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        if self._handle is not None:
            if device != self._device:
                raise AttnRuntimeError(
                    f"{self.dir}: loaded on {self._device}, used on {device}; "
                    "make one Kernel per device")
            return
        with torch.cuda.device(device):
            # Make PyTorch's primary context current on this thread first.
            torch.cuda.synchronize(device)
            handle = self._lib.attn_kernel_load(self.dir.encode(),
                                                int(self.prefer_ptx))
        if not handle:
            raise AttnRuntimeError(_last_error(self._lib))
        self._handle = handle
        self._device = device

    def _check(self, q, k, v, out, lse):
        want = self.torch_dtype
        for name, t in (("q", q), ("k", k), ("v", v)):
            if not t.is_cuda:
                raise ValueError(f"{name} must be a CUDA tensor")
            if t.dim() != 4:
                raise ValueError(f"{name} must be 4-D [B, H, N, D], got {tuple(t.shape)}")
            if t.dtype != want:
                raise ValueError(f"{name} is {t.dtype}, the kernel takes {want}")
            if t.stride(-1) != 1:
                raise ValueError(f"{name}'s last dimension must be contiguous")
            if t.device != q.device:
                raise ValueError(f"{name} is on {t.device}, q on {q.device}")
        B, Hq, Nq, D = q.shape
        Bk, Hkv, Nk, Dk = k.shape
        if D != self.head_dim or Dk != self.head_dim:
            raise ValueError(f"head dim: the kernel takes {self.head_dim}, "
                             f"got q {D}, k {Dk}")
        if tuple(v.shape) != (B, Hkv, Nk, self.value_head_dim) or Bk != B:
            raise ValueError(f"v must be {(B, Hkv, Nk, self.value_head_dim)}, "
                             f"got {tuple(v.shape)} (k {tuple(k.shape)})")
        if Hq % Hkv:
            raise ValueError(f"heads_q ({Hq}) must be a multiple of heads_kv ({Hkv})")
        if tuple(out.shape) != (B, Hq, Nq, self.value_head_dim) or \
                out.dtype != want or out.stride(-1) != 1 or out.device != q.device:
            raise ValueError("out must be a CUDA tensor of shape "
                             f"{(B, Hq, Nq, self.value_head_dim)}, dtype {want}, "
                             "last dimension contiguous")
        if lse is not None:
            import torch
            if tuple(lse.shape) != (B, Hq, Nq) or lse.dtype != torch.float32 \
                    or lse.stride(-1) != 1 or lse.device != q.device:
                raise ValueError(f"lse must be a float32 CUDA tensor of shape "
                                 f"{(B, Hq, Nq)}, last dimension contiguous")

    @property
    def alibi(self):
        """Whether the kernel takes ALiBi slopes at launch."""
        return bool(self.problem.get("alibi", False))

    def __call__(self, q, k, v, out=None, lse=None, stream=None, scale=None,
                 alibi_slopes=None):
        """Computes attention(q, k, v) into `out` (and `lse` when the kernel
        writes it), allocating them when not given; returns (out, lse).
        `scale`: the softmax scale of this launch (a kernel argument;
        default: the manifest problem's). `alibi_slopes`: an ALiBi kernel's
        float32 CUDA slopes, [heads_q] or [batch, heads_q]."""
        launch, out, lse = self.prepare(q, k, v, out, lse, stream, scale,
                                        alibi_slopes)
        launch()
        return out, lse

    def _alibi_slopes(self, q, alibi_slopes):
        """The slopes as (tensor, stride_b) for a launch (None, 0 without)."""
        import torch
        if not self.alibi:
            if alibi_slopes is not None:
                raise ValueError("alibi_slopes: the kernel takes no ALiBi "
                                 "slopes")
            return None, 0
        B, Hq = q.shape[0], q.shape[1]
        if not isinstance(alibi_slopes, torch.Tensor) or \
                alibi_slopes.dtype != torch.float32 or \
                alibi_slopes.device != q.device or \
                tuple(alibi_slopes.shape) not in ((Hq,), (B, Hq)):
            raise ValueError(f"alibi_slopes: the ALiBi kernel takes float32 "
                             f"slopes on {q.device} of shape ({Hq},) or "
                             f"({B}, {Hq}), got "
                             f"{getattr(alibi_slopes, 'shape', alibi_slopes)}")
        if alibi_slopes.stride(-1) != 1:
            alibi_slopes = alibi_slopes.contiguous()
        stride_b = alibi_slopes.stride(0) if alibi_slopes.dim() == 2 else 0
        return alibi_slopes, stride_b

    def prepare(self, q, k, v, out=None, lse=None, stream=None, scale=None,
                alibi_slopes=None):
        """Checks the tensors once and returns (launch, out, lse): `launch()`
        runs the kernel on them again with no Python-side checks (for
        timing loops). The tensors must stay alive while it is used."""
        import torch
        B, Hq, Nq, _ = q.shape
        if out is None:
            out = torch.empty(B, Hq, Nq, self.value_head_dim, dtype=q.dtype,
                              device=q.device)
        if lse is None and self.with_lse:
            lse = torch.empty(B, Hq, Nq, dtype=torch.float32, device=q.device)
        self._check(q, k, v, out, lse)
        self.load(q.device)
        args = LaunchArgs()
        args.q, args.k, args.v, args.o = (t.data_ptr() for t in (q, k, v, out))
        args.lse = lse.data_ptr() if lse is not None else 0
        args.batch, args.heads_q, args.seq_q = B, Hq, Nq
        args.heads_kv, args.seq_kv = k.shape[1], k.shape[2]
        for field, t in (("q_stride", q), ("k_stride", k), ("v_stride", v),
                         ("o_stride", out)):
            getattr(args, field)[:] = [t.stride(0), t.stride(1), t.stride(2)]
        if lse is not None:
            args.lse_stride[:] = [lse.stride(0), lse.stride(1)]
        args.softmax_scale = self.scale if scale is None else float(scale)
        slopes, args.alibi_stride_b = self._alibi_slopes(q, alibi_slopes)
        args.alibi_slopes = slopes.data_ptr() if slopes is not None else 0
        if stream is None:
            stream = torch.cuda.current_stream(q.device)
        handle = stream.cuda_stream if hasattr(stream, "cuda_stream") else stream
        c_stream = ctypes.c_void_p(handle or None)
        c_args = ctypes.byref(args)
        lib, kernel = self._lib, self._handle

        def launch():
            # The context is pushed by the runtime when it is not current.
            if lib.attn_kernel_launch(kernel, c_args, c_stream) != 0:
                raise AttnRuntimeError(_last_error(lib))

        launch.args = args  # keeps the structure alive with the closure
        launch.alibi_slopes = slopes  # (and a contiguous copy of the slopes)
        return launch, out, lse

    def grid(self, q, k):
        """The launch grid for these shapes (x, y, z), from the manifest."""
        self.load(q.device)
        args = LaunchArgs()
        args.q = args.k = args.v = args.o = args.lse = 1
        args.batch, args.heads_q, args.seq_q = q.shape[0], q.shape[1], q.shape[2]
        args.heads_kv, args.seq_kv = k.shape[1], k.shape[2]
        args.softmax_scale = self.scale
        out = (ctypes.c_uint32 * 3)()
        if self._lib.attn_kernel_grid(self._handle, ctypes.byref(args), out):
            raise AttnRuntimeError(_last_error(self._lib))
        return tuple(out)

    def close(self):
        if self._handle is not None:
            self._lib.attn_kernel_destroy(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


_cache = {}


def attention(kernel_dir, q, k, v, out=None, lse=None):
    """attention(q, k, v) with the kernel in `kernel_dir`, loaded once per
    directory and device."""
    key = (os.path.abspath(str(kernel_dir)), q.device)
    kern = _cache.get(key)
    if kern is None:
        kern = _cache[key] = Kernel(kernel_dir)
    return kern(q, k, v, out=out, lse=lse)
