"""The kernel cache (attn.cache) and AOT packs (attn.aot)."""

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON_DIR

import attn
from attn import aot, cache
from attn.cache import KernelCache, KernelSpec

SPEC = KernelSpec("fwd", 64, 64, "bf16", True, "sm_90a")


def _no_ptxas(monkeypatch):
    # PTX is enough for the cache; skipping ptxas keeps the tests fast.
    from attn import compiler
    real = compiler.compile
    monkeypatch.setattr(compiler, "compile",
                        lambda *a, **kw: real(*a, assemble=False, **kw))


def test_spec_names_are_distinct():
    names = {KernelSpec(kind, d, d, t, c, "sm_90a").name
             for kind in ("fwd", "bwd") for d in (64, 128) for t in
             ("f16", "bf16") for c in (False, True)}
    assert len(names) == 16
    # No scale: it is a launch argument, one kernel serves every scale.
    assert SPEC.name == "fwd-d64-bf16-causal-sm_90a"


def test_cache_builds_then_hits(compiler, monkeypatch, tmp_path):
    _no_ptxas(monkeypatch)
    c = KernelCache(tmp_path / "c")
    first = c.get(SPEC, "v1", cache.compile_spec)
    second = c.get(SPEC, "v1", cache.compile_spec)
    assert first == second
    assert c.events == [("built", SPEC.name), ("hit", SPEC.name)]
    assert cache.validate_kernel_dir(first, SPEC) is None
    # Only the entry: no temporary folder left behind.
    assert [p.name for p in c.kernels.iterdir()] == [first.name]


def test_compiler_version_is_part_of_the_key(tmp_path):
    c = KernelCache(tmp_path)
    assert c.entry_path(SPEC, "v1") != c.entry_path(SPEC, "v2")
    assert c.entry_path(SPEC, "v1") != c.entry_path(
        KernelSpec("fwd", 64, 64, "bf16", False, "sm_90a"), "v1")


@pytest.mark.parametrize("damage", ["manifest", "ptx", "key", "problem"])
def test_corrupt_entry_is_rebuilt(compiler, monkeypatch, tmp_path, damage):
    _no_ptxas(monkeypatch)
    c = KernelCache(tmp_path / "c")
    path = c.get(SPEC, "v1", cache.compile_spec)
    if damage == "manifest":
        (path / "manifest.json").write_text("{ truncated")
    elif damage == "ptx":
        (path / "kernel.ptx").write_text("")
    elif damage == "key":
        (path / "key.json").unlink()
    else:
        m = json.loads((path / "manifest.json").read_text())
        m["problem"]["head_dim"] = 128
        (path / "manifest.json").write_text(json.dumps(m))
    again = c.get(SPEC, "v1", cache.compile_spec)
    assert again == path
    assert c.events[-1] == ("rebuilt", SPEC.name)
    assert cache.validate_kernel_dir(again, SPEC) is None
    assert [p.name for p in c.kernels.iterdir()] == [path.name]


def test_failed_build_leaves_nothing(tmp_path):
    c = KernelCache(tmp_path / "c")

    def broken(spec, directory):
        (directory / "manifest.json").write_text("{}")
        raise attn.CompileError("boom")

    with pytest.raises(attn.CompileError, match="boom"):
        c.get(SPEC, "v1", broken)
    assert list(c.kernels.iterdir()) == []


def test_invalid_build_is_reported(tmp_path):
    c = KernelCache(tmp_path / "c")
    with pytest.raises(attn.CompileError, match="not valid: manifest.json"):
        c.get(SPEC, "v1", lambda spec, d: None)


_CHILD = """
import sys
sys.path.insert(0, {python!r})
from attn import cache, compiler
real = compiler.compile
compiler.compile = lambda *a, **kw: real(*a, assemble=False, **kw)
c = cache.KernelCache({root!r})
spec = cache.KernelSpec("fwd", 64, 64, "bf16", True, "sm_90a")
path = c.get(spec, compiler.version(), cache.compile_spec)
print(c.events[-1][0], path)
"""


