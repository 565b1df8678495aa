"""Per-shape kernel choice for the PyTorch op: the tuning database and
tuning on first use (docs/python.md, docs/tuning.md). No PyTorch needed.

``select(spec, shape, gpu)`` says which kernel a call uses, forward or
backward: the database's winner for the call's shape class (GPU, compiler
version, direction, dQ mode, dtype, head dims, heads ratio, mask,
sequence-length buckets) when there is one -- looked up
by lib/Tuning's own ``TuningDatabase::lookup`` through
libattn_tuning_lookup.so (ctypes; MLIR-free, so the GPU host has it too) --
else the compiler's heuristic tile, with the lookup's reason either way.

``tune(spec, shape, gpu)`` fills the database for a forward shape (the
backward's is tuned with attn-compile --backward --tune-bundle and
attn-tune, docs/tuning.md): it takes a
candidate bundle of the families the lookup takes (``bundle_spec``: for
family auto on sm_90a both, so attn-tune writes the "auto" entry the
lookup hits; every tile configuration that passes the static checks and
compiles without spilling) -- written for the call's shape by the
compiler bindings when they are here, else the AOT pack's bundle for the
kernel's specialisation (``python -m attn.aot build --bundles``) re-aimed
at the call's shape -- and runs it with attn-tune (tools/attn-tune: the
runtime's measurement, a float64 check of every candidate, the median of
timed launches, a locked database update), then looks up again.
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence, Tuple

from ._errors import KernelNotAvailableError
from ._native import PACKAGE_LIB
from . import families as _families
from .cache import KernelSpec, cache_root, pack_root, read_bounded, tile_name

# One line per shape class tuned on first use (logger "attn.tuning").
_log = logging.getLogger(__name__)

# The database's name of each family the lookup can use (TuningKey::family).
FAMILY_KEYS = dict(_families.KEY_NAMES)

_REPO = Path(__file__).resolve().parents[2]


class TuneError(RuntimeError):
    """Tuning could not run (no tool, no bundle) or found no correct
    candidate; the message says which and what to do."""


@dataclass(frozen=True)
class Shape:
    """The run-time shape a kernel is chosen for."""

    batch: int
    heads_q: int
    heads_kv: int
    seq_q: int
    seq_kv: int

    @property
    def heads_ratio(self) -> int:
        return max(1, self.heads_q // max(1, self.heads_kv))


def sequence_bucket(n: int) -> int:
    """The smallest power of two >= n (>= 1): lib/Tuning's bucket."""
    b = 1
    while b < n:
        b *= 2
    return b


@dataclass(frozen=True)
class Selection:
    """Which kernel a call uses and why."""

    # The kernel: its family resolved (attn.families), .tile set when the
    # database chose it.
    spec: KernelSpec
    source: str               # "tuning-db" or "heuristic"
    reason: str               # the family's choice and the lookup's reason
    db: Optional[str] = None

    def __str__(self) -> str:
        tile = self.spec.tile or "the heuristic's tile"
        return f"{self.spec.name}: {self.source} ({tile}); {self.reason}"


# --- the lookup library ------------------------------------------------------

_lib = None
_lib_error: Optional[str] = None


def _candidate_libs():
    name = "libattn_tuning_lookup.so"
    if os.environ.get("ATTN_TUNING_LIB"):
        return [Path(os.environ["ATTN_TUNING_LIB"])]
    dirs = [PACKAGE_LIB]  # the wheel's (attn._native)
    if os.environ.get("ATTN_RUNTIME_LIB"):
        dirs.append(Path(os.environ["ATTN_RUNTIME_LIB"]).parent)
    if os.environ.get("ATTN_BUILD_DIR"):
        dirs.append(Path(os.environ["ATTN_BUILD_DIR"]) / "lib")
    dirs += sorted(_REPO.glob("build*/lib"),
                   key=lambda d: -(d / name).stat().st_mtime
                   if (d / name).exists() else 0)
    return [d / name for d in dirs]


