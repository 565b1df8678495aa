"""attn's compiler from Python: compile, opt and tune (needs MLIR).

These call the compiler's C API (attn-c/Compiler.h: JSON in, JSON out)
through ctypes, in the wheel's self-contained libattn_compiler.so or a
build tree's libattn-c.so (attn._native says where); it runs the same C++
builders as attn-compile and attn-opt, without holding the GIL. Where the
library is absent (a GPU host with only the runtime) ``available()`` says
so, and the PyTorch op uses an ahead-of-time kernel pack instead (attn.aot).
"""

from __future__ import annotations

import base64
import ctypes
import json
import operator
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from . import _native
from ._errors import CompileError

# attn-c/Compiler.h's ATTN_COMPILER_CAPI_VERSION this module speaks.
CAPI_VERSION = 3

# Its functions (attnCompiler<name>): char *(const char *request).
_FUNCTIONS = ("Version", "Opt", "AttentionModule", "Compile",
              "CompileBackward", "WriteKernel", "TuneBundle")

_lib = None
_lib_error: Optional[str] = None


def _library():
    """The compiler library, loaded on first use."""
    global _lib, _lib_error
    if _lib is None and _lib_error is None:
        path = _native.compiler_library()
        if path is None:
            _lib_error = (
                "not found (looked for " + ", ".join(
                    str(p) for p in _native.candidates(
                        **_native.COMPILER_LIB)) + ")")
        else:
            try:
                lib = ctypes.CDLL(str(path))
                lib.attnCompilerCAPIVersion.restype = ctypes.c_int
                got = lib.attnCompilerCAPIVersion()
                if got != CAPI_VERSION:
                    raise OSError(f"C API version {got}, expected "
                                  f"{CAPI_VERSION}")
                lib.attnFreeString.argtypes = [ctypes.c_void_p]
                lib.attnFreeString.restype = None
                for name in _FUNCTIONS:
                    fn = getattr(lib, "attnCompiler" + name)
                    fn.argtypes = [ctypes.c_char_p]
                    fn.restype = ctypes.c_void_p
                _lib = lib
            except (OSError, AttributeError) as ex:
                _lib_error = f"{path}: {ex}"
    if _lib is None:
        raise CompileError(
            f"the attn compiler library is not available: {_lib_error}. "
            "Install the attn wheel, or build it (ninja AttnCAPI) and point "
            "$ATTN_BUILD_DIR at that build, or use an AOT kernel pack "
            "(docs/python.md)")
    return _lib


def _call(function: str, request: Dict[str, Any]) -> Dict[str, Any]:
    """Calls attnCompiler<function> with the JSON request; raises
    CompileError with the result's "error"."""
    lib = _library()
    result = getattr(lib, "attnCompiler" + function)(
        json.dumps(request).encode())
    if not result:
        raise MemoryError(f"attnCompiler{function}: no result")
    try:
        reply = json.loads(ctypes.string_at(result).decode())
    finally:
        lib.attnFreeString(result)
    if "error" in reply:
        raise CompileError(reply["error"])
    return reply


def available() -> bool:
    """Whether the compiler library can be loaded here."""
    try:
        _library()
        return True
    except CompileError:
        return False


def version() -> str:
    """The compiler version (the release, pyproject.toml; or
    $ATTN_COMPILER_VERSION) that kernels and tuning entries are keyed by."""
    return _call("Version", {})["version"]


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
    return _call("Opt", {"mlir": mlir, "pipeline": pipeline})["mlir"]


@dataclass
class Kernel:
    """One compiled kernel: PTX, cubin and launch manifest
    (docs/kernel-abi.md), as attn-compile writes into a kernel directory."""

    entry: str
    ptx: str
    cubin: bytes
    manifest: Dict[str, Any]
    ptxas_log: str = ""
    # manifest.json as the compiler wrote it (what write() writes).
    _manifest_text: str = field(default="", repr=False)

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
        _call("WriteKernel", {
            "dir": str(path), "ptx": self.ptx,
            "cubin": base64.b64encode(self.cubin).decode(),
            "manifest": self._manifest_text or json.dumps(self.manifest)})
        return path


