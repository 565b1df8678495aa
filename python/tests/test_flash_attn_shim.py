"""attn.flash_attn_shim (FlashAttention's flash_attn_func API over
attn.torch.attention) on CPU tensors, the compiler's CPU path, against a
float64 reference with FlashAttention's semantics ([B, N, H, D],
bottom-right masks, the original head dim's scale)."""

import math
import sys

import pytest

torch = pytest.importorskip("torch")

from attn import cpu as attn_cpu  # noqa: E402

if attn_cpu._library() is None:
    pytest.skip("the compiler's CPU path (libattn-c.so) is not built",
                allow_module_level=True)

import attn.torch as attn_torch  # noqa: E402
from attn import flash_attn_shim as fa  # noqa: E402


def reference(q, k, v, causal=False, window=(-1, -1), softcap=0.0,
              scale=None, alibi_slopes=None):
    """FlashAttention's attention_ref in float64 ([B, N, H, D])."""
    q, k, v = (t.double().transpose(1, 2) for t in (q, k, v))
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    nq, nk = q.shape[2], k.shape[2]
    s = q @ k.transpose(-1, -2) * (scale or q.shape[-1] ** -0.5)
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(nq)[:, None] + nk - nq  # bottom-right diagonal
    j = torch.arange(nk)[None, :]
    if alibi_slopes is not None:  # [H] or [B, H]
        slopes = alibi_slopes.detach().double().expand(q.shape[0], q.shape[1])
        s = s - slopes[:, :, None, None] * (i - j).abs()
    left, right = window[0], 0 if causal else window[1]
    keep = torch.ones(nq, nk, dtype=torch.bool)
    if left >= 0:
        keep &= j >= i - left
    if right >= 0:
        keep &= j <= i + right
    p = s.masked_fill(~keep, -math.inf).softmax(-1).nan_to_num(0.0)
    return (p @ v).transpose(1, 2)


def qkv(b=2, nq=17, nk=23, hq=4, hkv=2, d=32, grad=False):
    torch.manual_seed(0)
    return [torch.randn(b, n, h, d, requires_grad=grad)
            for n, h in ((nq, hq), (nk, hkv), (nk, hkv))]


def close(out, ref, tol=1e-5):
    assert out.shape == ref.shape
    err = (out.double() - ref).abs().max().item()
    assert err < tol, err


def test_layout_is_batch_seq_heads_dim():
    q, k, v = qkv()
    out = fa.flash_attn_func(q, k, v)
    assert out.shape == (2, 17, 4, 32)
    close(out, reference(q, k, v))
    # The same numbers as attn's own [B, H, N, D] op.
    want = attn_torch.attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    assert torch.equal(out, want.transpose(1, 2))


@pytest.mark.parametrize("d", [59, 20])
def test_odd_head_dims_are_padded_with_their_own_scale(d):
    q, k, v = qkv(d=d)
    close(fa.flash_attn_func(q, k, v, causal=True),
          reference(q, k, v, causal=True))
    out = fa.flash_attn_func(q, k, v, softmax_scale=0.3)
    assert out.shape[-1] == d
    close(out, reference(q, k, v, scale=0.3))


def test_gqa_causal_bottom_right_and_gradients():
    q, k, v = qkv(grad=True)
    out = fa.flash_attn_func(q, k, v, causal=True)
    ref = reference(q, k, v, causal=True)
    close(out, ref)
    g = torch.randn_like(out)
    got = torch.autograd.grad(out, (q, k, v), g)
    want = torch.autograd.grad(ref, (q, k, v), g.double())
    for a, b in zip(got, want):
        close(a, b, 1e-4)
    # MQA, and Nq > Nk (rows before the diagonal see nothing: 0).
    q, k, v = qkv(nq=23, nk=17, hq=4, hkv=1)
    out = fa.flash_attn_func(q, k, v, causal=True)
    close(out, reference(q, k, v, causal=True))
    assert out[:, :6].abs().max() == 0


