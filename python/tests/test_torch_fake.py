"""torch.ops.attn.attention without a GPU: registration, fake (meta) shape
propagation and argument errors. Skipped (visibly) without PyTorch."""

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

import attn.torch as attn_torch  # noqa: E402
from attn import KernelNotAvailableError  # noqa: E402


def meta(*shape, dtype=torch.bfloat16):
    return torch.empty(*shape, dtype=dtype, device="meta")


def test_op_is_registered():
    assert hasattr(torch.ops.attn, "attention")
    assert hasattr(torch.ops.attn, "attention_backward")


@pytest.mark.parametrize("hq, hkv, nq, nk, d, dv", [
    (8, 8, 128, 128, 64, 64), (8, 2, 100, 333, 128, 128),
    (4, 1, 1, 77, 256, 256), (2, 2, 5, 9, 64, 128)])
def test_fake_shapes(hq, hkv, nq, nk, d, dv):
    q, k, v = meta(3, hq, nq, d), meta(3, hkv, nk, d), meta(3, hkv, nk, dv)
    out, lse = torch.ops.attn.attention(q, k, v, True, None)
    assert out.shape == (3, hq, nq, dv) and out.dtype == torch.bfloat16
    assert lse.shape == (3, hq, nq) and lse.dtype == torch.float32
    out2 = attn_torch.attention(q, k, v)
    assert out2.shape == (3, hq, nq, dv)


def test_fake_tensor_mode():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        q = torch.empty(2, 8, 64, 64, dtype=torch.float16)
        k = torch.empty(2, 4, 96, 64, dtype=torch.float16)
        out, lse = attn_torch.attention(q, k, k, return_lse=True)
        assert out.shape == (2, 8, 64, 64) and lse.shape == (2, 8, 64)


def test_fake_backward_shapes():
    q, k, v = meta(2, 8, 64, 64), meta(2, 2, 80, 64), meta(2, 2, 80, 64)
    o, lse = meta(2, 8, 64, 64), meta(2, 8, 64, dtype=torch.float32)
    dq, dk, dv = torch.ops.attn.attention_backward(o, q, k, v, o, lse, False,
                                                   None)
    assert (dq.shape, dk.shape, dv.shape) == (q.shape, k.shape, v.shape)


@pytest.mark.parametrize("make, message", [
    (lambda: (meta(2, 8, 64, 64), meta(2, 8, 64, 64, dtype=torch.float32),
              meta(2, 8, 64, 64)), r"k is torch.float32 but q is"),
    (lambda: (meta(2, 8, 64, 64), meta(2, 8, 64, 64),
              meta(2, 8, 64, 64, dtype=torch.float16)), r"v is torch.float16"),
    (lambda: (meta(2, 8, 64, 64, dtype=torch.float32),) * 3,
     r"q is torch.float32; attn's kernels take"),
    (lambda: (meta(8, 64, 64), meta(2, 8, 64, 64), meta(2, 8, 64, 64)),
     r"q must be 4-D"),
    (lambda: (meta(2, 8, 64, 64), meta(2, 3, 64, 64), meta(2, 3, 64, 64)),
     r"q has 8 heads and k/v 3"),
    (lambda: (meta(2, 8, 64, 64), meta(2, 8, 64, 32), meta(2, 8, 64, 64)),
     r"k's head dim \(shape\[3\]\) is 32"),
    (lambda: (meta(2, 8, 64, 64), meta(2, 8, 64, 64), meta(2, 8, 65, 64)),
     r"v \(2, 8, 65, 64\) must have k's heads and length"),
    (lambda: (meta(2, 8, 64, 64), meta(1, 8, 64, 64), meta(1, 8, 64, 64)),
     r"batch sizes differ"),
])
def test_errors_name_the_tensor(make, message):
    with pytest.raises((TypeError, ValueError), match=message):
        attn_torch.attention(*make())


def test_cpu_tensors_without_the_cpu_library_say_what_to_build(monkeypatch):
    from attn import cpu
    monkeypatch.setattr(cpu, "_lib", None)
    monkeypatch.setattr(cpu, "library_candidates", lambda: [])
    x = torch.zeros(1, 2, 16, 64, dtype=torch.bfloat16)
    with pytest.raises(KernelNotAvailableError,
                       match=r"CPU tensors need the compiler's CPU path, "
                             r"libattn-c.so \(build the AttnCAPI target"):
        attn_torch.attention(x, x, x)


def test_bad_scale():
    x = meta(1, 2, 16, 64)
    with pytest.raises(ValueError, match="scale must be a finite float"):
        attn_torch.attention(x, x, x, scale=float("nan"))


