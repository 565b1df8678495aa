"""attn.torch.attention on CPU tensors: the compiler's own CPU path
(attn.cpu, libattn-c.so's attn-c/Execution.h) against PyTorch's SDPA and a
float64 reference, forward and backward, through autograd and
torch.compile(fullgraph=True); the per-problem module cache (one module for
every scale), the kernel key's scale and the tuning switches as a CPU call
meets them."""

import math
import warnings

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

import attn.torch as attn_torch  # noqa: E402
from attn import cpu as attn_cpu  # noqa: E402
from attn import tuning  # noqa: E402
from attn.variants import make_variant  # noqa: E402

F = torch.nn.functional


@pytest.fixture(autouse=True)
def _cpu_path():
    if not attn_cpu.available():
        pytest.fail("libattn-c.so with the CPU entry points is not built "
                    "(ninja AttnCAPI): " + str(attn_cpu.library_candidates()))


def qkv(b, hq, hkv, nq, nk, d, dtype=torch.float32, dv=None, seed=0,
        grad=False):
    g = torch.Generator().manual_seed(seed)
    mk = lambda h, n, e: torch.randn(  # noqa: E731
        b, h, n, e, generator=g).to(dtype).requires_grad_(grad)
    return mk(hq, nq, d), mk(hkv, nk, d), mk(hkv, nk, dv or d)


def sdpa(q, k, v, causal=False, scale=None):
    """SDPA in float32 with K/V heads repeated for GQA (SDPA's is_causal is
    top-left aligned)."""
    group = q.shape[1] // k.shape[1]
    k, v = (t.repeat_interleave(group, dim=1) for t in (k, v))
    return F.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                          is_causal=causal, scale=scale)


def reference(q, k, v, variant, scale=None, key_range=None, slopes=None):
    """float64 (out, lse) with attn's semantics for every variant: softcap
    then ALiBi (``slopes`` [Hq] or [B, Hq], else the standard
    2^(-8(h+1)/Hq)) on the scaled score, then the mask band (and each
    batch entry's key range); rows that see no key give out 0, lse -inf.
    Differentiable."""
    q, k, v = q.double(), k.double(), v.double()
    nq, nk, hq = q.shape[2], k.shape[2], q.shape[1]
    group = hq // k.shape[1]
    k, v = (t.repeat_interleave(group, dim=1) for t in (k, v))
    scale = q.shape[3] ** -0.5 if scale is None else scale
    s = q @ k.transpose(-1, -2) * scale
    offset = 0 if variant.top_left else nk - nq
    i = torch.arange(nq).view(nq, 1)
    j = torch.arange(nk).view(1, nk)
    if variant.softcap:
        s = variant.softcap * torch.tanh(s / variant.softcap)
    if variant.alibi:
        if slopes is None:
            slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / hq)
                                   for h in range(hq)], dtype=torch.float64)
        slopes = slopes.detach().double().expand(q.shape[0], hq)
        s = s - slopes.view(-1, hq, 1, 1) * (i + offset - j).abs()
    keep = torch.ones(nq, nk, dtype=torch.bool)
    if variant.left >= 0:
        keep &= j >= i + offset - variant.left
    if variant.right >= 0:
        keep &= j <= i + offset + variant.right
    if key_range is not None:
        start, end = (t.view(-1, 1, 1, 1) for t in key_range)
        keep = keep & (j >= start) & (j < end)
    s = s.masked_fill(~keep, -math.inf)
    lse = torch.logsumexp(s, dim=-1)
    seen = torch.isfinite(lse).unsqueeze(-1)
    p = torch.where(seen, torch.exp(s - torch.where(seen, lse.unsqueeze(-1),
                                                    torch.zeros(()))), 0.0)
    return p @ v, lse


def rel_err(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


# float32 is the exact path; the 16-bit types round P and the output.
TOL = {torch.float32: 2e-6, torch.bfloat16: 1e-2, torch.float16: 2e-3}


# --- forward and backward against SDPA --------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16,
                                   torch.float16])
