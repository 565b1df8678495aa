"""Kernel directories for the PyTorch op: an on-disk cache and AOT packs.

A kernel is specialised on what is compiled in (docs/kernel-abi.md): head
dims, dtype, mask, chip, and the compiler version; batch, heads, sequence
lengths, strides and the softmax scale are launch arguments. ``KernelSpec`` is that
key. ``kernel_dir(spec)`` finds its directory:

1. in the AOT kernel pack named by $ATTN_KERNEL_PACK (``python -m attn.aot
   build``), used as is (the GPU host, which has no MLIR);
2. in the cache, $ATTN_CACHE_DIR or ~/.cache/attn: one folder per spec and
   compiler version, written atomically (compiled into a temporary folder,
   then renamed), so concurrent processes never see half a kernel and a
   second process reuses the first one's; key.json records the key, the
   entry's name and the sha256 of each of its files, and an entry that
   fails validation (a file changed, added or removed, corrupt manifest,
   wrong key, renamed entry) is moved aside and rebuilt;
3. else compiled into the cache with the compiler bindings.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Dict, Optional

from ._errors import CompileError, KernelNotAvailableError
from .families import (FAMILY_OF_KEY, backward_tile_options, parse_tile,
                       tile_name, tile_family)

# One line per kernel compiled on first use (logger "attn.cache").
_log = logging.getLogger(__name__)

PACK_FORMAT = "attn-kernel-pack/2"
MANIFEST_FORMAT = "attn-kernel/1"

# The problem a kernel is compiled for when only its specialisation is
# known: the tuning database is looked up for this shape (docs/tuning.md).
CANONICAL_SEQ = 4096


@dataclass(frozen=True)
class KernelSpec:
    """Everything compiled into one kernel."""

    kind: str            # "fwd" or "bwd"
    head_dim: int
    value_head_dim: int
    dtype: str           # "f16" or "bf16"
    causal: bool
    chip: str = "sm_90a"
    # The mask/score_mod variant (attn.variants.Variant.key; "" = none or
    # bottom-right causal, as `causal` says).
    variant: str = ""
    # Kernel family: sm80, sm90a, or auto (the compiler's choice by chip;
    # resolved() names the one it compiles to, attn.families).
    family: str = "sm80"
    # The tile (a tuning database's winner: "m128n64r32s2" of the sm80
    # family, "wg-m128n176s2-p" of the sm90a family); "" = the compiler's
    # choice (its heuristic).
    tile: str = ""
    # Backward: dQ from its own kernel instead of atomic adds, so that
    # reruns give bit-identical gradients (attn-compile --deterministic).
    deterministic: bool = False
    # Per-batch key ranges (key padding) taken at launch: attn.attention's
    # key_range (attn-compile --key-starts/--key-ends).
    key_range: bool = False

    @property
    def name(self) -> str:
        """A readable folder name, unique per spec (packs use it as is)."""
        dims = f"d{self.head_dim}" + (
            f"v{self.value_head_dim}"
            if self.value_head_dim != self.head_dim else "")
        mask = self.variant_info().name
        name = f"{self.kind}-{dims}-{self.dtype}-{mask}-{self.chip}"
        if self.deterministic:
            name += "-det"
        if self.key_range:
            name += "-kr"
        if self.family != "sm80":
            name += f"-{self.family}"
        if self.tile:
            name += f"-{self.tile}"
        return name

    def variant_info(self):
        """The attn.variants.Variant of this spec."""
        from .variants import parse_key
        return parse_key(self.causal, self.variant)

    def heuristic(self) -> "KernelSpec":
        """This spec with the compiler's own tile choice."""
        return replace(self, tile="")

    def resolved(self) -> "KernelSpec":
        """This spec with the family it compiles to ('auto' resolved by
        the compiler's rules, attn.families.resolve; a tile's own family
        when it has a tile)."""
        from .families import resolve
        family = tile_family(self.tile) if self.tile else resolve(self)
        return self if family == self.family else replace(self, family=family)