def lookup_library():
    """libattn_tuning_lookup.so (loaded once), or None when not built."""
    global _lib, _lib_error
    if _lib is not None or _lib_error is not None:
        return _lib
    found = next((p for p in _candidate_libs() if p.is_file()), None)
    if found is None:
        _lib_error = ("libattn_tuning_lookup.so not found (build the "
                      "attn_tuning_lookup target; $ATTN_TUNING_LIB names it)")
        return None
    lib = ctypes.CDLL(str(found))
    lib.attn_tuning_capi_version.restype = ctypes.c_int
    lib.attn_tuning_compiler_version.restype = ctypes.c_char_p
    lib.attn_tuning_sequence_bucket.argtypes = [ctypes.c_int64]
    lib.attn_tuning_sequence_bucket.restype = ctypes.c_int64
    s, i64 = ctypes.c_char_p, ctypes.c_int64
    lib.attn_tuning_lookup.argtypes = [
        s, s, i64, s, s, s, s, s, i64, i64, i64, ctypes.c_int, i64, i64,
        ctypes.POINTER(ctypes.c_int64), ctypes.c_char_p, ctypes.c_size_t,
        ctypes.c_char_p, ctypes.c_size_t]
    lib.attn_tuning_lookup.restype = ctypes.c_int
    if lib.attn_tuning_capi_version() != 4:
        _lib_error = (f"{found}: C ABI version "
                      f"{lib.attn_tuning_capi_version()}, expected 4 "
                      "(rebuild the attn_tuning_lookup target)")
        return None
    lib.attn_tuning_lookup_families.argtypes = [
        s, s, i64, s, s, s, s, i64, i64, i64, ctypes.c_int, i64, i64,
        ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    lib.attn_tuning_lookup_families.restype = ctypes.c_int
    lib.attn_tuning_lookup_kernel.argtypes = [
        s, s, i64, s, s, s, s, ctypes.c_int, s, i64, i64, i64, ctypes.c_int,
        i64, i64, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
        ctypes.c_size_t]
    lib.attn_tuning_lookup_kernel.restype = ctypes.c_int
    _lib = lib
    return lib


def database_path() -> Path:
    """$ATTN_TUNING_DB, else <cache>/tuning.json (where tune() writes)."""
    env = os.environ.get("ATTN_TUNING_DB")
    return Path(env) if env else cache_root() / "tuning.json"


def kernel_compiler_version() -> Optional[str]:
    """The version of the compiler the kernels come from: the bindings'
    (compiler host), else the AOT pack's pack.json (GPU host)."""
    from . import compiler
    if compiler.available():
        return compiler.version()
    pack = pack_root()
    if pack is not None:
        try:
            return json.loads(read_bounded(pack / "pack.json")).get(
                "compiler_version")
        except (OSError, ValueError, AttributeError):
            return None
    return None


def key_families(spec: KernelSpec) -> Sequence[str]:
    """The database families a lookup for ``spec`` may take, as
    attn-compile --family <spec.family> (forward: allowedKernelFamilies;
    backward: allowedBackwardFamilies): the named family, or for 'auto'
    both where the sm90a family supports ``spec`` (then the key is
    "auto": an entry that tuned both families). Backward, 'sm90a' where
    the sm90a dkdv kernel does not implement ``spec``: none."""
    sm90a = (_families.sm90a_forward_supports(spec) if spec.kind == "fwd"
             else _families.sm90a_backward_supports(spec))
    if spec.family == "auto":
        return ([FAMILY_KEYS["sm80"], FAMILY_KEYS["sm90a"]] if not sm90a
                else [FAMILY_KEYS["sm80"]])
    if spec.kind == "bwd" and spec.family == "sm90a" and sm90a:
        return []
    return [FAMILY_KEYS[spec.family]]


def lookup(spec: KernelSpec, shape: Shape, gpu: str = "", sms: int = 0,
           db: "Optional[os.PathLike[str]]" = None,
           compiler_version: Optional[str] = None,
           deterministic: bool = False) -> Tuple[Optional[str], str]:
    """(winning tile name or None, reason) for ``spec`` at ``shape`` on
    ``gpu`` ('' = any), as the compiler looks a kernel up (through
    libattn_tuning_lookup): forward as convert-attn-to-gpu
    (lookupTunedForwardKernel), backward as attn-compile --backward
    (lookupTunedBackwardKernel: direction "bwd", ``deterministic`` the dQ
    mode's key; the op's backward is not deterministic). For the families
    key_families(spec) allows, with both the "auto" entry's winner
    (either family: "m128n64r32s2", "wg-m128n176s2-p",
    "wg-m64n128s3-dqfirst"), with one that family's entry, else its
    fastest correct candidate in the entry that tuned both. The tile is
    not checked against the kernel's limits here (compiling it does)."""
    lib = lookup_library()
    if lib is None:
        return None, f"miss: {_lib_error}"
    version = compiler_version or kernel_compiler_version()
    if version is None:
        return None, ("miss: the kernels' compiler version is unknown (no "
                      "compiler bindings, no pack.json)")
    if spec.family not in FAMILY_KEYS and spec.family != "auto":
        return None, (f"miss: the tuner has no tile space for the "
                      f"{spec.family} family")
    if spec.kind == "bwd" and spec.dtype not in ("f16", "bf16"):
        return None, "miss: the GPU backward kernels take f16 or bf16"
    allowed = key_families(spec)
    if not allowed:
        return None, (f"miss: family {spec.family} has no backward kernel "
                      "for this attention")
    path = str(db if db is not None else database_path())
    if not os.path.exists(path):
        return None, f"miss: no tuning database at {path}"
    winner = ctypes.create_string_buffer(256)
    reason = ctypes.create_string_buffer(4096)
    hit = lib.attn_tuning_lookup_kernel(
        path.encode(), gpu.encode(), sms, spec.chip.encode(),
        version.encode(), ",".join(allowed).encode(), spec.kind.encode(),
        int(deterministic), spec.dtype.encode(), spec.head_dim,
        spec.value_head_dim, shape.heads_ratio, int(spec.causal),
        shape.seq_q, shape.seq_kv, winner, len(winner), reason, len(reason))
    text = reason.value.decode(errors="replace")
    return (winner.value.decode() if hit else None), text


def select(spec: KernelSpec, shape: Shape, gpu: str = "", sms: int = 0,
           db: "Optional[os.PathLike[str]]" = None,
           deterministic: bool = False) -> Selection:
    """The kernel a call with ``shape`` uses: the database's winner for its
    shape class (a tile of either family where ``spec.family`` is 'auto'),
    else the heuristic (``spec`` without a tile, its family resolved as
    attn-compile --family resolves it). Backward specs are looked up as
    attn-compile --backward does (atomic dQ: the op's backward). The
    reason says which family and why, then what the lookup found and, on
    a hit, the tile ("-> wg-m64n128s3-dqfirst", as attn-compile says)."""
    spec = spec.heuristic()
    family = _families.resolve_reason(spec)
    heuristic = spec.resolved()
    path = str(db if db is not None else database_path())
    why_not = untunable(spec)
    if why_not:
        return Selection(heuristic, "heuristic",
                         f"{family}; not looked up: {why_not}", path)
    tile, reason = lookup(spec, shape, gpu, sms, path,
                          deterministic=deterministic)
    if tile is None:
        return Selection(heuristic, "heuristic", f"{family}; {reason}", path)
    chosen = replace(spec, tile=tile).resolved()
    if chosen.family != heuristic.family:
        family += f", the database's {chosen.family} tile instead"
    return Selection(chosen, "tuning-db", f"{family}; {reason} -> {tile}",
                     path)


def untunable(spec: KernelSpec) -> Optional[str]:
    """Why the database cannot hold ``spec`` (None when it can): forward
    and backward kernels of the plain variants (any scale: it is a launch
    argument)."""
    if spec.family not in FAMILY_KEYS and spec.family != "auto":
        return f"the tuner has no tile space for the {spec.family} family"
    variant = spec.variant_info()
    if not variant.plain:
        return (f"the tuning key has no field for the {variant.name} "
                "variant (only no mask and bottom-right causal)")
    return None


def cannot_tune(spec: KernelSpec) -> Optional[str]:
    """Why tune() cannot tune ``spec`` (None when it can): the bundles
    tune() runs are of the families its lookup takes (bundle_spec), so
    only untunable specs are left out, and backward kernels (tune them
    with attn-compile --backward --tune-bundle and attn-tune,
    docs/tuning.md; the op then looks them up)."""
    if spec.kind != "fwd":
        return ("tuning on first use times forward kernels only (backward: "
                "attn-compile --backward --tune-bundle, then attn-tune)")
    return untunable(spec)


def bundle_family(spec: KernelSpec) -> str:
    """The family a candidate bundle for ``spec`` is compiled for
    (attn-compile --tune-bundle --family): 'auto' where its lookup takes
    the entry that tuned both families, else the one family it takes. The
    bundle's key family (bundle.json "family", attn-tune's database entry)
    is then the lookup's: tuningKeyFamily(allowedKernelFamilies(...))."""
    key = _families.tuning_key_family(list(key_families(spec)))
    if key == _families.AUTO_KEY:
        return "auto"
    return next(f for f, k in FAMILY_KEYS.items() if k == key)


def bundle_spec(spec: KernelSpec) -> KernelSpec:
    """The specialisation a candidate bundle for ``spec`` (its asked
    family, not resolved) is named and built by: no tile, bundle_family's
    family. Family auto off sm_90a and family sm80 share the sm80 bundle."""
    spec = spec.heuristic()
    return replace(spec, family=bundle_family(spec))


# --- tuning on first use -------------------------------------------------------

def _find_attn_tune() -> Optional[str]:
    """attn-tune: $ATTN_TUNE_BIN, next to the runtime library, in
    $ATTN_BUILD_DIR/bin or this checkout's build*/bin, then PATH. (Not
    $ATTN_TUNE: that is the switch, ATTN_TUNE=1 tunes on first use.)"""
    if os.environ.get("ATTN_TUNE_BIN"):
        return os.environ["ATTN_TUNE_BIN"]
    dirs = [PACKAGE_LIB]  # the wheel's (attn._native)
    if os.environ.get("ATTN_RUNTIME_LIB"):
        dirs.append(Path(os.environ["ATTN_RUNTIME_LIB"]).parents[1] / "bin")
    if os.environ.get("ATTN_BUILD_DIR"):
        dirs.append(Path(os.environ["ATTN_BUILD_DIR"]) / "bin")
    dirs += sorted(_REPO.glob("build*/bin"))
    for d in dirs:
        if (d / "attn-tune").is_file():
            return str(d / "attn-tune")
    return shutil.which("attn-tune")


def pack_bundle(spec: KernelSpec, pack: Optional[Path] = None) -> Optional[Path]:
    """The AOT pack's candidate bundle for ``spec``'s specialisation
    (bundle_spec; ``spec`` with its asked family). For a tuned spec (a
    tile, its family the tile's), the bundle holding that tile: its
    family's, else the one that tuned both families (family auto)."""
    pack = pack if pack is not None else pack_root()
    if pack is None or spec.kind != "fwd":  # packs bundle forward kernels
        return None
    names = [bundle_spec(spec).name]
    if spec.tile:
        names.append(bundle_spec(replace(spec, family="auto")).name)
    for name in dict.fromkeys(names):
        path = pack / "bundles" / name
        if (path / "bundle.json").is_file() and (
                not spec.tile or bundle_candidate(path, spec.tile)):
            return path
    return None


def bundle_candidate(bundle: Path, tile: str) -> Optional[Path]:
    """The candidate kernel directory of ``bundle`` with tile ``tile``."""
    try:
        doc = json.loads(read_bounded(bundle / "bundle.json"))
    except (OSError, ValueError):
        return None
    for c in doc.get("candidates", []):
        if tile_name(c.get("block_m", 0), c.get("block_n", 0),
                     c.get("warp_rows", 0), c.get("stages", 0),
                     c.get("family", "sm80-mma"), c.get("schedule", ""),
                     bool(c.get("persistent", False))) == tile:
            return bundle / str(c.get("dir"))
    return None


def retarget_bundle(bundle: Path, shape: Shape, out: Path) -> Path:
    """A copy of ``bundle`` whose candidates' manifests describe ``shape``:
    attn-tune times and checks each candidate at its manifest's problem,
    and batch, heads and lengths are launch arguments, not compiled in
    (docs/kernel-abi.md), so the kernels are the same. Written atomically;
    returns ``out``."""
    doc = json.loads(read_bounded(bundle / "bundle.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{out.name}-", dir=out.parent))
    fields = dict(batch=shape.batch, heads_q=shape.heads_q,
                  heads_kv=shape.heads_kv, seq_q=shape.seq_q,
                  seq_kv=shape.seq_kv)
    try:
        for c in doc.get("candidates", []):
            src, dst = bundle / str(c["dir"]), tmp / str(c["dir"])
            shutil.copytree(src, dst)
            manifest = json.loads(read_bounded(dst / "manifest.json"))
            manifest["problem"].update(fields)
            (dst / "manifest.json").write_text(json.dumps(manifest, indent=2))
        doc.setdefault("problem", {}).update(fields)
        # Bundles of version 2 list the launch shapes to time: just this one.
        doc["shapes"] = [dict(batch=shape.batch, seq_q=shape.seq_q,
                              seq_kv=shape.seq_kv)]
        (tmp / "bundle.json").write_text(json.dumps(doc, indent=2))
        if out.exists():
            shutil.rmtree(out)
        os.rename(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def bundle_for(spec: KernelSpec, shape: Shape) -> Path:
    """A candidate bundle for ``spec`` (its asked family: 'auto' tunes
    both families where its lookup takes both) at ``shape``, under
    <cache>/bundles/: written by the compiler bindings when they are here,
    else the pack's bundle re-aimed at ``shape``."""
    from . import compiler
    spec = spec.heuristic()
    why_not = cannot_tune(spec)
    if why_not:
        raise TuneError(f"{spec.name} cannot be tuned: {why_not}")
    bspec = bundle_spec(spec)
    label = (f"{bspec.name}-b{shape.batch}h{shape.heads_q}g{shape.heads_ratio}"
             f"q{shape.seq_q}kv{shape.seq_kv}")
    out = cache_root() / "bundles" / label
    if (out / "bundle.json").is_file():
        return out
    if compiler.available():
        variant = spec.variant_info()
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{label}-",
                                    dir=_mkdir(out.parent)))
        try:
            compiler.tune(out=tmp, batch=shape.batch, heads_q=shape.heads_q,
                          heads_kv=shape.heads_kv, seq_q=shape.seq_q,
                          seq_kv=shape.seq_kv, head_dim=spec.head_dim,
                          value_head_dim=spec.value_head_dim,
                          dtype=spec.dtype, causal=variant.causal,
                          chip=spec.chip,
                          family=bspec.family, default_family=spec.family)
            os.rename(tmp, out)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return out
    bundle = pack_bundle(spec)
    if bundle is None:
        raise KernelNotAvailableError(
            f"no candidate bundle for {bspec.name}: the compiler bindings "
            "are not here and " + (f"the pack {pack_root()} has no bundles/"
                                   f"{bspec.name}/" if pack_root() else
                                   "$ATTN_KERNEL_PACK is not set")
            + ". Add one on the compiler host: python -m attn.aot build "
            f"--out PACK --bundles {bspec.name} --chip {spec.chip} "
            f"--family {spec.family}")
    return retarget_bundle(bundle, shape, out)


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def tune_command(bundle: Path, db: "os.PathLike[str]", reps: int = 10,
                 warmup: int = 3) -> Sequence[str]:
    """The attn-tune command that runs ``bundle`` into ``db``."""
    tool = _find_attn_tune()
    if tool is None:
        raise TuneError("attn-tune not found ($ATTN_TUNE_BIN, next to "
                        "libattn_runtime.so, $ATTN_BUILD_DIR/bin, PATH): build "
                        "it (ninja attn-tune; the MLIR-free build has it)")
    return [tool, "--db", str(db), "--reps", str(reps), "--warmup",
            str(warmup), str(bundle)]