@pytest.mark.parametrize("b, hq, hkv, nq, nk, d, causal", [
    (2, 4, 4, 77, 77, 64, False),    # not a multiple of any tile
    (1, 8, 2, 130, 130, 64, True),   # GQA, causal (Nq == Nk: SDPA's too)
    (2, 4, 1, 45, 161, 32, False),   # MQA, Nq != Nk
])
def test_forward_backward_match_sdpa(dtype, b, hq, hkv, nq, nk, d, causal):
    q, k, v = qkv(b, hq, hkv, nq, nk, d, dtype, grad=True)
    out, lse = attn_torch.attention(q, k, v, causal=causal, return_lse=True)
    assert out.dtype == dtype and out.device.type == "cpu"
    assert lse.dtype == torch.float32 and lse.shape == (b, hq, nq)
    q32, k32, v32 = (t.detach().float().requires_grad_() for t in (q, k, v))
    want = sdpa(q32, k32, v32, causal)
    assert rel_err(out, want) <= TOL[dtype]
    _, want_lse = reference(q, k, v, make_variant(causal))
    assert torch.allclose(lse.double(), want_lse, atol=1e-4, rtol=1e-4)

    g = torch.randn_like(want)
    got = torch.autograd.grad(out, (q, k, v), g.to(dtype))
    wanted = torch.autograd.grad(want, (q32, k32, v32), g)
    for name, a, w in zip(("dq", "dk", "dv"), got, wanted):
        assert a.dtype == dtype and a.shape == w.shape
        # (dK/dV sum a group's heads in float32 inside the module.)
        assert rel_err(a, w) <= 3 * TOL[dtype], name


def test_autocast_casts_inputs_as_sdpa_does():
    """Inside torch.autocast a float32 query meeting a bfloat16 value (a
    rotary embedding in float32 under mixed precision) runs in the autocast
    dtype, as SDPA does, and float32 gradients come back."""
    q, k, v = qkv(1, 4, 2, 33, 40, 32, grad=True)
    vb = v.detach().bfloat16().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = attn_torch.attention(q, k, vb, causal=True)
    assert out.dtype == torch.bfloat16
    want, _ = reference(q.detach().bfloat16(), k.detach().bfloat16(),
                        vb.detach(), make_variant(True))
    assert rel_err(out, want) <= TOL[torch.bfloat16]
    out.float().sum().backward()
    assert q.grad.dtype == torch.float32 and vb.grad.dtype == torch.bfloat16
    assert torch.isfinite(q.grad).all()


def test_causal_nq_ne_nk_is_bottom_right_and_top_left_is_sdpa():
    q, k, v = qkv(1, 2, 2, 40, 100, 64)
    # top_left: SDPA's is_causal for any Nq, Nk.
    got = attn_torch.attention(q, k, v, causal=True, mask_align="top_left")
    assert rel_err(got, sdpa(q, k, v, causal=True)) <= 2e-6
    # bottom_right (the default): row i sees keys j <= i + Nk - Nq.
    got = attn_torch.attention(q, k, v, causal=True)
    want, _ = reference(q, k, v, make_variant(True))
    assert rel_err(got, want) <= 2e-6


def test_rows_that_see_no_key_give_zero_and_minus_inf():
    # Bottom-right causal with Nq > Nk: the first Nq - Nk rows see nothing.
    q, k, v = qkv(1, 2, 1, 50, 20, 64, grad=True)
    out, lse = attn_torch.attention(q, k, v, causal=True, return_lse=True)
    assert torch.equal(out[:, :, :30], torch.zeros_like(out[:, :, :30]))
    assert torch.isneginf(lse[:, :, :30]).all()
    want, _ = reference(q, k, v, make_variant(True))
    assert rel_err(out, want) <= 2e-6
    grads = torch.autograd.grad(out.sum(), (q, k, v))
    assert all(torch.isfinite(g).all() for g in grads)


def test_empty_and_strided_inputs():
    q, k, v = qkv(1, 2, 2, 16, 0, 64)
    out, lse = attn_torch.attention(q, k, v, return_lse=True)
    assert torch.equal(out, torch.zeros_like(out)) and torch.isneginf(lse).all()
    q, k, v = qkv(1, 2, 2, 0, 16, 64)
    assert attn_torch.attention(q, k, v).shape == (1, 2, 0, 64)
    # A transposed layout ([B, N, H, D] storage) is copied, not misread.
    q, k, v = (t.transpose(1, 2).contiguous().transpose(1, 2)
               for t in qkv(2, 4, 2, 33, 47, 64))
    assert not q.is_contiguous()
    assert rel_err(attn_torch.attention(q, k, v), sdpa(q, k, v)) <= 2e-6


