"""attn.torch.attention_varlen (packed variable-length sequences, attn/varlen.py):
each sequence against its own float64 attention, forward, LSE and
gradients, for every mask alignment; on the CPU path always, on CUDA when
there is a GPU (skipped otherwise); and its errors."""

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

import attn.torch as attn_torch  # noqa: E402
from attn import cpu as attn_cpu  # noqa: E402

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device"))]


@pytest.fixture(autouse=True)
def _cpu_path(request):
    if "cpu" in request.node.name and not attn_cpu.available():
        pytest.fail("libattn-c.so with the CPU entry points is not built "
                    "(ninja AttnCAPI): " + str(attn_cpu.library_candidates()))


def offsets(lengths, device):
    cu = [0]
    for n in lengths:
        cu.append(cu[-1] + n)
    return torch.tensor(cu, dtype=torch.int32, device=device)


def reference(q, k, v, lens_q, lens_k, causal=False, window=None,
              align="bottom_right", scale=None, slopes=None, softcap=None):
    """float64 attention of each sequence on its own (GQA by repeating K/V
    heads; the softcap, then ALiBi's ``slopes`` [H] or [sequences, H]:
    minus slope·|d(i) - j|); rows with no key: 0 and LSE -inf."""
    outs, lses = [], []
    sq = sk = 0
    for b, (nq, nk) in enumerate(zip(lens_q, lens_k)):
        qs = q[sq:sq + nq].double().transpose(0, 1)
        ks = k[sk:sk + nk].double().transpose(0, 1)
        vs = v[sk:sk + nk].double().transpose(0, 1)
        sq, sk = sq + nq, sk + nk
        group = qs.shape[0] // ks.shape[0]
        ks, vs = ks.repeat_interleave(group, 0), vs.repeat_interleave(group, 0)
        s = qs @ ks.transpose(-1, -2) * (scale or qs.shape[-1] ** -0.5)
        i = torch.arange(nq, device=q.device)[:, None]
        j = torch.arange(nk, device=q.device)[None, :]
        d = i + (nk - nq if align == "bottom_right" else 0)
        if softcap:
            s = softcap * torch.tanh(s / softcap)
        if slopes is not None:
            slope = (slopes[b] if slopes.dim() == 2 else slopes).double()
            s = s - slope[:, None, None] * (d - j).abs()
        seen = torch.ones(nq, nk, dtype=torch.bool, device=q.device)
        left, right = window or (-1, -1)
        if causal:
            right = 0
        if left >= 0:
            seen &= j >= d - left
        if right >= 0:
            seen &= j <= d + right
        s = s.masked_fill(~seen, float("-inf"))
        lse = torch.logsumexp(s, -1)
        p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
        outs.append((p @ vs).transpose(0, 1))
        lses.append(lse)
    return torch.cat(outs), torch.cat(lses, -1)


