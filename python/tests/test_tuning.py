"""Per-shape kernel choice without a GPU: the tuning database lookup through
libattn_tuning_lookup.so (lib/Tuning's own lookup), the selection the
PyTorch op makes from it, tuned tiles compiled into the cache, candidate
bundles in AOT packs re-aimed at a shape, and the whole GPU-host tune flow
(pack bundle -> attn-tune -> database -> selection) run through the
runtime's host-only libcuda stand-in. Timing real kernels needs a GPU:
python/tests/test_torch_gpu.py::test_tune_on_first_use."""

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest

from attn import _errors as attn_errors, cache, families, tuning
from attn.cache import KernelCache, KernelSpec
from attn.tuning import Shape
from attn.variants import make_variant

REPO = Path(__file__).resolve().parents[2]


def _build_dir():
    env = os.environ.get("ATTN_BUILD_DIR")
    if env:
        return Path(env)
    found = sorted(REPO.glob("build*/lib/libattn_tuning_lookup.so"),
                   key=lambda p: p.stat().st_mtime)
    return found[-1].parents[1] if found else None


@pytest.fixture
def lookup_lib(monkeypatch):
    """libattn_tuning_lookup.so (skip, or fail under
    ATTN_REQUIRE_COMPILER=1, when not built)."""
    build = _build_dir()
    lib = build / "lib" / "libattn_tuning_lookup.so" if build else None
    if lib is None or not lib.is_file():
        why = "libattn_tuning_lookup.so not built (ninja attn_tuning_lookup)"
        if os.environ.get("ATTN_REQUIRE_COMPILER") == "1":
            pytest.fail(why)
        pytest.skip(why)
    monkeypatch.setenv("ATTN_TUNING_LIB", str(lib))
    monkeypatch.setattr(tuning, "_lib", None)
    monkeypatch.setattr(tuning, "_lib_error", None)
    return build


def entry(compiler, *, gpu="Test GPU", sms=8, dtype="bf16", d=64, ratio=1,
          mask="none", q=1024, kv=1024, family="sm80-mma",
          tile=(64, 64, 16, 2)):
    return {
        "key": {"gpu": gpu, "sms": sms, "chip": "sm_90a",
                "compiler": compiler, "family": family, "direction": "fwd",
                "dtype": dtype, "head_dim": d, "value_head_dim": d,
                "heads_ratio": ratio, "mask": mask, "seq_q_bucket": q,
                "seq_kv_bucket": kv},
        "winner": dict(zip(("block_m", "block_n", "warp_rows", "stages"),
                           tile)),
        "time_ms": 0.1,
        "tuned_shape": {"batch": 1, "heads_q": 2, "heads_kv": 2,
                        "seq_q": q, "seq_kv": kv},
        "tuned_at": "2026-01-01T00:00:00Z", "candidates": []}


def write_db(path, entries):
    path.write_text(json.dumps({"format": "attn-tuning-db", "version": 1,
                                "entries": entries}))
    return path


SPEC = KernelSpec("fwd", 64, 64, "bf16", False)
CAUSAL = KernelSpec("fwd", 64, 64, "bf16", True)


def test_sequence_buckets_match_lib_tuning(lookup_lib):
    lib = tuning.lookup_library()
    for n in (1, 2, 3, 77, 128, 129, 1000, 4096, 5000):
        assert tuning.sequence_bucket(n) == lib.attn_tuning_sequence_bucket(n)


def test_lookup_hits_by_bucket_and_says_why_not(lookup_lib, tmp_path):
    db = write_db(tmp_path / "db.json", [
        entry("v1"), entry("v1", mask="causal", ratio=4, q=256, kv=512,
                           tile=(64, 32, 16, 2))])
    shape = Shape(1, 2, 2, 1000, 600)  # buckets 1024 / 1024
    tile, why = tuning.lookup(SPEC, shape, "Test GPU", 8, db, "v1")
    assert tile == "m64n64r16s2" and why.startswith("hit: Test GPU (8 SMs)")
    # Any GPU ('') matches; the causal GQA entry by its own buckets.
    assert tuning.lookup(SPEC, shape, "", 0, db, "v1")[0] == "m64n64r16s2"
    tile, _ = tuning.lookup(CAUSAL, Shape(1, 8, 2, 200, 300), "", 0, db, "v1")
    assert tile == "m64n32r16s2"
    # Misses, each with lib/Tuning's reason.
    tile, why = tuning.lookup(SPEC, Shape(1, 2, 2, 3000, 3000), "", 0, db,
                              "v1")
    assert tile is None and "no entry for sequence buckets q4096 kv4096" in why
    tile, why = tuning.lookup(SPEC, shape, "", 0, db, "v2")
    assert tile is None and "tuned by compiler v1, this is v2" in why
    tile, why = tuning.lookup(SPEC, shape, "Other GPU", 0, db, "v1")
    assert tile is None and "tuned only for other GPUs" in why
    tile, why = tuning.lookup(SPEC, shape, "", 0, tmp_path / "none.json",
                              "v1")
    assert tile is None and "no tuning database at" in why


def test_corrupt_database_is_a_warning_not_an_error(lookup_lib, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    tile, why = tuning.lookup(SPEC, Shape(1, 2, 2, 64, 64), "", 0, bad, "v1")
    assert tile is None
    assert why.startswith("warning: ") and str(bad) in why


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_hostile_database_is_a_warning_not_a_hang(lookup_lib, tmp_path,
                                                 kind):
    """The C lookup reads a FIFO or /dev/zero as a bad database (issue 21:
    it used to hang, or read until Python ran out of memory); run in a
    child process so that a hang fails the test instead of the run."""
    import subprocess
    import sys
    db = tmp_path / "db.json"
    if kind == "fifo":
        os.mkfifo(db)
    else:
        db.symlink_to("/dev/zero")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from attn import tuning; from attn.cache import KernelSpec; "
            "spec = KernelSpec('fwd', 64, 64, 'bf16', False); "
            "print(tuning.lookup(spec, tuning.Shape(1, 2, 2, 64, 64), '', "
            "0, sys.argv[2], 'v1'))")
    done = subprocess.run(
        [sys.executable, "-c", code, str(REPO / "python"), str(db)],
        capture_output=True, text=True, timeout=60,
        env=dict(os.environ, ATTN_TUNING_LIB=os.environ["ATTN_TUNING_LIB"]))
    assert done.returncode == 0, done.stderr
    what = "a FIFO" if kind == "fifo" else "a character device"
    assert f"ignored: cannot read {db}: not a regular file ({what})" in \
        done.stdout