# --- the variants -----------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(window=(16, 8)),
    dict(causal=True, window=(24, -1), mask_align="top_left"),
    dict(softcap=5.0),
    dict(causal=True, alibi=True),
], ids=["window", "window-causal-tl", "softcap", "alibi"])
def test_variants_forward(kwargs):
    q, k, v = qkv(1, 4, 2, 70, 90, 64, seed=3)
    got, lse = attn_torch.attention(q, k, v, return_lse=True, **kwargs)
    want, want_lse = reference(q, k, v, make_variant(**kwargs))
    assert rel_err(got, want) <= 5e-6
    finite = torch.isfinite(want_lse)
    assert torch.equal(torch.isfinite(lse), finite)
    assert torch.allclose(lse.double()[finite], want_lse[finite], atol=1e-4)


@pytest.mark.parametrize("kwargs", [
    dict(window=(16, 8), mask_align="top_left"),
    dict(softcap=5.0, scale=0.5),
    dict(causal=True, window=(20, 0), softcap=2.0),
], ids=["window-tl", "softcap", "softcap-window"])
def test_mask_and_softcap_backward_matches_reference(kwargs):
    q, k, v = qkv(1, 4, 2, 70, 90, 64, seed=4, grad=True)
    scale = kwargs.pop("scale", None)
    got = attn_torch.attention(q, k, v, scale=scale, **kwargs)
    want, _ = reference(q, k, v, make_variant(**kwargs), scale=scale)
    g = torch.randn_like(want)
    for name, a, w in zip("qkv", torch.autograd.grad(got, (q, k, v), g.float()),
                          torch.autograd.grad(want, (q, k, v), g)):
        assert rel_err(a, w) <= 1e-5, name


# --- ALiBi: run-time slopes -------------------------------------------------

def fa_slopes(*shape, seed=0):
    """Random slopes as FlashAttention's tests make them (rand · 0.3)."""
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g) * 0.3


ALIBI_CASES = {
    # B, Hq, Hkv, Nq, Nk, attention() keywords
    "full": (2, 4, 4, 37, 37, dict()),
    "causal-br-nq<nk": (2, 4, 2, 29, 70, dict(causal=True)),
    "causal-br-nq>nk": (2, 4, 2, 70, 29, dict(causal=True)),
    "causal-tl-nq<nk": (2, 4, 2, 29, 70,
                        dict(causal=True, mask_align="top_left")),
    "causal-tl-nq>nk": (2, 4, 2, 70, 29,
                        dict(causal=True, mask_align="top_left")),
    "full-nq<nk": (2, 8, 2, 20, 65, dict()),  # bottom-right distances, GQA
    "window": (2, 4, 2, 50, 64, dict(window=(16, 5))),
    "window-tl": (2, 4, 4, 64, 50, dict(window=(9, 9),
                                        mask_align="top_left")),
    "softcap": (2, 4, 2, 40, 55, dict(softcap=2.0)),
    "softcap-causal": (2, 4, 1, 40, 55, dict(causal=True, softcap=3.0)),
    "mqa": (2, 6, 1, 33, 33, dict(causal=True)),
}