def _child(root):
    code = _CHILD.format(python=str(PYTHON_DIR), root=str(root))
    return subprocess.Popen([sys.executable, "-c", code],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ))


def test_second_process_reuses_the_entry(compiler, tmp_path):
    first = _child(tmp_path)
    out1, err1 = first.communicate(timeout=300)
    assert first.returncode == 0, err1
    second = _child(tmp_path)
    out2, err2 = second.communicate(timeout=300)
    assert second.returncode == 0, err2
    assert out1.split()[0] == "built" and out2.split()[0] == "hit"
    assert out1.split()[1] == out2.split()[1]


def test_concurrent_processes_agree(compiler, tmp_path):
    children = [_child(tmp_path) for _ in range(2)]
    results = [c.communicate(timeout=300) for c in children]
    for c, (_, err) in zip(children, results):
        assert c.returncode == 0, err
    paths = {out.split()[1] for out, _ in results}
    assert len(paths) == 1
    entries = list((tmp_path / "kernels").iterdir())
    assert [p.name for p in entries] == [Path(paths.pop()).name]


def test_pack_build_and_lookup(compiler, monkeypatch, tmp_path):
    _no_ptxas(monkeypatch)
    pack = tmp_path / "pack"
    index = aot.build_pack(pack, [SPEC], log=open(os.devnull, "w"))
    assert index["format"] == cache.PACK_FORMAT
    assert [e["name"] for e in index["kernels"]] == [SPEC.name]
    assert cache.find_in_pack(SPEC, pack) == pack / SPEC.name
    other = KernelSpec("fwd", 128, 128, "bf16", True, "sm_90a")
    assert cache.find_in_pack(other, pack) is None
    # kernel_dir prefers the pack and compiles nothing.
    monkeypatch.setenv("ATTN_KERNEL_PACK", str(pack))
    monkeypatch.setattr(cache, "compile_spec", None)
    assert cache.kernel_dir(SPEC) == pack / SPEC.name


def test_no_compiler_and_no_pack_is_a_clear_error(monkeypatch, tmp_path):
    from attn import compiler
    monkeypatch.setattr(compiler, "available", lambda: False)
    with pytest.raises(attn.KernelNotAvailableError,
                       match=r"no fwd-d64-bf16-causal.*ATTN_KERNEL_PACK is "
                             r"not set.*python -m attn.aot build"):
        cache.kernel_dir(SPEC)
    monkeypatch.setenv("ATTN_KERNEL_PACK", str(tmp_path))
    with pytest.raises(attn.KernelNotAvailableError,
                       match=f"the kernel pack {tmp_path} has no valid"):
        cache.kernel_dir(SPEC)