def test_select_uses_the_database_only_where_its_key_fits(lookup_lib,
                                                          tmp_path,
                                                          monkeypatch):
    db = write_db(tmp_path / "db.json", [entry("v1", mask="causal")])
    monkeypatch.setenv("ATTN_TUNING_DB", str(db))
    monkeypatch.setattr(tuning, "kernel_compiler_version", lambda: "v1")
    shape = Shape(1, 2, 2, 1000, 1000)
    sel = tuning.select(CAUSAL, shape, "Test GPU", 8)
    assert sel.source == "tuning-db" and sel.spec.tile == "m64n64r16s2"
    assert "tuning-db" in str(sel) and sel.db == str(db)
    # No entry: the heuristic, with the family's and the lookup's reasons.
    sel = tuning.select(SPEC, shape, "Test GPU", 8)
    assert sel.source == "heuristic" and sel.spec.tile == ""
    assert sel.reason.startswith("family sm80; miss:")
    # Variants and other families are not in the key (nor is the scale: a
    # launch argument, any scale is the plain kernel's).
    top_left = make_variant(causal=True, mask_align="top_left")
    spec = KernelSpec("fwd", 64, 64, "bf16", True, variant=top_left.key)
    sel = tuning.select(spec, shape, "Test GPU", 8)
    assert sel.source == "heuristic"
    assert "no field for the causal-tl variant" in sel.reason
    # The sm90a family is looked up under its own key.
    sel = tuning.select(KernelSpec("fwd", 64, 64, "bf16", True,
                                   family="sm90a"), shape)
    assert sel.source == "heuristic" and sel.spec.family == "sm90a"
    assert "sm_90a sm90a-wgmma compiler=v1" in sel.reason


# --- the sm90a family and family auto ----------------------------------------

def sm90a_entry(compiler, *, chip="sm_90a", d=128, q=4096, kv=4096,
                winner=(128, 176, 2, "pingpong", True)):
    """An entry that tuned both families (key family "auto", version 2),
    as attn-tune writes from attn-compile --tune-bundle: an sm90a winner,
    and correct candidates of both families."""
    def tile(family, m, n, r, s, schedule=None, persistent=False):
        t = {"family": family, "block_m": m, "block_n": n, "warp_rows": r,
             "stages": s}
        if schedule:
            t.update(schedule=schedule, persistent=persistent)
        return t
    m, n, s, schedule, persistent = winner
    cands = [
        dict(tile("sm80-mma", 128, 64, 32, 2), status="ok", time_ms=0.5),
        dict(tile("sm80-mma", 256, 64, 32, 2), status="ok", time_ms=0.4),
        dict(tile("sm80-mma", 64, 64, 16, 2), status="wrong", time_ms=0.1),
        dict(tile("sm90a-wgmma", 128, 160, 16, 2, "overlap"), status="ok",
             time_ms=0.35),
        dict(tile("sm90a-wgmma", m, n, 16, s, schedule, persistent),
             status="ok", time_ms=0.3)]
    for c in cands:
        c.update(rel_err=1e-3, heuristic=False)
    e = entry(compiler, family="auto", d=d, q=q, kv=kv)
    e["key"]["chip"] = chip
    e["winner"] = tile("sm90a-wgmma", m, n, 16, s, schedule, persistent)
    e["candidates"] = cands
    return e


def write_db_v2(path, entries):
    path.write_text(json.dumps({"format": "attn-tuning-db", "version": 2,
                                "entries": entries}))
    return path


H200_D128 = KernelSpec("fwd", 128, 128, "bf16", False, "sm_90a",
                       family="auto")


def test_sm90a_tile_names_round_trip():
    for name in ("wg-m128n176s2", "wg-m128n176s2-p", "wg-m192n80s2",
                 "wg-m128n64s2-nopp", "wg-m128n64s3-p-serial",
                 "m128n64r32s2", "m64n128r16s3"):
        fields = families.parse_tile(name)
        assert families.tile_name(**fields) == name
        assert cache.tile_name(**fields) == name
    assert families.parse_tile("wg-m128n176s2-p") == dict(
        family="sm90a", block_m=128, block_n=176, warp_rows=16, stages=2,
        schedule="pingpong", persistent=True)
    assert families.parse_tile("wg-m128n64s2-nopp")["schedule"] == "overlap"
    assert families.tile_family("m128n64r32s2") == "sm80"
    # The database's family names work as the family argument too.
    assert families.tile_name(128, 80, 16, 2, "sm90a-wgmma") == "wg-m128n80s2"
    assert families.sm90a_schedule_option(
        families.parse_tile("wg-m128n176s2-p")) == "pingpong+persistent"
    for bad in ("wg-m128n176", "wg-m128n176s2-x", "wg-m128n176s2-nopp-p",
                "m128n64s2"):
        with pytest.raises(ValueError, match=r"tile: expected a name like"):
            families.parse_tile(bad)