@pytest.mark.parametrize("per_batch", [False, True], ids=["h", "bh"])
@pytest.mark.parametrize("case", list(ALIBI_CASES))
def test_alibi_slopes_forward_and_gradients_match_float64(case, per_batch):
    """Random slopes, [Hq] and [B, Hq]: out, lse and dq, dk, dv against
    float64 autograd of the reference (slope·|d(i) - j| after the softcap,
    d aligned as the mask); the slopes get no gradient."""
    b, hq, hkv, nq, nk, kwargs = ALIBI_CASES[case]
    q, k, v = qkv(b, hq, hkv, nq, nk, 32, seed=31, grad=True)
    slopes = fa_slopes(*((b, hq) if per_batch else (hq,)), seed=32)
    out, lse = attn_torch.attention(q, k, v, alibi_slopes=slopes,
                                    return_lse=True, **kwargs)
    variant = make_variant(alibi=True, **{
        key: val for key, val in kwargs.items()})
    want, want_lse = reference(q, k, v, variant, slopes=slopes)
    assert rel_err(out, want) <= 1e-5
    finite = torch.isfinite(want_lse)
    assert torch.equal(torch.isfinite(lse), finite)
    assert torch.allclose(lse.double()[finite], want_lse[finite], atol=1e-4)
    assert (out[~finite] == 0).all()
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(33))
    got = torch.autograd.grad(out, (q, k, v), g.float())
    wanted = torch.autograd.grad(want, (q, k, v), g.double())
    for name, a, w in zip("qkv", got, wanted):
        if w.norm() == 0:
            assert a.abs().max() <= 1e-6, f"d{name}"
        else:
            assert rel_err(a, w) <= 1e-5, f"d{name}"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_alibi_slopes_in_16_bit(dtype):
    q, k, v = qkv(2, 4, 2, 45, 61, 64, dtype=dtype, seed=34, grad=True)
    slopes = fa_slopes(2, 4, seed=35)
    out = attn_torch.attention(q, k, v, causal=True, alibi_slopes=slopes)
    want, _ = reference(q, k, v, make_variant(causal=True, alibi=True),
                        slopes=slopes)
    assert out.dtype == dtype and rel_err(out, want) <= TOL[dtype]
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(36))
    for name, a, w in zip("qkv",
                          torch.autograd.grad(out, (q, k, v), g.to(dtype)),
                          torch.autograd.grad(want, (q, k, v), g.double())):
        assert a.dtype == dtype and rel_err(a, w) <= 3 * TOL[dtype], name


def test_alibi_true_is_the_standard_slopes():
    q, k, v = qkv(2, 8, 2, 30, 41, 32, seed=37, grad=True)
    standard = attn_torch.standard_alibi_slopes(8)
    assert standard.dtype == torch.float32 and standard.shape == (8,)
    assert torch.equal(standard, torch.tensor(
        [2.0 ** (-8.0 * (h + 1) / 8) for h in range(8)], dtype=torch.float32))
    a = attn_torch.attention(q, k, v, causal=True, alibi=True)
    b = attn_torch.attention(q, k, v, causal=True, alibi_slopes=standard)
    assert torch.equal(a, b)
    ga = torch.autograd.grad(a.sum(), (q, k, v))
    gb = torch.autograd.grad(b.sum(), (q, k, v))
    assert all(torch.equal(x, y) for x, y in zip(ga, gb))


def test_alibi_slopes_are_a_call_argument():
    """Other slopes (and [Hq] against [B, Hq]) reuse the compiled modules,
    and give other numbers; per-batch rows are each batch entry's own;
    a strided (non-contiguous) slope tensor is read as its values."""
    q, k, v = qkv(2, 4, 2, 16, 24, 32, seed=38, grad=True)
    first = attn_torch.attention(q, k, v, causal=True,
                                 alibi_slopes=fa_slopes(4, seed=1))
    first.sum().backward()
    before = attn_cpu.compiled_modules()
    other = fa_slopes(2, 4, seed=2)
    out = attn_torch.attention(q, k, v, causal=True, alibi_slopes=other)
    out.sum().backward()
    assert attn_cpu.compiled_modules() == before
    assert rel_err(out, first) > 1e-3
    for bi in range(2):  # row b is batch entry b's
        one = attn_torch.attention(q[bi:bi + 1], k[bi:bi + 1], v[bi:bi + 1],
                                   causal=True, alibi_slopes=other[bi])
        assert torch.allclose(out[bi:bi + 1], one, atol=1e-6)
    strided = other.t().contiguous().t()  # [B, Hq] with strides (1, B)
    assert not strided.is_contiguous()
    assert torch.equal(attn_torch.attention(q, k, v, causal=True,
                                            alibi_slopes=strided), out)
    assert torch.equal(attn_torch.attention(
        q, k, v, causal=True, alibi_slopes=other[:1].expand(2, 4)),
        attn_torch.attention(q, k, v, causal=True, alibi_slopes=other[0]))