def test_aot_command_line(compiler, tmp_path):
    out = tmp_path / "pack"
    done = subprocess.run(
        [sys.executable, "-m", "attn.aot", "build", "--out", str(out),
         "--head-dims", "64", "--dtypes", "f16", "--masks", "full",
         "--backward", "off"], cwd=PYTHON_DIR, capture_output=True, text=True,
        timeout=300)
    assert done.returncode == 0, done.stderr
    index = json.loads((out / "pack.json").read_text())
    # The op's default family, auto: the wgmma kernel on sm_90a.
    assert [e["name"] for e in index["kernels"]] == [
        "fwd-d64-f16-full-sm_90a-sm90a"]
    assert index["kernels"][0]["family"] == "sm90a"
    done = subprocess.run(
        [sys.executable, "-m", "attn.aot", "build", "--out", str(out),
         "--head-dims", "64", "--dtypes", "f16", "--masks", "full",
         "--backward", "off", "--family", "sm80"], cwd=PYTHON_DIR,
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    index = json.loads((out / "pack.json").read_text())
    assert sorted(e["name"] for e in index["kernels"]) == [
        "fwd-d64-f16-full-sm_90a",
        "fwd-d64-f16-full-sm_90a-sm90a"]
    # --key-range: each kernel's key_range form too, found by its spec.
    done = subprocess.run(
        [sys.executable, "-m", "attn.aot", "build", "--out", str(out),
         "--head-dims", "64", "--dtypes", "f16", "--masks", "causal",
         "--backward", "on", "--family", "sm80", "--key-range"],
        cwd=PYTHON_DIR, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    index = json.loads((out / "pack.json").read_text())
    kr = sorted(e["name"] for e in index["kernels"] if "-kr" in e["name"])
    assert len(kr) == 2 and kr[0].startswith("bwd-") and \
        kr[1].startswith("fwd-"), kr
    spec = KernelSpec("fwd", 64, 64, "f16", True, "sm_90a", family="sm80",
                      key_range=True).resolved()
    assert cache.find_in_pack(spec, out) == out / spec.name
    manifest = json.loads((out / spec.name / "manifest.json").read_text())
    assert "key_starts" in manifest["problem"]
    bad = subprocess.run(
        [sys.executable, "-m", "attn.aot", "build", "--out", str(out),
         "--dtypes", "f32"], cwd=PYTHON_DIR, capture_output=True, text=True)
    assert bad.returncode == 2 and "--dtypes: 'f32'" in bad.stderr


def test_aot_backward_specs_cover_what_the_backward_takes():
    """The pack's backward kernels: every head dim a GPU backward takes
    (padded ones included), every variant's too (masks, softcap, ALiBi);
    the head dims left out are named, never dropped silently."""
    specs = aot.default_specs((80, 128, 256), ("bf16",), ("causal",),
                              backward=True)
    assert sorted((s.kind, s.head_dim) for s in specs) == [
        ("bwd", 80), ("bwd", 128), ("bwd", 256), ("fwd", 80), ("fwd", 128),
        ("fwd", 256)]
    assert aot.backward_left_out((80, 128, 256)) == []
    assert aot.backward_left_out((20, 264)) == [
        "head dim 264: attn's GPU backward kernels take multiples of 8 up "
        "to 256"]
    variants = aot.variant_specs((64,), ("bf16",), backward=True)
    backward = sorted(s.variant_info().name for s in variants
                      if s.kind == "bwd")
    assert backward == ["causal-alibi", "causal-cap30", "causal-tl",
                        "full-alibi", "full-cap30", "win32_32-tl", "win64_0"]
    forward = sorted(s.variant_info().name for s in variants
                     if s.kind == "fwd")
    assert forward == backward
    assert all(s.family == "sm80" for s in variants)


def test_aot_builds_the_head_dims_the_op_launches():
    """--head-dims takes D or Dqk:Dv, and the pack holds the kernels the op
    launches for them (families.kernel_head_dims): D = 20 pads to 24 in
    both directions, 192:128's backward runs at 192 (its operands
    zero-padded), and a head dim two entries share is built once; the
    build says so."""
    dims = aot._head_dims("20,192:128,24,64")
    assert dims == [20, (192, 128), 24, 64]
    specs = aot.default_specs(dims, ("bf16",), ("causal",), backward=True)
    assert [s.name for s in specs] == [
        "fwd-d24-bf16-causal-sm_90a", "fwd-d192v128-bf16-causal-sm_90a",
        "fwd-d64-bf16-causal-sm_90a", "bwd-d24-bf16-causal-sm_90a",
        "bwd-d192-bf16-causal-sm_90a", "bwd-d64-bf16-causal-sm_90a"]
    auto = aot.default_specs(dims, ("bf16",), ("causal",), backward=True,
                             family="auto")
    assert [s.name for s in auto if s.kind == "bwd"] == [
        "bwd-d24-bf16-causal-sm_90a-auto",
        "bwd-d192v128-bf16-causal-sm_90a-auto",
        "bwd-d64-bf16-causal-sm_90a-auto"]
    assert aot.padded_head_dims(dims, backward=True) == [
        "head dim 20: its forward kernels are those of 24 (the op "
        "zero-pads the operands to it)",
        "head dim 20: its backward kernels are those of 24 (the op "
        "zero-pads the operands to it)",
        "head dims 192:128: its backward kernels are those of 192 (the op "
        "zero-pads the operands to it)"]
    assert aot.padded_head_dims(dims, backward=True, family="auto") == \
        aot.padded_head_dims(dims, backward=True)[:2]
    assert aot.padded_head_dims(dims) == aot.padded_head_dims(
        dims, backward=True)[:1]
    variants = aot.variant_specs((20, 24), ("bf16",))
    assert {s.head_dim for s in variants} == {24}
    assert len(variants) == len(aot.variant_forms())
    for bad in ("1:2:3", "x", "0", "64:"):
        bad_run = subprocess.run(
            [sys.executable, "-m", "attn.aot", "build", "--out", "/tmp/x",
             "--head-dims", bad], cwd=PYTHON_DIR, capture_output=True,
            text=True)
        assert bad_run.returncode == 2, bad
        assert "--head-dims" in bad_run.stderr and repr(bad) in \
            bad_run.stderr, bad_run.stderr


def test_aot_pack_holds_the_kernels_the_op_asks_for(compiler, tmp_path,
                                                   monkeypatch):
    """A pack built for head dims 20 and 192:128 holds every kernel the
    op's calls at those head dims ask for (attn.torch's own spec of the
    padded operands, the backward's included), found by name."""
    import torch
    from attn import families
    from attn import torch as attn_torch
    out = tmp_path / "pack"
    done = subprocess.run(
        [sys.executable, "-m", "attn.aot", "build", "--out", str(out),
         "--head-dims", "20,192:128", "--dtypes", "bf16", "--masks",
         "causal", "--backward", "on"], cwd=PYTHON_DIR, capture_output=True,
        text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "head dim 20: its forward kernels are those of 24" in done.stdout
    monkeypatch.setattr(attn_torch, "_family", "auto")
    for d, dv in ((20, 20), (192, 128)):
        q = torch.zeros(1, 2, 4, d, dtype=torch.bfloat16, device="meta")
        v = torch.zeros(1, 2, 4, dv, dtype=torch.bfloat16, device="meta")
        for kind in ("fwd", "bwd"):
            # As explain: padded to multiples of 8, the backward at the
            # wider head dim unless its family takes Dqk != Dv.
            ops = attn_torch._kernel_operands(q, q, v, backward=False)
            spec, _ = attn_torch._spec_and_shape(kind, *ops, True, None, "",
                                                 "sm_90a")
            if (kind == "bwd" and d != dv and
                    not families.backward_takes_unequal_head_dims(spec)):
                ops = attn_torch._kernel_operands(q, q, v, backward=True)
                spec, _ = attn_torch._spec_and_shape(kind, *ops, True, None,
                                                     "", "sm_90a")
            spec = spec.resolved()
            assert cache.find_in_pack(spec, out) == out / spec.name, (
                d, dv, kind, spec.name)


def test_backward_family_auto_compiles_the_sm90a_kernel(compiler):
    """A backward spec of family auto resolves as attn-compile --backward
    --family auto does: the sm90a dkdv kernel on sm_90a (D 32 and 128,
    deterministic 256 here), the sm80 kernels elsewhere (sm_80); the cache
    validates the manifest's family."""
    if not cache.backward_compiler_available():
        pytest.skip("attn-compile has no --backward")
    for d, det, chip, family in ((128, False, "sm_90a", "sm90a"),
                                 (32, False, "sm_90a", "sm90a"),
                                 (256, True, "sm_90a", "sm90a"),
                                 (64, False, "sm_80", "sm80")):
        spec = KernelSpec("bwd", d, d, "bf16", True, chip,
                          family="auto", deterministic=det).resolved()
        assert spec.family == family
        path = KernelCache().get(spec, compiler.version(), cache.compile_spec)
        manifest = json.loads((path / "manifest.json").read_text())
        assert manifest["direction"] == "backward"
        assert manifest["family"].startswith(family), manifest["family"]
    other = dataclasses.replace(spec, family="sm90a")
    assert "manifest family is 'sm80-mma'" in cache.validate_kernel_dir(
        path, other)


# --- hostile cache entries (issue 21): every damage is a rebuild, not a hit

_PTX = (".version 8.0\n.target sm_90a\n.address_size 64\n\n"
        ".visible .entry attn_fwd_test(\n\t.param .u64 p0\n)\n{\n\tret;\n}\n")


def _fake_build(spec, directory):
    """A kernel directory validate_kernel_dir accepts, without a compiler."""
    manifest = {"format": "attn-kernel/1", "entry": "attn_fwd_test",
                "family": "sm80-mma", "chip": spec.chip, "ptx": "kernel.ptx",
                "cubin": "kernel.cubin",
                "problem": {"head_dim": spec.head_dim,
                            "value_head_dim": spec.value_head_dim,
                            "dtype": spec.dtype, "causal": spec.causal},
                "grid": {"policy": "query_tiles", "block_rows": 64}}
    (directory / "manifest.json").write_text(json.dumps(manifest))
    (directory / "kernel.ptx").write_text(_PTX)
    (directory / "kernel.cubin").write_bytes(b"\x7fELF" + bytes(range(256)))


def _damage(path, how):
    ptx, cubin = path / "kernel.ptx", path / "kernel.cubin"
    if how == "random-ptx":  # same size, other bytes
        ptx.write_bytes(os.urandom(ptx.stat().st_size))
    elif how == "truncated-ptx":
        ptx.write_bytes(ptx.read_bytes()[:len(_PTX) // 2])
    elif how == "garbage-cubin":
        cubin.write_bytes(os.urandom(cubin.stat().st_size))
    elif how == "renamed-entry":  # the manifest names another kernel
        m = json.loads((path / "manifest.json").read_text())
        m["entry"] = "attn_fwd_other"
        (path / "manifest.json").write_text(json.dumps(m))
    elif how == "added-file":
        (path / "kernel.cubin.orig").write_bytes(b"\x7fELF")
    elif how == "removed-cubin":
        cubin.unlink()
        m = json.loads((path / "manifest.json").read_text())
        del m["cubin"]
        (path / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("how", ["random-ptx", "truncated-ptx",
                                 "garbage-cubin", "renamed-entry",
                                 "added-file", "removed-cubin"])
def test_damaged_entry_is_rebuilt(tmp_path, how):
    c = KernelCache(tmp_path / "c")
    path = c.get(SPEC, "v1", _fake_build)
    assert c.get(SPEC, "v1", _fake_build) == path
    assert c.events[-1] == ("hit", SPEC.name)
    _damage(path, how)
    assert c.get(SPEC, "v1", _fake_build) == path
    assert c.events[-1] == ("rebuilt", SPEC.name)
    assert (path / "kernel.ptx").read_text() == _PTX
    assert c._check_entry(path, SPEC, "v1") is None


def test_entry_records_its_name_and_file_hashes(tmp_path):
    c = KernelCache(tmp_path / "c")
    path = c.get(SPEC, "v1", _fake_build)
    record = json.loads((path / "key.json").read_text())
    assert record["name"] == path.name
    assert record["files"] == {
        name: hashlib.sha256((path / name).read_bytes()).hexdigest()
        for name in ("kernel.cubin", "kernel.ptx", "manifest.json")}


def test_entry_moved_to_another_name_is_rebuilt(tmp_path):
    """A copy of an entry under another entry's name (key.json and all,
    its key rewritten for that name) is not that entry."""
    c = KernelCache(tmp_path / "c")
    path = c.get(SPEC, "v1", _fake_build)
    other = c.entry_path(SPEC, "v2")
    shutil.copytree(path, other)
    record = json.loads((other / "key.json").read_text())
    record["compiler_version"] = "v2"
    (other / "key.json").write_text(json.dumps(record))
    assert "renamed" in c._check_entry(other, SPEC, "v2")
    assert c.get(SPEC, "v2", _fake_build) == other
    assert c.events[-1] == ("rebuilt", SPEC.name)


def test_entry_with_grid_formulas_is_rebuilt(tmp_path):
    """An entry an older compiler of the same version wrote, whose manifest
    gives the grid as formulas (which the runtime no longer reads), is
    rebuilt, not handed to the runtime to fail at load."""
    c = KernelCache(tmp_path / "c")
    path = c.get(SPEC, "v1", _fake_build)
    m = json.loads((path / "manifest.json").read_text())
    m["grid"] = {"x": "ceil(seq_q / 64)", "y": "batch * heads_q", "z": "1"}
    (path / "manifest.json").write_text(json.dumps(m))
    record = json.loads((path / "key.json").read_text())
    record["files"] = cache._file_hashes(path)  # consistent, only stale
    (path / "key.json").write_text(json.dumps(record))
    assert cache.validate_kernel_dir(path, SPEC) == (
        "manifest grid policy is None, not one of query_tiles, "
        "length_major, persistent, key_tiles (an older compiler's grid "
        "formulas?)")
    assert c.get(SPEC, "v1", _fake_build) == path
    assert c.events[-1] == ("rebuilt", SPEC.name)
    assert json.loads((path / "manifest.json").read_text())["grid"] == {
        "policy": "query_tiles", "block_rows": 64}


def test_pack_kernel_files_are_checked(tmp_path):
    """A pack has no key.json: its PTX must define the manifest's entry and
    its cubin be an ELF file."""
    d = tmp_path / SPEC.name
    d.mkdir()
    _fake_build(SPEC, d)
    assert cache.find_in_pack(SPEC, tmp_path) == d
    (d / "kernel.cubin").write_bytes(b"garbage")
    assert cache.validate_kernel_dir(d, SPEC) == "the cubin is not an ELF file"
    _fake_build(SPEC, d)
    (d / "kernel.ptx").write_text(_PTX.replace("attn_fwd_test", "other"))
    assert cache.validate_kernel_dir(d, SPEC) == \
        "the PTX defines no entry 'attn_fwd_test'"


@pytest.mark.parametrize("name", ["manifest.json", "key.json", "kernel.ptx"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_hostile_entry_files_do_not_hang(tmp_path, name, kind):
    """A FIFO (or /dev/zero) in place of an entry's file is a bad entry,
    rebuilt, not a read that blocks (or runs out of memory); checked in a
    child process so that a hang is a failure, not a stuck test run."""
    c = KernelCache(tmp_path / "c")
    path = c.get(SPEC, "v1", _fake_build)
    (path / name).unlink()
    if kind == "fifo":
        os.mkfifo(path / name)
    else:
        (path / name).symlink_to("/dev/zero")
    code = ("import sys; from pathlib import Path; "
            "sys.path.insert(0, sys.argv[1]); "
            "from attn.cache import KernelCache, KernelSpec; "
            "print(KernelCache(sys.argv[2])._check_entry(Path(sys.argv[3]), "
            f"KernelSpec(*{dataclasses.astuple(SPEC)!r}), 'v1'))")
    done = subprocess.run([sys.executable, "-c", code, str(PYTHON_DIR),
                           str(tmp_path / "c"), str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "not a regular file" in done.stdout
    assert c.get(SPEC, "v1", _fake_build) == path
    assert c.events[-1] == ("rebuilt", SPEC.name)


def test_first_use_compile_is_logged_once(tmp_path, caplog):
    """A build logs one line with the kernel and the time; a hit logs
    nothing."""
    c = KernelCache(tmp_path / "c")
    with caplog.at_level("INFO", logger="attn.cache"):
        c.get(SPEC, "v1", _fake_build)
        c.get(SPEC, "v1", _fake_build)
    lines = [r.getMessage() for r in caplog.records if r.name == "attn.cache"]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"compiled {SPEC.name} (built) in ")
    assert lines[0].endswith(" s")