CASES = [
    dict(),
    dict(causal=True),
    dict(causal=True, mask_align="top_left"),
    dict(window=(3, 2)),
    dict(window=(4, 0), mask_align="top_left"),
    dict(window=(-1, 5)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(
    f"{k}{v}" for k, v in c.items()) or "full")
def test_varlen_matches_each_sequence(device, case):
    """Lengths with an empty query sequence, an empty key sequence, Nq > Nk
    and Nq < Nk in one batch, GQA 4:2: out, LSE and dQ/dK/dV equal each
    sequence's own float64 attention."""
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    tol = 2e-5 if device == "cpu" else 2e-2
    lens_q, lens_k = [5, 0, 70, 9, 3], [7, 3, 70, 4, 0]
    g = torch.Generator().manual_seed(0)
    mk = lambda n, h, d=64: torch.randn(  # noqa: E731
        n, h, d, generator=g).to(device=device, dtype=dtype).requires_grad_()
    q, k, v = mk(sum(lens_q), 4), mk(sum(lens_k), 2), mk(sum(lens_k), 2)
    out, lse = attn_torch.attention_varlen(
        q, k, v, offsets(lens_q, device), offsets(lens_k, device),
        return_lse=True, **case)
    assert out.shape == q.shape and lse.shape == (4, sum(lens_q))
    want, want_lse = reference(q, k, v, lens_q, lens_k, case.get("causal"),
                               case.get("window"),
                               case.get("mask_align", "bottom_right"))
    assert (out.double() - want).abs().max() < tol
    assert torch.equal(lse.isinf(), want_lse.isinf())
    assert (lse.double() - want_lse).nan_to_num(0.0).abs().max() < tol * 10
    grad_out = torch.randn(out.shape, generator=g).to(device=device,
                                                      dtype=dtype)
    grads = torch.autograd.grad(out, (q, k, v), grad_out)
    leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    want, _ = reference(*leaves, lens_q, lens_k, case.get("causal"),
                        case.get("window"),
                        case.get("mask_align", "bottom_right"))
    want_grads = torch.autograd.grad(want, leaves, grad_out.double())
    for name, got, exp in zip("qkv", grads, want_grads):
        err = (got.double() - exp).abs().max() / exp.abs().max().clamp_min(1)
        assert err < tol * 5, f"d{name}: {err}"


ALIBI_CASES = [
    dict(),
    dict(causal=True),
    dict(causal=True, mask_align="top_left"),
    dict(window=(3, 2)),
    dict(window=(4, 0), mask_align="top_left", softcap=2.0),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("slopes", ["h", "bh", "standard"])
@pytest.mark.parametrize("case", ALIBI_CASES, ids=lambda c: "-".join(
    f"{k}{v}" for k, v in c.items()) or "full")
def test_varlen_alibi_matches_each_sequence(device, slopes, case):
    """ALiBi over packed sequences: per head or per sequence and head
    slopes (random, as FlashAttention's tests make them), or alibi=True;
    distances are each sequence's own, in either alignment (the padding
    side keeps them): out and dQ/dK/dV against float64."""
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    tol = 2e-5 if device == "cpu" else 2e-2
    lens_q, lens_k = [5, 0, 40, 9, 3], [7, 3, 40, 4, 0]
    g = torch.Generator().manual_seed(1)
    mk = lambda n, h, d=64: torch.randn(  # noqa: E731
        n, h, d, generator=g).to(device=device, dtype=dtype).requires_grad_()
    q, k, v = mk(sum(lens_q), 4), mk(sum(lens_k), 2), mk(sum(lens_k), 2)
    if slopes == "standard":
        kw = dict(alibi=True)
        ref_slopes = attn_torch.standard_alibi_slopes(4, device)
    else:
        shape = (len(lens_q), 4) if slopes == "bh" else (4,)
        ref_slopes = (torch.rand(shape, generator=g) * 0.3).to(device)
        kw = dict(alibi_slopes=ref_slopes)
    out = attn_torch.attention_varlen(
        q, k, v, offsets(lens_q, device), offsets(lens_k, device), **kw,
        **case)
    args = (lens_q, lens_k, case.get("causal"), case.get("window"),
            case.get("mask_align", "bottom_right"))
    ref_kw = dict(slopes=ref_slopes, softcap=case.get("softcap"))
    want, _ = reference(q, k, v, *args, **ref_kw)
    assert (out.double() - want).abs().max() < tol
    grad_out = torch.randn(out.shape, generator=g).to(device=device,
                                                      dtype=dtype)
    grads = torch.autograd.grad(out, (q, k, v), grad_out)
    leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    want, _ = reference(*leaves, *args, **ref_kw)
    want_grads = torch.autograd.grad(want, leaves, grad_out.double())
    for name, got, exp in zip("qkv", grads, want_grads):
        err = (got.double() - exp).abs().max() / exp.abs().max().clamp_min(1)
        assert err < tol * 5, f"d{name}: {err}"


def test_varlen_larger_max_seqlen_pads_further():
    """max_seqlen_* larger than the longest sequence changes nothing."""
    q, k, v = (torch.randn(12, 2, 32) for _ in range(3))
    cu = offsets([4, 8], "cpu")
    a = attn_torch.attention_varlen(q, k, v, cu, cu, causal=True)
    b = attn_torch.attention_varlen(q, k, v, cu, cu, 20, 33, causal=True)
    assert torch.allclose(a, b, atol=1e-6)


@pytest.mark.parametrize("cu_q, cu_k, extra, message", [
    ([0, 4, 3], [0, 4, 8], {}, "cu_seqlens_q must rise from 0"),
    ([0, 4, 8], [1, 4, 8], {}, "cu_seqlens_k must rise from 0"),
    ([0, 4, 8], [0, 8], {}, "the same batch"),
    ([0, 4, 8], [0, 4, 8], {"max_seqlen_q": 3}, "max_seqlen_q must be"),
    ([0, 4, 8], [0, 4, 8], {"max_seqlen_k": 4.0}, "max_seqlen_k must be"),
])
def test_varlen_bad_offsets_are_named(cu_q, cu_k, extra, message):
    q, k, v = (torch.randn(8, 2, 32) for _ in range(3))
    with pytest.raises(ValueError, match=message):
        attn_torch.attention_varlen(q, k, v, torch.tensor(cu_q),
                                    torch.tensor(cu_k), **extra)


def test_varlen_needs_packed_tensors():
    q = torch.randn(1, 8, 2, 32)
    cu = torch.tensor([0, 8])
    with pytest.raises(ValueError, match=r"q must be a 3-D \[total_tokens"):
        attn_torch.attention_varlen(q, q, q, cu, cu)
    with pytest.raises(ValueError, match="int32 or int64"):
        x = torch.randn(8, 2, 32)
        attn_torch.attention_varlen(x, x, x, cu.float(), cu)