def test_alibi_slopes_get_no_gradient():
    q, k, v = qkv(1, 2, 2, 8, 8, 32, seed=39, grad=True)
    slopes = fa_slopes(2, seed=3).requires_grad_()
    out = attn_torch.attention(q, k, v, alibi_slopes=slopes)
    out.sum().backward()
    assert q.grad is not None and slopes.grad is None


def test_alibi_errors_name_the_argument():
    q, k, v = qkv(2, 4, 2, 8, 8, 32, seed=40)
    with pytest.raises(ValueError, match=r"alibi_slopes must have shape "
                       r"\[Hq\] = \[4\] or \[B, Hq\] = \[2, 4\], got \[3\]"):
        attn_torch.attention(q, k, v, alibi_slopes=torch.rand(3))
    with pytest.raises(ValueError, match=r"alibi_slopes must have shape .* "
                       r"got \[4, 2\]"):
        attn_torch.attention(q, k, v, alibi_slopes=torch.rand(4, 2))
    with pytest.raises(ValueError, match=r"alibi_slopes must have shape .* "
                       r"got \[1, 2, 4\]"):
        attn_torch.attention(q, k, v, alibi_slopes=torch.rand(1, 2, 4))
    with pytest.raises(TypeError, match=r"alibi_slopes must be "
                       r"torch.float32, got torch.float64"):
        attn_torch.attention(q, k, v, alibi_slopes=torch.rand(4).double())
    with pytest.raises(TypeError, match=r"alibi_slopes must be "
                       r"torch.float32, got torch.bfloat16"):
        attn_torch.attention(q, k, v, alibi_slopes=torch.rand(4).bfloat16())
    with pytest.raises(TypeError, match=r"alibi_slopes must be a tensor, "
                       r"got list"):
        attn_torch.attention(q, k, v, alibi_slopes=[0.5] * 4)
    with pytest.raises(ValueError, match=r"alibi_slopes is on meta, q on "
                       r"cpu"):
        attn_torch.attention(q, k, v, alibi_slopes=torch.rand(
            4, device="meta"))
    with pytest.raises(ValueError, match=r"give alibi=True \(the standard "
                       r"slopes\) or alibi_slopes, not both"):
        attn_torch.attention(q, k, v, alibi=True, alibi_slopes=torch.rand(4))
    with pytest.raises(TypeError, match=r"alibi must be a bool"):
        attn_torch.attention(q, k, v, alibi="yes")
    # The op's own checks: the variant key and the slopes agree.
    with pytest.raises(ValueError, match=r"the ALiBi variant needs "
                       r"alibi_slopes"):
        torch.ops.attn.attention(q, k, v, False, None,
                                 make_variant(alibi=True).key)
    with pytest.raises(ValueError, match=r"alibi_slopes given to a variant "
                       r"without ALiBi"):
        torch.ops.attn.attention(q, k, v, False, None, "", False, None, None,
                                 torch.rand(4))


def test_alibi_with_key_range():
    """ALiBi and the key ranges in one call (a left-padded batch)."""
    q, k, v = qkv(3, 4, 2, 9, 40, 32, seed=41, grad=True)
    start, end = torch.tensor([0, 11, 39]), torch.tensor([40, 40, 39])
    slopes = fa_slopes(3, 4, seed=4)
    out = attn_torch.attention(q, k, v, causal=True, alibi_slopes=slopes,
                               key_range=(start, end))
    want, _ = reference(q, k, v, make_variant(causal=True, alibi=True),
                        key_range=(start, end), slopes=slopes)
    assert rel_err(out, want) <= 1e-5
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(42))
    for name, a, w in zip("qkv",
                          torch.autograd.grad(out, (q, k, v), g.float()),
                          torch.autograd.grad(want, (q, k, v), g.double())):
        assert rel_err(a, w) <= 1e-5, name


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("kwargs", [
    dict(causal=True), dict(), dict(window=(8, 3), mask_align="top_left"),
    dict(causal=True, softcap=3.0)],
    ids=["causal", "full", "window-tl", "causal-softcap"])
