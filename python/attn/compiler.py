"""attn's compiler from Python: compile, opt and tune (needs MLIR).

These wrap the pybind11 module ``attn._compiler`` (python/CMakeLists.txt),
which calls the same C++ builders as attn-compile and attn-opt. On a host
without MLIR (the GPU host) the module is absent: ``available()`` says so,
and the PyTorch op uses an ahead-of-time kernel pack instead (attn.aot).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from ._errors import CompileError

_compiler = None
_import_error: Optional[BaseException] = None


def _bindings():
    """The attn._compiler module, imported on first use."""
    global _compiler, _import_error
    if _compiler is None and _import_error is None:
        try:
            from . import _compiler as module  # type: ignore[attr-defined]
            _compiler = module
        except ImportError as ex:
            _import_error = ex
    if _compiler is None:
        raise CompileError(
            "the attn compiler bindings (attn._compiler) are not available: "
            f"{_import_error}. Build them with the compiler "
            "(ninja AttnPythonCompiler; needs pybind11-dev and python3-dev) "
            "and point $ATTN_BUILD_DIR at that build, or use an AOT kernel "
            "pack (docs/python.md)")
    return _compiler


def available() -> bool:
    """Whether the compiler bindings can be imported here."""
    try:
        _bindings()
        return True
    except CompileError:
        return False


def version() -> str:
    """The compiler version (``git describe`` at build time, or
    $ATTN_COMPILER_VERSION) that kernels and tuning entries are keyed by."""
    return _bindings().version()


def opt(mlir: str, pipeline: str) -> str:
    """Runs a pass pipeline on MLIR text, as ``attn-opt --pass-pipeline``.

    ``pipeline`` is a textual pipeline such as
    ``"attn-tile{block-m=64 block-n=64},attn-fuse-online-softmax"`` or
    ``"attn-to-ptx{chip=sm_80}"``; without an anchor it runs on
    ``builtin.module``. Returns the resulting module as text. Raises
    CompileError for unparsable IR, an unknown pass or option, or a failing
    pass, with the diagnostics (``<input>:LINE:COL: error: ...``).
    """
    if not isinstance(mlir, str) or not isinstance(pipeline, str):
        raise TypeError("attn.opt(mlir_text: str, pipeline: str)")
    return _bindings().opt(mlir, pipeline)


@dataclass
class Kernel:
    """One compiled kernel: PTX, cubin and launch manifest
    (docs/kernel-abi.md), as attn-compile writes into a kernel directory."""

    entry: str
    ptx: str
    cubin: bytes
    manifest: Dict[str, Any]
    ptxas_log: str = ""
    _compiled: Any = field(default=None, repr=False)

    @property
    def problem(self) -> Dict[str, Any]:
        """The problem the kernel was compiled for (shape, dtype, causal,
        scale); head dims, dtype, mask and scale are fixed, the rest are
        run-time arguments."""
        return self.manifest["problem"]

    @property
    def tile(self) -> Dict[str, Any]:
        """Tile configuration and where it came from (heuristic,
        tuning-db, option)."""
        return self.manifest.get("tile", {})

    def write(self, directory: "str | os.PathLike[str]") -> Path:
        """Writes manifest.json, kernel.ptx and (when assembled)
        kernel.cubin into ``directory`` (created); returns its path. The
        folder is what attn-launch, attn.runtime.Kernel and the runtime's
        C ABI load."""
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        self._compiled.write(str(path))
        return path


def _wrap(compiled) -> Kernel:
    return Kernel(entry=compiled.entry, ptx=compiled.ptx,
                  cubin=compiled.cubin,
                  manifest=json.loads(compiled.manifest_json()),
                  ptxas_log=compiled.ptxas_log, _compiled=compiled)


def _check_dtype(dtype: str) -> str:
    if dtype not in ("f16", "bf16"):
        raise CompileError(
            f"dtype: expected 'f16' or 'bf16', got {dtype!r}"
            + (" (f32 has no GPU kernel)" if dtype == "f32" else ""))
    return dtype


def compile(mlir: Optional[str] = None, *, batch: int = 1, heads_q: int = 1,
            heads_kv: Optional[int] = None, seq_q: int = 128,
            seq_kv: Optional[int] = None, head_dim: int = 64,
            value_head_dim: Optional[int] = None, dtype: str = "bf16",
            causal: bool = False, scale: Optional[float] = None,
            with_lse: bool = True, chip: str = "sm_90a", features: str = "",
            opt_level: int = 3, block_m: int = 0, block_n: int = 0,
            warp_rows: int = 0, stages: int = 2, tuning_db: str = "",
            tuning_gpu: str = "", ptxas: str = "",
            assemble: bool = True, top_left: bool = False,
            window_left: int = -1, window_right: int = -1,
            softcap: float = 0.0, alibi: bool = False,
            family: str = "sm80", sm90_schedule: str = "") -> Kernel:
    """Compiles one attention kernel, as ``attn-compile``.

    Either from MLIR text holding one ``attn.attention`` (``mlir``), or from
    a problem: Q [batch, heads_q, seq_q, head_dim], K/V [batch, heads_kv,
    seq_kv, head_dim/value_head_dim] (``heads_kv`` defaults to ``heads_q``,
    ``seq_kv`` to ``seq_q``), ``dtype`` 'f16' or 'bf16', ``causal``
    (bottom-right aligned unless ``top_left``), ``scale`` (default
    1/sqrt(head_dim)), a sliding window ``window_left``/``window_right``
    (-1 = unbounded), ``softcap`` (0 = none) or ``alibi`` (docs/variants.md;
    the same rules as attn-compile's flags). ``family`` is the kernel
    family: 'sm80' (mma.sync), 'sm90a' (wgmma, Hopper) or 'auto'.
    ``block_m``/``block_n``/``warp_rows`` 0 = the tuning database
    (``tuning_db``; '' = $ATTN_TUNING_DB, 'none' = off), else the heuristic.
    ``sm90_schedule`` is the sm90a family's consumer schedule, as
    attn-compile's --sm90-schedule: 'pingpong', 'overlap' or 'serial',
    optionally '+persistent'; '' = the tuned or heuristic one.
    ``assemble=False`` stops at PTX (no ptxas). Raises CompileError naming
    the bad argument or carrying the compiler's diagnostics.
    """
    b = _bindings()
    common = dict(chip=chip, features=features, opt_level=opt_level,
                  block_m=block_m, block_n=block_n, warp_rows=warp_rows,
                  stages=stages, tuning_db=tuning_db, tuning_gpu=tuning_gpu,
                  ptxas=ptxas, assemble=assemble, family=family,
                  sm90_schedule=sm90_schedule)
    if mlir is not None:
        if not isinstance(mlir, str):
            raise TypeError("attn.compile: mlir must be MLIR text (str)")
        return _wrap(b.compile_mlir(mlir, **common))
    return _wrap(b.compile_problem(
        batch=batch, heads_q=heads_q,
        heads_kv=heads_q if heads_kv is None else heads_kv, seq_q=seq_q,
        seq_kv=seq_q if seq_kv is None else seq_kv, head_dim=head_dim,
        value_head_dim=value_head_dim or 0, dtype=_check_dtype(dtype),
        causal=bool(causal), scale=scale, with_lse=with_lse,
        top_left=bool(top_left), window_left=window_left,
        window_right=window_right, softcap=float(softcap), alibi=bool(alibi),
        **common))


def attention_mlir(*, batch: int = 1, heads_q: int = 1,
                   heads_kv: Optional[int] = None, seq_q: int = 128,
                   seq_kv: Optional[int] = None, head_dim: int = 64,
                   value_head_dim: Optional[int] = None, dtype: str = "bf16",
                   causal: bool = False, scale: Optional[float] = None,
                   with_lse: bool = True, top_left: bool = False,
                   window_left: int = -1, window_right: int = -1,
                   softcap: float = 0.0, alibi: bool = False) -> str:
    """The MLIR text (a func holding one attn.attention) that compile()
    builds for these arguments: a starting point for opt()."""
    return _bindings().attention_module(
        batch=batch, heads_q=heads_q,
        heads_kv=heads_q if heads_kv is None else heads_kv, seq_q=seq_q,
        seq_kv=seq_q if seq_kv is None else seq_kv, head_dim=head_dim,
        value_head_dim=value_head_dim or 0, dtype=_check_dtype(dtype),
        causal=bool(causal), scale=scale, with_lse=with_lse,
        top_left=bool(top_left), window_left=window_left,
        window_right=window_right, softcap=float(softcap), alibi=bool(alibi))


def _find_tool(name: str, env: str) -> Optional[str]:
    """A tool of this repository's build ($<env>, $ATTN_BUILD_DIR/bin, the
    build folder the bindings came from, then PATH)."""
    if os.environ.get(env):
        return os.environ[env]
    dirs = []
    if os.environ.get("ATTN_BUILD_DIR"):
        dirs.append(Path(os.environ["ATTN_BUILD_DIR"]) / "bin")
    if _compiler is not None and getattr(_compiler, "__file__", None):
        dirs.append(Path(_compiler.__file__).resolve().parents[2] / "bin")
    for d in dirs:
        if (d / name).is_file():
            return str(d / name)
    return shutil.which(name)


@dataclass
class TuneBundle:
    """A tuning bundle written by tune(): one kernel directory per candidate
    tile configuration plus bundle.json (docs/tuning.md)."""

    directory: Path
    candidates: int
    pruned: int
    log: str

    def command(self, db: str) -> list:
        """The attn-tune command that runs the bundle on a GPU host and
        records the fastest correct candidate in ``db``."""
        return [_find_tool("attn-tune", "ATTN_TUNE") or "attn-tune",
                "--db", db, str(self.directory)]

    def run(self, db: str) -> subprocess.CompletedProcess:
        """Runs attn-tune on this bundle (needs a GPU and the runtime)."""
        return subprocess.run(self.command(db), check=True,
                              capture_output=True, text=True)


def tune(mlir: Optional[str] = None, *, out: "str | os.PathLike[str]",
         batch: int = 1, heads_q: int = 1, heads_kv: Optional[int] = None,
         seq_q: int = 128, seq_kv: Optional[int] = None, head_dim: int = 64,
         value_head_dim: Optional[int] = None, dtype: str = "bf16",
         causal: bool = False, scale: Optional[float] = None,
         chip: str = "sm_90a", ptxas: str = "", opt_level: int = 3,
         jobs: int = 0, only: Sequence[str] = (), family: str = "sm80",
         default_family: str = "") -> TuneBundle:
    """Writes a tuning bundle for one problem (as ``attn-compile
    --tune-bundle --family <family>``): every tile configuration of the
    family's space that passes the static checks and compiles without
    spilling. ``family`` 'sm80' (mma.sync), 'sm90a' (wgmma) or 'auto'
    (both where the chip and the problem allow; the database entry's key
    family is then "auto", what a family-auto lookup takes).
    ``default_family`` ('' = ``family``) is the family compile() would be
    asked for: its choice is the candidate marked "heuristic". Running it
    needs the GPU tools: ``bundle.run(db)`` (attn-tune) on the GPU host,
    then compile() with ``tuning_db=db`` picks the winner. ``only`` limits
    the candidates (e.g. ["m128n64r32s2", "wg-m128n128s2"]); ``jobs`` 0 =
    one compile per core."""
    if mlir is None:
        mlir = attention_mlir(batch=batch, heads_q=heads_q, heads_kv=heads_kv,
                              seq_q=seq_q, seq_kv=seq_kv, head_dim=head_dim,
                              value_head_dim=value_head_dim, dtype=dtype,
                              causal=causal, scale=scale)
    summary = _bindings().write_tune_bundle(
        mlir, str(out), chip=chip, ptxas=ptxas, opt_level=opt_level,
        jobs=jobs, only=list(only), family=family,
        default_family=default_family)
    return TuneBundle(Path(out), summary["candidates"], summary["pruned"],
                      summary["log"])