def _kernel(reply: Dict[str, Any]) -> Kernel:
    return Kernel(entry=reply["entry"], ptx=reply["ptx"],
                  cubin=base64.b64decode(reply["cubin"]),
                  manifest=json.loads(reply["manifest"]),
                  ptxas_log=reply["ptxas_log"],
                  _manifest_text=reply["manifest"])


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
            family: str = "auto", sm90_schedule: str = "",
            key_range: bool = False) -> Kernel:
    """Compiles one attention kernel, as ``attn-compile``.

    Either from MLIR text holding one ``attn.attention`` (``mlir``), or from
    a problem: Q [batch, heads_q, seq_q, head_dim], K/V [batch, heads_kv,
    seq_kv, head_dim/value_head_dim] (``heads_kv`` defaults to ``heads_q``,
    ``seq_kv`` to ``seq_q``), ``dtype`` 'f16' or 'bf16', ``causal``
    (bottom-right aligned unless ``top_left``), ``scale`` (default
    1/sqrt(head_dim)), a sliding window ``window_left``/``window_right``
    (-1 = unbounded), ``softcap`` (0 = none) and ``alibi`` (a kernel that
    takes the ALiBi slopes at launch; docs/variants.md; the same rules as
    attn-compile's flags). ``family`` is the kernel
    family: 'auto' (the default: sm90a on sm_90a where it implements the
    attention, else sm80), 'sm80' (mma.sync) or 'sm90a' (wgmma, Hopper).
    ``block_m``/``block_n``/``warp_rows`` 0 = the tuning database
    (``tuning_db``; '' = $ATTN_TUNING_DB, 'none' = off), else the heuristic.
    ``sm90_schedule`` is the sm90a family's consumer schedule, as
    attn-compile's --sm90-schedule: 'pingpong', 'overlap' or 'serial',
    optionally '+persistent'; '' = the tuned or heuristic one.
    ``key_range=True`` compiles a kernel that takes each batch entry's
    key range [start, end) at launch (key padding, docs/variants.md).
    ``assemble=False`` stops at PTX (no ptxas). Raises CompileError naming
    the bad argument or carrying the compiler's diagnostics.
    """
    options = dict(chip=chip, features=features, opt_level=opt_level,
                   block_m=block_m, block_n=block_n, warp_rows=warp_rows,
                   stages=stages, tuning_db=tuning_db,
                   tuning_gpu=tuning_gpu, ptxas=ptxas,
                   assemble=bool(assemble), family=family,
                   sm90_schedule=sm90_schedule)
    if mlir is not None:
        if not isinstance(mlir, str):
            raise TypeError("attn.compile: mlir must be MLIR text (str)")
        return _kernel(_call("Compile", dict(options, mlir=mlir)))
    return _kernel(_call("Compile", dict(options, **_problem(
        "attn.compile", batch=batch, heads_q=heads_q, heads_kv=heads_kv,
        seq_q=seq_q, seq_kv=seq_kv, head_dim=head_dim,
        value_head_dim=value_head_dim, dtype=dtype, causal=causal,
        scale=scale, with_lse=with_lse, top_left=top_left,
        window_left=window_left, window_right=window_right, softcap=softcap,
        alibi=alibi, key_range=key_range))))


def _problem(caller: str, *, heads_kv, seq_kv, value_head_dim, dtype,
             scale, softcap, **fields) -> Dict[str, Any]:
    """The request's problem fields (attn-c/Compiler.h), defaults filled
    in; a non-integer count or size is a TypeError naming it."""
    problem = dict(fields, heads_kv=fields["heads_q"] if heads_kv is None
                   else heads_kv,
                   seq_kv=fields["seq_q"] if seq_kv is None else seq_kv,
                   value_head_dim=value_head_dim or 0)
    for key in ("batch", "heads_q", "heads_kv", "seq_q", "seq_kv",
                "head_dim", "value_head_dim", "window_left",
                "window_right"):
        try:
            problem[key] = operator.index(problem[key])
        except TypeError:
            raise TypeError(f"{caller}: {key} must be an integer, got "
                            f"{problem[key]!r}") from None
    for key in ("causal", "with_lse", "top_left", "alibi", "key_range"):
        if key in problem:
            problem[key] = bool(problem[key])
    problem.update(dtype=_check_dtype(dtype), softcap=float(softcap),
                   scale=None if scale is None else float(scale))
    return problem


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
    return _call("AttentionModule", _problem(
        "attn.attention_mlir", batch=batch, heads_q=heads_q,
        heads_kv=heads_kv, seq_q=seq_q, seq_kv=seq_kv, head_dim=head_dim,
        value_head_dim=value_head_dim, dtype=dtype, causal=causal,
        scale=scale, with_lse=with_lse, top_left=top_left,
        window_left=window_left, window_right=window_right, softcap=softcap,
        alibi=alibi))["mlir"]