def test_key_range_forward_and_backward_match_reference(dtype, kwargs):
    """key_range: each batch entry's keys [start, end) -- left padding,
    right padding, an empty range, one key -- against float64, forward and
    gradients (masked keys get dK = dV = 0)."""
    q, k, v = qkv(4, 4, 2, 9, 50, 32, dtype=dtype, seed=7, grad=True)
    start = torch.tensor([0, 12, 30, 49])
    end = torch.tensor([50, 50, 30, 60])  # 60 is clamped to Nk
    got, lse = attn_torch.attention(q, k, v, key_range=(start, end),
                                    return_lse=True, **kwargs)
    want, want_lse = reference(q, k, v, make_variant(**kwargs),
                               key_range=(start, end.clamp(max=50)))
    tol = TOL[dtype] if dtype != torch.float32 else 1e-5
    assert rel_err(got, want) <= tol
    assert torch.equal(torch.isinf(lse), torch.isinf(want_lse))
    assert (got[2] == 0).all()  # the empty range: every row sees no key
    g = torch.randn_like(want)
    grads = torch.autograd.grad(got, (q, k, v), g.to(dtype))
    for name, a, w in zip("qkv", grads,
                          torch.autograd.grad(want, (q, k, v), g)):
        assert rel_err(a, w) <= (1e-5 if dtype == torch.float32 else 2e-2), \
            name
    assert (grads[1][1, :, :12] == 0).all() and (grads[2][2] == 0).all()


def test_key_range_is_one_module_for_every_padding():
    """The ranges are run-time values: other paddings reuse the module."""
    q, k, v = qkv(2, 2, 2, 4, 16, 16, seed=8)
    attn_torch.attention(q, k, v, key_range=(torch.tensor([0, 3]),
                                             torch.tensor([16, 9])))
    before = attn_cpu.compiled_modules()
    attn_torch.attention(q, k, v, key_range=(torch.tensor([5, 0]),
                                             torch.tensor([6, 16])))
    assert attn_cpu.compiled_modules() == before


def test_key_range_errors_name_the_argument():
    q, k, v = qkv(2, 2, 2, 4, 16, 16, seed=8)
    with pytest.raises(TypeError, match=r"key_range must be a \(key_start, "
                       r"key_end\) pair"):
        attn_torch.attention(q, k, v, key_range=torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"key_start must have shape \[B\] "
                       r"= \[2\], got \[3\]"):
        attn_torch.attention(q, k, v, key_range=(
            torch.zeros(3, dtype=torch.int32), torch.zeros(2, dtype=torch.int32)))
    with pytest.raises(TypeError, match=r"key_end must hold integers"):
        attn_torch.attention(q, k, v, key_range=(
            torch.zeros(2, dtype=torch.int32), torch.zeros(2)))


def test_errors_name_the_argument():
    q, k, v = qkv(1, 2, 2, 8, 8, 64)
    with pytest.raises(TypeError, match=r"q is torch.float64; on the CPU"):
        attn_torch.attention(q.double(), k.double(), v.double())
    with pytest.raises(TypeError, match=r"k is torch.bfloat16 but q is"):
        attn_torch.attention(q, k.bfloat16(), v)
    with pytest.raises(ValueError, match=r"q has 2 heads and k/v 3"):
        attn_torch.attention(q, *qkv(1, 3, 3, 8, 8, 64)[1:])
    with pytest.raises(ValueError, match=r"scale must be a finite"):
        attn_torch.attention(q, k, v, scale=float("nan"))
    with pytest.raises(RuntimeError, match=r"scale must be positive"):
        attn_torch.attention(q, k, v, scale=-1.0)
    with pytest.raises(ValueError, match=r"window: left must be >= 0"):
        attn_torch.attention(q, k, v, window=(-3, 0))


# --- torch.compile and the op's registration --------------------------------

