"""The mask/score_mod variants of attn.torch.attention without PyTorch:
argument validation (each error names the argument), the canonical form
and op key, the backward family every variant resolves to, and the kernels
the cache compiles for them through the bindings (forward and backward;
ALiBi's kernels take the slopes at launch)."""

import json

import pytest

from attn import cache
from attn.cache import KernelCache, KernelSpec
from attn.families import resolve, sm90a_backward_supports
from attn.variants import Variant, make_variant, parse_key


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(mask_align="top-left", causal=True), ValueError,
     r"mask_align must be 'bottom_right' or 'top_left', got 'top-left'"),
    (dict(mask_align="top_left"), ValueError,
     r"mask_align='top_left' aligns a mask: it needs causal=True or a window"),
    (dict(window=64), TypeError, r"window must be a \(left, right\) pair"),
    (dict(window=(64, 0, 1)), TypeError, r"window must be a \(left, right\)"),
    (dict(window=(-2, 0)), ValueError,
     r"window: left must be >= 0, or -1 for unbounded, got -2"),
    (dict(window=(4, 1.5)), TypeError, r"window: right must be an int"),
    (dict(window=(4, 2), causal=True), ValueError,
     r"window: causal=True bounds the right side at 0; window right 2"),
    (dict(softcap=0.0), ValueError, r"softcap must be a positive finite"),
    (dict(softcap=float("inf")), ValueError, r"softcap must be a positive"),
    (dict(softcap="30"), ValueError, r"softcap must be a positive"),
    (dict(alibi=1), TypeError, r"alibi must be a bool, got 1"),
    (dict(causal="yes"), TypeError, r"causal must be a bool"),
])
def test_bad_arguments_name_the_argument(kwargs, error, message):
    with pytest.raises(error, match=message):
        make_variant(**kwargs)


def test_canonical_forms():
    # Nothing to align: the plain kernels.
    assert make_variant() == Variant()
    assert make_variant().key == "" and make_variant(causal=True).key == ""
    assert make_variant(causal=True).causal
    assert make_variant(window=(-1, -1)).key == ""
    # A window with right bound 0 and no left bound is causal.
    assert make_variant(window=(-1, 0)) == make_variant(causal=True)
    # causal + a left bound is a sliding window with right 0.
    w = make_variant(causal=True, window=(64, -1))
    assert (w.left, w.right, w.sliding, w.causal) == (64, 0, True, False)
    assert w == make_variant(window=(64, 0))
    assert make_variant(causal=True, mask_align="top_left").name == "causal-tl"
    assert make_variant(window=(32, 32), mask_align="top_left").name == \
        "win32_32-tl"
    assert make_variant(window=(-1, 8)).name == "wininf_8"
    assert make_variant(causal=True, softcap=30).name == "causal-cap30"
    assert make_variant(alibi=True).name == "full-alibi"
    # The softcap and ALiBi combine (ALiBi after the cap).
    both = make_variant(causal=True, softcap=30.0, alibi=True)
    assert both.name == "causal-cap30-alibi" and both.alibi
    assert both.problem_fields()["softcap"] == 30.0


@pytest.mark.parametrize("variant", [
    make_variant(causal=True, mask_align="top_left"),
    make_variant(window=(64, 0)), make_variant(window=(3, 5),
                                               mask_align="top_left"),
    make_variant(softcap=30.0), make_variant(causal=True, alibi=True),
    make_variant(alibi=True), make_variant(window=(8, 8), softcap=5.0,
                                           alibi=True, mask_align="top_left"),
    make_variant(causal=True), make_variant()])
def test_key_round_trip(variant):
    assert parse_key(variant.causal, variant.key) == variant


def test_bad_keys_are_refused():
    with pytest.raises(ValueError, match=r"variant: cannot parse 'x'"):
        parse_key(False, "x")
    with pytest.raises(ValueError, match=r"variant: mask align 'middle'"):
        parse_key(False, "1,2,middle,0.0,0")
    with pytest.raises(ValueError, match=r"variant: causal=True disagrees"):
        parse_key(True, "64,0,bottom_right,0.0,0")


@pytest.mark.parametrize("kwargs", [
    dict(), dict(causal=True), dict(causal=True, mask_align="top_left"),
    dict(window=(64, 0)), dict(window=(32, 32), mask_align="top_left"),
    dict(window=(-1, 16)), dict(softcap=30.0),
    dict(window=(64, 0), softcap=2.5), dict(alibi=True),
    dict(causal=True, alibi=True), dict(causal=True, softcap=30.0, alibi=True),
])
def test_every_variant_has_a_backward_in_both_families(kwargs):
    """The backward takes every variant, ALiBi included: family auto
    resolves to the sm90a kernels on sm_90a (D 64/128), as the compiler
    does, and the variant has no refusal left."""
    v = make_variant(**kwargs)
    assert not hasattr(v, "backward_unsupported")
    spec = KernelSpec("bwd", 128, 128, "bf16", v.causal, "sm_90a",
                      variant=v.key, family="auto")
    assert sm90a_backward_supports(spec) == ""
    assert resolve(spec) == "sm90a"
    assert resolve(KernelSpec("bwd", 128, 128, "bf16", v.causal, "sm_80",
                              variant=v.key, family="auto")) == "sm80"


@pytest.mark.parametrize("d,family", [(64, "sm90a"), (72, "sm90a"),
                                      (96, "sm90a"), (192, "sm90a"),
                                      (256, "sm90a"), (48, "sm90a"),
                                      (8, "sm90a"), (20, "sm80"),
                                      (264, "sm80")])