def test_sm90a_tile_names_match_lib_tuning(lookup_lib, tmp_path):
    """TileChoice::name (through the lookup library) and attn.families
    name every sm90a schedule and grid alike."""
    for winner in ((128, 176, 2, "pingpong", True),
                   (192, 80, 2, "pingpong", False),
                   (128, 64, 2, "overlap", False),
                   (128, 64, 3, "serial", True)):
        db = write_db_v2(tmp_path / "db.json", [sm90a_entry("v1",
                                                            winner=winner)])
        tile, why = tuning.lookup(H200_D128, Shape(1, 2, 2, 4096, 4096), "",
                                  0, db, "v1")
        m, n, s, schedule, persistent = winner
        assert tile == families.tile_name(m, n, 16, s, "sm90a", schedule,
                                          persistent), why


def test_family_auto_resolves_by_chip():
    spec = KernelSpec("fwd", 128, 128, "bf16", True, "sm_90a",
                      family="auto")
    assert spec.resolved().family == "sm90a"
    assert spec.resolved().name.endswith("-sm_90a-sm90a")
    assert "family auto chose sm90a" in families.resolve_reason(spec)
    sm80 = dataclasses.replace(spec, chip="sm_80")
    assert sm80.resolved().family == "sm80"
    assert sm80.resolved().name.endswith("-sm_80")
    assert "needs chip sm_90a" in families.resolve_reason(sm80)
    # Where the wgmma kernels do not implement the call: sm80 on sm_90a.
    d20 = dataclasses.replace(spec, head_dim=20, value_head_dim=20)
    assert d20.resolved().family == "sm80"
    assert "multiples of 8 up to 256" in families.resolve_reason(d20)
    # Padded head dims are the wgmma kernels' (computed at 64, 128 or 256).
    for d in (40, 96):
        assert dataclasses.replace(spec, head_dim=d, value_head_dim=d
                                   ).resolved().family == "sm90a"
    # Backward: the sm90a dkdv kernel takes head dims that are multiples of
    # 8 up to 256, equal or not, atomic or deterministic.
    bwd = dataclasses.replace(spec, kind="bwd")
    assert bwd.resolved().family == "sm90a"
    d256 = dataclasses.replace(bwd, head_dim=256, value_head_dim=256)
    assert d256.resolved().family == "sm90a"
    assert dataclasses.replace(d256, deterministic=True
                               ).resolved().family == "sm90a"
    assert dataclasses.replace(bwd, head_dim=96, value_head_dim=96
                               ).resolved().family == "sm90a"
    assert dataclasses.replace(bwd, head_dim=192, value_head_dim=192,
                               deterministic=True).resolved().family == "sm90a"
    assert dataclasses.replace(bwd, head_dim=48, value_head_dim=48
                               ).resolved().family == "sm90a"
    assert dataclasses.replace(bwd, head_dim=192, value_head_dim=128
                               ).resolved().family == "sm90a"
    assert dataclasses.replace(bwd, chip="sm_80").resolved().family == "sm80"
    # A named family stays; a tile's family wins.
    assert dataclasses.replace(spec, family="sm80").resolved().family == "sm80"
    assert dataclasses.replace(spec, tile="m128n64r32s2").resolved().family \
        == "sm80"
    # The lookup keys attn-compile uses for each (allowedKernelFamilies).
    assert tuning.key_families(spec) == ["sm80-mma", "sm90a-wgmma"]
    assert tuning.key_families(sm80) == ["sm80-mma"]
    assert tuning.key_families(dataclasses.replace(spec, family="sm90a")) \
        == ["sm90a-wgmma"]


def test_default_family_is_auto(monkeypatch):
    monkeypatch.delenv("ATTN_KERNEL_FAMILY", raising=False)
    assert families.DEFAULT_FAMILY == "auto"
    assert families.default_family() == "auto"
    monkeypatch.setenv("ATTN_KERNEL_FAMILY", "sm80")
    assert families.default_family() == "sm80"
    monkeypatch.setenv("ATTN_KERNEL_FAMILY", "sm100")
    with pytest.raises(ValueError, match=r"family must be 'sm80', 'sm90a' "
                                         r"or 'auto', got 'sm100'"):
        families.default_family()


def test_lookup_hits_an_sm90a_entry(lookup_lib, tmp_path, monkeypatch):
    """Family auto on sm_90a looks the entry that tuned both families up,
    as attn-compile --family auto does, and uses its sm90a winner; a named
    family takes its fastest correct candidate there."""
    db = write_db_v2(tmp_path / "db.json", [sm90a_entry("v1")])
    monkeypatch.setenv("ATTN_TUNING_DB", str(db))
    monkeypatch.setattr(tuning, "kernel_compiler_version", lambda: "v1")
    shape = Shape(2, 16, 16, 3000, 3000)  # buckets 4096
    sel = tuning.select(H200_D128, shape, "Test GPU", 8)
    assert sel.source == "tuning-db", sel.reason
    assert sel.spec.tile == "wg-m128n176s2-p" and sel.spec.family == "sm90a"
    assert sel.spec.name.endswith("-sm_90a-sm90a-wg-m128n176s2-p")
    assert sel.reason.startswith("family auto chose sm90a (chip sm_90a); hit:")
    assert "sm_90a auto compiler=v1" in sel.reason
    sel = tuning.select(dataclasses.replace(H200_D128, family="sm90a"), shape)
    assert (sel.source, sel.spec.tile) == ("tuning-db", "wg-m128n176s2-p")
    assert "the fastest sm90a-wgmma candidate of" in sel.reason
    sel = tuning.select(dataclasses.replace(H200_D128, family="sm80"), shape)
    assert (sel.spec.family, sel.spec.tile) == ("sm80", "m256n64r32s2")
    assert "the fastest sm80-mma candidate of" in sel.reason
    # Family auto where the wgmma kernels do not run (another chip): the
    # sm80-mma key, a miss that says so.
    sel = tuning.select(dataclasses.replace(H200_D128, chip="sm_80"), shape)
    assert sel.source == "heuristic" and sel.spec.family == "sm80"
    assert sel.reason.startswith("family auto chose sm80")
    assert "sm_80 sm80-mma" in sel.reason
    # Tuning on first use builds the bundle of the key the lookup takes.
    assert tuning.cannot_tune(H200_D128) is None
    assert tuning.bundle_family(H200_D128) == "auto"