def manifest_tile_name(manifest: dict) -> str:
    """The tile name of a kernel directory's manifest: its family's name
    (attn.families.tile_name) from block_m, block_n, warp_rows, stages
    and the grid policy (persistent: "-p"). A forward manifest does not
    record an sm90a tile's consumer schedule: that part of the name is the
    tile's own, not checked. A backward manifest records the sm90a dQ
    schedule; its warps own 16 keys each (the database's warp_rows)."""
    tile = manifest.get("tile") or {}
    backward = manifest.get("direction") == "backward"
    fields = [tile.get("block_m", 0), tile.get("block_n", 0),
              16 if backward else tile.get("warp_rows", 0),
              tile.get("stages", 0)]
    family = FAMILY_OF_KEY.get(str(manifest.get("family", "sm80-mma")),
                               "sm80")
    schedule = str(tile.get("schedule", "")) if backward else ""
    grid = manifest.get("grid")
    persistent = isinstance(grid, dict) and grid.get("policy") == "persistent"
    return tile_name(*fields, family=family, schedule=schedule,
                     persistent=persistent)


def _tile_matches(manifest: dict, tile: str) -> Optional[str]:
    """Why the manifest is not tile ``tile``'s kernel (None when it is)."""
    want = parse_tile(tile)
    got = manifest_tile_name(manifest)
    if want["family"] == "sm90a" and \
            manifest.get("direction") != "backward":
        # A forward manifest does not record the consumer schedule.
        want = dict(want, schedule="")
    if got != tile_name(**want):
        return f"manifest tile is {got}, not {tile}"
    return None


# The largest file read (lib/Runtime's kMaxInputFileBytes, ReadFile.h).
MAX_FILE_BYTES = 64 << 20


