"""Ahead-of-time kernel packs for hosts without MLIR (the GPU host).

On the compiler host (the attn wheel, or a build with the compiler's C API
library or attn-compile):

    python -m attn.aot build --out attn-pack            # the default set
    python -m attn.aot build --out attn-pack --head-dims 64,128 --dtypes bf16
    python -m attn.aot build --out attn-pack --head-dims 192:128,80,20

On the GPU host (PyTorch, libattn_runtime.so built with
-DATTN_ENABLE_COMPILER=OFF):

    ATTN_KERNEL_PACK=attn-pack python my_model.py

The default set is D in {64, 128, 256} x {f16, bf16} x {causal, full}
(each serves every softmax scale), forward kernels, plus the backward
kernels (the build names the head dims left out) when attn-compile has
--backward. ``--head-dims`` takes D or Dqk:Dv; each is built at the head
dims of the kernels the op launches for it (attn.families.kernel_head_dims:
multiples of 8, the backward at the wider of Dqk and Dv). In the family
the PyTorch op uses by
default: ``--family auto``, resolved per kernel as the compiler resolves
it (attn.families: on sm_90a the wgmma kernels where that family
implements the kernel, else sm80). ``--family sm80`` or ``sm90a`` builds
that family instead (for ``set_kernel_family``). ``--variants`` adds the
mask/score_mod variants, ALiBi included (one kernel per head dim, dtype and
mask: the slopes are a launch argument), and their backward kernels,
``--bundles
NAME,...|all`` candidate bundles for tuning on the GPU host (attn.tuning)
of the families ``--family``'s lookup takes: for auto on sm_90a both
(named ``...-sm_90a-auto``, the entry tuning on first use writes), else
the one family (sm80's named without a suffix). A pack is a folder of
kernel directories named after their KernelSpec (attn.cache),
``bundles/<name>/`` and a pack.json index.
"""

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Iterable, List, Optional, Tuple, Union

from . import cache
from ._errors import CompileError
from .cache import KernelSpec
from .families import (backward_head_dims_unsupported,
                       backward_takes_unequal_head_dims, kernel_head_dims,
                       sm90a_backward_supports)

HeadDims = Union[int, Tuple[int, int]]  # D, or (Dqk, Dv)


def _pairs(head_dims: Iterable[HeadDims]) -> List[Tuple[int, int]]:
    return [(d, d) if isinstance(d, int) else tuple(d) for d in head_dims]


def _kernel_spec(kind: str, head_dim: int, value_head_dim: int,
                 dtype: str, causal: bool, chip: str,
                 family: str = "sm80") -> KernelSpec:
    """The kernel the op launches for these head dims (kernel_head_dims:
    multiples of 8; a backward of Dqk ≠ Dv at the wider one unless its
    family takes unequal head dims)."""
    d, dv = kernel_head_dims(head_dim, value_head_dim)
    spec = KernelSpec(kind, d, dv, dtype, causal, chip, family=family)
    if kind == "bwd" and d != dv and not backward_takes_unequal_head_dims(
            spec):
        d, dv = kernel_head_dims(d, dv, backward=True)
        spec = dataclasses.replace(spec, head_dim=d, value_head_dim=dv)
    return spec


def default_specs(head_dims: Iterable[HeadDims] = (64, 128, 256),
                  dtypes=("f16", "bf16"), masks=("full", "causal"),
                  chip: str = "sm_90a", backward: bool = False,
                  family: str = "sm80") -> List[KernelSpec]:
    """Forward kernels of every head dim (D or (Dqk, Dv)), dtype and mask,
    and with ``backward`` the backward kernels of the head dims a GPU
    backward takes (backward_left_out says which are not), each at the
    head dims the op launches its kernel with (_kernel_spec), once each
    (20 and 24 both take the kernels of 24)."""
    kinds = ("fwd", "bwd") if backward else ("fwd",)
    specs = [_kernel_spec(kind, d, dv, t, m == "causal", chip, family)
             for kind in kinds for d, dv in _pairs(head_dims)
             for t in dtypes for m in masks]
    specs = [s for s in specs if s.kind == "fwd" or
             not backward_head_dims_unsupported(s.head_dim,
                                                s.value_head_dim)]
    return list({s.name: s for s in specs}.values())