def test_bundles_are_of_the_lookups_key_family():
    """tune()'s bundle is of the families the lookup takes, so attn-tune's
    entry (keyed by bundle.json's family) is the one the lookup hits:
    family auto on sm_90a tunes both (key "auto"), elsewhere the one."""
    def bundle(**kw):
        spec = dataclasses.replace(H200_D128, **kw)
        b = tuning.bundle_spec(spec)
        assert families.tuning_key_family(list(tuning.key_families(spec))) \
            == tuning.FAMILY_KEYS.get(b.family, "auto")
        return b.family, b.name
    assert bundle() == ("auto", "fwd-d128-bf16-full-sm_90a-auto")
    assert bundle(tile="wg-m128n176s2-p")[0] == "auto"  # the asked family
    assert bundle(family="sm80") == ("sm80",
                                     "fwd-d128-bf16-full-sm_90a")
    assert bundle(family="sm90a")[0] == "sm90a"
    # Family auto where the wgmma kernels do not run: the sm80 bundle.
    assert bundle(chip="sm_80") == ("sm80",
                                    "fwd-d128-bf16-full-sm_80")
    assert bundle(head_dim=20, value_head_dim=20)[0] == "sm80"
    # Padded head dims are the wgmma kernels' too: both families tuned.
    assert bundle(head_dim=96, value_head_dim=96)[0] == "auto"


def test_pack_bundle_of_a_tuned_tile(tmp_path):
    """A tuned spec (its family the tile's) finds its candidate in the
    pack's bundle of its family, else in the one that tuned both."""
    pack = tmp_path / "pack"
    auto = pack / "bundles" / tuning.bundle_spec(H200_D128).name
    auto.mkdir(parents=True)
    (auto / "bundle.json").write_text(json.dumps({"family": "auto",
        "candidates": [
            {"dir": "wg-m128n176s2-p", "family": "sm90a-wgmma",
             "block_m": 128, "block_n": 176, "warp_rows": 16, "stages": 2,
             "schedule": "pingpong", "persistent": True},
            {"dir": "m128n64r32s2", "family": "sm80-mma", "block_m": 128,
             "block_n": 64, "warp_rows": 32, "stages": 2}]}))
    for tile in ("wg-m128n176s2-p", "m128n64r32s2"):
        tuned = dataclasses.replace(H200_D128, tile=tile).resolved()
        assert tuning.pack_bundle(tuned, pack) == auto
        assert tuning.bundle_candidate(auto, tile) == auto / tile
    tuned = dataclasses.replace(H200_D128, tile="wg-m128n64s2").resolved()
    assert tuning.pack_bundle(tuned, pack) is None  # no such candidate
    assert tuning.pack_bundle(H200_D128, pack) == auto
    assert tuning.pack_bundle(dataclasses.replace(H200_D128, family="sm80"),
                              pack) is None


def test_tuned_sm90a_tile_is_compiled_into_the_cache(compiler):
    spec = dataclasses.replace(H200_D128, family="sm90a",
                               tile="wg-m128n160s2-p")
    path = KernelCache().get(spec, compiler.version(), cache.compile_spec)
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["family"] == "sm90a-wgmma"
    assert (manifest["tile"]["block_m"], manifest["tile"]["block_n"],
            manifest["tile"]["stages"]) == (128, 160, 2)
    assert manifest["entry"].endswith("_m128n160s2_p")  # the persistent grid
    assert manifest["grid"] == {"policy": "persistent", "block_rows": 128}
    other = dataclasses.replace(spec, tile="wg-m128n176s2")
    assert cache.validate_kernel_dir(path, other) == \
        "manifest tile is wg-m128n160s2-p, not wg-m128n176s2"
    # The grid is the tile's too: the same tile without -p is another.
    plain = dataclasses.replace(spec, tile="wg-m128n160s2")
    assert cache.validate_kernel_dir(path, plain) == \
        "manifest tile is wg-m128n160s2-p, not wg-m128n160s2"


def test_tuned_tile_is_compiled_into_the_cache(compiler):
    spec = KernelSpec("fwd", 64, 64, "bf16", True, tile="m64n64r16s2")
    path = KernelCache().get(spec, compiler.version(), cache.compile_spec)
    tile = json.loads((path / "manifest.json").read_text())["tile"]
    assert (tile["block_m"], tile["block_n"], tile["warp_rows"]) == \
        (64, 64, 16)
    # The heuristic's kernel is another entry, and not valid for the tile.
    other = KernelCache().get(spec.heuristic(), compiler.version(),
                              cache.compile_spec)
    assert other != path
    why = cache.validate_kernel_dir(other, spec)
    assert why is None or why.startswith("manifest tile is")


def test_bad_tile_names_are_refused():
    with pytest.raises(ValueError, match=r"tile: expected a name like"):
        cache.parse_tile("128x64")


def fake_pack(tmp_path, spec, compiler_version="test-compiler"):
    """A pack holding the runtime tests' fake bundle (hand-written naive
    kernels that the host-only libcuda stand-in runs) as spec's bundle."""
    pack = tmp_path / "pack"
    bundle = pack / "bundles" / spec.name
    inputs = REPO / "test" / "Tuning" / "Inputs"
    rt = REPO / "test" / "Runtime" / "Inputs"
    bundle.mkdir(parents=True)
    shutil.copy(inputs / "fake-bundle.json", bundle / "bundle.json")
    for name in ("good-a", "good-b"):
        shutil.copytree(rt / "good" / "naive-f32-d64", bundle / name)
    shutil.copytree(rt / "bad" / "zero-output-f32", bundle / "wrong")
    (pack / "pack.json").write_text(json.dumps({
        "format": cache.PACK_FORMAT, "compiler_version": compiler_version,
        "kernels": []}))
    return pack


