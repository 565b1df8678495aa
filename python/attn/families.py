"""Kernel families for the PyTorch op: which one a call gets, and the
tile names the tuning database gives each (docs/python.md, docs/tuning.md).

A family is asked for as 'sm80' (mma.sync, every sm_80+ chip), 'sm90a'
(wgmma/TMA, Hopper) or 'auto', attn-compile's ``--family`` default: sm90a
on sm_90a where that family implements the call, else sm80. ``resolve``
turns a KernelSpec's asked family into the one compiled, by the
compiler's own rules restated here (the GPU host has no compiler to ask):

* forward: ``hopperFamilySupports`` and ``heuristicFamily``
  (lib/Conversion/AttnToGPU/HopperKernelConfig.cpp, TuningSpace.cpp);
* backward: ``usesHopperBackward`` / ``hopperBackwardSupports``
  (lib/Conversion/AttnToGPU/HopperBackwardConfig.cpp).

A kernel directory's manifest names its family, and attn.cache checks it
against the spec's, so a rule that drifted from the compiler's fails
loudly instead of running the other family.
"""

from __future__ import annotations

import os
import re
from typing import Dict, List, Tuple, Union

FAMILIES = ("sm80", "sm90a", "auto")
DEFAULT_FAMILY = "auto"

# The database's names of the families (TuningKey::family, TileChoice's
# family) and of a key whose entry tuned both.
KEY_NAMES = {"sm80": "sm80-mma", "sm90a": "sm90a-wgmma"}
AUTO_KEY = "auto"
FAMILY_OF_KEY = {v: k for k, v in KEY_NAMES.items()}

# The sm90a kernels' schedules: (name, tile-name suffix, backward), as
# include/attn/Support/Sm90Schedules.h's kSm90Schedules (the one table;
# python/tests/test_families.py checks this copy against it).
SM90A_SCHEDULES = (
    ("pingpong", "", False), ("overlap", "-nopp", False),
    ("serial", "-serial", False),
    ("dq-pipelined", "-dqpipe", True), ("dq-first", "-dqfirst", True),
    ("dk-first", "-dkfirst", True), ("deterministic", "-det", True),
    ("head-split", "-hsplit", True),
    ("transposed-dkv", "-tdkv", True),
)
_SM90A_SCHEDULES = tuple(n for n, _, bwd in SM90A_SCHEDULES if not bwd)
# The backward (dkdv) kernel's dQ schedules and their tile-name suffixes;
# "deterministic" orders the dQ adds.
_SM90A_BACKWARD_SUFFIXES = {n: s for n, s, bwd in SM90A_SCHEDULES if bwd}
_SUFFIX_OF_SCHEDULE = {n: s for n, s, _ in SM90A_SCHEDULES}
_SCHEDULE_OF_SUFFIX = {s: n for n, s in _SUFFIX_OF_SCHEDULE.items()}


def check_family(family: str) -> str:
    if family not in FAMILIES:
        raise ValueError(f"family must be 'sm80', 'sm90a' or 'auto', got "
                         f"{family!r}")
    return family


def default_family() -> str:
    """$ATTN_KERNEL_FAMILY, else 'auto' (the compiler's choice by chip)."""
    return check_family(os.environ.get("ATTN_KERNEL_FAMILY") or
                        DEFAULT_FAMILY)


def sm90a_forward_supports(spec) -> str:
    """Why the sm90a forward kernel cannot run ``spec`` ('' when it can):
    hopperFamilySupports for the op's calls (dense tensors, no bias; every
    mask and score_mod the op takes is built)."""
    if spec.chip != "sm_90a":
        return (f"the sm90a-wgmma family needs chip sm_90a, got "
                f"'{spec.chip}'")
    if spec.dtype not in ("f16", "bf16"):
        return "the sm90a-wgmma family takes f16 or bf16 only"
    for d in (spec.head_dim, spec.value_head_dim):
        if d % 8 or not 8 <= d <= 256:
            return (f"the sm90a-wgmma family takes head dims that are "
                    f"multiples of 8 up to 256, got {d}")
    return ""