@pytest.mark.parametrize("window, causal", [((3, 5), False), ((4, -1), True),
                                            ((-1, 2), False),
                                            ((torch.tensor(3),
                                              torch.tensor(5)), False),
                                            (torch.tensor([6, 1]), True)])
def test_window(window, causal):
    q, k, v = qkv()
    close(fa.flash_attn_func(q, k, v, causal=causal, window_size=window),
          reference(q, k, v, causal=causal,
                    window=tuple(int(w) for w in window)))
    with pytest.raises(TypeError, match=r"window_size must be a \(left, "
                                        r"right\) pair"):
        fa.flash_attn_func(q, k, v, window_size=(1, 2, 3))


def fa_slopes(*shape, seed=0):
    """FlashAttention's tests' slopes: torch.rand · 0.3, float32."""
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed)) \
        * 0.3


def test_softcap():
    q, k, v = qkv()
    close(fa.flash_attn_func(q, k, v, softcap=5.0),
          reference(q, k, v, softcap=5.0))
    # softcap 0 is none, as in FlashAttention.
    assert torch.equal(fa.flash_attn_func(q, k, v, softcap=0.0),
                       fa.flash_attn_func(q, k, v))


@pytest.mark.parametrize("per_batch", [False, True], ids=["h", "bh"])
@pytest.mark.parametrize("kwargs, nq, nk", [
    (dict(), 17, 23), (dict(causal=True), 17, 23), (dict(causal=True), 23, 17),
    (dict(window_size=(5, 3)), 23, 17), (dict(softcap=3.0), 17, 23),
    (dict(causal=True, softcap=2.0, window_size=(6, -1)), 30, 30)],
    ids=["full", "causal", "causal-nq>nk", "window", "softcap",
         "softcap-window-causal"])
def test_alibi_slopes_any_values(kwargs, nq, nk, per_batch):
    """Any alibi_slopes, (nheads,) or (batch, nheads): FlashAttention's
    bias -slope·|i + seqlen_k - seqlen_q - j| (causal or not), forward and
    gradients (GQA), against float64."""
    q, k, v = qkv(nq=nq, nk=nk, grad=True)
    slopes = fa_slopes(*((2, 4) if per_batch else (4,)), seed=nq)
    out = fa.flash_attn_func(q, k, v, alibi_slopes=slopes, **kwargs)
    ref = reference(q, k, v, causal=kwargs.get("causal", False),
                    window=kwargs.get("window_size", (-1, -1)),
                    softcap=kwargs.get("softcap", 0.0), alibi_slopes=slopes)
    close(out, ref)
    g = torch.randn_like(out)
    for a, b in zip(torch.autograd.grad(out, (q, k, v), g),
                    torch.autograd.grad(ref, (q, k, v), g.double())):
        close(a, b, 1e-4)
    # The packed forms pass them on too.
    if nq == nk:
        qkv_ = torch.randn(2, nq, 3, 4, 32)  # (equal heads)
        close(fa.flash_attn_qkvpacked_func(qkv_, alibi_slopes=slopes,
                                           **kwargs),
              reference(*qkv_.unbind(2), causal=kwargs.get("causal", False),
                        window=kwargs.get("window_size", (-1, -1)),
                        softcap=kwargs.get("softcap", 0.0),
                        alibi_slopes=slopes))
    kv = torch.stack([k, v], dim=2).detach()
    close(fa.flash_attn_kvpacked_func(q.detach(), kv, alibi_slopes=slopes,
                                      **kwargs), ref.detach())


def test_packed():
    q, k, v = qkv(nk=17, hkv=4)
    out = fa.flash_attn_func(q, k, v, causal=True)
    kv = torch.stack([k, v], dim=2)
    assert torch.equal(fa.flash_attn_kvpacked_func(q, kv, causal=True), out)
    qkv_ = torch.stack([q, k, v], dim=2)
    assert torch.equal(fa.flash_attn_qkvpacked_func(qkv_, causal=True), out)