def read_bounded(path: Path) -> bytes:
    """The contents of regular file ``path`` of at most MAX_FILE_BYTES;
    OSError naming the path otherwise (a FIFO is not waited on, /dev/zero
    not read to exhaustion)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path}: not a regular file")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise OSError(f"{path}: more than {MAX_FILE_BYTES >> 20} MiB")
        return data
    finally:
        os.close(fd)


def cache_root() -> Path:
    """$ATTN_CACHE_DIR, else $XDG_CACHE_HOME/attn, else ~/.cache/attn."""
    if os.environ.get("ATTN_CACHE_DIR"):
        return Path(os.environ["ATTN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attn"


# The grid policies the runtime launches (include/attn/Runtime/LaunchGrid.h).
GRID_POLICIES = ("query_tiles", "length_major", "persistent", "key_tiles")


def _unknown_grid(manifest: dict) -> Optional[str]:
    """Why the manifest's grids are not ones the runtime launches (None when
    they are): a directory an older compiler wrote gives formulas ("x":
    "ceil(seq_q / 128)") instead of a policy, and is rebuilt, not loaded."""
    launches = manifest.get("launches") or []
    grids = [manifest.get("grid")] + [
        launch.get("grid") for launch in launches if isinstance(launch, dict)]
    for grid in grids:
        policy = grid.get("policy") if isinstance(grid, dict) else None
        if policy not in GRID_POLICIES:
            return (f"manifest grid policy is {policy!r}, not one of "
                    f"{', '.join(GRID_POLICIES)} (an older compiler's grid "
                    "formulas?)")
    return None


def validate_kernel_dir(path: Path, spec: KernelSpec) -> Optional[str]:
    """Why ``path`` is not a usable kernel directory for ``spec`` (None
    when it is)."""
    try:
        manifest = json.loads(read_bounded(path / "manifest.json"))
    except (OSError, ValueError) as ex:
        return f"manifest.json unreadable: {ex}"
    if not isinstance(manifest, dict) or \
            manifest.get("format") != MANIFEST_FORMAT:
        return "manifest.json is not an attn-kernel/1 manifest"
    direction = manifest.get("direction", "forward")
    if direction != ("backward" if spec.kind == "bwd" else "forward"):
        return f"manifest direction is {direction!r}, the spec is {spec.kind}"
    why = _unknown_grid(manifest)
    if why:
        return why
    problem = manifest.get("problem") or {}
    variant = spec.variant_info()
    fields = variant.problem_fields()
    want = {"head_dim": spec.head_dim, "value_head_dim": spec.value_head_dim,
            "dtype": spec.dtype, "causal": spec.causal,
            "mask_align": "top_left" if fields["top_left"] else None,
            "window_left": fields["window_left"] if variant.sliding else None,
            "window_right": fields["window_right"] if variant.sliding else None,
            "alibi": True if variant.alibi else None}
    for key, value in want.items():
        if problem.get(key) != value:
            return f"manifest problem.{key} is {problem.get(key)!r}, not {value!r}"
    if ("key_starts" in problem) != spec.key_range:
        return ("the kernel takes no key ranges and the spec does"
                if spec.key_range else
                "the kernel takes key ranges and the spec does not")
    cap = problem.get("softcap", 0.0)
    if not isinstance(cap, (int, float)) or not math.isclose(
            cap, variant.softcap, rel_tol=1e-6):
        return f"manifest problem.softcap is {cap!r}, not {variant.softcap}"
    family = manifest.get("family", "sm80-mma")
    if spec.family in ("sm80", "sm90a") and \
            not str(family).startswith(spec.family):
        return f"manifest family is {family!r}, the spec asks for {spec.family}"
    if spec.tile:
        why = _tile_matches(manifest, spec.tile)
        if why:
            return why
    if direction == "backward" and bool((manifest.get("tile") or {}).get(
            "deterministic")) != spec.deterministic:
        return (f"manifest tile.deterministic is not {spec.deterministic}")
    if manifest.get("chip") != spec.chip:
        return f"manifest chip is {manifest.get('chip')!r}, not {spec.chip!r}"
    return _check_kernel_files(path, manifest)


def _check_kernel_files(path: Path, manifest: dict) -> Optional[str]:
    """Why the manifest's PTX and cubin are not its kernel's: the PTX must
    define every entry the manifest launches, the cubin be an ELF file."""
    try:
        ptx = read_bounded(path / str(manifest.get("ptx", "kernel.ptx")))
        cubin = read_bounded(path / str(manifest["cubin"])) \
            if manifest.get("cubin") else None
    except OSError as ex:
        return f"kernel file unreadable: {ex}"
    entries = [manifest.get("entry")] + [
        launch.get("entry") for launch in manifest.get("launches") or []
        if isinstance(launch, dict)]
    for entry in entries:
        if not isinstance(entry, str) or \
                f".entry {entry}(".encode() not in ptx:
            return f"the PTX defines no entry {entry!r}"
    if cubin is not None and not cubin.startswith(b"\x7fELF"):
        return "the cubin is not an ELF file"
    return None


def _file_hashes(path: Path) -> Dict[str, str]:
    """sha256 of every file of entry ``path`` but key.json."""
    return {f.name: hashlib.sha256(read_bounded(f)).hexdigest()
            for f in sorted(path.iterdir()) if f.name != "key.json"}


def _quarantine(path: Path) -> None:
    """Moves a bad entry out of the way (atomically), then deletes it."""
    aside = Path(tempfile.mkdtemp(prefix=f".bad-{path.name}-",
                                  dir=path.parent))
    try:
        os.rename(path, aside / "entry")
    except OSError:
        pass  # someone else moved or replaced it already
    shutil.rmtree(aside, ignore_errors=True)


class KernelCache:
    """Kernel directories under ``root``, one per spec and compiler
    version: ``<root>/kernels/<spec.name>-<hash>/`` with key.json."""

    def __init__(self, root: "Optional[os.PathLike[str]]" = None):
        self.root = Path(root) if root is not None else cache_root()
        self.kernels = self.root / "kernels"
        self.events: list = []  # ("hit"|"built"|"rebuilt", name): for tests

    def key(self, spec: KernelSpec, compiler_version: str) -> dict:
        return {"format": "attn-kernel-cache/3", "spec": asdict(spec),
                "compiler_version": compiler_version}

    def entry_path(self, spec: KernelSpec, compiler_version: str) -> Path:
        blob = json.dumps(self.key(spec, compiler_version), sort_keys=True)
        digest = hashlib.sha256(blob.encode()).hexdigest()[:16]
        return self.kernels / f"{spec.name}-{digest}"

    def _check_entry(self, path: Path, spec: KernelSpec,
                     compiler_version: str) -> Optional[str]:
        try:
            record = json.loads(read_bounded(path / "key.json"))
            if not isinstance(record, dict):
                raise ValueError("not an object")
        except (OSError, ValueError) as ex:
            return f"key.json unreadable: {ex}"
        key = {k: v for k, v in record.items() if k not in ("name", "files")}
        if key != self.key(spec, compiler_version):
            return "key.json does not match"
        if record.get("name") != path.name:
            return (f"key.json is entry {record.get('name')!r}'s, not "
                    f"{path.name!r}'s (renamed)")
        try:
            files = _file_hashes(path)
        except OSError as ex:
            return f"entry file unreadable: {ex}"
        recorded = record.get("files")
        if not isinstance(recorded, dict) or files.keys() != recorded.keys():
            return "the entry's files are not those key.json lists"
        for name, digest in files.items():
            if recorded[name] != digest:
                return f"{name} does not match its sha256 in key.json"
        return validate_kernel_dir(path, spec)

    def get(self, spec: KernelSpec, compiler_version: str,
            build: Callable[[KernelSpec, Path], None]) -> Path:
        """The entry for ``spec``, built with ``build(spec, dir)`` when it is
        missing or bad."""
        path = self.entry_path(spec, compiler_version)
        if path.exists():
            why = self._check_entry(path, spec, compiler_version)
            if why is None:
                self.events.append(("hit", spec.name))
                return path
            _quarantine(path)
            event = "rebuilt"
        else:
            event = "built"
        self.kernels.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{spec.name}-",
                                    dir=self.kernels))
        try:
            started = time.monotonic()
            build(spec, tmp)
            _log.info("compiled %s (%s) in %.2f s", spec.name, event,
                      time.monotonic() - started)
            why = validate_kernel_dir(tmp, spec)
            if why is not None:
                raise CompileError(f"{spec.name}: the kernel just built is "
                                   f"not valid: {why}")
            record = dict(self.key(spec, compiler_version), name=path.name,
                          files=_file_hashes(tmp))
            (tmp / "key.json").write_text(json.dumps(record, sort_keys=True,
                                                     indent=1))
            try:
                os.rename(tmp, path)
            except OSError:
                # Another process won the race: use its entry if good.
                if self._check_entry(path, spec, compiler_version) is None:
                    self.events.append(("hit", spec.name))
                    return path
                _quarantine(path)
                os.rename(tmp, path)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        self.events.append((event, spec.name))
        return path


def pack_root() -> Optional[Path]:
    value = os.environ.get("ATTN_KERNEL_PACK")
    return Path(value) if value else None


def find_in_pack(spec: KernelSpec, pack: Optional[Path] = None) -> Optional[Path]:
    """The pack's directory for ``spec`` when it has a valid one."""
    pack = pack if pack is not None else pack_root()
    if pack is None:
        return None
    path = pack / spec.name
    if path.is_dir() and validate_kernel_dir(path, spec) is None:
        return path
    if spec.tile:  # a tuned tile: the candidate of the pack's bundle
        from .tuning import bundle_candidate, pack_bundle
        bundle = pack_bundle(spec, pack)
        path = bundle_candidate(bundle, spec.tile) if bundle else None
        if path is not None and path.is_dir() and \
                validate_kernel_dir(path, spec) is None:
            return path
    return None