def test_compile_traces_without_graph_breaks():
    def f(q, k, v):
        return attn_torch.attention(q, k, v, causal=True) * 2

    from torch._dynamo.testing import CompileCounterWithBackend
    counter = CompileCounterWithBackend("eager")
    from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: F401
    compiled = torch.compile(f, backend=counter, fullgraph=True)
    q = meta(1, 4, 32, 64)
    out = compiled(q, q, q)
    assert out.shape == (1, 4, 32, 64)
    assert counter.frame_count == 1


def test_variants_propagate_fake_shapes():
    q, k = meta(2, 8, 64, 64), meta(2, 2, 80, 64)
    out, lse = attn_torch.attention(q, k, k, window=(16, 0), softcap=30.0,
                                    return_lse=True)
    assert out.shape == (2, 8, 64, 64) and lse.shape == (2, 8, 64)
    out, _ = torch.ops.attn.attention(q, k, k, True, None,
                                      "-1,0,top_left,0.0,0")
    assert out.shape == (2, 8, 64, 64)
    with pytest.raises(ValueError, match=r"variant: cannot parse 'nope'"):
        torch.ops.attn.attention(q, k, k, False, None, "nope")


@pytest.mark.parametrize("kwargs, message", [
    (dict(mask_align="center", causal=True), r"mask_align must be"),
    (dict(window=(1, 2, 3)), r"window must be a \(left, right\) pair"),
    (dict(softcap=-1.0), r"softcap must be a positive finite"),
    (dict(alibi="yes"), r"alibi must be a bool"),
])
def test_variant_errors_name_the_argument(kwargs, message):
    x = meta(1, 2, 16, 64)
    with pytest.raises((TypeError, ValueError), match=message):
        attn_torch.attention(x, x, x, **kwargs)


def test_compile_traces_variants_without_graph_breaks():
    from torch._dynamo.testing import CompileCounterWithBackend
    counter = CompileCounterWithBackend("eager")

    def f(q, k, v):
        return attn_torch.attention(q, k, v, causal=True,
                                    mask_align="top_left", softcap=20.0)

    q = meta(1, 4, 32, 64)
    assert torch.compile(f, backend=counter, fullgraph=True)(q, q, q).shape \
        == (1, 4, 32, 64)
    assert counter.frame_count == 1


def test_kernel_family_is_auto_by_default_forward_and_backward():
    """The op asks for family auto unless $ATTN_KERNEL_FAMILY says
    otherwise, for the backward too; each call's spec resolves it by chip."""
    from attn import families
    assert attn_torch.kernel_family() == families.default_family()
    previous = attn_torch.kernel_family()
    q = meta(1, 4, 128, 128)
    try:
        attn_torch.set_kernel_family("auto")
        for kind in ("fwd", "bwd"):
            spec, _ = attn_torch._spec_and_shape(kind, q, q, q, True, None,
                                                 "", "sm_90a")
            assert spec.family == "auto"
            assert spec.resolved().family == "sm90a"
            spec, _ = attn_torch._spec_and_shape(kind, q, q, q, True, None,
                                                 "", "sm_80")
            assert spec.resolved().family == "sm80"
        attn_torch.set_kernel_family("sm80")
        spec, _ = attn_torch._spec_and_shape("bwd", q, q, q, True, None, "",
                                             "sm_90a")
        assert spec.resolved().family == "sm80"
        with pytest.raises(ValueError, match=r"family must be 'sm80', "
                                             r"'sm90a' or 'auto'"):
            attn_torch.set_kernel_family("sm100")
    finally:
        attn_torch.set_kernel_family(previous)