def test_return_attn_probs_and_deterministic():
    q, k, v = qkv(grad=True)
    out, lse, probs = fa.flash_attn_func(q, k, v, return_attn_probs=True,
                                         deterministic=True)
    assert probs is None  # FlashAttention returns them only with dropout
    assert lse.shape == (2, 4, 17) and lse.dtype == torch.float32
    close(out, reference(q, k, v))
    qd, kd = q.double().transpose(1, 2), k.double().transpose(1, 2)
    kd = kd.repeat_interleave(2, 1)
    want = torch.logsumexp(qd @ kd.transpose(-1, -2) / math.sqrt(32), -1)
    close(lse, want)


def test_errors_name_the_argument():
    q, k, v = qkv()
    with pytest.raises(NotImplementedError, match=r"^dropout_p: "):
        fa.flash_attn_func(q, k, v, dropout_p=0.1)
    with pytest.raises(ValueError, match=r"alibi_slopes must be a tensor of "
                                         r"shape \(4,\) or \(2, 4\)"):
        fa.flash_attn_func(q, k, v, alibi_slopes=torch.rand(3))
    with pytest.raises(ValueError, match=r"alibi_slopes must be a tensor of "
                                         r"shape \(4,\) or \(2, 4\)"):
        fa.flash_attn_func(q, k, v, alibi_slopes=torch.rand(4, 2))
    with pytest.raises(TypeError, match=r"alibi_slopes must be "
                                        r"torch.float32, got torch.float64"):
        fa.flash_attn_func(q, k, v, alibi_slopes=torch.rand(4).double())
    assert not hasattr(fa, "attn_alibi_slopes")
    with pytest.raises(TypeError, match=r"window_size must be a \(left, "
                                        r"right\) pair"):
        fa.flash_attn_func(q, k, v, window_size=3)
    with pytest.raises(ValueError, match=r"^q must be a 4-D \[batch, "
                                         r"seqlen, heads, head_dim\]"):
        fa.flash_attn_func(q[0], k, v)
    with pytest.raises(ValueError, match=r"^kv must be a \[batch, seqlen, 2"):
        fa.flash_attn_kvpacked_func(q, k)
    with pytest.raises(ValueError, match=r"^qkv must be a \[batch, seqlen, 3"):
        fa.flash_attn_qkvpacked_func(q)


@pytest.mark.parametrize("causal, window", [(False, (-1, -1)),
                                            (True, (-1, -1)),
                                            (False, (5, 3))])
def test_varlen_is_each_sequence_on_its_own(causal, window):
    """flash_attn_varlen_func over packed sequences of different lengths
    equals flash_attn_func on each sequence alone (bottom-right masks per
    sequence), and its LSE is [H, total_q]; the packed forms agree."""
    torch.manual_seed(1)
    lens_q, lens_k = [9, 1, 17], [12, 6, 17]
    q = torch.randn(sum(lens_q), 4, 32)
    k, v = (torch.randn(sum(lens_k), 4, 32) for _ in range(2))
    cu = lambda ls: torch.tensor([0] + [sum(ls[:i + 1]) for i in  # noqa: E731
                                        range(len(ls))], dtype=torch.int32)
    out, lse, _ = fa.flash_attn_varlen_func(
        q, k, v, cu(lens_q), cu(lens_k), max(lens_q), max(lens_k),
        causal=causal, window_size=window, return_attn_probs=True)
    assert out.shape == q.shape and lse.shape == (4, sum(lens_q))
    sq = sk = 0
    for nq, nk in zip(lens_q, lens_k):
        one = reference(q[None, sq:sq + nq], k[None, sk:sk + nk],
                        v[None, sk:sk + nk], causal=causal, window=window)
        close(out[None, sq:sq + nq], one)
        sq, sk = sq + nq, sk + nk
    kv = torch.stack([k, v], dim=1)
    assert torch.equal(fa.flash_attn_varlen_kvpacked_func(
        q, kv, cu(lens_q), cu(lens_k), max(lens_q), max(lens_k),
        causal=causal, window_size=window), out)
    same = torch.randn(sum(lens_k), 3, 4, 32)
    packed = fa.flash_attn_varlen_qkvpacked_func(
        same, cu(lens_k), max(lens_k), causal=causal, window_size=window)
    assert torch.equal(packed, fa.flash_attn_varlen_func(
        same[:, 0], same[:, 1], same[:, 2], cu(lens_k), cu(lens_k),
        max(lens_k), max(lens_k), causal=causal, window_size=window))


