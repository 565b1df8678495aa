"""Exceptions of the attn package (importable without MLIR or PyTorch)."""


class CompileError(RuntimeError):
    """The compiler rejected its input: the message carries MLIR's
    diagnostics, each as ``<input>:LINE:COL: error: ...`` for MLIR text."""


class KernelNotAvailableError(RuntimeError):
    """No kernel for a specialisation: the compiler bindings are not
    available here and the AOT kernel pack ($ATTN_KERNEL_PACK) lacks it."""