@dataclass
class TuneResult:
    """What tune() did: the selection after tuning, attn-tune's table and
    the bundle it ran."""

    selection: Selection
    bundle: Path
    log: str
    seconds: float


def tune(spec: KernelSpec, shape: Shape, gpu: str = "", sms: int = 0,
         db: "Optional[os.PathLike[str]]" = None, device_index: int = 0,
         reps: int = 10, warmup: int = 3) -> TuneResult:
    """Tunes ``spec`` for ``shape`` on the GPU (attn-tune, in a child
    process on ``device_index``), records the winner in ``db`` (default
    database_path()) and returns the new selection."""
    import time
    started = time.monotonic()
    path = Path(db) if db is not None else database_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    bundle = bundle_for(spec, shape)
    # attn-tune runs on its device 0: make that the caller's device.
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    devices = visible.split(",") if visible else []
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=(
        devices[device_index] if device_index < len(devices)
        else str(device_index)))
    done = subprocess.run(tune_command(bundle, path, reps, warmup), env=env,
                          capture_output=True, text=True)
    log = done.stdout + done.stderr
    if done.returncode != 0:
        raise TuneError(f"attn-tune failed on {bundle} (exit "
                        f"{done.returncode}):\n{log.strip()[-2000:]}")
    selection = select(spec, shape, gpu, sms, path)
    if selection.source != "tuning-db":
        raise TuneError(f"attn-tune ran but the database {path} has no "
                        f"entry for this shape: {selection.reason}")
    seconds = time.monotonic() - started
    _log.info("tuned %s for %s in %.2f s: %s", spec.name, shape, seconds,
              selection.reason)
    return TuneResult(selection, bundle, log, seconds)