# The fake bundle's kernels: f32, D=64, the "naive-test" family.
FAKE_SPEC = KernelSpec("fwd", 64, 64, "f32", False)


def test_pack_bundle_is_reaimed_at_the_shape(tmp_path):
    pack = fake_pack(tmp_path, FAKE_SPEC)
    bundle = tuning.pack_bundle(FAKE_SPEC, pack)
    assert bundle == pack / "bundles" / FAKE_SPEC.name
    assert tuning.pack_bundle(CAUSAL, pack) is None
    assert tuning.bundle_candidate(bundle, "m64n64r16s2") == bundle / "good-b"
    assert tuning.bundle_candidate(bundle, "m256n64r16s2") is None
    out = tuning.retarget_bundle(bundle, Shape(3, 4, 2, 300, 500),
                                 tmp_path / "re")
    for name in ("good-a", "good-b", "wrong"):
        problem = json.loads((out / name / "manifest.json").read_text())[
            "problem"]
        assert (problem["batch"], problem["heads_q"], problem["heads_kv"],
                problem["seq_q"], problem["seq_kv"]) == (3, 4, 2, 300, 500)
        assert problem["head_dim"] == 64  # the compiled-in part is kept
        assert (out / name / "kernel.ptx").read_bytes() == \
            (bundle / name / "kernel.ptx").read_bytes()
    # The pack itself is untouched.
    assert json.loads((bundle / "good-a" / "manifest.json").read_text())[
        "problem"]["seq_q"] == 1000


def test_gpu_host_tune_flow_through_the_fake_driver(lookup_lib, tmp_path,
                                                    monkeypatch):
    """The GPU host (no compiler bindings): the pack's bundle, re-aimed at
    the shape, runs through attn-tune (here on the host-only libcuda
    stand-in, which executes the naive test kernels and rejects the one
    writing zeros); the database gets the winner and the selection uses
    it, from the pack's bundle."""
    fake = lookup_lib / "lib" / "libattn-fake-cuda.so"
    tool = lookup_lib / "bin" / "attn-tune"
    if not fake.is_file() or not tool.is_file():
        pytest.skip("attn-tune or libattn-fake-cuda.so not built")
    from attn import compiler
    monkeypatch.setattr(compiler, "available", lambda: False)
    monkeypatch.setitem(tuning.FAMILY_KEYS, "sm80", "naive-test")
    pack = fake_pack(tmp_path, FAKE_SPEC)
    monkeypatch.setenv("ATTN_KERNEL_PACK", str(pack))
    monkeypatch.setenv("ATTN_TUNE_BIN", str(tool))
    monkeypatch.setenv("ATTN_LIBCUDA", str(fake))
    monkeypatch.delenv("ATTN_TUNING_DB", raising=False)
    shape = Shape(2, 4, 4, 200, 150)
    before = tuning.select(FAKE_SPEC, shape, "attn fake CUDA device", 4)
    assert before.source == "heuristic"
    assert "no tuning database" in before.reason
    result = tuning.tune(FAKE_SPEC, shape, "attn fake CUDA device", 4,
                         reps=1, warmup=0)
    assert result.bundle.parent == cache.cache_root() / "bundles"
    assert "rejected (wrong)" in result.log  # the zero-writing candidate
    sel = result.selection
    assert sel.source == "tuning-db"
    assert sel.spec.tile in ("m64n128r32s2", "m64n64r16s2")
    assert "q256 kv256" in sel.reason  # the shape's buckets
    db = json.loads(tuning.database_path().read_text())
    assert db["entries"][0]["tuned_shape"]["seq_q"] == 200
    # The tuned spec resolves to the pack bundle's candidate.
    path = tuning.bundle_candidate(tuning.pack_bundle(FAKE_SPEC),
                                   sel.spec.tile)
    assert path is not None and path.parent.parent.parent == pack
    # Another bucket is still a miss.
    assert tuning.select(FAKE_SPEC, Shape(2, 4, 4, 2000, 150),
                         "attn fake CUDA device", 4).source == "heuristic"


def test_tune_without_a_bundle_says_how_to_get_one(lookup_lib, tmp_path,
                                                   monkeypatch):
    from attn import compiler
    from attn._errors import KernelNotAvailableError
    monkeypatch.setattr(compiler, "available", lambda: False)
    pack = fake_pack(tmp_path, FAKE_SPEC)
    monkeypatch.setenv("ATTN_KERNEL_PACK", str(pack))
    with pytest.raises(KernelNotAvailableError,
                       match=r"no candidate bundle for fwd-d64-bf16-causal-"
                             r".*python -m attn.aot build --out PACK "
                             r"--bundles fwd-d64-bf16-causal"):
        tuning.bundle_for(CAUSAL, Shape(1, 2, 2, 64, 64))
    with pytest.raises(KernelNotAvailableError,
                       match=r"--bundles fwd-d128-bf16-full-sm_90a-"
                             r"auto --chip sm_90a --family auto"):
        tuning.bundle_for(H200_D128, Shape(1, 2, 2, 64, 64))
    variant = make_variant(window=(8, 0))
    spec = KernelSpec("fwd", 64, 64, "bf16", False, variant=variant.key)
    with pytest.raises(tuning.TuneError, match=r"cannot be tuned: the tuning "
                                               r"key has no field"):
        tuning.bundle_for(spec, Shape(1, 2, 2, 64, 64))