def sm90a_backward_supports(spec) -> str:
    """Why the sm90a backward kernel cannot run ``spec`` ('' when it can):
    hopperBackwardSupports."""
    if spec.chip != "sm_90a":
        return (f"the sm90a backward kernels need chip sm_90a (got "
                f"{spec.chip})")
    if spec.dtype not in ("f16", "bf16"):
        return "the sm90a backward kernels take f16 or bf16 tensors"
    if any(d % 8 or not 8 <= d <= 256
           for d in (spec.head_dim, spec.value_head_dim)):
        return (f"the sm90a backward kernels take head dims that are "
                f"multiples of 8 up to 256 (got "
                f"{spec.head_dim}/{spec.value_head_dim})")
    return ""


HEAD_DIM_MULTIPLE = 8  # the kernels' rows are whole 16-byte chunks


def kernel_head_dims(head_dim: int, value_head_dim: int,
                     backward: bool = False,
                     unequal_backward: bool = False) -> Tuple[int, int]:
    """The (Dqk, Dv) of the GPU kernel that attn.torch launches for q and k
    of ``head_dim`` and v of ``value_head_dim``, whose tensors it zero-pads
    to them (zero columns add 0 to every score, dot product and Δ; the
    scale stays ``head_dim``'s): each rounded up to a multiple of 8, as
    FlashAttention's interface pads; the ``backward`` kernel at the wider
    of the two unless its family takes Dqk ≠ Dv (``unequal_backward``:
    backward_takes_unequal_head_dims). The pack (attn.aot) builds the
    kernels of these head dims."""
    d, dv = (-(-x // HEAD_DIM_MULTIPLE) * HEAD_DIM_MULTIPLE
             for x in (head_dim, value_head_dim))
    if backward and not unequal_backward:
        d = dv = max(d, dv)
    return d, dv


def backward_takes_unequal_head_dims(spec) -> bool:
    """Whether the backward kernel of ``spec`` (its head dims multiples of
    8) takes Dqk ≠ Dv itself: the sm90a family's does, the sm80 family's
    takes equal head dims only."""
    return resolve(spec) == "sm90a"


def backward_head_dims_unsupported(head_dim: int, value_head_dim: int) -> str:
    """Why the op has no GPU backward for these head dims ('' when it has):
    multiples of 8 up to 256 (the capability table of
    lib/Conversion/AttnToGPU/KernelCapabilities.cpp); Dqk ≠ Dv the sm90a
    kernels take, and the op pads for the sm80 ones, which take equal head
    dims only (attn.torch._backward_at_equal_head_dims)."""
    for name, d in (("head dim", head_dim), ("value head dim", value_head_dim)):
        if d % 8 or not 8 <= d <= 256:
            return (f"{name} {d}: attn's GPU backward kernels take "
                    "multiples of 8 up to 256")
    return ""


def _sm90a_supports(spec) -> str:
    return (sm90a_forward_supports(spec) if spec.kind == "fwd"
            else sm90a_backward_supports(spec))


def resolve(spec) -> str:
    """The family ``spec`` compiles to: 'sm80' or 'sm90a' (its own when
    it names one; for 'auto', sm90a where that family supports it)."""
    family = check_family(spec.family)
    if family != "auto":
        return family
    return "sm90a" if not _sm90a_supports(spec) else "sm80"


def resolve_reason(spec) -> str:
    """Why ``resolve(spec)`` is what it is, for Selection reasons."""
    family = resolve(spec)
    if spec.family != "auto":
        return f"family {family}"
    why_not = _sm90a_supports(spec)
    return ("family auto chose sm90a (chip sm_90a)" if not why_not
            else f"family auto chose sm80 ({why_not})")


def tuning_key_family(families: List[str]) -> str:
    """The key's family for the database families a lookup may take
    (tuningKeyFamily; attn.tuning.key_families lists them)."""
    return families[0] if len(families) == 1 else AUTO_KEY


# --- tile names (TileChoice::name, lib/Tuning/TuningDatabase.cpp) ----------

def tile_name(block_m: int, block_n: int, warp_rows: int, stages: int,
              family: str = "sm80", schedule: str = "",
              persistent: bool = False) -> str:
    """The database's name of a tile: "m128n64r32s2" (sm80-mma);
    "wg-m128n128s2", then "-p" when persistent and "-nopp" or "-serial"
    when the schedule is not ping-pong (sm90a-wgmma); the sm90a backward
    kernel's dQ schedules "-dqpipe", "-dqfirst", "-dkfirst" or "-det"
    ("wg-m64n128s3-dqfirst")."""
    family = FAMILY_OF_KEY.get(family, family)
    if family == "sm90a":
        name = f"wg-m{block_m}n{block_n}s{stages}"
        if persistent:
            name += "-p"
        return name + _SUFFIX_OF_SCHEDULE.get(schedule, "")
    return f"m{block_m}n{block_n}r{warp_rows}s{stages}"


_SM80_TILE = re.compile(r"m(\d+)n(\d+)r(\d+)s(\d+)")
_SM90A_TILE = re.compile(r"wg-m(\d+)n(\d+)s(\d+)(-p)?(" + "|".join(
    re.escape(s) for _, s, _ in SM90A_SCHEDULES if s) + ")?")


def parse_tile(name: str) -> Dict[str, Union[int, str, bool]]:
    """The fields of a tile name: family ('sm80' or 'sm90a'), block_m,
    block_n, warp_rows, stages, and (sm90a) schedule (forward: pingpong,
    overlap, serial; backward: dq-pipelined, dq-first, dk-first,
    deterministic, head-split) and persistent;
    ``tile_name(**parse_tile(n)) == n``."""
    m = _SM80_TILE.fullmatch(name)
    if m:
        fields = dict(zip(("block_m", "block_n", "warp_rows", "stages"),
                          map(int, m.groups())))
        return dict(family="sm80", schedule="", persistent=False, **fields)
    m = _SM90A_TILE.fullmatch(name)
    if m:
        block_m, block_n, stages = map(int, m.groups()[:3])
        schedule = _SCHEDULE_OF_SUFFIX[m.group(5) or ""]
        # warp_rows: each consumer warp owns 16 rows (tileChoiceOf).
        return dict(family="sm90a", block_m=block_m, block_n=block_n,
                    warp_rows=16, stages=stages, schedule=schedule,
                    persistent=bool(m.group(4)))
    raise ValueError(f"tile: expected a name like 'm128n64r32s2' (sm80), "
                     f"'wg-m128n176s2-p' (sm90a) or 'wg-m64n128s3-dqfirst' "
                     f"(sm90a backward), got {name!r}")


def tile_family(name: str) -> str:
    """'sm80' or 'sm90a': the family a tile name belongs to."""
    return str(parse_tile(name)["family"])


def sm90a_schedule_option(tile: Dict[str, Union[int, str, bool]]) -> str:
    """The compiler's sm90-schedule option for a parsed sm90a tile
    (hopperScheduleOption): "pingpong", "overlap+persistent", ..."""
    schedule = str(tile["schedule"])
    if schedule not in _SM90A_SCHEDULES:
        raise ValueError(f"sm90a schedule must be one of "
                         f"{', '.join(_SM90A_SCHEDULES)}, got {schedule!r}")
    return schedule + ("+persistent" if tile["persistent"] else "")


def is_backward_schedule(schedule: str) -> bool:
    """Whether ``schedule`` is one of the sm90a backward kernel's."""
    return schedule in _SM90A_BACKWARD_SUFFIXES


def backward_tile_options(tile: Dict[str, Union[int, str, bool]],
                          deterministic: bool = False) -> List[str]:
    """attn-compile --backward's flags for a parsed backward tile (the
    ones lookupBackwardTile sets from a hit; --family is the tile's):
    sm80 --block-m/--block-n;
    sm90a --block-m/--block-n (64/128), --stages and --sm90-schedule (the
    dQ schedule). The dQ mode is the caller's (``deterministic``:
    attn-compile --deterministic), and an sm90a tile's schedule must be of
    that mode: "-det" exactly for the deterministic kernels (its key
    holds no other, the atomic key none of them)."""
    flags = ["--block-m", str(tile["block_m"]), "--block-n",
             str(tile["block_n"])]
    if tile["family"] != "sm90a":
        return flags
    schedule = str(tile["schedule"])
    if schedule == "deterministic" and not deterministic:
        raise ValueError("a deterministic backward tile (-det) is not one the "
                         "atomic-dQ backward uses")
    if deterministic and schedule != "deterministic":
        raise ValueError(f"the deterministic backward takes sm90a tiles of "
                         f"the deterministic dQ schedule (-det), got "
                         f"{schedule!r}")
    if schedule not in _SM90A_BACKWARD_SUFFIXES:
        raise ValueError(f"the sm90a backward kernel's dQ schedule must be "
                         f"one of {', '.join(_SM90A_BACKWARD_SUFFIXES)}, "
                         f"got {schedule!r}")
    return flags + ["--stages", str(tile["stages"]), "--sm90-schedule",
                    schedule]
