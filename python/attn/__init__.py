"""attn: an MLIR compiler for exact attention (FlashAttention) on NVIDIA GPUs.

* ``attn.compile``, ``attn.opt``, ``attn.tune``: the compiler (its C API
  in the wheel's libattn_compiler.so or a build's libattn-c.so; see
  docs/python.md);
* ``attn.torch.attention``: a PyTorch op (``torch.ops.attn.attention``)
  running attn's kernels, compiled on first use and cached on disk, or
  taken from an ahead-of-time kernel pack on a host without MLIR;
* ``attn.runtime``: launch kernel directories through libattn_runtime.so;
* ``python -m attn.aot build --out DIR``: build a kernel pack.
"""

from ._errors import CompileError, KernelNotAvailableError
from .compiler import (Kernel, TuneBundle, attention_mlir, compile_backward,
                       available as compiler_available, compile, opt, tune,
                       version)


def _version() -> str:
    """The release version: pyproject.toml's in a source checkout
    (<repo>/python/attn), else the installed distribution's (the wheel's
    METADATA, written from pyproject.toml)."""
    import re
    from pathlib import Path
    here = Path(__file__).resolve().parent
    pyproject = here.parents[1] / "pyproject.toml"
    if here.parent.name == "python" and pyproject.is_file():
        found = re.search(r'^version = "([^"]+)"$', pyproject.read_text(),
                          re.M)
        if found:
            return found.group(1)
    from importlib.metadata import version as installed
    return installed("attn")


__version__ = _version()

__all__ = ["__version__", "CompileError", "KernelNotAvailableError",
           "Kernel", "TuneBundle", "attention_mlir", "compile_backward",
           "compiler_available", "compile", "opt", "tune", "version"]