def test_compiler_host_bundle_is_written_for_the_shape(compiler, ptxas,
                                                       monkeypatch):
    """With the bindings, tune() writes the bundle for the call's own shape
    (the step before attn-tune, which needs the GPU)."""
    monkeypatch.setenv("PATH", os.path.dirname(ptxas) + os.pathsep +
                       os.environ.get("PATH", ""))
    shape = Shape(1, 4, 2, 300, 700)
    bundle = tuning.bundle_for(CAUSAL, shape)
    doc = json.loads((bundle / "bundle.json").read_text())
    assert doc["problem"]["seq_q"] == 300 and doc["problem"]["heads_kv"] == 2
    assert doc["compiler"] == compiler.version()
    assert len(doc["candidates"]) >= 2
    assert tuning.bundle_for(CAUSAL, shape) == bundle  # reused
    assert doc["family"] == "sm80-mma"
    assert all(c["family"] == "sm80-mma" for c in doc["candidates"])


def test_compiler_host_auto_bundle_is_what_the_lookup_hits(
        compiler, ptxas, lookup_lib, tmp_path, monkeypatch):
    """Family auto on sm_90a (the op's default): tune()'s bundle holds the
    candidates of both families, its key family is "auto", and the entry
    attn-tune writes from it (TuningKey::forProblem of bundle.json's chip,
    family and compiler; faked here, attn-tune needs the GPU) is the one
    the op's lookup hits, an sm90a winner included."""
    monkeypatch.setenv("PATH", os.path.dirname(ptxas) + os.pathsep +
                       os.environ.get("PATH", ""))
    spec = KernelSpec("fwd", 64, 64, "bf16", True, "sm_90a",
                      family="auto")
    shape = Shape(1, 4, 2, 300, 700)
    bundle = tuning.bundle_for(spec, shape)
    assert bundle.name.startswith("fwd-d64-bf16-causal-sm_90a-auto-")
    doc = json.loads((bundle / "bundle.json").read_text())
    assert doc["family"] == "auto" and doc["chip"] == "sm_90a"
    assert " auto " in doc["key"]
    fams = {c["family"] for c in doc["candidates"]}
    assert fams == {"sm80-mma", "sm90a-wgmma"}
    wg = [c for c in doc["candidates"] if c["dir"].startswith("wg-")]
    assert wg and all((bundle / c["dir"] / "kernel.cubin").is_file()
                      for c in wg)
    # The heuristic mark: family auto's own choice, an sm90a tile.
    heuristic = [c for c in doc["candidates"] if c["heuristic"]]
    assert [c["family"] for c in heuristic] == ["sm90a-wgmma"]
    # attn-tune's entry for this bundle, an sm90a winner.
    winner = next(c for c in wg if c["dir"] == "wg-m128n128s2")
    e = entry(doc["compiler"], family=doc["family"], mask="causal",
              q=tuning.sequence_bucket(shape.seq_q),
              kv=tuning.sequence_bucket(shape.seq_kv),
              ratio=shape.heads_ratio)
    e["key"]["chip"] = doc["chip"]
    e["winner"] = {k: winner[k] for k in ("family", "block_m", "block_n",
                                          "warp_rows", "stages", "schedule",
                                          "persistent")}
    e["candidates"] = [dict(e["winner"], status="ok", time_ms=0.1,
                            rel_err=1e-3, heuristic=False)]
    db = write_db_v2(tmp_path / "db.json", [e])
    monkeypatch.setenv("ATTN_TUNING_DB", str(db))
    sel = tuning.select(spec, shape, "Test GPU", 8)
    assert sel.source == "tuning-db", sel.reason
    assert (sel.spec.tile, sel.spec.family) == ("wg-m128n128s2", "sm90a")
    assert "sm_90a auto compiler=" in sel.reason
    # Family sm80 takes only sm80-mma tiles (this entry has none).
    sel = tuning.select(dataclasses.replace(spec, family="sm80"), shape,
                        "Test GPU", 8)
    assert sel.source == "heuristic", sel.reason


def test_aot_bundles_argument_errors(capsys):
    from attn import aot
    with pytest.raises(SystemExit):
        aot.main(["build", "--out", "x", "--bundles", "fwd-d63-bf16"])
    err = capsys.readouterr().err
    assert "--bundles: fwd-d63-bf16 is not a forward kernel" in err
    # Bundles are named by the family --family's lookup takes (auto here).
    assert "(e.g. fwd-d64-f16-full-sm_90a-auto)" in err
    with pytest.raises(SystemExit):
        aot.main(["build", "--out", "x", "--family", "sm80", "--bundles",
                  "fwd-d64-bf16-full-sm_90a-auto"])
    assert "(e.g. fwd-d64-f16-full-sm_90a)" in \
        capsys.readouterr().err


def test_aot_variants_include_alibi_and_alibi_shapes_is_obsolete(
        capsys, monkeypatch, tmp_path):
    """--variants builds the ALiBi kernels like the other variants (one per
    head dim, dtype and mask: full and causal, forward and backward; no
    heads or Nk - Nq in them); the old --alibi-shapes is accepted, hidden
    from --help, says it is obsolete and builds --variants."""
    from attn import aot
    built = []
    monkeypatch.setattr(aot, "build_pack",
                        lambda out, specs, log=None: built.append(specs))
    common = ["build", "--out", str(tmp_path / "p"), "--head-dims", "64,128",
              "--dtypes", "bf16", "--family", "sm80", "--backward", "on"]
    assert aot.main(common + ["--variants"]) == 0
    variants = built[-1]
    alibi = sorted((s.kind, s.head_dim, s.variant_info().name)
                   for s in variants if s.variant_info().alibi)
    assert alibi == [(kind, d, name) for kind in ("bwd", "fwd")
                     for d in (64, 128)
                     for name in ("causal-alibi", "full-alibi")]
    assert all(not hasattr(s, "alibi_heads") for s in variants)
    capsys.readouterr()
    assert aot.main(common + ["--alibi-shapes", "8:133,4:-200"]) == 0
    assert "--alibi-shapes is obsolete" in capsys.readouterr().err
    assert built[-1] == variants
    with pytest.raises(SystemExit):
        aot.main(["build", "--help"])
    assert "--alibi-shapes" not in capsys.readouterr().out