def test_backward_calls_look_the_database_up(tmp_path, monkeypatch):
    """A backward call's selection is the database's (the non-deterministic
    key: the op's dQ is atomic); a tuned backward tile the pack lacks
    falls back to the heuristic's kernel, and the selection says why."""
    from pathlib import Path
    from attn import compiler, tuning
    from attn.cache import KernelSpec, kernel_dir
    seen = {}

    def fake_select(spec, shape, gpu, sms, deterministic=None):
        seen["deterministic"] = deterministic
        tuned = KernelSpec("bwd", 64, 64, "bf16", True, "sm_90a",
                           family="sm90a", tile="wg-m64n128s3-dqfirst")
        return tuning.Selection(tuned, "tuning-db", "hit: ... -> "
                                "wg-m64n128s3-dqfirst", "db.json")

    class FakeLauncher:
        def __init__(self, spec, index, backward):
            assert backward
            if spec.tile:
                kernel_dir(spec)  # raises: not in the pack
            self.spec = spec

    monkeypatch.setattr(tuning, "select", fake_select)
    monkeypatch.setattr(attn_torch, "_device_info", lambda i: ("GPU", 8))
    monkeypatch.setattr(attn_torch, "_Launcher", FakeLauncher)
    monkeypatch.setattr(attn_torch, "_launchers_by_spec", {})
    monkeypatch.setattr(compiler, "available", lambda: False)
    monkeypatch.setenv("ATTN_KERNEL_PACK", str(Path(tmp_path)))
    spec = KernelSpec("bwd", 64, 64, "bf16", True, "sm_90a",
                      family="auto")
    sel = attn_torch._select("bwd", spec, tuning.Shape(1, 2, 2, 64, 64), 0)
    assert sel.source == "tuning-db" and seen["deterministic"] is False
    launcher, sel = attn_torch._load(sel, 0, True, spec.resolved())
    assert launcher.spec == spec.resolved() and sel.source == "heuristic"
    assert sel.reason.startswith("the tuned tile wg-m64n128s3-dqfirst is not "
                                 "available (no bwd-d64-bf16-causal-")
    assert "packs hold the heuristic's backward kernels" in sel.reason
    assert sel.reason.endswith("database: hit: ... -> wg-m64n128s3-dqfirst")


def test_backward_the_compiler_cannot_build_is_not_implemented(monkeypatch):
    """A backward kernel the compiler refuses (CompileError on first use)
    raises NotImplementedError with the compiler's reason, as a pack
    without the kernel does: callers (attn.integrations.transformers) tell
    "attn cannot differentiate this" from a failure by that type."""
    from attn import CompileError

    def refuse(*args, **kwargs):
        raise CompileError("stages 3 is not supported by the sm80-mma "
                           "backward kernels: they take 2")

    monkeypatch.setattr(attn_torch, "_backward_kernels_missing", lambda: None)
    monkeypatch.setattr(attn_torch, "_check_cuda", lambda tensors: None)
    monkeypatch.setattr(attn_torch, "_launcher", refuse)
    q = torch.zeros(1, 2, 4, 64, dtype=torch.bfloat16)
    lse = torch.zeros(1, 2, 4)
    with pytest.raises(NotImplementedError,
                       match=r"attn.torch.attention backward: stages 3 "
                             r"is not supported"):
        attn_torch._backward(q, q, q, q, q, lse, True, None)


@pytest.mark.parametrize("d, dv, named", [
    (264, 264, r"head dim 264: attn's GPU backward kernels take multiples "
               r"of 8 up to 256"),
    (64, 264, r"value head dim 264: attn's GPU backward kernels take "
              r"multiples of 8 up to 256"),
])
def test_backward_head_dims_without_kernels_are_named(monkeypatch, d, dv,
                                                      named):
    """Head dims no backward family takes raise before any compile, the
    head dim named in the first line."""
    def never(*args, **kwargs):
        raise AssertionError("compiled a backward it cannot have")

    monkeypatch.setattr(attn_torch, "_launcher", never)
    q = torch.zeros(1, 2, 4, d, dtype=torch.bfloat16)
    v = torch.zeros(1, 2, 4, dv, dtype=torch.bfloat16)
    lse = torch.zeros(1, 2, 4)
    with pytest.raises(NotImplementedError,
                       match=r"attn.torch.attention backward: " + named):
        attn_torch._backward(v, q, q, v, v, lse, True, None)


class _Launched(Exception):
    pass


@pytest.mark.parametrize("d, dv", [(192, 128), (64, 128)])
@pytest.mark.parametrize("native", [True, False], ids=["sm90a", "sm80"])
def test_backward_of_unequal_head_dims(monkeypatch, d, dv, native):
    """Dqk ≠ Dv: the sm90a kernels take both head dims; for the sm80 ones
    (equal head dims only) the backward asks for the wider head dim's
    kernels, the narrower operands zero-padded to it, with Dqk's scale."""
    seen = {}

    def launcher(kind, q, k, v, causal, scale, *args):
        seen.update(q=q.shape[3], k=k.shape[3], v=v.shape[3], scale=scale)
        raise _Launched

    monkeypatch.setattr(attn_torch, "_launcher", launcher)
    monkeypatch.setattr(attn_torch, "_takes_unequal_head_dims",
                        lambda *args: native)
    monkeypatch.setattr(attn_torch, "_backward_kernels_missing", lambda: None)
    monkeypatch.setattr(attn_torch, "_check_cuda", lambda *a, **k: None)
    q = torch.zeros(1, 2, 4, d, dtype=torch.bfloat16)
    v = torch.zeros(1, 2, 4, dv, dtype=torch.bfloat16)
    lse = torch.zeros(1, 2, 4)
    with pytest.raises(_Launched):
        attn_torch._backward(v, q, q, v, v, lse, True, None)
    if native:
        assert seen == dict(q=d, k=d, v=dv, scale=None)
    else:
        width = max(d, dv)
        assert seen == dict(q=width, k=width, v=width, scale=d ** -0.5)