def compile_spec(spec: KernelSpec, directory: Path) -> None:
    """Compiles ``spec`` into ``directory`` with the compiler's C API:
    attn.compile for forward kernels, attn.compile_backward for backward
    ones (a tuned tile: its family's knobs,
    attn.families.backward_tile_options; a deterministic spec:
    deterministic=True)."""
    from . import compiler
    shape = dict(batch=1, heads_q=16, heads_kv=16, seq_q=CANONICAL_SEQ,
                 seq_kv=CANONICAL_SEQ, head_dim=spec.head_dim,
                 value_head_dim=spec.value_head_dim, dtype=spec.dtype,
                 causal=spec.causal)
    variant = spec.variant_info()
    if spec.kind == "fwd" and compiler.available():
        fields = variant.problem_fields()
        del fields["causal"]
        # The tile is the spec's: a tuned one explicitly (its family's
        # knobs), else the heuristic (no database lookup at this canonical
        # shape).
        options = dict(family=spec.family,
                       tuning_db="" if spec.tile else "none")
        options.update(_tile_options(spec.tile))
        compiler.compile(chip=spec.chip, **options, **fields,
                         key_range=spec.key_range, **shape).write(directory)
        return
    if spec.kind == "bwd" and compiler.available():
        # The C API's attn-compile --backward (the wheel has no attn-compile).
        options = dict(family=tile_family(spec.tile) if spec.tile
                       else spec.family, deterministic=spec.deterministic)
        if spec.tile:  # a tuned tile: its family's knobs, as a hit sets them
            try:
                flags = backward_tile_options(parse_tile(spec.tile),
                                              spec.deterministic)
            except ValueError as ex:
                raise KernelNotAvailableError(f"{spec.name}: {ex}") from ex
            options.update((f[2:].replace("-", "_"),
                            int(v) if v.isdigit() else v)
                           for f, v in zip(flags[::2], flags[1::2]))
        fields = variant.problem_fields()
        del fields["causal"]
        compiler.compile_backward(out=directory, chip=spec.chip, **options,
                                  **fields, key_range=spec.key_range,
                                  **shape)
        return
    raise KernelNotAvailableError(
        f"{spec.name}: the compiler library is not available here "
        "(install the attn wheel, or build AttnCAPI)")