def compile_backward(*, out: "str | os.PathLike[str]", batch: int = 1,
                     heads_q: int = 1, heads_kv: Optional[int] = None,
                     seq_q: int = 128, seq_kv: Optional[int] = None,
                     head_dim: int = 64,
                     value_head_dim: Optional[int] = None,
                     dtype: str = "bf16", causal: bool = False,
                     scale: Optional[float] = None, top_left: bool = False,
                     window_left: int = -1, window_right: int = -1,
                     softcap: float = 0.0, alibi: bool = False,
                     chip: str = "sm_90a",
                     opt_level: int = 3, block_m: int = 0, block_n: int = 0,
                     stages: int = 2, family: str = "auto",
                     sm90_schedule: str = "", deterministic: bool = False,
                     ptxas: str = "", assemble: bool = True,
                     key_range: bool = False) -> Path:
    """Compiles the backward kernels (dQ, dK, dV) of a problem into the
    kernel directory ``out``, as ``attn-compile --backward --tuning-db
    none``: the tile is ``block_m``/``block_n``/``stages`` (and sm90a's dQ
    ``sm90_schedule``) or the heuristic's; ``deterministic`` computes dQ
    without atomics. The mask is ``causal``/``top_left``/``window_left``/
    ``window_right`` and ``softcap`` the cap, as for attn.compile (the sm80
    and sm90a families take every band, the softcap and ALiBi; sm90a head
    dims 64 and 128); ``alibi`` (slopes at launch) and ``key_range`` as
    attn.compile's.
    Returns ``out``."""
    _call("CompileBackward", dict(_problem(
        "attn.compile_backward", batch=batch, heads_q=heads_q,
        heads_kv=heads_kv, seq_q=seq_q, seq_kv=seq_kv, head_dim=head_dim,
        value_head_dim=value_head_dim, dtype=dtype, causal=causal,
        scale=scale, with_lse=True, top_left=top_left,
        window_left=window_left, window_right=window_right, softcap=softcap,
        alibi=alibi, key_range=key_range),
        dir=str(out), chip=chip, opt_level=opt_level, block_m=block_m,
        block_n=block_n, stages=stages, family=family,
        sm90_schedule=sm90_schedule, deterministic=bool(deterministic),
        ptxas=ptxas, assemble=bool(assemble)))
    return Path(out)


def _find_tool(name: str, env: str) -> Optional[str]:
    """A tool of attn's: $<env>, the wheel's, a build tree's, or PATH's."""
    return _native.find_tool(name, env)


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
        return [_find_tool("attn-tune", "ATTN_TUNE_BIN") or "attn-tune",
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
         jobs: int = 0, only: Sequence[str] = (), family: str = "auto",
         default_family: str = "") -> TuneBundle:
    """Writes a tuning bundle for one problem (as ``attn-compile
    --tune-bundle --family <family>``): every tile configuration of the
    family's space that passes the static checks and compiles without
    spilling. ``family`` 'auto' (the default: both where the chip and the
    problem allow; the database entry's key family is then "auto", what a
    family-auto lookup takes), 'sm80' (mma.sync) or 'sm90a' (wgmma).
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
    if not isinstance(mlir, str):
        raise TypeError("attn.tune: mlir must be MLIR text (str)")
    summary = _call("TuneBundle", dict(
        mlir=mlir, dir=str(out), chip=chip, ptxas=ptxas, opt_level=opt_level,
        jobs=jobs, only=list(only), family=family,
        default_family=default_family))
    return TuneBundle(Path(out), summary["candidates"], summary["pruned"],
                      summary["log"])
