"""attn.compile / attn.opt / attn.tune through the compiler's C API
(attn-c/Compiler.h, JSON in and out, over ctypes)."""

import ctypes
import json

import pytest

from conftest import problem_mlir

import attn
from attn import cache, compiler as attn_compiler
from attn.cache import KernelSpec

BAD_RANK = """func.func @f(%q: tensor<4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
             %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  %o = attn.attention %q, %k, %v
      : tensor<4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
  return %o : tensor<1x4x128x64xf32>
}
"""


def test_version_is_the_release(compiler, monkeypatch):
    """Kernels and tuning entries are keyed by the release version
    (pyproject.toml, attn.__version__), not a commit."""
    monkeypatch.delenv("ATTN_COMPILER_VERSION", raising=False)
    assert attn.version() == attn.__version__
    assert attn.__version__.count(".") == 2


def test_compile_problem_to_ptx(compiler):
    k = attn.compile(batch=2, heads_q=4, heads_kv=2, seq_q=200, seq_kv=300,
                     head_dim=64, dtype="f16", causal=True, assemble=False)
    assert ".entry " + k.entry in k.ptx
    assert ".target sm_90a" in k.ptx
    assert k.cubin == b""
    assert k.problem["head_dim"] == 64 and k.problem["dtype"] == "f16"
    assert k.problem["causal"] is True
    assert k.problem["heads_q"] == 4 and k.problem["heads_kv"] == 2
    assert k.problem["scale"] == pytest.approx(64 ** -0.5)
    assert k.manifest["format"] == "attn-kernel/1"
    assert k.tile["block_m"] > 0


def test_compile_options_reach_the_kernel(compiler):
    k = attn.compile(head_dim=128, dtype="bf16", chip="sm_80", scale=0.25,
                     block_m=64, block_n=32, warp_rows=16, assemble=False)
    assert ".target sm_80" in k.ptx
    assert k.manifest["chip"] == "sm_80"
    assert k.problem["scale"] == pytest.approx(0.25)
    assert (k.tile["block_m"], k.tile["block_n"]) == (64, 32)
    assert k.tile["source"] == "option"


def test_compile_assembles_cubin_and_writes_directory(compiler, ptxas,
                                                      tmp_path):
    k = attn.compile(head_dim=64, dtype="bf16", ptxas=ptxas)
    assert k.cubin[:4] == b"\x7fELF"
    out = k.write(tmp_path / "kern")
    assert json.loads((out / "manifest.json").read_text()) == k.manifest
    assert (out / "kernel.ptx").read_text() == k.ptx
    assert (out / "kernel.cubin").read_bytes() == k.cubin


def test_family_defaults_to_auto(compiler, tmp_path):
    """attn.compile and attn.tune default to family auto, as attn-compile,
    the PyTorch op and attn.aot do: sm90a on sm_90a where it implements the
    attention, else sm80."""
    hopper = attn.compile(head_dim=128, chip="sm_90a", assemble=False)
    assert hopper.manifest["family"] == "sm90a-wgmma"
    ampere = attn.compile(head_dim=128, chip="sm_80", assemble=False)
    assert ampere.manifest["family"] == "sm80-mma"
    text = attn.attention_mlir(head_dim=128)
    assert attn.compile(text, assemble=False).manifest["family"] == \
        "sm90a-wgmma"


def test_ptx_only_kernel_directory(compiler, tmp_path):
    """Without ptxas (assemble=False, or no CUDA toolkit) a kernel is PTX
    only: the manifest names no cubin, the directory is a valid cache entry
    and the runtime hands the PTX to the driver's JIT."""
    k = attn.compile(head_dim=64, dtype="bf16", family="sm80",
                     assemble=False)
    out = k.write(tmp_path / "ptx-only")
    assert sorted(p.name for p in out.iterdir()) == ["kernel.ptx",
                                                     "manifest.json"]
    assert "cubin" not in json.loads((out / "manifest.json").read_text())
    spec = KernelSpec("fwd", 64, 64, "bf16", False, "sm_90a")
    assert cache.validate_kernel_dir(out, spec) is None