def test_opcheck():
    """Schema, fake kernel, autograd registration and AOT dispatch of the
    op with CPU tensors (torch.library.opcheck), with and without ALiBi's
    slopes."""
    q, k, v = qkv(1, 2, 1, 20, 30, 32, grad=True)
    torch.library.opcheck(torch.ops.attn.attention.default,
                          (q, k, v, True, None, ""))
    torch.library.opcheck(torch.ops.attn.attention.default,
                          (q, k, v, True, None,
                           make_variant(causal=True, alibi=True).key, False,
                           None, None, fa_slopes(1, 2)))


def test_torch_compile_fullgraph_forward_and_backward():
    q, k, v = qkv(1, 4, 2, 48, 48, 64, grad=True)

    def f(q, k, v):
        return attn_torch.attention(q, k, v, causal=True).sin().sum()

    compiled = torch.compile(f, fullgraph=True)
    got = torch.autograd.grad(compiled(q, k, v), (q, k, v))
    want = torch.autograd.grad(f(q, k, v), (q, k, v))
    for a, w in zip(got, want):
        assert rel_err(a, w) <= 1e-5


@pytest.mark.parametrize("standard", [False, True],
                         ids=["alibi_slopes", "alibi"])
def test_torch_compile_fullgraph_alibi(standard):
    """ALiBi's slopes through torch.compile(fullgraph=True), forward and
    backward: a graph input (or alibi=True's, built in the graph)."""
    q, k, v = qkv(2, 4, 2, 40, 48, 32, seed=43, grad=True)
    slopes = fa_slopes(2, 4, seed=5)

    def f(q, k, v, slopes):
        kw = dict(alibi=True) if standard else dict(alibi_slopes=slopes)
        return attn_torch.attention(q, k, v, causal=True, **kw).sin().sum()

    compiled = torch.compile(f, fullgraph=True)
    got = torch.autograd.grad(compiled(q, k, v, slopes), (q, k, v))
    want = torch.autograd.grad(f(q, k, v, slopes), (q, k, v))
    for a, w in zip(got, want):
        assert rel_err(a, w) <= 1e-5
    if not standard:  # other slopes: the same graph, other numbers
        other = fa_slopes(2, 4, seed=6)
        assert rel_err(compiled(q, k, v, other), f(q, k, v, other)) <= 1e-5


# --- the module cache, the scale key, tuning on a CPU call ------------------

def test_a_repeated_problem_compiles_nothing():
    q, k, v = qkv(1, 2, 2, 24, 40, 64, seed=7)
    before = attn_cpu.compiled_modules()
    first = attn_torch.attention(q, k, v)
    assert attn_cpu.compiled_modules() == before + 1
    for _ in range(3):
        assert torch.equal(attn_torch.attention(q, k, v), first)
    assert attn_cpu.compiled_modules() == before + 1
    # Another mask is another module.
    attn_torch.attention(q, k, v, causal=True)
    assert attn_cpu.compiled_modules() == before + 2