def backward_left_out(head_dims: Iterable[HeadDims]) -> List[str]:
    """Why default_specs(backward=True) has no backward kernel of some of
    ``head_dims`` (the build says so instead of dropping them)."""
    dims = dict.fromkeys(kernel_head_dims(d, dv)
                         for d, dv in _pairs(head_dims))
    return [why for d, dv in dims
            if (why := backward_head_dims_unsupported(d, dv))]


def padded_head_dims(head_dims: Iterable[HeadDims],
                     backward: bool = False, chip: str = "sm_90a",
                     family: str = "sm80") -> List[str]:
    """What the build says of the head dims it builds at other widths."""
    notes = []
    kinds = (("fwd", "forward"), ("bwd", "backward"))
    for d, dv in _pairs(head_dims):
        for kind, what in kinds[:2 if backward else 1]:
            spec = _kernel_spec(kind, d, dv, "bf16", False, chip, family)
            kd, kdv = spec.head_dim, spec.value_head_dim
            if (kd, kdv) != (d, dv):
                given = (f"head dim {d}" if d == dv
                         else f"head dims {d}:{dv}")
                at = f"{kd}" if kd == kdv else f"{kd}:{kdv}"
                notes.append(f"{given}: its {what} kernels are those of "
                             f"{at} (the op zero-pads the operands to it)")
    return notes


def variant_forms():
    """The variants of ``--variants`` (attn.variants.Variant): top-left
    causal, sliding windows (bottom-right (64, 0), top-left (32, 32)),
    softcap 30 (full and causal) and ALiBi (full and bottom-right causal,
    FlashAttention's ``alibi_slopes``; the slopes are a launch argument, so
    one kernel serves every slope, head count and Nk - Nq)."""
    from .variants import make_variant
    return [make_variant(causal=True, mask_align="top_left"),
            make_variant(window=(64, 0)),
            make_variant(window=(32, 32), mask_align="top_left"),
            make_variant(softcap=30.0),
            make_variant(causal=True, softcap=30.0),
            make_variant(alibi=True),
            make_variant(causal=True, alibi=True)]


def variant_specs(head_dims=(64, 128), dtypes=("f16", "bf16"),
                  chip: str = "sm_90a", family: str = "sm80",
                  backward: bool = False) -> List[KernelSpec]:
    """Forward kernels of the mask/score_mod variants (variant_forms,
    docs/variants.md), one per head dim, dtype and variant; with
    ``backward`` their backward kernels too (every variant has one; the
    head dims a GPU backward takes)."""
    specs = []
    for d in head_dims:
        d, _ = kernel_head_dims(d, d)
        for t in dtypes:
            for v in variant_forms():
                specs.append(KernelSpec("fwd", d, d, t, v.causal, chip,
                                        variant=v.key, family=family))
                if backward and not backward_head_dims_unsupported(d, d):
                    specs.append(KernelSpec("bwd", d, d, t, v.causal, chip,
                                            variant=v.key, family=family))
    return list({s.name: s for s in specs}.values())


def build_bundle(out: "os.PathLike[str]", spec: KernelSpec, log=sys.stdout,
                 jobs: int = 0) -> Path:
    """Writes the candidate bundle of ``spec``'s specialisation into
    ``out/bundles/<spec.name>/`` (at the canonical shape; attn.tuning re-aims
    it at the caller's shape on the GPU host)."""
    from . import compiler
    from .tuning import bundle_spec, cannot_tune
    why = cannot_tune(spec)
    if why:
        raise CompileError(f"--bundles: {spec.name} cannot be tuned: {why}")
    asked, spec = spec.family, bundle_spec(spec)
    started = time.monotonic()
    final = Path(out) / "bundles" / spec.name
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():
        cache._quarantine(final)
    tmp = final.parent / f".tmp-{spec.name}-{os.getpid()}"
    bundle = compiler.tune(out=tmp, batch=1, heads_q=16, heads_kv=16,
                           seq_q=cache.CANONICAL_SEQ,
                           seq_kv=cache.CANONICAL_SEQ,
                           head_dim=spec.head_dim,
                           value_head_dim=spec.value_head_dim,
                           dtype=spec.dtype, causal=spec.causal,
                           chip=spec.chip, jobs=jobs,
                           family=spec.family, default_family=asked)
    os.rename(tmp, final)
    print(f"  bundles/{spec.name}: {bundle.candidates} candidates, "
          f"{bundle.pruned} pruned ({time.monotonic() - started:.1f} s)",
          file=log)
    return final


