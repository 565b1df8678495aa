"""Shared set-up for the attn package's tests.

The package is imported from this checkout (python/). The compiler tests
need the compiler's C API library (libattn-c.so, target AttnCAPI):
$ATTN_BUILD_DIR names the build that has it; with
ATTN_REQUIRE_COMPILER=1 (scripts/test.sh) its absence is a failure, not a
skip. Every test gets its own kernel cache ($ATTN_CACHE_DIR) and no pack.
"""

import os
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PYTHON_DIR))

import attn  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ATTN_KERNEL_PACK", raising=False)
    from attn import cache
    cache._resolved.clear()
    yield
    cache._resolved.clear()


def _require_compiler():
    if attn.compiler_available():
        return
    why = ("the compiler library is not available; build AttnCAPI and set "
           "ATTN_BUILD_DIR")
    if os.environ.get("ATTN_REQUIRE_COMPILER") == "1":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture
def compiler():
    """The compiler (skip, or fail under ATTN_REQUIRE_COMPILER=1, when its
    library is not built)."""
    _require_compiler()
    return attn


@pytest.fixture
def ptxas(compiler):
    """Skips when no ptxas is installed (CI may lack the CUDA toolkit)."""
    import shutil
    for cand in (os.environ.get("CUDA_HOME", "") + "/bin/ptxas",
                 "/usr/local/cuda/bin/ptxas", shutil.which("ptxas") or ""):
        if cand and os.path.isfile(cand):
            return cand
    pytest.skip("ptxas not found (no CUDA toolkit): cubin not assembled")


# A small attention problem, as MLIR, with a known bad line for diagnostics.
def problem_mlir(**kw):
    args = dict(batch=1, heads_q=2, heads_kv=1, seq_q=64, seq_kv=96,
                head_dim=64, dtype="bf16")
    args.update(kw)
    return attn.attention_mlir(**args)