def test_sm90a_backward_family_takes_unequal_head_dims():
    """The family rules the op restates (families.py) follow the compiler's
    capability table: the sm90a backward takes Dqk ≠ Dv."""
    from attn.cache import KernelSpec
    from attn import families
    spec = KernelSpec("bwd", 192, 128, "bf16", True, "sm_90a", family="auto")
    assert families.sm90a_backward_supports(spec) == ""
    assert families.resolve(spec) == "sm90a"
    assert "264" in families.sm90a_backward_supports(
        KernelSpec("bwd", 264, 128, "bf16", True, "sm_90a"))


@pytest.mark.parametrize("d, dv, backward, native, width, value_width", [
    (20, 20, False, False, 24, 24), (20, 20, True, False, 24, 24),
    (192, 128, False, False, 192, 128), (192, 128, True, False, 192, 192),
    (192, 124, True, True, 192, 128), (59, 64, True, False, 64, 64)])
def test_explain_names_the_kernel_of_the_padded_head_dims(
        monkeypatch, d, dv, backward, native, width, value_width):
    """explain asks for the kernel a call launches: head dims padded to
    multiples of 8, the backward at the wider of Dqk and Dv where its
    family takes equal head dims only (families.kernel_head_dims), with
    Dqk's scale."""
    seen = {}

    def launcher(kind, q, k, v, causal, scale, *args):
        seen.update(kind=kind, q=q.shape[3], k=k.shape[3], v=v.shape[3],
                    scale=scale)
        raise _Launched

    monkeypatch.setattr(attn_torch, "_launcher", launcher)
    monkeypatch.setattr(attn_torch, "_check_cuda", lambda *a, **k: None)
    monkeypatch.setattr(attn_torch, "_takes_unequal_head_dims",
                        lambda *args: native)
    q = torch.zeros(1, 2, 4, d, dtype=torch.bfloat16, device="meta")
    v = torch.zeros(1, 2, 4, dv, dtype=torch.bfloat16, device="meta")
    with pytest.raises(_Launched):
        attn_torch.explain(q, q, v, causal=True, backward=backward)
    assert seen == dict(kind="bwd" if backward else "fwd", q=width, k=width,
                        v=value_width, scale=d ** -0.5)


def test_alibi_slopes_propagate_fake_shapes():
    """ALiBi's slopes, [Hq] or [B, Hq] float32 on q's device, through the
    fake implementations (forward and backward), FakeTensorMode (alibi=True
    builds the standard slopes there) and torch.compile without graph
    breaks; a slope tensor on another device is named."""
    q, k = meta(2, 8, 64, 64), meta(2, 2, 80, 64)
    for slopes in (meta(8, dtype=torch.float32),
                   meta(2, 8, dtype=torch.float32)):
        out, lse = attn_torch.attention(q, k, k, causal=True,
                                        alibi_slopes=slopes, return_lse=True)
        assert out.shape == (2, 8, 64, 64) and lse.shape == (2, 8, 64)
        dq, dk, dv = torch.ops.attn.attention_backward(
            out, q, k, k, out, lse, True, None, "-1,0,bottom_right,0.0,1",
            False, None, None, slopes)
        assert (dq.shape, dk.shape, dv.shape) == (q.shape, k.shape, k.shape)
    assert attn_torch.attention(q, k, k, alibi=True, softcap=5.0).shape == \
        (2, 8, 64, 64)
    with pytest.raises(ValueError, match=r"alibi_slopes is on cpu, q on "
                                         r"meta"):
        attn_torch.attention(q, k, k, alibi_slopes=torch.rand(8))
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        qf = torch.empty(2, 8, 64, 64, dtype=torch.float16)
        out = attn_torch.attention(qf, qf, qf, causal=True, alibi=True)
        assert out.shape == (2, 8, 64, 64)

    from torch._dynamo.testing import CompileCounterWithBackend
    counter = CompileCounterWithBackend("eager")

    def f(q, k, v, slopes):
        return attn_torch.attention(q, k, v, causal=True, alibi_slopes=slopes)

    q = meta(1, 4, 32, 64)
    got = torch.compile(f, backend=counter, fullgraph=True)(
        q, q, q, meta(4, dtype=torch.float32))
    assert got.shape == (1, 4, 32, 64) and counter.frame_count == 1