def test_backward_family_by_head_dim(d, family):
    """The sm90a backward takes every multiple of 8 up to 256 (padded to 64,
    128 or 256 by TMA), as the compiler's capability table says; family
    auto falls back to sm80 (which refuses these too) elsewhere."""
    spec = KernelSpec("bwd", d, d, "bf16", True, "sm_90a", family="auto")
    assert resolve(spec) == family
    why = sm90a_backward_supports(spec)
    assert (why == "") == (family == "sm90a"), why


def test_reference_mask_bounds():
    # Nq=3, Nk=5, bottom-right causal: row i sees keys < i + 3.
    assert make_variant(causal=True).reference_mask(3, 5) == \
        [(0, 3), (0, 4), (0, 5)]
    assert make_variant(causal=True, mask_align="top_left").reference_mask(
        3, 5) == [(0, 1), (0, 2), (0, 3)]
    # Nq > Nk bottom-right: the first rows see nothing.
    assert make_variant(causal=True).reference_mask(4, 2) == \
        [(0, 0), (0, 0), (0, 1), (0, 2)]
    assert make_variant(window=(1, 1), mask_align="top_left").reference_mask(
        3, 3) == [(0, 2), (0, 3), (1, 3)]


def test_spec_names_and_plain_compatibility():
    plain = KernelSpec("fwd", 64, 64, "bf16", True)
    assert plain.name == "fwd-d64-bf16-causal-sm_90a"  # old packs
    v = make_variant(window=(64, 0))
    spec = KernelSpec("fwd", 64, 64, "bf16", v.causal, variant=v.key)
    assert spec.name == "fwd-d64-bf16-win64_0-sm_90a"
    # ALiBi: one kernel for every head count and Nk - Nq (the slopes are a
    # launch argument), so the name has no shape in it.
    a = make_variant(causal=True, alibi=True)
    spec = KernelSpec("fwd", 64, 64, "f16", a.causal, variant=a.key,
                      tile="m128n64r32s2")
    assert spec.name == "fwd-d64-f16-causal-alibi-sm_90a-m128n64r32s2"
    assert spec.heuristic().tile == ""
    assert not hasattr(spec, "alibi_heads")


VARIANT_CASES = [
    make_variant(causal=True, mask_align="top_left"),
    make_variant(window=(64, 0)),
    make_variant(window=(32, 32), mask_align="top_left"),
    make_variant(softcap=30.0),
    make_variant(causal=True, alibi=True),
    make_variant(alibi=True),
    make_variant(causal=True, softcap=30.0, alibi=True),
]


@pytest.mark.parametrize("kind", ["fwd", "bwd"])
@pytest.mark.parametrize("variant", VARIANT_CASES, ids=lambda v: v.name)
def test_cache_compiles_each_variant(compiler, variant, kind):
    """The cache's kernel for a variant spec, forward and backward, carries
    the variant in its manifest (what validate_kernel_dir checks), and a
    kernel of another variant is refused as that spec's entry. ALiBi
    kernels say so (the slopes are a launch argument: no heads or offset
    compiled in)."""
    spec = KernelSpec(kind, 64, 64, "bf16", variant.causal,
                      variant=variant.key)
    path = KernelCache().get(spec, compiler.version(), cache.compile_spec)
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest.get("direction", "forward") == (
        "backward" if kind == "bwd" else "forward")
    problem = manifest["problem"]
    fields = variant.problem_fields()
    assert problem["causal"] == fields["causal"]
    assert problem.get("mask_align") == (
        "top_left" if fields["top_left"] else None)
    if variant.sliding:
        assert (problem["window_left"], problem["window_right"]) == \
            (variant.left, variant.right)
    assert problem.get("softcap", 0) == variant.softcap
    assert problem.get("alibi", False) == variant.alibi
    if variant.alibi:
        assert "_alibi" in manifest["entry"], manifest["entry"]
    plain = KernelSpec(kind, 64, 64, "bf16", variant.causal)
    assert cache.validate_kernel_dir(path, plain) is not None


def test_softcap_and_alibi_compile_together(compiler):
    k = compiler.compile(head_dim=64, softcap=30.0, alibi=True,
                         assemble=False)
    assert k.manifest["problem"]["softcap"] == 30.0
    assert k.manifest["problem"]["alibi"] is True


def test_variant_compile_errors_name_the_flag(compiler):
    with pytest.raises(attn_errors().CompileError,
                       match=r"--top-left aligns a mask"):
        compiler.compile(head_dim=64, top_left=True, assemble=False)
    with pytest.raises(attn_errors().CompileError,
                       match=r"family: expected 'sm80', 'sm90a' or 'auto'"):
        compiler.compile(head_dim=64, family="sm100", assemble=False)


def attn_errors():
    import attn
    return attn


def test_sm90a_family_spec_compiles(compiler):
    """An sm90a-family spec (what an sm_90a pack may carry) compiles to a
    wgmma kernel and is validated as that family."""
    spec = KernelSpec("fwd", 128, 128, "bf16", True, family="sm90a")
    assert spec.name.endswith("-sm90a")
    path = KernelCache().get(spec, compiler.version(), cache.compile_spec)
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["family"].startswith("sm90a")
    sm80 = KernelSpec("fwd", 128, 128, "bf16", True)
    assert "family" in (cache.validate_kernel_dir(path, sm80) or "")


def test_sm90a_family_variant_spec_compiles(compiler):
    """The mask and score_mod variants compile in the sm90a family too (what
    set_kernel_family("sm90a") and `attn.aot build --family sm90a
    --variants` ask for)."""
    v = make_variant(window=(64, 0), softcap=30.0)
    spec = KernelSpec("fwd", 64, 64, "bf16", v.causal, variant=v.key,
                      family="sm90a")
    path = KernelCache().get(spec, compiler.version(), cache.compile_spec)
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["family"].startswith("sm90a")
    assert manifest["problem"]["window_left"] == 64
    assert manifest["problem"]["softcap"] == 30.0