# --- backward kernels -----------------------------------------------------------

# attn-compile --backward's lookup tests' database (test/Tuning/
# lookup-backward.test): an "auto" entry (sm90a winner wg-m64n128s3-dqfirst,
# sm80 candidates too), sm80-mma entries (atomic and deterministic dQ), and
# an sm80 entry whose tile the kernel cannot take (block-m 48).
BWD_DB = REPO / "test" / "Tuning" / "Inputs" / "lookup-db-bwd.json"
BWD = KernelSpec("bwd", 64, 64, "bf16", True, "sm_90a", family="auto")
BWD_SHAPE = Shape(4, 2, 2, 1000, 1000)  # buckets 1024


def test_backward_tile_names_round_trip():
    for name in ("wg-m64n128s3-dqfirst", "wg-m64n128s2-dqpipe",
                 "wg-m64n128s4-dkfirst", "wg-m64n128s2-det", "m32n64r16s2"):
        fields = families.parse_tile(name)
        assert families.tile_name(**fields) == name
        assert cache.tile_name(**fields) == name
    assert families.parse_tile("wg-m64n128s3-dqfirst") == dict(
        family="sm90a", block_m=64, block_n=128, warp_rows=16, stages=3,
        schedule="dq-first", persistent=False)
    assert families.parse_tile("wg-m64n128s2-det")["schedule"] == \
        "deterministic"
    # attn-compile --backward's flags for each (lookupBackwardTile's).
    assert families.backward_tile_options(families.parse_tile(
        "wg-m64n128s3-dkfirst")) == ["--block-m", "64", "--block-n", "128",
                                     "--stages", "3", "--sm90-schedule",
                                     "dk-first"]
    assert families.backward_tile_options(families.parse_tile(
        "m32n64r16s2")) == ["--block-m", "32", "--block-n", "64"]
    with pytest.raises(ValueError, match=r"deterministic backward tile"):
        families.backward_tile_options(families.parse_tile(
            "wg-m64n128s2-det"))
    with pytest.raises(ValueError, match=r"tile: expected a name like"):
        families.parse_tile("wg-m64n128s3-dqlast")


def test_backward_tile_names_match_lib_tuning(lookup_lib, tmp_path):
    """TileChoice::name (through the lookup library) and attn.families
    name every sm90a backward dQ schedule alike."""
    for stages, schedule, deterministic in ((2, "dq-pipelined", False),
                                            (3, "dq-first", False),
                                            (4, "dk-first", False),
                                            (3, "deterministic", True)):
        e = json.loads(BWD_DB.read_text())["entries"][0]
        e["key"]["deterministic"] = deterministic
        e["winner"].update(stages=stages, schedule=schedule)
        db = write_db_v2(tmp_path / "db.json", [e])
        tile, why = tuning.lookup(BWD, BWD_SHAPE, "", 0, db, "test-compiler",
                                  deterministic=deterministic)
        assert tile == families.tile_name(64, 128, 16, stages, "sm90a",
                                          schedule), why


def test_backward_lookup_hits_and_misses(lookup_lib, monkeypatch):
    """Backward calls are looked up as attn-compile --backward does:
    direction bwd, the dQ mode's key (the op's: not deterministic); family
    auto on sm_90a the entry that tuned both (its sm90a winner), a named
    family its own key, else its fastest candidate in the "auto" entry."""
    monkeypatch.setattr(tuning, "kernel_compiler_version",
                        lambda: "test-compiler")

    def select(spec=BWD, shape=BWD_SHAPE, deterministic=False):
        return tuning.select(spec, shape, "Test GPU", 8, BWD_DB,
                             deterministic=deterministic)
    sel = select()
    assert sel.source == "tuning-db", sel.reason
    assert (sel.spec.tile, sel.spec.family) == ("wg-m64n128s3-dqfirst",
                                                "sm90a")
    assert sel.spec.name == ("bwd-d64-bf16-causal-sm_90a-sm90a-"
                             "wg-m64n128s3-dqfirst")
    assert sel.reason == (
        "family auto chose sm90a (chip sm_90a); hit: Test GPU (8 SMs): bwd "
        "bf16 d64 g1 causal q1024 kv1024 sm_90a auto compiler=test-compiler "
        "-> wg-m64n128s3-dqfirst")
    # Family sm80: its own key's winner, not the auto entry's.
    sel = select(dataclasses.replace(BWD, family="sm80"))
    assert (sel.source, sel.spec.tile, sel.spec.family) == (
        "tuning-db", "m32n64r16s2", "sm80")
    assert "sm_90a sm80-mma compiler=test-compiler -> m32n64r16s2" in \
        sel.reason
    # Family sm90a: no key of its own; the auto entry's fastest sm90a tile.
    sel = select(dataclasses.replace(BWD, family="sm90a"))
    assert sel.spec.tile == "wg-m64n128s3-dqfirst"
    assert "hit: the fastest sm90a-wgmma candidate of Test GPU" in sel.reason
    # Deterministic dQ is its own key.
    sel = select(dataclasses.replace(BWD, family="sm80"), deterministic=True)
    assert sel.spec.tile == "m64n64r16s2"
    assert "causal deterministic q1024" in sel.reason
    # Misses: the heuristic (family resolved), the lookup's reason.
    sel = select(dataclasses.replace(BWD, causal=False))
    assert (sel.source, sel.spec.tile, sel.spec.family) == (
        "heuristic", "", "sm90a")
    assert sel.reason == (
        "family auto chose sm90a (chip sm_90a); miss: no entry for bwd bf16 "
        "d64 g1 nomask q1024 kv1024 sm_90a auto compiler=test-compiler")
    sel = select(shape=Shape(4, 2, 2, 3000, 3000))
    assert "miss: no entry for sequence buckets q4096 kv4096" in sel.reason
    sel = select(deterministic=True)  # no deterministic auto entry
    assert sel.source == "heuristic" and "deterministic" in sel.reason
    sel = select(dataclasses.replace(BWD, family="sm90a", head_dim=20,
                                     value_head_dim=20))
    assert sel.reason.endswith(
        "miss: family sm90a has no backward kernel for this attention")
    # Forward calls never take a backward entry.
    sel = select(dataclasses.replace(BWD, kind="fwd", family="sm80"))
    assert sel.source == "heuristic" and "no entry for fwd" in sel.reason
    # Family auto off sm_90a: the sm80-mma key.
    sel = select(dataclasses.replace(BWD, chip="sm_80"))
    assert sel.source == "heuristic" and "sm_80 sm80-mma" in sel.reason
    # Backward specs are tunable keys, but tuning on first use is forward.
    assert tuning.untunable(BWD) is None
    assert "forward kernels only" in tuning.cannot_tune(BWD)