@pytest.mark.parametrize("per_seq", [False, True], ids=["h", "bh"])
@pytest.mark.parametrize("causal, window, softcap", [
    (False, (-1, -1), 0.0), (True, (-1, -1), 0.0), (False, (5, 3), 0.0),
    (True, (-1, -1), 2.0)], ids=["full", "causal", "window", "causal-softcap"])
def test_varlen_alibi_is_each_sequence_on_its_own(causal, window, softcap,
                                                   per_seq):
    """flash_attn_varlen_func with alibi_slopes ((nheads,) or one row per
    sequence): each sequence's own bottom-right distances, forward and
    gradients, against float64 per sequence; the kvpacked form agrees."""
    torch.manual_seed(5)
    lens_q, lens_k = [9, 1, 17, 6], [12, 6, 17, 3]
    q = torch.randn(sum(lens_q), 4, 32, requires_grad=True)
    k, v = (torch.randn(sum(lens_k), 2, 32, requires_grad=True)
            for _ in range(2))
    slopes = fa_slopes(*((4, 4) if per_seq else (4,)), seed=7)
    args = (cu_of(lens_q), cu_of(lens_k), max(lens_q), max(lens_k))
    kw = dict(causal=causal, window_size=window, softcap=softcap,
              alibi_slopes=slopes)
    out = fa.flash_attn_varlen_func(q, k, v, *args, **kw)
    g = torch.randn_like(out)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), g)
    sq = sk = 0
    for b, (nq, nk) in enumerate(zip(lens_q, lens_k)):
        one = slopes[b] if per_seq else slopes
        ref = reference(q[None, sq:sq + nq], k[None, sk:sk + nk],
                        v[None, sk:sk + nk], causal=causal, window=window,
                        softcap=softcap, alibi_slopes=one)
        close(out[None, sq:sq + nq], ref)
        got = torch.autograd.grad(ref, (q, k, v), g[None, sq:sq + nq].double())
        close(dq[sq:sq + nq], got[0][sq:sq + nq], 1e-4)
        close(dk[sk:sk + nk], got[1][sk:sk + nk], 1e-4)
        close(dv[sk:sk + nk], got[2][sk:sk + nk], 1e-4)
        sq, sk = sq + nq, sk + nk
    kv = torch.stack([k, v], dim=1)
    assert torch.equal(fa.flash_attn_varlen_kvpacked_func(q, kv, *args, **kw),
                       out)


@pytest.mark.parametrize("per_seq", [False, True], ids=["h", "bh"])
def test_paged_kv_alibi_is_the_contiguous_call(per_seq):
    """block_table with alibi_slopes: the contiguous call's numbers and
    gradients (reaching the caches), per-sequence slopes included."""
    torch.manual_seed(6)
    q = torch.randn(sum(LENS_Q), 4, 32, requires_grad=True)
    k, v = (torch.randn(sum(LENS_K), 2, 32) for _ in range(2))
    k_cache, table, pages, rows = paged_cache(k, LENS_K, 5, seed=2)
    v_cache, _, _, _ = paged_cache(v, LENS_K, 5, seed=2)
    k_cache.requires_grad_()
    v_cache.requires_grad_()
    k.requires_grad_()
    v.requires_grad_()
    slopes = fa_slopes(*((4, 4) if per_seq else (4,)), seed=8)
    args = (cu_of(LENS_Q), cu_of(LENS_K), max(LENS_Q), max(LENS_K))
    out = fa.flash_attn_varlen_func(q, k_cache, v_cache, *args, causal=True,
                                    alibi_slopes=slopes, block_table=table)
    want = fa.flash_attn_varlen_func(q, k, v, *args, causal=True,
                                     alibi_slopes=slopes)
    assert torch.equal(out, want)
    g = torch.randn_like(out)
    _, dk_cache, dv_cache = torch.autograd.grad(out, (q, k_cache, v_cache),
                                                g)
    _, dk, dv = torch.autograd.grad(want, (q, k, v), g)
    assert torch.equal(dk_cache[pages, rows], dk)
    assert torch.equal(dv_cache[pages, rows], dv)
    sq = sk = 0
    for b, (nq, nk) in enumerate(zip(LENS_Q, LENS_K)):
        if nk:
            close(out[None, sq:sq + nq],
                  reference(q[None, sq:sq + nq], k[None, sk:sk + nk],
                            v[None, sk:sk + nk], causal=True,
                            alibi_slopes=slopes[b] if per_seq else slopes))
        sq, sk = sq + nq, sk + nk