def test_every_scale_is_the_default_kernel():
    """The GPU kernels take the scale as a launch argument: Hugging Face's
    scale=0.08838834764831845 for D=128 (one ulp from 1/math.sqrt(128)),
    Gemma's query_pre_attn_scalar and any other scale use the default's
    kernel (KernelSpec) and call key; the CPU path keeps one module for
    every scale (an argument of the module)."""
    hf = 0.08838834764831845
    assert hf != 1 / math.sqrt(128) and abs(hf - 128 ** -0.5) < 1e-16
    q, k, v = qkv(1, 2, 2, 16, 16, 128, seed=8, dtype=torch.bfloat16)
    default_spec = attn_torch._spec_and_shape("fwd", q, k, v, False, None,
                                              "", "sm_90a")[0]
    default_key = attn_torch._launcher_key("fwd", q, k, v, False, None, "",
                                           0)
    for scale in (hf, 0.09, 1.0, 256 ** -0.5):
        assert attn_torch._spec_and_shape("fwd", q, k, v, False, scale, "",
                                          "sm_90a")[0] == default_spec
        assert attn_torch._launcher_key("fwd", q, k, v, False, scale, "",
                                        0) == default_key
    # The CPU path: one module for both.
    before = attn_cpu.compiled_modules()
    default = attn_torch.attention(q, k, v)
    assert torch.equal(attn_torch.attention(q, k, v, scale=hf), default)
    assert attn_cpu.compiled_modules() == before + 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_two_scales_share_one_module_forward_and_backward(dtype):
    """The CPU module takes the scale as an argument (attn.attention's
    run-time `scale(%s)` operand): two scales compile one forward and one
    backward module between them, and both are right against float64,
    forward (out, lse) and backward (dq, dk, dv)."""
    variant = make_variant(True)
    q, k, v = qkv(1, 4, 2, 37, 53, 32, dtype, seed=11, grad=True)
    before = attn_cpu.compiled_modules()
    outs, compiled = [], []
    for i, scale in enumerate((0.07, 0.9)):
        out, lse = attn_torch.attention(q, k, v, causal=True, scale=scale,
                                        return_lse=True)
        g = torch.randn(out.shape, generator=torch.Generator().manual_seed(i))
        got = torch.autograd.grad(out, (q, k, v), g.to(dtype))
        compiled.append(attn_cpu.compiled_modules() - before)
        q64, k64, v64 = (t.detach().double().requires_grad_()
                         for t in (q, k, v))
        want, want_lse = reference(q64, k64, v64, variant, scale=scale)
        assert rel_err(out, want) <= TOL[dtype], scale
        assert torch.allclose(lse.double(), want_lse, atol=1e-4, rtol=1e-4)
        wanted = torch.autograd.grad(want, (q64, k64, v64), g.double())
        for name, a, w in zip(("dq", "dk", "dv"), got, wanted):
            assert rel_err(a, w) <= 3 * TOL[dtype], (scale, name)
        outs.append(out)
    # One forward and one backward module, both compiled for the first
    # scale; the second compiles nothing.
    assert compiled == [2, 2]
    # (Two scales, two answers: the argument is not ignored.)
    assert rel_err(outs[0], outs[1]) > 1e-2


def test_attn_tune_1_is_not_the_attn_tune_binary(monkeypatch):
    """ATTN_TUNE=1 switches tuning on first use on; the attn-tune binary is
    found elsewhere ($ATTN_TUNE_BIN, the build tree, PATH)."""
    monkeypatch.setenv("ATTN_TUNE", "1")
    monkeypatch.delenv("ATTN_TUNE_BIN", raising=False)
    assert tuning._find_attn_tune() != "1"
    monkeypatch.setenv("ATTN_TUNE_BIN", "/opt/attn/bin/attn-tune")
    assert tuning._find_attn_tune() == "/opt/attn/bin/attn-tune"


def test_tune_on_a_cpu_call_runs_the_cpu_path(monkeypatch):
    q, k, v = qkv(1, 2, 2, 16, 16, 64, seed=9)
    monkeypatch.setattr(attn_torch, "_TUNE_FROM_ENV", True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "tuning failed" warning
        out = attn_torch.attention(q, k, v, tune=True)
        assert rel_err(out, sdpa(q, k, v)) <= 2e-6
        assert rel_err(attn_torch.attention(q, k, v), out) == 0


def test_explain_a_cpu_call():
    q, k, v = qkv(1, 2, 2, 16, 16, 64, dtype=torch.bfloat16)
    choice = attn_torch.explain(q, k, v, causal=True)
    assert choice.source == "cpu" and choice.spec == "cpu-fwd-d64-bf16-causal"
    assert "CPU path" in choice.reason
    assert attn_torch.explain(q, k, v, scale=0.125).spec == \
        "cpu-fwd-d64-bf16-full"  # 1/sqrt(64): the default
    assert attn_torch.explain(q, k, v, window=(4, 4),
                              backward=True).entry == "attention_grad"
    assert attn_torch.explain(q, k, v, softcap=3.0,
                              backward=True).entry == "attention_grad"
    # ALiBi, forward and backward (the slopes are a call argument).
    assert attn_torch.explain(q, k, v, alibi=True,
                              backward=True).entry == "attention_grad"
    choice = attn_torch.explain(q, k, v, causal=True,
                                alibi_slopes=torch.rand(2))
    assert choice.spec == "cpu-fwd-d64-bf16-causal-alibi"
    with pytest.raises(ValueError, match=r"alibi_slopes must have shape"):
        attn_torch.explain(q, k, v, alibi_slopes=torch.rand(3))