def _explain_backward(tool, args, db):
    """attn-compile --backward --explain's reason and manifest tile."""
    import subprocess
    done = subprocess.run(
        [str(tool), "--backward", "--tuning-db", str(db), "--emit",
         "manifest", "--no-cubin", "--explain"] + args,
        env=dict(os.environ, ATTN_COMPILER_VERSION="test-compiler"),
        capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    why = next(line for line in done.stderr.splitlines()
               if line.startswith("attn-compile: why: "))
    return why.split("': ", 1)[1], json.loads(done.stdout)["tile"]


@pytest.mark.parametrize("family, causal, seq, deterministic", [
    ("auto", True, 1000, False), ("sm80", True, 1000, False),
    ("sm90a", True, 1000, False), ("sm80", True, 1000, True),
    ("auto", False, 1000, False), ("sm80", True, 3000, False)])
def test_backward_lookup_agrees_with_attn_compile(lookup_lib, family, causal,
                                                  seq, deterministic):
    """The Python lookup and attn-compile --backward's (the same database,
    key and fallback) give the same reason and the same tile."""
    tool = lookup_lib / "bin" / "attn-compile"
    if not tool.is_file():
        pytest.skip("attn-compile not built")
    args = ["--family", family, "--head-dim", "64", "--heads-q", "2",
            "--seq-q", str(seq), "--dtype", "bf16"]
    args += ["--causal"] * causal + ["--deterministic"] * deterministic
    why, tile = _explain_backward(tool, args, BWD_DB)
    spec = dataclasses.replace(BWD, family=family, causal=causal)
    shape = Shape(1, 2, 2, seq, seq)
    got, reason = tuning.lookup(spec, shape, "", 0, BWD_DB, "test-compiler",
                                deterministic=deterministic)
    if got is None:
        assert why == reason and tile["source"] == "heuristic"
        return
    assert why == f"{reason} -> {got}" and tile["source"] == "tuning-db"
    want = families.parse_tile(got)
    assert (tile["block_m"], tile["block_n"], tile["stages"]) == (
        want["block_m"], want["block_n"], want["stages"])
    if want["family"] == "sm90a":
        assert tile["schedule"] == want["schedule"]


def test_tuned_backward_tiles_are_compiled_into_the_cache(compiler):
    """A tuned backward tile is compiled with attn-compile --backward's
    tile flags; the cache checks the manifest's tile (and dQ schedule)."""
    if not cache.backward_compiler_available():
        pytest.skip("attn-compile has no --backward")
    spec = dataclasses.replace(BWD, tile="wg-m64n128s4-dkfirst").resolved()
    path = KernelCache().get(spec, compiler.version(), cache.compile_spec)
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["family"] == "sm90a-wgmma"
    assert (manifest["tile"]["stages"], manifest["tile"]["schedule"]) == (
        4, "dk-first")
    assert manifest["tile"]["deterministic"] is False
    assert cache.manifest_tile_name(manifest) == "wg-m64n128s4-dkfirst"
    other = dataclasses.replace(spec, tile="wg-m64n128s4-dqfirst")
    assert cache.validate_kernel_dir(path, other) == \
        "manifest tile is wg-m64n128s4-dkfirst, not wg-m64n128s4-dqfirst"
    sm80 = dataclasses.replace(BWD, tile="m32n64r16s2").resolved()
    path = KernelCache().get(sm80, compiler.version(), cache.compile_spec)
    tile = json.loads((path / "manifest.json").read_text())["tile"]
    assert (tile["block_m"], tile["block_n"]) == (32, 64)
    # A tile the kernel cannot take fails to compile (the op then runs the
    # heuristic's kernel and says why).
    bad = dataclasses.replace(BWD, tile="m48n64r16s2").resolved()
    with pytest.raises(attn_errors.CompileError,
                       match=r"block-m of the backward kernel must be 32 "
                             r"or 64 \(got 48\)"):
        KernelCache().get(bad, compiler.version(), cache.compile_spec)


def test_tuned_backward_tile_not_in_the_pack(tmp_path, monkeypatch):
    """On the GPU host a tuned backward tile the pack lacks is not
    available, with a reason naming it (the op falls back to the
    heuristic's kernel, which the pack has)."""
    from attn import compiler
    monkeypatch.setattr(compiler, "available", lambda: False)
    monkeypatch.setenv("ATTN_KERNEL_PACK", str(tmp_path))
    spec = dataclasses.replace(BWD, tile="wg-m64n128s3-dqfirst").resolved()
    assert tuning.pack_bundle(spec, tmp_path) is None
    with pytest.raises(attn_errors.KernelNotAvailableError,
                       match=r"no bwd-d64-bf16-causal-sm_90a-sm90a-"
                             r"wg-m64n128s3-dqfirst kernel: .* has no valid "
                             r".*packs hold the heuristic's backward kernels, "
                             r"not tuned tiles"):
        cache.kernel_dir(spec)