def test_compile_backward_writes_a_directory(compiler, tmp_path):
    out = attn.compile_backward(out=tmp_path / "bwd", head_dim=64,
                                dtype="bf16", family="sm80", assemble=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["direction"] == "backward"
    assert (out / "kernel.ptx").read_text().count(".entry ") >= 2
    with pytest.raises(attn.CompileError, match="head"):
        attn.compile_backward(out=tmp_path / "bad", head_dim=0)


def test_c_api_errors_are_results(compiler):
    """Every failure of the C API is an {"error": ...} result naming the
    field at fault, never an abort."""
    with pytest.raises(attn.CompileError, match="'head_dim' must be an "
                                                "integer"):
        attn_compiler._call("Compile", {"head_dim": "64"})
    with pytest.raises(attn.CompileError, match="'only' must be a list"):
        attn_compiler._call("TuneBundle", {"mlir": "", "dir": "x",
                                           "only": "m64n64r16s2"})
    with pytest.raises(attn.CompileError, match="'dir'.*is required"):
        attn_compiler._call("WriteKernel", {"ptx": ""})
    lib = attn_compiler._library()
    for request in (b"not json", b"[1, 2]"):
        result = lib.attnCompilerOpt(request)
        try:
            reply = json.loads(ctypes.string_at(result).decode())
        finally:
            lib.attnFreeString(result)
        assert reply["error"].startswith(("the request is not JSON",
                                          "the request must be a JSON "
                                          "object"))
    with pytest.raises(TypeError, match="heads_q must be an integer"):
        attn.compile(heads_q=2.5, assemble=False)


@pytest.mark.parametrize("function,request_,field", [
    # The backward has no bias: it used to compile one without.
    ("CompileBackward", {"bias": "bh"}, "bias"),
    # Each direction's own options.
    ("CompileBackward", {"tuning_db": "db.json"}, "tuning_db"),
    ("Compile", {"deterministic": True}, "deterministic"),
    ("Compile", {"head_dims": 128}, "head_dims"),
    ("AttentionModule", {"bias": "bh"}, "bias"),
    ("Opt", {"mlir": "", "pipeline": "", "pipline": "x"}, "pipline"),
    ("WriteKernel", {"dir": "x", "cubin64": ""}, "cubin64"),
    ("TuneBundle", {"mlir": "", "dir": "x", "block_m": 64}, "block_m"),
    ("Version", {"verbose": True}, "verbose"),
])
def test_c_api_refuses_unknown_fields(compiler, tmp_path, function,
                                      request_, field):
    """A field a request does not take is an error naming it and the
    request, before anything is compiled or written, not ignored."""
    out = tmp_path / "out"
    if "dir" in request_ or function == "CompileBackward":
        request_ = dict(request_, dir=str(out))
    with pytest.raises(attn.CompileError,
                       match=rf"^{function}: unknown field '{field}' "
                             r"\(known: "):
        attn_compiler._call(function, request_)
    assert not out.exists()


def test_c_api_problem_fields_do_not_apply_to_mlir(compiler):
    """With "mlir" the module's attention is the problem: a problem field
    next to it would be ignored."""
    with pytest.raises(attn.CompileError,
                       match="'head_dim' does not apply with 'mlir'"):
        attn_compiler._call("Compile", {"mlir": problem_mlir(),
                                        "head_dim": 128, "assemble": False})


def test_compile_from_mlir_text(compiler):
    text = problem_mlir()
    assert "attn.attention" in text
    k = attn.compile(text, assemble=False)
    assert k.problem["seq_kv"] == 96 and k.problem["heads_kv"] == 1
    assert ".entry" in k.ptx


def test_opt_round_trip(compiler):
    text = problem_mlir()
    once = attn.opt(text, "")
    assert attn.opt(once, "") == once
    assert "attn.attention" in once


def test_opt_runs_a_pipeline(compiler):
    tiled = attn.opt(problem_mlir(), "attn-tile{block-m=32 block-n=32}")
    assert "scf.for" in tiled or "scf.forall" in tiled
    anchored = attn.opt(problem_mlir(), "builtin.module(attn-tile)")
    assert "attn.attention " not in anchored.replace("attn.attention_", "")


def test_opt_unknown_pass_is_an_error(compiler):
    with pytest.raises(attn.CompileError,
                       match=r"invalid pass pipeline 'no-such-pass'.*"
                             r"no-such-pass"):
        attn.opt(problem_mlir(), "no-such-pass")


def test_opt_bad_option_is_an_error(compiler):
    with pytest.raises(attn.CompileError, match="no-such-option"):
        attn.opt(problem_mlir(), "attn-tile{no-such-option=1}")


def test_parse_error_has_line_and_column(compiler):
    text = "func.func @f() {\n  %x = arith.constant 1 : i32\n  %y = bogus\n}\n"
    with pytest.raises(attn.CompileError) as info:
        attn.opt(text, "")
    message = str(info.value)
    assert "cannot parse the MLIR input" in message
    assert "<input>:3:" in message


def test_verifier_error_has_line_and_column(compiler):
    with pytest.raises(attn.CompileError) as info:
        attn.opt(BAD_RANK, "")
    message = str(info.value)
    assert "<input>:3:8: error:" in message
    assert "expected query to have rank 4, got rank 3" in message


def test_compile_error_carries_diagnostics(compiler):
    with pytest.raises(attn.CompileError, match=r"<input>:3:8: error"):
        attn.compile(BAD_RANK, assemble=False)


@pytest.mark.parametrize("kwargs, message", [
    (dict(head_dim=0), "head"),
    (dict(heads_q=3, heads_kv=2), "heads"),
    (dict(seq_q=-1), "seq"),
])
def test_bad_shape_names_the_argument(compiler, kwargs, message):
    with pytest.raises(attn.CompileError, match=message):
        attn.compile(assemble=False, **kwargs)


def test_bad_dtype_is_named(compiler):
    with pytest.raises(attn.CompileError, match=r"dtype.*'fp8'"):
        attn.compile(dtype="fp8", assemble=False)
    with pytest.raises(attn.CompileError, match="f32"):
        attn.compile(dtype="f32", assemble=False)


def test_mlir_must_be_text(compiler):
    with pytest.raises(TypeError):
        attn.compile(b"not text")
    with pytest.raises(TypeError):
        attn.opt(None, "")


def test_tune_writes_a_bundle(compiler, ptxas, tmp_path):
    bundle = attn.tune(out=tmp_path / "bundle", head_dim=64, dtype="bf16",
                       seq_q=1024, only=["m64n64r16s2"], jobs=1, ptxas=ptxas)
    index = json.loads((tmp_path / "bundle" / "bundle.json").read_text())
    assert bundle.candidates >= 1
    assert index["format"] == "attn-tune-bundle"
    assert bundle.command("db.json")[-3:] == ["--db", "db.json",
                                              str(tmp_path / "bundle")]
    assert index["family"] == "auto"  # attn.tune's default family


def test_tune_bundle_of_family_auto(compiler, ptxas, tmp_path):
    """family='auto' on sm_90a: both families' candidates and the "auto"
    key family (attn-compile --tune-bundle --family auto); the heuristic
    mark follows default_family."""
    only = ["wg-m128n128s2", "m128n64r16s2"]
    bundle = attn.tune(out=tmp_path / "auto", head_dim=64, dtype="bf16",
                       chip="sm_90a", family="auto", only=only, jobs=1,
                       ptxas=ptxas)
    index = json.loads((tmp_path / "auto" / "bundle.json").read_text())
    assert index["family"] == "auto" and index["chip"] == "sm_90a"
    dirs = {c["dir"]: c for c in index["candidates"]}
    assert set(only) <= set(dirs) and bundle.candidates == len(dirs)
    assert dirs["wg-m128n128s2"]["family"] == "sm90a-wgmma"
    assert all(c["family"] == "sm90a-wgmma" for c in dirs.values()
               if c["heuristic"])
    attn.tune(out=tmp_path / "sm80", head_dim=64, dtype="bf16",
              chip="sm_90a", family="auto", default_family="sm80",
              only=only, jobs=1, ptxas=ptxas)
    index = json.loads((tmp_path / "sm80" / "bundle.json").read_text())
    assert index["family"] == "auto"
    assert all(c["family"] == "sm80-mma" for c in index["candidates"]
               if c["heuristic"])
    # Off sm_90a, auto is the sm80 space and key.
    attn.tune(out=tmp_path / "a100", head_dim=64, dtype="bf16",
              chip="sm_80", family="auto", only=["m128n64r16s2"], jobs=1,
              ptxas=ptxas)
    index = json.loads((tmp_path / "a100" / "bundle.json").read_text())
    assert index["family"] == "sm80-mma"
    with pytest.raises(attn.CompileError, match=r"family: expected 'sm80', "
                                                r"'sm90a' or 'auto'"):
        attn.tune(out=tmp_path / "bad", family="sm100", ptxas=ptxas)
    with pytest.raises(attn.CompileError, match=r"default_family: expected"):
        attn.tune(out=tmp_path / "bad", family="auto",
                  default_family="x", ptxas=ptxas)


def test_key_range_kernels_take_the_ranges(compiler, tmp_path):
    """key_range=True: forward and backward kernels whose parameters end
    with key_start/key_end (before the sm90a tensor maps)."""
    for family in ("sm80", "sm90a"):
        k = compiler.compile(head_dim=64, causal=True, family=family,
                             key_range=True, assemble=False)
        names = [p["name"] for p in k.manifest["params"]]
        assert "_kr" in k.entry and k.manifest["problem"]["key_starts"] == [0]
        assert names.index("key_end") == names.index("key_start") + 1
        out = compiler.compile_backward(out=tmp_path / family, head_dim=64,
                                        causal=True, family=family,
                                        key_range=True, assemble=False)
        manifest = json.loads((out / "manifest.json").read_text())
        assert [p["name"] for p in manifest["params"]][41:43] == [
            "key_start", "key_end"]


@pytest.mark.parametrize("mask", [
    dict(causal=True),
    dict(causal=True, mask_align="top_left"),
    dict(window=(32, -1)),
    dict(window=(32, 8), mask_align="top_left"),
    dict(window=(-1, 16)),
    dict(softcap=30.0),
])
def test_backward_family_auto_as_the_compiler(compiler, tmp_path, mask):
    """attn.families.resolve (the GPU host's restatement of the rules)
    picks the backward family the compiler's `auto` picks, mask by mask:
    sm90a for every band and for the softcap."""
    from attn import families, variants
    v = variants.make_variant(**mask)
    spec = KernelSpec("bwd", 64, 64, "bf16", v.causal, "sm_90a",
                      variant=v.key, family="auto")
    window_left, window_right = (mask.get("window") or (-1, -1))
    out = compiler.compile_backward(
        out=tmp_path / "bwd", head_dim=64, causal=v.causal,
        top_left=mask.get("mask_align") == "top_left",
        window_left=window_left, window_right=window_right,
        softcap=mask.get("softcap", 0.0), family="auto", assemble=False)
    manifest = json.loads((out / "manifest.json").read_text())
    expected = "sm90a"
    assert families.resolve(spec) == expected
    assert manifest["family"].startswith(expected + "-")