def build_pack(out: "os.PathLike[str]", specs: List[KernelSpec],
               log=sys.stdout) -> dict:
    """Compiles every spec into ``out/<spec.name>/`` (each atomically:
    a temporary folder renamed) and writes ``out/pack.json``, keeping the
    entries of earlier builds into the same folder."""
    from . import compiler
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for spec in specs:
        started = time.monotonic()
        final = out / spec.name
        if final.exists():
            cache._quarantine(final)
        tmp = out / f".tmp-{spec.name}-{os.getpid()}"
        cache.compile_spec(spec, tmp)
        why = cache.validate_kernel_dir(tmp, spec)
        if why is not None:
            raise CompileError(f"{spec.name}: invalid kernel: {why}")
        os.rename(tmp, final)
        manifest = json.loads((final / "manifest.json").read_text())
        entries.append({"name": spec.name, "kind": spec.kind,
                        "entry": manifest.get("entry"),
                        "head_dim": spec.head_dim,
                        "value_head_dim": spec.value_head_dim,
                        "dtype": spec.dtype, "causal": spec.causal,
                        "chip": spec.chip,
                        "variant": spec.variant_info().name,
                        "family": spec.family})
        print(f"  {spec.name}: {manifest.get('entry')} "
              f"({time.monotonic() - started:.1f} s)", file=log)
    # A pack grows by further builds: keep the entries built before.
    built = {e["name"] for e in entries}
    try:
        old = json.loads((out / "pack.json").read_text()).get("kernels", [])
    except (OSError, ValueError, AttributeError):
        old = []
    kept = [e for e in old if isinstance(e, dict) and e.get("name") not in
            built and (out / str(e.get("name"))).is_dir()]
    version = compiler.version() if compiler.available() else "attn-compile"
    index = {"format": cache.PACK_FORMAT, "compiler_version": version,
             "kernels": kept + entries}
    (out / "pack.json").write_text(json.dumps(index, indent=1) + "\n")
    return index


def _head_dims(text: str) -> List[HeadDims]:
    """--head-dims: D or Dqk:Dv, comma-separated."""
    dims = []
    for x in text.split(","):
        if not x:
            continue
        try:
            parts = [int(p) for p in x.split(":")]
        except ValueError:
            parts = []
        if len(parts) not in (1, 2) or min(parts) < 1:
            raise argparse.ArgumentTypeError(
                f"{x!r} is not a head dim D or Dqk:Dv (positive integers)")
        dims.append(parts[0] if len(parts) == 1 else tuple(parts))
    return dims