def _tile_options(tile: str) -> dict:
    """compiler.compile's arguments for tile ``tile`` ({} for none)."""
    if not tile:
        return {}
    t = parse_tile(tile)
    options = dict(family=t["family"], block_m=t["block_m"],
                   block_n=t["block_n"], stages=t["stages"])
    if t["family"] == "sm90a":
        from .families import sm90a_schedule_option
        options["sm90_schedule"] = sm90a_schedule_option(t)
    else:
        options["warp_rows"] = t["warp_rows"]
    return options


def backward_compiler_available() -> bool:
    """Whether backward kernels can be compiled here: the compiler's C API
    (attn.compile_backward)."""
    from . import compiler
    return compiler.available()


_lock = threading.Lock()
_resolved: Dict[KernelSpec, Path] = {}


def kernel_dir(spec: KernelSpec) -> Path:
    """The kernel directory for ``spec`` (pack, cache, or compiled now);
    resolved once per process."""
    path = _resolved.get(spec)
    if path is not None:
        return path
    with _lock:
        path = _resolved.get(spec)
        if path is None:
            path = find_in_pack(spec)
        if path is None:
            from . import compiler
            if not compiler.available():
                pack = pack_root()
                if spec.tile and spec.kind == "bwd":
                    # Packs hold the heuristic's backward kernels only.
                    hint = ("packs hold the heuristic's backward kernels, "
                            "not tuned tiles: the heuristic's runs")
                elif spec.tile:
                    hint = ("a tuned tile comes from the pack's candidate "
                            "bundle: python -m attn.aot build --out DIR "
                            "--bundles ... on the compiler host")
                else:
                    hint = ("Build a pack on the compiler host: python -m "
                            "attn.aot build --out DIR (docs/python.md)")
                raise KernelNotAvailableError(
                    f"no {spec.name} kernel: the compiler (its C API "
                    "library, from the attn wheel or a build) is not "
                    "available here, and " + (
                        f"the kernel pack {pack} has no valid {spec.name}/"
                        if pack else "$ATTN_KERNEL_PACK is not set")
                    + ". " + hint)
            path = KernelCache().get(spec, compiler.version(), compile_spec)
        _resolved[spec] = path
    return path
