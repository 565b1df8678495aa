"""attn: an MLIR compiler for exact attention (FlashAttention) on NVIDIA GPUs.

* ``attn.compile``, ``attn.opt``, ``attn.tune``: the compiler (needs the
  ``attn._compiler`` bindings, i.e. MLIR; see docs/python.md);
* ``attn.torch.attention``: a PyTorch op (``torch.ops.attn.attention``)
  running attn's kernels, compiled on first use and cached on disk, or
  taken from an ahead-of-time kernel pack on a host without MLIR;
* ``attn.runtime``: launch kernel directories through libattn_runtime.so;
* ``python -m attn.aot build --out DIR``: build a kernel pack.
"""

import os as _os
from pathlib import Path as _Path


def _add_build_tree():
    """Lets ``attn._compiler`` come from a CMake build tree: the module is
    built into <build>/python/attn/. $ATTN_BUILD_DIR names the build; else
    the newest module under this repository's build*/ folders is used."""
    env = _os.environ.get("ATTN_BUILD_DIR")
    repo = _Path(__file__).resolve().parents[2]
    if env:
        candidates = [_Path(env) / "python" / "attn"]
    else:
        candidates = sorted(repo.glob("build*/python/attn"))
    found = [(max(m.stat().st_mtime for m in d.glob("_compiler*.so")), d)
             for d in candidates if any(d.glob("_compiler*.so"))]
    if found:
        __path__.append(str(max(found)[1]))


_add_build_tree()

from ._errors import CompileError, KernelNotAvailableError  # noqa: E402
from .compiler import (Kernel, TuneBundle, attention_mlir,  # noqa: E402
                       available as compiler_available, compile, opt, tune,
                       version)

__all__ = ["CompileError", "KernelNotAvailableError", "Kernel", "TuneBundle",
           "attention_mlir", "compiler_available", "compile", "opt", "tune",
           "version"]