def test_varlen_alibi_errors_name_the_argument():
    x = torch.randn(8, 2, 32)
    cu = torch.tensor([0, 3, 8], dtype=torch.int32)
    with pytest.raises(ValueError, match=r"^alibi_slopes must be a tensor "
                                         r"of shape \(2,\) or \(2, 2\)"):
        fa.flash_attn_varlen_func(x, x, x, cu, cu, 5, 5,
                                  alibi_slopes=torch.rand(3, 2))
    with pytest.raises(TypeError, match=r"alibi_slopes must be "
                                        r"torch.float32"):
        fa.flash_attn_varlen_func(x, x, x, cu, cu, 5, 5,
                                  alibi_slopes=torch.rand(2).half())


def test_varlen_errors_name_the_argument():
    x = torch.randn(8, 2, 32)
    cu = torch.tensor([0, 8], dtype=torch.int32)
    with pytest.raises(NotImplementedError, match=r"^dropout_p: "):
        fa.flash_attn_varlen_func(x, x, x, cu, cu, 8, 8, dropout_p=0.5)
    with pytest.raises(ValueError, match=r"^kv must be a \[total_tokens, 2"):
        fa.flash_attn_varlen_kvpacked_func(x, x, cu, cu, 8, 8)
    with pytest.raises(ValueError, match=r"^qkv must be a \[total_tokens, 3"):
        fa.flash_attn_varlen_qkvpacked_func(x, cu, 8)


def cu_of(lens):
    return torch.tensor([0] + [sum(lens[:i + 1]) for i in range(len(lens))],
                        dtype=torch.int32)