def _strs(text: str) -> List[str]:
    return [x for x in text.split(",") if x]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attn.aot",
        description="Build or list attn kernel packs (ahead-of-time "
                    "kernels for hosts without MLIR).")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="compile a kernel pack")
    build.add_argument("--out", required=True, help="pack folder")
    build.add_argument("--head-dims", default="64,128,256", type=_head_dims,
                       help="D or Dqk:Dv (e.g. 192:128), comma-separated; "
                            "each built at the head dims the op launches "
                            "its kernels with (multiples of 8; the "
                            "backward at the wider of Dqk and Dv)")
    build.add_argument("--dtypes", default="f16,bf16", type=_strs)
    build.add_argument("--masks", default="full,causal", type=_strs,
                       help="full, causal or both")
    build.add_argument("--chip", default="sm_90a")
    build.add_argument("--family", default="auto",
                       choices=("sm80", "sm90a", "auto"),
                       help="kernel family (auto, the op's default: sm90a "
                            "on sm_90a where it implements the kernel, else "
                            "sm80; sm90a: wgmma, Hopper)")
    build.add_argument("--variants", action="store_true",
                       help="also the mask/score_mod variant kernels, "
                            "forward and backward (top-left causal, "
                            "windows, softcap, ALiBi full and causal; the "
                            "--head-dims D <= 128 with Dqk = Dv); ALiBi "
                            "kernels take the slopes at "
                            "launch: one per head dim, dtype and mask")
    # Older packs compiled ALiBi's slopes in, per (heads, Nk - Nq): the
    # flag is still accepted (so old command lines run) as --variants.
    build.add_argument("--alibi-shapes", default="", type=_strs,
                       help=argparse.SUPPRESS)
    build.add_argument("--bundles", default="", type=_strs,
                       help="candidate bundles (for tuning on the GPU "
                            "host) of these forward kernels in --family, "
                            "by name (fwd-d64-bf16-full-sm_90a-auto"
                            "), or 'all'")
    build.add_argument("--only-bundles", action="store_true",
                       help="build only the --bundles (add them to a pack)")
    build.add_argument("--key-range", action="store_true",
                       help="also each kernel's key_range form (\"-kr\": "
                            "padded batches, attn.integrations.transformers)")
    build.add_argument("--backward", choices=("auto", "on", "off"),
                       default="auto",
                       help="backward kernels too (auto: when attn-compile "
                            "has --backward)")
    show = sub.add_parser("list", help="list a pack's kernels")
    show.add_argument("pack")
    args = parser.parse_args(argv)

    if args.command == "list":
        index = json.loads((Path(args.pack) / "pack.json").read_text())
        print(f"{args.pack}: compiler {index.get('compiler_version')}")
        for e in index.get("kernels", []):
            print(f"  {e['name']}: {e.get('entry')}")
        return 0

    for t in args.dtypes:
        if t not in ("f16", "bf16"):
            parser.error(f"--dtypes: {t!r} is not f16 or bf16")
    for m in args.masks:
        if m not in ("full", "causal"):
            parser.error(f"--masks: {m!r} is not full or causal")
    backward = {"on": True, "off": False}.get(args.backward)
    if backward is None:
        backward = cache.backward_compiler_available()
    if args.alibi_shapes:
        # (Its HEADS:OFFSET pairs are ignored: the slopes are launch
        # arguments now.)
        print("attn.aot: --alibi-shapes is obsolete (ALiBi kernels take "
              "their slopes at launch: one per head dim, dtype and mask, "
              "which --variants builds); building --variants",
              file=sys.stderr)
        args.variants = True
    specs = default_specs(args.head_dims, args.dtypes, args.masks,
                          args.chip, backward, args.family)
    if args.variants:
        specs += variant_specs(
            head_dims=[d for d, dv in _pairs(args.head_dims)
                       if d == dv and d <= 128],
            dtypes=args.dtypes, chip=args.chip,
            family=args.family, backward=backward)
    if args.family == "sm90a":  # no sm90a backward for the rest
        specs = [s for s in specs if s.kind == "fwd" or
                 not sm90a_backward_supports(s)]
    if args.key_range:
        specs += [dataclasses.replace(s, key_range=True) for s in specs]
    specs = [s.resolved() for s in specs]
    # Bundles of the families the op's lookup takes with --family
    # (attn.tuning.bundle_spec: family auto on sm_90a tunes both, the entry
    # tuning on first use writes), named by that family.
    from .tuning import bundle_spec

    def bundle_specs(masks):
        specs = [dataclasses.replace(s, family=args.family) for s in
                 default_specs(args.head_dims, args.dtypes, masks,
                               args.chip)]
        return {bundle_spec(s).name: s for s in specs}

    if args.bundles == ["all"]:
        bundles = list(bundle_specs(args.masks).values())
    else:
        by_name = bundle_specs(("full", "causal"))
        unknown = [n for n in args.bundles if n not in by_name]
        if unknown:
            parser.error(f"--bundles: {', '.join(unknown)} is not a forward "
                         "kernel of this build's set (e.g. "
                         f"{next(iter(by_name))})")
        bundles = [by_name[n] for n in args.bundles]
    if args.only_bundles:
        specs = []
    print(f"attn.aot: {len(specs)} kernels and {len(bundles)} bundles into "
          f"{args.out}"
          + ("" if backward else " (forward only: no backward compiler)"))
    if not args.only_bundles:
        for note in padded_head_dims(args.head_dims, backward, args.chip,
                                     args.family):
            print(f"attn.aot: {note}")
    if backward and not args.only_bundles:
        for why in backward_left_out(args.head_dims):
            print(f"attn.aot: no backward kernels: {why}")
    try:
        build_pack(args.out, specs)
        for spec in bundles:
            build_bundle(args.out, spec)
    except (CompileError, NotImplementedError, OSError) as ex:
        print(f"attn.aot: error: {ex}", file=sys.stderr)
        return 1
    print(f"attn.aot: wrote {args.out}/pack.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