def paged_cache(x, lens, page, seed=0):
    """x [total, H, D] packed by ``lens`` as FlashAttention's paged cache:
    (cache [num_blocks, page, H, D], block_table int32 [B, width], pages,
    rows), built by loops: each sequence's blocks are shuffled pages,
    unused rows and pages hold junk (x 100), entries past a sequence's
    blocks are -1, and token i of x sits at cache[pages[i], rows[i]]."""
    g = torch.Generator().manual_seed(seed)
    need = [-(-n // page) for n in lens]
    num_blocks = sum(need) + 3
    cache = torch.randn((num_blocks, page) + tuple(x.shape[1:]),
                        generator=g, dtype=x.dtype) * 100
    order = torch.randperm(num_blocks, generator=g).tolist()
    table = torch.full((len(lens), max(need) + 2), -1, dtype=torch.int32)
    pages, rows = [], []
    for b, n in enumerate(lens):
        for t in range(n):
            if t % page == 0:
                table[b, t // page] = order.pop()
            pages.append(int(table[b, t // page]))
            rows.append(t % page)
    pages, rows = torch.tensor(pages), torch.tensor(rows)
    with torch.no_grad():
        cache[pages, rows] = x
    return cache, table, pages, rows


LENS_Q, LENS_K = [9, 1, 17, 4], [12, 6, 17, 0]


@pytest.mark.parametrize("page", [1, 5, 16, 32])
@pytest.mark.parametrize("causal, window", [(False, (-1, -1)),
                                            (True, (-1, -1)),
                                            (False, (5, 3))])
def test_paged_kv_is_the_contiguous_call(page, causal, window):
    """block_table: key t of sequence b at k[block_table[b, t // page],
    t % page] (pages that do not divide the lengths, shuffled, junk
    around them, -1 past each sequence's blocks; an empty sequence; GQA):
    the same numbers as the call with contiguous k and v, and FlashAttention's
    semantics (float64, per sequence)."""
    torch.manual_seed(2)
    q = torch.randn(sum(LENS_Q), 4, 32)
    k, v = (torch.randn(sum(LENS_K), 2, 32) for _ in range(2))
    k_cache, table, _, _ = paged_cache(k, LENS_K, page, seed=1)
    v_cache, table_v, _, _ = paged_cache(v, LENS_K, page, seed=1)
    assert torch.equal(table, table_v)
    args = (cu_of(LENS_Q), cu_of(LENS_K), max(LENS_Q), max(LENS_K))
    kw = dict(causal=causal, window_size=window, return_attn_probs=True)
    out, lse, _ = fa.flash_attn_varlen_func(q, k_cache, v_cache, *args,
                                            block_table=table, **kw)
    want, want_lse, _ = fa.flash_attn_varlen_func(q, k, v, *args, **kw)
    assert torch.equal(out, want) and torch.equal(lse, want_lse)
    sq = sk = 0
    for nq, nk in zip(LENS_Q, LENS_K):
        if nk:
            close(out[None, sq:sq + nq],
                  reference(q[None, sq:sq + nq], k[None, sk:sk + nk],
                            v[None, sk:sk + nk], causal=causal,
                            window=window))
        sq, sk = sq + nq, sk + nk


@pytest.mark.parametrize("causal", [False, True])
def test_paged_kv_gradients_reach_the_caches(causal):
    """dq as the contiguous call's; dk, dv land on the pages' rows the
    keys came from (zero elsewhere), as the contiguous call's dk, dv and
    float64's; MQA, page 7 (dividing none of the lengths)."""
    torch.manual_seed(3)
    q = torch.randn(sum(LENS_Q), 4, 24, requires_grad=True)
    k, v = (torch.randn(sum(LENS_K), 1, 24, requires_grad=True)
            for _ in range(2))
    k_cache, table, pages, rows = paged_cache(k.detach(), LENS_K, 7)
    v_cache, _, _, _ = paged_cache(v.detach(), LENS_K, 7)
    k_cache.requires_grad_()
    v_cache.requires_grad_()
    args = (cu_of(LENS_Q), cu_of(LENS_K), max(LENS_Q), max(LENS_K))
    out = fa.flash_attn_varlen_func(q, k_cache, v_cache, *args,
                                    causal=causal, block_table=table)
    want = fa.flash_attn_varlen_func(q, k, v, *args, causal=causal)
    assert torch.equal(out, want)
    g = torch.randn_like(out)
    dq, dk_cache, dv_cache = torch.autograd.grad(out, (q, k_cache, v_cache),
                                                 g)
    dq_want, dk, dv = torch.autograd.grad(want, (q, k, v), g)
    assert torch.equal(dq, dq_want)
    for d_cache, d in ((dk_cache, dk), (dv_cache, dv)):
        assert torch.equal(d_cache[pages, rows], d)
        d_cache = d_cache.clone()
        d_cache[pages, rows] = 0
        assert d_cache.abs().max() == 0
    # float64, per sequence.
    sq = sk = 0
    for nq, nk in zip(LENS_Q, LENS_K):
        if nk:
            ref = reference(q[None, sq:sq + nq], k[None, sk:sk + nk],
                            v[None, sk:sk + nk], causal=causal)
            got = torch.autograd.grad(ref, (q, k, v), g[None, sq:sq + nq])
            close(dq[sq:sq + nq], got[0][sq:sq + nq], 1e-4)
            close(dk_cache[pages[sk:sk + nk], rows[sk:sk + nk]],
                  got[1][sk:sk + nk], 1e-4)
            close(dv_cache[pages[sk:sk + nk], rows[sk:sk + nk]],
                  got[2][sk:sk + nk], 1e-4)
        sq, sk = sq + nq, sk + nk


def test_paged_kv_shared_pages_and_offsets():
    """Two sequences reading one page (a shared prefix) get its keys both,
    and its gradient is the sum of theirs; cu_seqlens_k counts only by its
    differences (FlashAttention reads no packed k with block_table)."""
    torch.manual_seed(4)
    page = 4
    k_cache = torch.randn(3, page, 2, 16, requires_grad=True)
    v_cache = torch.randn(3, page, 2, 16, requires_grad=True)
    table = torch.tensor([[2, 0], [2, 1]], dtype=torch.int32)
    lens_q, lens_k = [3, 5], [6, 7]
    q = torch.randn(sum(lens_q), 2, 16)
    k = torch.cat([k_cache[[2, 0]].flatten(0, 1)[:6],
                   k_cache[[2, 1]].flatten(0, 1)[:7]])
    v = torch.cat([v_cache[[2, 0]].flatten(0, 1)[:6],
                   v_cache[[2, 1]].flatten(0, 1)[:7]])
    args = (cu_of(lens_q), cu_of(lens_k), 5, 7)
    out = fa.flash_attn_varlen_func(q, k_cache, v_cache, *args, causal=True,
                                    block_table=table)
    want = fa.flash_attn_varlen_func(q, k, v, *args, causal=True)
    assert torch.equal(out, want)
    g = torch.randn_like(out)
    got = torch.autograd.grad(out, (k_cache, v_cache), g)
    expected = torch.autograd.grad(want, (k_cache, v_cache), g)
    for a, b in zip(got, expected):
        close(a, b.double(), 1e-6)
    shifted = cu_of(lens_k) + 100
    assert torch.equal(fa.flash_attn_varlen_func(
        q, k_cache, v_cache, cu_of(lens_q), shifted, 5, 7, causal=True,
        block_table=table), out)


def test_paged_kv_errors_name_the_argument():
    cache = torch.randn(4, 4, 2, 16)
    q = torch.randn(10, 2, 16)
    cu_q = cu_of([5, 5])
    cu_k = cu_of([6, 3])
    table = torch.tensor([[0, 1], [3, -1]], dtype=torch.int32)

    def call(k=cache, v=cache, block_table=table, cu_seqlens_k=cu_k):
        return fa.flash_attn_varlen_func(q, k, v, cu_q, cu_seqlens_k, 5, 8,
                                         block_table=block_table)
    call()  # valid
    with pytest.raises(ValueError, match=r"^block_table must be a 2-D int32 "
                                         r"\[batch, max_num_blocks_per_seq\] "
                                         r"tensor, got torch.int64"):
        call(block_table=table.long())
    with pytest.raises(ValueError, match=r"^block_table must be a 2-D int32"):
        call(block_table=table.reshape(-1))
    with pytest.raises(ValueError, match=r"^block_table has 1 rows but "
                                         r"cu_seqlens_k gives 2 sequences"):
        call(block_table=table[:1])
    with pytest.raises(ValueError, match=r"^block_table: sequence 0 has 6 "
                                         r"keys .* more than its 1 blocks "
                                         r"of page_block_size 4"):
        call(block_table=table[:, :1].contiguous())
    with pytest.raises(ValueError, match=r"^block_table: block 4 is out of "
                                         r"range for paged caches of 4"):
        call(block_table=torch.tensor([[0, 4], [3, -1]], dtype=torch.int32))
    with pytest.raises(ValueError, match=r"^block_table: block -1 is out of "
                                         r"range"):
        call(block_table=torch.tensor([[0, 1], [-1, 2]], dtype=torch.int32))
    with pytest.raises(ValueError, match=r"^k must be a 4-D \[num_blocks, "
                                         r"page_block_size, heads, head_dim\]"
                                         r" paged cache with block_table"):
        call(k=cache.flatten(0, 1))
    with pytest.raises(ValueError, match=r"^k and v must be paged caches of "
                                         r"the same \[num_blocks, "
                                         r"page_block_size, heads\]"):
        call(v=cache[:, :2])
    with pytest.raises(ValueError, match=r"^cu_seqlens_k must not decrease"):
        call(cu_seqlens_k=torch.tensor([0, 6, 3], dtype=torch.int32))
    with pytest.raises(ValueError, match=r"^cu_seqlens_k must be a 1-D "
                                         r"int32"):
        call(cu_seqlens_k=cu_k.float())


def test_install_as_flash_attn(monkeypatch):
    monkeypatch.delitem(sys.modules, "flash_attn", raising=False)
    monkeypatch.delitem(sys.modules, "flash_attn.flash_attn_interface",
                        raising=False)
    fa.install()
    from flash_attn import flash_attn_func  # noqa: F401
    import flash_attn
    assert flash_attn is fa and flash_attn_func is fa.flash_attn_func


def test_the_gpu_runner_counts_outcomes(tmp_path):
    """test/gpu/flash_attn/conftest.py (run.sh's): the shim as flash_attn,
    NotImplementedError as a skip of its own, failures by statement,
    seeded sampling, counts.json."""
    import json
    import shutil
    import subprocess
    from pathlib import Path
    here = Path(__file__).resolve()
    for name in ("conftest.py", "einops_compat.py"):
        shutil.copy(here.parents[2] / "test" / "gpu" / "flash_attn" / name,
                    tmp_path)
    (tmp_path / "test_x.py").write_text(
        "import pytest, torch\n"
        "from flash_attn import flash_attn_func\n"
        "@pytest.mark.parametrize('i', range(9))\n"
        "def test_a(i):\n"
        "    q = torch.randn(1, 4, 1, 8)\n"
        "    if i % 3 == 0:\n"
        "        flash_attn_func(q, q, q, dropout_p=0.1)\n"
        "    if i % 3 == 1:\n"
        "        assert i < 0\n"
        "def test_b():\n"
        "    pytest.skip('reference OOM')\n"
        "@pytest.mark.parametrize('dropout_p', [0.0, 0.17])\n"
        "def test_c(dropout_p):\n"
        "    from flash_attn.layers.rotary import apply_rotary_emb\n"
        "    from flash_attn import flash_attn_with_kvcache\n"
        "    flash_attn_with_kvcache()\n")
    counts = tmp_path / "counts.json"

    def run(*args):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "--attn-counts", str(counts), *args, "test_x.py"],
            cwd=tmp_path, capture_output=True, text=True,
            env=dict(__import__("os").environ,
                     PYTHONPATH=str(here.parents[1])))
        assert done.returncode == 1, done.stdout + done.stderr
        return json.loads(counts.read_text())
    data = run()
    # test_c: dropout 0.17 deselected; the KV-cache function upstream's
    # file imports is there, and refuses.
    assert data["totals"] == {"passed": 3, "failed": 3, "skipped": 1,
                              "not_implemented": 4}
    assert data["per_test"]["test_c"] == {"not_implemented": 1}
    failed, = data["by_reason"]["failed"]
    assert failed["reason"] == "AssertionError: assert i < 0"
    assert data["by_reason"]["not_implemented"][0]["reason"].startswith(
        "not implemented: NotImplementedError: dropout_p: ")
    assert data["by_reason"]["skipped"][0]["reason"] == \
        "Skipped: reference OOM"
    sampled = run("--attn-sample", "4")
    assert sampled["per_test"]["test_b"] == {"skipped": 1}
    assert sum(sampled["per_test"]["test_a"].values()) == 4
    only = run("--attn-functions", "test_a,test_c")
    assert set(only["per_test"]) == {"test_a", "test_c"}
