"""attn.torch.attention on a GPU against float32 references and PyTorch's
SDPA. Skipped (visibly) without PyTorch or a CUDA device. Kernels come from
$ATTN_KERNEL_PACK (the GPU host) or are compiled into the cache.

Run on the GPU host:  ATTN_KERNEL_PACK=pack python -m pytest -v -s \
    python/tests/test_torch_gpu.py
"""

import math
import os
import time

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import attn  # noqa: E402
import attn.cache  # noqa: E402
import attn.torch as attn_torch  # noqa: E402
from attn import runtime  # noqa: E402


@pytest.fixture(autouse=True)
def _keep_cache(monkeypatch):
    # conftest gives each test a fresh cache; on the GPU host the kernels
    # come from the pack, elsewhere share one cache across this file.
    if os.environ.get("ATTN_GPU_TEST_CACHE"):
        monkeypatch.setenv("ATTN_CACHE_DIR", os.environ["ATTN_GPU_TEST_CACHE"])
    if os.environ.get("ATTN_GPU_TEST_PACK"):
        monkeypatch.setenv("ATTN_KERNEL_PACK", os.environ["ATTN_GPU_TEST_PACK"])


def reference(q, k, v, causal, scale=None):
    """float32 attention with attn's semantics (GQA, bottom-right causal,
    fully masked rows = 0)."""
    qf, kf, vf = q.float(), k.float(), v.float()
    group = q.shape[1] // k.shape[1]
    kf = kf.repeat_interleave(group, dim=1)
    vf = vf.repeat_interleave(group, dim=1)
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = torch.matmul(qf, kf.transpose(-1, -2)) * scale
    nq, nk = q.shape[2], k.shape[2]
    if causal:
        i = torch.arange(nq, device=q.device)[:, None]
        j = torch.arange(nk, device=q.device)[None, :]
        s = s.masked_fill(j > i + (nk - nq), -math.inf)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    return torch.matmul(p, vf), lse


def rel_err(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm().clamp_min(1e-30)).item()


def inputs(b, hq, hkv, nq, nk, d, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    mk = lambda h, n: torch.randn(b, h, n, d, device="cuda", dtype=dtype,  # noqa: E731
                                  generator=g)
    return mk(hq, nq), mk(hkv, nk), mk(hkv, nk)


torch.backends.cuda.matmul.allow_tf32 = False

SHAPES = [  # B, Hq, Hkv, Nq, Nk
    (2, 4, 4, 128, 128),
    (1, 8, 2, 200, 333),      # GQA, lengths not multiples of the tiles
    (2, 4, 1, 1, 77),         # one query row (decode), MQA
    (1, 2, 2, 300, 100),      # Nq > Nk: causal rows with no key
    (1, 4, 4, 1024, 1024),
]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16],
                         ids=["bf16", "f16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [40, 64, 96, 128, 192, 256])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matches_reference(shape, d, causal, dtype):
    b, hq, hkv, nq, nk = shape
    q, k, v = inputs(b, hq, hkv, nq, nk, d, dtype)
    out, lse = attn_torch.attention(q, k, v, causal=causal, return_lse=True)
    ref, ref_lse = reference(q, k, v, causal)
    assert out.shape == ref.shape and out.dtype == dtype
    assert not out.isnan().any()
    assert rel_err(out, ref) <= 1e-2
    finite = torch.isfinite(ref_lse)
    assert torch.equal(torch.isfinite(lse), finite)
    assert (out[~finite[..., None].expand_as(out)] == 0).all()
    assert rel_err(lse[finite], ref_lse[finite]) <= 1e-3
    if not causal or nq == nk:  # SDPA's causal mask is top-left aligned
        sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                              enable_gqa=hq != hkv)
        assert rel_err(out, sdpa) <= 1e-2


def test_scale_is_honoured():
    """The scale is a launch argument: every value runs on one kernel,
    forward and backward, each checked against the reference."""
    q, k, v = inputs(1, 4, 4, 96, 96, 64, torch.bfloat16, seed=1)
    dirs = set()
    for scale in (0.3, 64 ** -0.5, 0.08838834764831845, 1.0):
        out = attn_torch.attention(q, k, v, scale=scale)
        assert rel_err(out, reference(q, k, v, False, scale)[0]) <= 1e-2
        dirs.add(attn_torch.explain(q, k, v, scale=scale).kernel_dir)
    assert len(dirs) == 1


def test_strided_inputs_in_place_and_copied():
    b, n, h, d = 2, 160, 4, 64
    # [B, N, H, D] memory viewed as [B, H, N, D]: read in place.
    base = torch.randn(3, b, n, h, d, device="cuda", dtype=torch.bfloat16)
    q, k, v = (base[i].transpose(1, 2) for i in range(3))
    assert not q.is_contiguous()
    out = attn_torch.attention(q, k, v, causal=True)
    assert rel_err(out, reference(q, k, v, True)[0]) <= 1e-2
    # Last dimension not contiguous: copied first.
    qt = torch.randn(b, h, d, n, device="cuda", dtype=torch.bfloat16)
    qt = qt.transpose(2, 3)
    out = attn_torch.attention(qt, k, v)
    assert rel_err(out, reference(qt, k, v, False)[0]) <= 1e-2
    # Broadcast K/V over the batch (stride 0).
    kb, vb = k[:1].expand(b, -1, -1, -1), v[:1].expand(b, -1, -1, -1)
    out = attn_torch.attention(q, kb, vb)
    assert rel_err(out, reference(q, kb, vb, False)[0]) <= 1e-2


def test_runs_on_the_current_stream():
    q, k, v = inputs(2, 8, 8, 512, 512, 128, torch.bfloat16, seed=2)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out = attn_torch.attention(q, k, v, causal=True)
        ref = reference(q, k, v, True)[0]
        err = rel_err(out, ref)
    side.synchronize()
    assert err <= 1e-2


def test_op_and_direct_path_agree():
    q, k, v = inputs(1, 4, 2, 77, 130, 64, torch.float16, seed=3)
    direct = attn_torch.attention(q, k, v, causal=True)
    via_op, _ = torch.ops.attn.attention(q, k, v, True, None)
    assert torch.equal(direct, via_op)


def test_repeated_calls_take_the_cached_launch_safely():
    """The second call with one key takes the cached launch; what the key
    does not cover (data, alignment, autograd, the stream, a cleared
    cache) must still be honoured."""
    shape = (1, 4, 2, 100, 130, 64)
    q, k, v = inputs(*shape, torch.bfloat16, seed=7)
    first, lse1 = attn_torch.attention(q, k, v, causal=True, return_lse=True)
    q2, k2, v2 = inputs(*shape, torch.bfloat16, seed=8)
    second, lse2 = attn_torch.attention(q2, k2, v2, causal=True,
                                        return_lse=True)
    ref, ref_lse = reference(q2, k2, v2, True)
    assert rel_err(second, ref) <= 1e-2
    assert (lse2 - ref_lse).abs().max().item() <= 1e-3
    assert first.data_ptr() != second.data_ptr()  # a fresh output each call
    assert rel_err(first, reference(q, k, v, True)[0]) <= 1e-2
    # Same shape and strides, data 2 bytes off the 16-byte alignment.
    base = torch.randn(q.numel() + 1, device="cuda", dtype=torch.bfloat16)
    qm = base[1:].view(q.shape)
    assert qm.stride() == q.stride() and qm.data_ptr() % 16
    out = attn_torch.attention(qm, k, v, causal=True)
    assert rel_err(out, reference(qm, k, v, True)[0]) <= 1e-2
    # Autograd after a cached call still records the op.
    qg = q.clone().requires_grad_(True)
    assert attn_torch.attention(qg, k, v, causal=True).grad_fn is not None
    # Another stream.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out = attn_torch.attention(q2, k2, v2, causal=True)
    side.synchronize()
    assert rel_err(out, ref) <= 1e-2
    # A cleared kernel cache drops the cached launches with the handles.
    attn_torch.clear_kernel_cache()
    out = attn_torch.attention(q2, k2, v2, causal=True)
    out = attn_torch.attention(q2, k2, v2, causal=True)
    assert rel_err(out, ref) <= 1e-2


def test_wrong_dtype_names_the_tensor():
    q, k, v = inputs(1, 2, 2, 16, 16, 64, torch.bfloat16)
    with pytest.raises(TypeError, match="v is torch.float16 but q is "
                                        "torch.bfloat16"):
        attn_torch.attention(q, k, v.half())


def test_opcheck():
    q, k, v = inputs(1, 4, 2, 64, 80, 64, torch.bfloat16, seed=4)
    torch.library.opcheck(torch.ops.attn.attention.default,
                          (q, k, v, True, None),
                          test_utils=("test_schema", "test_faketensor"))


def test_torch_compile_fullgraph():
    q, k, v = inputs(2, 4, 4, 256, 256, 64, torch.bfloat16, seed=5)

    def block(q, k, v):
        return attn_torch.attention(q * 1.5, k, v, causal=True).relu() + 1

    compiled = torch.compile(block, fullgraph=True)
    assert rel_err(compiled(q, k, v), block(q, k, v)) <= 1e-3


def _backward_available():
    if not runtime.has_backward(runtime.load_library()):
        return False
    q, k, v = inputs(1, 2, 2, 64, 64, 64, torch.bfloat16)
    q.requires_grad_(True)
    try:
        attn_torch.attention(q, k, v).sum().backward()
    except NotImplementedError:
        return False
    return True


def test_backward_without_kernels_says_what_is_missing():
    if _backward_available():
        pytest.skip("the backward kernels exist here")
    q, k, v = (t.requires_grad_(True) for t in
               inputs(1, 2, 2, 64, 64, 64, torch.bfloat16))
    out = attn_torch.attention(q, k, v)
    with pytest.raises(NotImplementedError,
                       match=r"backward: .*(attn_kernel_launch_backward|"
                             r"--backward|no bwd-d64-bf16-full)"):
        out.sum().backward()


GRAD_SHAPES = [(2, 4, 4, 128, 128, 64), (1, 8, 2, 200, 333, 128),
               (1, 2, 2, 300, 100, 64), (2, 4, 1, 513, 257, 128)]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", GRAD_SHAPES,
                         ids=lambda s: "x".join(map(str, s)))
def test_gradients_match_float32(shape, causal):
    if not _backward_available():
        pytest.skip("no backward kernels (runtime C ABI or attn-compile "
                    "--backward missing)")
    b, hq, hkv, nq, nk, d = shape
    q, k, v = inputs(b, hq, hkv, nq, nk, d, torch.bfloat16, seed=6)
    grad = torch.randn(b, hq, nq, d, device="cuda", dtype=torch.bfloat16)
    ours = [t.clone().requires_grad_(True) for t in (q, k, v)]
    attn_torch.attention(*ours, causal=causal).backward(grad)
    ref = [t.float().requires_grad_(True) for t in (q, k, v)]
    reference(*ref, causal)[0].backward(grad.float())
    for name, a, r in zip("qkv", ours, ref):
        assert a.grad.dtype == torch.bfloat16
        assert rel_err(a.grad, r.grad) <= 1e-2, f"d{name}"


def test_per_call_overhead_vs_sdpa_flash():
    """A benchmark, not an assertion: wall time per call, B=1 H=8 N=128
    D=64 bf16, including Python, checks, allocation and launch."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = inputs(1, 8, 8, 128, 128, 64, torch.bfloat16)

    def wall(fn, n=3000):
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / n * 1e6

    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        sdpa = wall(lambda: F.scaled_dot_product_attention(q, k, v))
    ours = wall(lambda: attn_torch.attention(q, k, v))
    op = wall(lambda: torch.ops.attn.attention(q, k, v, False, None))
    print(f"\nper-call wall time (B=1 H=8 N=128 D=64 bf16): SDPA flash "
          f"{sdpa:.1f} us, attn.torch.attention {ours:.1f} us "
          f"({ours / sdpa:.2f}x), torch.ops.attn.attention {op:.1f} us "
          f"({op / sdpa:.2f}x)")
    # Where our time goes: the two allocations and the bare ctypes launch.
    alloc = wall(lambda: (q.new_empty((1, 8, 128, 64)),
                          q.new_empty((1, 8, 128), dtype=torch.float32)))
    key = (q.shape, k.shape, v.shape, q.stride(), k.stride(), v.stride(),
           q.dtype, k.dtype, v.dtype, q.device, k.device, v.device, False,
           None, "")
    args, ref, launch, handle, index = attn_torch._fast_local.entries[key][:5]
    out = q.new_empty((1, 8, 128, 64))
    lse = q.new_empty((1, 8, 128), dtype=torch.float32)
    attn_torch._FWD_POINTERS.pack_into(args, 0, q.data_ptr(), k.data_ptr(),
                                       v.data_ptr(), out.data_ptr(),
                                       lse.data_ptr())
    stream = attn_torch._current_stream
    bare = wall(lambda: launch(handle, ref, stream(index)))
    print(f"per-call parts: two new_empty {alloc:.1f} us, bare ctypes "
          f"launch {bare:.1f} us")


# --- variants: masks and score_mod against float64 ---------------------------

from attn.variants import make_variant  # noqa: E402


def reference64(q, k, v, variant, scale=None, key_range=None, slopes=None):
    """float64 attention with the variant's semantics (docs/variants.md):
    the band around d(i) (bottom-right: i + Nk - Nq; top-left: i), softcap
    c·tanh(s/c) then ALiBi s - slope[b, h]·|d(i) - j| (``slopes`` [Hq] or
    [B, Hq], else the standard 2^(-8(h+1)/Hq)) on the scaled score before
    the mask; rows that see no key give O = 0 and LSE = -inf."""
    qd, kd, vd = q.double(), k.double(), v.double()
    hq, group = q.shape[1], q.shape[1] // k.shape[1]
    kd = kd.repeat_interleave(group, dim=1)
    vd = vd.repeat_interleave(group, dim=1)
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = torch.matmul(qd, kd.transpose(-1, -2)) * scale
    nq, nk = q.shape[2], k.shape[2]
    i = torch.arange(nq, device=q.device, dtype=torch.float64)[:, None]
    j = torch.arange(nk, device=q.device, dtype=torch.float64)[None, :]
    d = i + (0 if variant.top_left else nk - nq)
    if variant.softcap:
        s = variant.softcap * torch.tanh(s / variant.softcap)
    if variant.alibi:
        if slopes is None:
            h = torch.arange(hq, device=q.device, dtype=torch.float64)
            slopes = torch.exp2(-8.0 * (h + 1) / hq)
        slope = slopes.detach().double().expand(q.shape[0], hq)
        s = s - slope[:, :, None, None] * (d - j).abs()
    keep = torch.ones(nq, nk, dtype=torch.bool, device=q.device)
    if variant.left >= 0:
        keep &= j >= d - variant.left
    if variant.right >= 0:
        keep &= j <= d + variant.right
    if key_range is not None:  # batch entry b's keys [start, end)
        start, end = (t.double().view(-1, 1, 1, 1) for t in key_range)
        keep = keep & (j >= start) & (j < end)
    s = s.masked_fill(~keep, -math.inf)
    m = s.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(s - m)
    l = e.sum(dim=-1, keepdim=True)
    out = torch.matmul(e / torch.where(l > 0, l, torch.ones_like(l)), vd)
    return out, (torch.log(l) + m).squeeze(-1)


VARIANTS = {
    "causal-tl": dict(causal=True, mask_align="top_left"),
    "win64_0": dict(window=(64, 0)),
    "win32_32-tl": dict(window=(32, 32), mask_align="top_left"),
    "cap30": dict(softcap=30.0),
    "causal-cap30": dict(causal=True, softcap=30.0),
    "causal-alibi": dict(causal=True, alibi=True),
    "full-alibi": dict(alibi=True),
    "causal-cap30-alibi": dict(causal=True, softcap=30.0, alibi=True),
}
# B, Hq, Hkv, Nq, Nk: GQA with Nq < Nk, Nq > Nk (rows with no key under
# bottom-right masks), MQA at tile-aligned lengths. (ALiBi's kernels take
# the slopes at launch: the pack's --variants kernels serve every shape.)
VARIANT_SHAPES = [(1, 8, 2, 200, 333), (2, 4, 4, 300, 100), (1, 4, 1, 128, 128)]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16],
                         ids=["bf16", "f16"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("shape", VARIANT_SHAPES,
                         ids=lambda s: "x".join(map(str, s)))
def test_variants_match_float64(shape, name, d, dtype):
    kwargs = VARIANTS[name]
    variant = make_variant(**kwargs)
    b, hq, hkv, nq, nk = shape
    q, k, v = inputs(b, hq, hkv, nq, nk, d, dtype, seed=11)
    try:
        out, lse = attn_torch.attention(q, k, v, return_lse=True, **kwargs)
    except attn.KernelNotAvailableError as ex:  # a pack without variants
        pytest.skip(f"not in the pack: {str(ex)[:100]}")
    ref, ref_lse = reference64(q, k, v, variant)
    assert not out.isnan().any()
    assert rel_err(out, ref) <= 1e-2, name
    finite = torch.isfinite(ref_lse)
    assert torch.equal(torch.isfinite(lse), finite)
    assert (out[~finite[..., None].expand_as(out)] == 0).all()
    if finite.any():
        assert rel_err(lse[finite], ref_lse[finite]) <= 1e-3
    choice = attn_torch.explain(q, k, v, **kwargs)
    assert choice.source == "heuristic" and "no field for" in choice.reason
    if name == "causal-tl":  # SDPA's is_causal is top-left aligned
        sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                              enable_gqa=hq != hkv)
        assert rel_err(out, sdpa) <= 1e-2


def test_float64_reference_agrees_with_the_plain_one():
    q, k, v = inputs(1, 4, 2, 77, 130, 64, torch.bfloat16, seed=12)
    for causal in (False, True):
        a = reference64(q, k, v, make_variant(causal=causal))[0]
        assert rel_err(a, reference(q, k, v, causal)[0]) <= 1e-5


# Every variant has its backward kernels (masks, softcap, ALiBi).
MASK_VARIANTS = dict(VARIANTS)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16],
                         ids=["bf16", "f16"])
@pytest.mark.parametrize("d", [64, 80, 128, 256])
@pytest.mark.parametrize("name", list(MASK_VARIANTS))
@pytest.mark.parametrize("shape", VARIANT_SHAPES,
                         ids=lambda s: "x".join(map(str, s)))
def test_mask_variant_gradients_match_float64(shape, name, d, dtype):
    """Every variant (mask bands, windows, top-left, the softcap, ALiBi with
    the standard slopes) through the backward, against float64 autograd of
    reference64; d = 80 is a padded head dim, d = 256 takes two column
    slices."""
    if not _backward_available():
        pytest.skip("no backward kernels (runtime C ABI or attn-compile "
                    "--backward missing)")
    kwargs = MASK_VARIANTS[name]
    variant = make_variant(**kwargs)
    b, hq, hkv, nq, nk = shape
    q, k, v = inputs(b, hq, hkv, nq, nk, d, dtype, seed=15)
    grad = torch.randn(b, hq, nq, d, device="cuda", dtype=dtype)
    ours = [t.clone().requires_grad_(True) for t in (q, k, v)]
    attn_torch.attention(*ours, **kwargs).backward(grad)
    refs = [t.double().requires_grad_(True) for t in (q, k, v)]
    reference64(*refs, variant)[0].backward(grad.double())
    for name_, a, r in zip("qkv", ours, refs):
        assert a.grad.dtype == dtype and torch.isfinite(a.grad).all()
        if r.grad.norm() == 0:  # no row sees these keys / rows see no key
            assert a.grad.float().abs().max() <= 1e-4, f"d{name_}"
        else:
            assert rel_err(a.grad, r.grad) <= 1e-2, f"d{name_}"


@pytest.mark.parametrize("family", ["sm80", "sm90a", "auto"])
@pytest.mark.parametrize("kwargs", [dict(causal=True), dict(),
                                    dict(window=(64, 0))],
                         ids=["causal", "full", "win64_0"])
@pytest.mark.parametrize("d", [64, 128])
def test_key_range_matches_float64(d, kwargs, family):
    """key_range: left and right padding, an empty range, a single key and
    a decode row (Nq = 1 is a separate shape) in one call, forward and
    gradients, each family (sm90a: its backward takes no window, the sm80
    one runs it under auto)."""
    variant = make_variant(**kwargs)
    previous = attn_torch.kernel_family()
    attn_torch.set_kernel_family(family)
    try:
        for b, hq, hkv, nq, nk in [(4, 4, 2, 300, 300), (3, 4, 4, 1, 777)]:
            q, k, v = inputs(b, hq, hkv, nq, nk, d, torch.bfloat16, seed=21)
            start = torch.tensor([0, 17, nk - 1, 40][:b], device="cuda")
            end = torch.tensor([nk, nk - 50, nk, 40][:b], device="cuda")
            ours = [t.clone().requires_grad_(True) for t in (q, k, v)]
            out, lse = attn_torch.attention(*ours, key_range=(start, end),
                                            return_lse=True, **kwargs)
            refs = [t.double().requires_grad_(True) for t in (q, k, v)]
            want, want_lse = reference64(*refs, variant,
                                         key_range=(start, end))
            assert rel_err(out, want) <= 1e-2
            assert torch.equal(torch.isinf(lse), torch.isinf(want_lse))
            if b == 4:
                assert (out[3] == 0).all()  # the empty range
            if variant.sliding and family == "sm90a":
                continue  # the sm90a backward takes no window
            grad = torch.randn_like(out)
            out.backward(grad)
            want.backward(grad.double())
            for name_, a, r in zip("qkv", ours, refs):
                assert torch.isfinite(a.grad).all()
                if r.grad.norm() == 0:
                    assert a.grad.float().abs().max() <= 1e-4, f"d{name_}"
                else:
                    assert rel_err(a.grad, r.grad) <= 1e-2, f"d{name_}"
    finally:
        attn_torch.set_kernel_family(previous)


def test_key_range_direct_launch_equals_dispatcher():
    """A call without autograd launches directly (no dispatcher): the same
    kernel and the same bits as torch.ops.attn.attention, int64 ranges
    converted, a range on the wrong device named."""
    q, k, v = inputs(3, 8, 2, 1, 500, 128, torch.bfloat16, seed=5)
    start = torch.tensor([0, 100, 499], device="cuda")  # int64
    end = torch.tensor([500, 500, 250], device="cuda")
    with torch.no_grad():
        direct = attn_torch.attention(q, k, v, key_range=(start, end))
    out, _ = torch.ops.attn.attention(q, k, v, False, None, "", False,
                                      start.int(), end.int())
    assert torch.equal(direct, out)
    assert (direct[2] == 0).all()  # end < start: no key
    want, _ = reference64(q.double(), k.double(), v.double(), make_variant(),
                          key_range=(start, end))
    assert rel_err(direct, want) <= 1e-2
    with pytest.raises(ValueError, match=r"key_start is on cpu"):
        attn_torch.attention(q, k, v, key_range=(start.cpu(), end))


def test_autocast_runs_the_autocast_dtype():
    """Inside torch.autocast a float32 query and key with a bfloat16 value
    run as the bfloat16 call does (same kernel, same bits), and the float32
    leaves get float32 gradients."""
    q, k, v = inputs(2, 8, 2, 100, 130, 128, torch.float32, seed=9)
    v = v.bfloat16()
    want = attn_torch.attention(q.bfloat16(), k.bfloat16(), v, causal=True)
    q.requires_grad_(True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        got = attn_torch.attention(q, k, v, causal=True)
    assert got.dtype == torch.bfloat16 and torch.equal(got, want)
    got.float().sum().backward()
    assert q.grad.dtype == torch.float32 and torch.isfinite(q.grad).all()


def test_variant_argument_errors_on_cuda():
    q, k, v = inputs(1, 2, 2, 16, 16, 64, torch.bfloat16)
    with pytest.raises(ValueError, match=r"mask_align must be"):
        attn_torch.attention(q, k, v, causal=True, mask_align="tl")
    with pytest.raises(ValueError, match=r"window: left must be >= 0"):
        attn_torch.attention(q, k, v, window=(-3, 0))


# --- gradients over the algorithm issue's shape matrix, float64 -------------

def reference_grads64(q, k, v, grad, causal):
    qd, kd, vd = (t.double().requires_grad_(True) for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    kr = kd.repeat_interleave(group, dim=1)
    vr = vd.repeat_interleave(group, dim=1)
    s = torch.matmul(qd, kr.transpose(-1, -2)) * q.shape[-1] ** -0.5
    nq, nk = q.shape[2], k.shape[2]
    if causal:
        i = torch.arange(nq, device=q.device)[:, None]
        j = torch.arange(nk, device=q.device)[None, :]
        s = s.masked_fill(j > i + (nk - nq), -math.inf)
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    torch.matmul(p, vr).backward(grad.double())
    return qd.grad, kd.grad, vd.grad


# scripts/gpu-backward.sh's shapes: Nq/Nk 1/1, 17/17, 128/128, 1000/1000,
# 17/1000, 1000/17 (rows with no key when causal), 333/777; GQA 4/2, batch 2.
GRAD_MATRIX = [(2, 4, 2, 1, 1), (2, 4, 2, 17, 17), (2, 4, 2, 128, 128),
               (2, 4, 2, 1000, 1000), (2, 4, 2, 17, 1000),
               (2, 4, 2, 1000, 17), (2, 4, 2, 333, 777)]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16],
                         ids=["bf16", "f16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [64, 96, 128, 160, 192, 256])
@pytest.mark.parametrize("shape", GRAD_MATRIX,
                         ids=lambda s: "x".join(map(str, s)))
def test_gradient_matrix_float64(shape, d, causal, dtype):
    if not _backward_available():
        pytest.skip("no backward kernels (runtime C ABI or attn-compile "
                    "--backward missing)")
    b, hq, hkv, nq, nk = shape
    q, k, v = inputs(b, hq, hkv, nq, nk, d, dtype, seed=14)
    grad = torch.randn(b, hq, nq, d, device="cuda", dtype=dtype)
    ours = [t.clone().requires_grad_(True) for t in (q, k, v)]
    attn_torch.attention(*ours, causal=causal).backward(grad)
    ref = reference_grads64(q, k, v, grad, causal)
    for name, a, r in zip("qkv", ours, ref):
        assert a.grad.dtype == dtype and not a.grad.isnan().any()
        if r.norm() == 0:  # zero in exact arithmetic (e.g. Nk = 1: P = 1)
            assert a.grad.float().abs().max() <= 1e-4, f"d{name}"
        else:
            assert rel_err(a.grad, r) <= 1e-2, f"d{name}"


# --- the sm90a (wgmma) family through the op ---------------------------------

def _pack_has(name):
    pack = os.environ.get("ATTN_KERNEL_PACK")
    return pack is None or os.path.isdir(os.path.join(pack, name))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16],
                         ids=["bf16", "f16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [40, 64, 96, 128, 192, 256])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_sm90a_family_matches_reference(shape, d, causal, dtype):
    if torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the sm90a family needs a Hopper GPU")
    t = "bf16" if dtype == torch.bfloat16 else "f16"
    name = f"fwd-d{d}-{t}-{'causal' if causal else 'full'}-sm_90a-sm90a"
    if not _pack_has(name):
        pytest.skip(f"the pack has no {name} (attn.aot build --family sm90a)")
    b, hq, hkv, nq, nk = shape
    q, k, v = inputs(b, hq, hkv, nq, nk, d, dtype)
    previous = attn_torch.kernel_family()
    attn_torch.set_kernel_family("sm90a")
    try:
        out, lse = attn_torch.attention(q, k, v, causal=causal,
                                        return_lse=True)
        spec_name = attn_torch.explain(q, k, v, causal=causal).spec
    finally:
        attn_torch.set_kernel_family(previous)
    ref, ref_lse = reference(q, k, v, causal)
    assert spec_name == name, spec_name
    assert rel_err(out, ref) <= 1e-2
    finite = torch.isfinite(ref_lse)
    assert torch.equal(torch.isfinite(lse), finite)
    assert (out[~finite[..., None].expand_as(out)] == 0).all()
    assert rel_err(lse[finite], ref_lse[finite]) <= 1e-3


def test_default_family_is_the_compilers_choice_by_chip():
    """With no set_kernel_family and no $ATTN_KERNEL_FAMILY the op asks for
    'auto': on a Hopper GPU the wgmma kernels, forward and backward, where
    they implement the call (D 128 here), else sm80; explain says why."""
    if os.environ.get("ATTN_KERNEL_FAMILY"):
        pytest.skip("$ATTN_KERNEL_FAMILY overrides the default")
    assert attn_torch.kernel_family() == "auto"
    hopper = torch.cuda.get_device_capability()[0] == 9
    q, k, v = inputs(1, 4, 4, 256, 256, 128, torch.bfloat16, seed=21)
    for backward in (False, True):
        try:
            choice = attn_torch.explain(q, k, v, causal=True,
                                        backward=backward)
        except (attn.KernelNotAvailableError, NotImplementedError) as ex:
            pytest.skip(f"not in the pack: {str(ex)[:100]}")
        assert choice.spec.endswith("-sm90a") == hopper, choice.spec
        assert ("family auto chose sm90a" if hopper
                else "family auto chose sm80") in choice.reason
    q.requires_grad_(True)
    out = attn_torch.attention(q, k, v, causal=True)
    out.float().square().sum().backward()
    qr = q.detach().clone().requires_grad_(True)
    ref = reference(qr, k, v, True)[0]
    ref.float().square().sum().backward()
    assert rel_err(out, ref) <= 1e-2
    assert rel_err(q.grad, qr.grad) <= 2e-2


# --- tuning on first use -------------------------------------------------------

@pytest.mark.parametrize("family", ["auto", "sm80"])
def test_tune_on_first_use(tmp_path, monkeypatch, family):
    """attention(..., tune=True) on a shape class the database lacks: the
    candidate bundle (the pack's, re-aimed at the shape, or written by the
    bindings) runs through attn-tune on this GPU, the database gets the
    winner, and the call and later ones use it (explain says so). Family
    auto on sm_90a tunes both families (the "auto" key its lookup takes),
    family sm80 the sm80 space."""
    from attn import tuning
    monkeypatch.setenv("ATTN_TUNING_DB", str(tmp_path / "tuning.json"))
    monkeypatch.setattr(attn_torch, "_family", family)
    attn_torch._forget_choices()
    b, hq, hkv, n, d = 2, 8, 8, 2048, 64
    q, k, v = inputs(b, hq, hkv, n, n, d, torch.bfloat16, seed=15)
    chip = attn_torch._chip(attn_torch._device_index(q))
    spec = attn_torch._spec_and_shape("fwd", q, k, v, True, None, "", chip)[0]
    if not tuning.pack_bundle(spec) and not attn.compiler_available():
        pytest.skip(f"no candidate bundle for {spec.name} in the pack "
                    "(attn.aot build --bundles)")
    before = attn_torch.explain(q, k, v, causal=True)
    assert before.source == "heuristic", before
    t0 = time.perf_counter()
    out = attn_torch.attention(q, k, v, causal=True, tune=True)
    seconds = time.perf_counter() - t0
    after = attn_torch.explain(q, k, v, causal=True)
    print(f"\ntune on first use (B={b} H={hq} N={n} D={d} bf16 causal): "
          f"{seconds:.1f} s; before: {before}\nafter: {after}")
    assert after.source == "tuning-db", (str(after),
                                         attn_torch._tune_attempts)
    assert "hit:" in after.reason
    key = tuning.bundle_family(spec)
    assert f" {tuning.FAMILY_KEYS.get(key, key)} compiler=" in after.reason
    assert rel_err(out, reference(q, k, v, True)[0]) <= 1e-2
    # A later call of the same bucket uses it too, and is right.
    q2, k2, v2 = inputs(1, 8, 8, 1500, 1500, d, torch.bfloat16, seed=16)
    assert attn_torch.explain(q2, k2, v2, causal=True).source == "tuning-db"
    out2 = attn_torch.attention(q2, k2, v2, causal=True)
    assert rel_err(out2, reference(q2, k2, v2, True)[0]) <= 1e-2
    # Timing: the tuned kernel against the heuristic's, same inputs.
    ms = {}
    for label, kdir in (("tuned", after.kernel_dir),
                        ("heuristic",
                         str(attn.cache.kernel_dir(spec.resolved())))):
        kern = runtime.Kernel(kdir)
        launch, _, _ = kern.prepare(q, k, v)
        for _ in range(5):
            launch()
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        for _ in range(50):
            launch()
        end.record()
        torch.cuda.synchronize()
        ms[label] = start.elapsed_time(end) / 50
    print(f"tuned {after.tile}: {ms['tuned']:.4f} ms, heuristic: "
          f"{ms['heuristic']:.4f} ms ({ms['heuristic'] / ms['tuned']:.2f}x)")
    attn_torch._forget_choices()


@pytest.mark.parametrize("d", [20, 59, 250])
def test_head_dims_not_multiples_of_8_are_padded_by_the_op(d):
    """FlashAttention's interface pads such head dims; the op does it
    itself (zero columns add 0 to every score, the scale stays D's), and
    the gradients come back at the original width."""
    if not _backward_available():
        pytest.skip("no backward kernels (runtime C ABI or attn-compile "
                    "--backward missing)")
    q, k, v = inputs(1, 4, 2, 77, 130, d, torch.bfloat16, seed=16)
    grad = torch.randn(1, 4, 77, d, device="cuda", dtype=torch.bfloat16)
    ours = [t.clone().requires_grad_(True) for t in (q, k, v)]
    out = attn_torch.attention(*ours, causal=True)
    assert out.shape == (1, 4, 77, d)
    out.backward(grad)
    refs = [t.double().requires_grad_(True) for t in (q, k, v)]
    ref = reference64(*refs, make_variant(causal=True))[0]
    assert rel_err(out, ref) <= 1e-2
    ref.backward(grad.double())
    for name, a, r in zip("qkv", ours, refs):
        assert a.grad.shape == r.grad.shape, name
        assert rel_err(a.grad, r.grad) <= 1e-2, f"d{name}"


@pytest.mark.parametrize(
    "d, dv, causal, deterministic",
    [(192, 128, True, False), (128, 64, False, False), (64, 128, True, False),
     (192, 128, False, True), (96, 64, True, False), (64, 32, False, True)],
    ids=["d192-dv128-causal", "d128-dv64", "d64-dv128-causal",
         "d192-dv128-deterministic", "d96-dv64-causal",
         "d64-dv32-deterministic"])
def test_unequal_head_dims_have_gradients(d, dv, causal, deterministic):
    """Dqk ≠ Dv (DeepSeek's 192/128): the sm90a backward kernels take both
    head dims (elsewhere the op runs the wider one with the narrower
    operands zero-padded); gradients at the original widths against
    float64 autograd (GQA, lengths off the tiles)."""
    if not _backward_available():
        pytest.skip("no backward kernels (runtime C ABI or attn-compile "
                    "--backward missing)")
    q, k, _ = inputs(2, 8, 2, 200, 333, d, torch.bfloat16, seed=31)
    g = torch.Generator(device="cuda").manual_seed(32)
    v = torch.randn(2, 2, 333, dv, device="cuda", dtype=torch.bfloat16,
                    generator=g)
    grad = torch.randn(2, 8, 200, dv, device="cuda", dtype=torch.bfloat16,
                       generator=g)
    ours = [t.clone().requires_grad_(True) for t in (q, k, v)]
    out = attn_torch.attention(*ours, causal=causal,
                               deterministic=deterministic)
    assert out.shape == (2, 8, 200, dv)
    out.backward(grad)
    ref = reference_grads64(q, k, v, grad, causal)
    for name, a, r in zip("qkv", ours, ref):
        assert a.grad.shape == r.shape, name
        assert rel_err(a.grad, r) <= 1e-2, f"d{name}"
    choice = attn_torch.explain(q, k, v, causal=causal, backward=True,
                                deterministic=deterministic)
    native = attn_torch._takes_unequal_head_dims(q, k, v, causal, None, "",
                                                 deterministic)
    dims = f"d{d}v{dv}" if native else f"d{max(d, dv)}"
    assert choice.spec.startswith(f"bwd-{dims}-"), choice.spec


# --- deterministic gradients --------------------------------------------------

@pytest.mark.parametrize(
    "d, causal",
    [(64, False), (64, True), (128, True), (80, True), (256, False),
     (256, True)],
    ids=["d64", "d64-causal", "d128-causal", "d80-causal", "d256",
         "d256-causal"])
def test_deterministic_gradients_are_bit_identical(d, causal):
    """deterministic=True: ten backward passes give the same bits (on
    Hopper the sm90a kernels add dQ in key-block order: ascending without a
    mask, descending with the causal one; above D = 128 the consumers add
    their rows from registers in turns a producer warp keeps), and the
    gradients match float64 autograd."""
    if not _backward_available():
        pytest.skip("no backward kernels (runtime C ABI or attn-compile "
                    "--backward missing)")
    q, k, v = inputs(2, 8, 2, 1000, 777, d, torch.bfloat16, seed=21)
    grad = torch.randn(2, 8, 1000, d, device="cuda", dtype=torch.bfloat16)
    runs = []
    for _ in range(10):
        ours = [t.clone().requires_grad_(True) for t in (q, k, v)]
        attn_torch.attention(*ours, causal=causal,
                             deterministic=True).backward(grad)
        runs.append([t.grad for t in ours])
    for run in runs[1:]:
        for name, a, b in zip("qkv", runs[0], run):
            assert torch.equal(a, b), f"d{name} differs between runs"
    ref = reference_grads64(q, k, v, grad, causal)
    for name, a, r in zip("qkv", runs[0], ref):
        assert rel_err(a, r) <= 1e-2, f"d{name}"


# --- ALiBi: run-time slopes, both families ------------------------------------

def _poison_allocator(nbytes=64 << 20):
    """Fills freed caching-allocator blocks with NaN bits, so that outputs
    (and the slopes' copies) that a kernel forgets to write show up."""
    junk = torch.empty(nbytes // 2, dtype=torch.bfloat16, device="cuda")
    junk.fill_(float("nan"))
    del junk


def fa_slopes(*shape, seed=0):
    """Random slopes as FlashAttention's tests make them (rand · 0.3),
    float32 on the GPU."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.rand(*shape, device="cuda", generator=g) * 0.3


ALIBI_GPU_CASES = {
    # B, Hq, Hkv, Nq, Nk, keywords: both alignments with Nq != Nk, a
    # window, the softcap with ALiBi, GQA/MQA, a decode row.
    "full-gqa": (2, 8, 2, 200, 333, dict()),
    "causal-br-nq<nk": (2, 4, 2, 150, 403, dict(causal=True)),
    "causal-br-nq>nk": (2, 4, 4, 300, 100, dict(causal=True)),
    "causal-tl-nq<nk": (1, 4, 2, 150, 403,
                        dict(causal=True, mask_align="top_left")),
    "causal-tl-nq>nk": (2, 4, 4, 300, 100,
                        dict(causal=True, mask_align="top_left")),
    "window": (2, 4, 2, 256, 300, dict(window=(64, 16))),
    "cap-causal": (2, 8, 2, 200, 333, dict(causal=True, softcap=20.0)),
    "decode-mqa": (3, 8, 1, 1, 777, dict(causal=True)),
}


@pytest.mark.parametrize("family", ["sm80", "sm90a", "auto"])
@pytest.mark.parametrize("per_batch", [False, True], ids=["h", "bh"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("case", list(ALIBI_GPU_CASES))
def test_alibi_slopes_match_float64(case, d, per_batch, family):
    """Random slopes ([Hq] and [B, Hq]) with every mask kind, the softcap
    and GQA, in each family: out, LSE and dQ/dK/dV against float64
    autograd; outputs land in NaN-poisoned memory."""
    if family == "sm90a" and torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the sm90a family needs a Hopper GPU")
    b, hq, hkv, nq, nk, kwargs = ALIBI_GPU_CASES[case]
    variant = make_variant(alibi=True, **kwargs)
    previous = attn_torch.kernel_family()
    attn_torch.set_kernel_family(family)
    try:
        q, k, v = inputs(b, hq, hkv, nq, nk, d, torch.bfloat16, seed=31)
        slopes = fa_slopes(*((b, hq) if per_batch else (hq,)), seed=32)
        ours = [t.clone().requires_grad_(True) for t in (q, k, v)]
        _poison_allocator()
        try:
            out, lse = attn_torch.attention(*ours, alibi_slopes=slopes,
                                            return_lse=True, **kwargs)
        except attn.KernelNotAvailableError as ex:  # a pack without it
            pytest.skip(f"not in the pack: {str(ex)[:100]}")
        refs = [t.double().requires_grad_(True) for t in (q, k, v)]
        want, want_lse = reference64(*refs, variant, slopes=slopes)
        assert not out.isnan().any()
        assert rel_err(out, want) <= 1e-2, case
        finite = torch.isfinite(want_lse)
        assert torch.equal(torch.isfinite(lse), finite)
        assert (out[~finite] == 0).all()
        if finite.any():
            assert rel_err(lse[finite], want_lse[finite]) <= 1e-3
        if not _backward_available():
            return
        grad = torch.randn_like(out)
        _poison_allocator()
        out.backward(grad)
        want.backward(grad.double())
        for name, a, r in zip("qkv", ours, refs):
            assert torch.isfinite(a.grad).all(), f"d{name}"
            if r.grad.norm() == 0:
                assert a.grad.float().abs().max() <= 1e-4, f"d{name}"
            else:
                assert rel_err(a.grad, r.grad) <= 1e-2, f"d{name}"
        spec = attn_torch.explain(q, k, v, alibi_slopes=slopes, backward=True,
                                  **kwargs).spec
        assert "alibi" in spec
        if family != "auto":
            assert spec.endswith("-sm90a") == (family == "sm90a"), spec
    finally:
        attn_torch.set_kernel_family(previous)


def test_alibi_slopes_are_a_launch_argument():
    """One kernel for every slope, head count and Nk - Nq (explain names
    one directory); alibi=True is the standard slopes; [B, Hq] rows are
    each batch entry's, strided and stride-0 (expanded) slopes are read as
    their values; the direct launch (no autograd) equals the dispatcher's."""
    dirs = set()
    for b, hq, nq, nk in [(2, 4, 64, 64), (1, 8, 100, 333), (3, 2, 300, 17)]:
        q, k, v = inputs(b, hq, hq, nq, nk, 64, torch.bfloat16, seed=nq)
        slopes = fa_slopes(b, hq, seed=nk)
        dirs.add(attn_torch.explain(q, k, v, causal=True,
                                    alibi_slopes=slopes).kernel_dir)
        with torch.no_grad():
            direct = attn_torch.attention(q, k, v, causal=True,
                                          alibi_slopes=slopes)
        via_op, _ = torch.ops.attn.attention(
            q, k, v, True, None, make_variant(causal=True, alibi=True).key,
            False, None, None, slopes)
        assert torch.equal(direct, via_op)
        want, _ = reference64(q, k, v, make_variant(causal=True, alibi=True),
                              slopes=slopes)
        assert rel_err(direct, want) <= 1e-2
        for bi in range(b):
            one = attn_torch.attention(q[bi:bi + 1], k[bi:bi + 1],
                                       v[bi:bi + 1], causal=True,
                                       alibi_slopes=slopes[bi])
            assert rel_err(one, direct[bi:bi + 1]) <= 1e-3
        strided = torch.zeros(b, 2 * hq, device=slopes.device)[:, ::2]
        strided.copy_(slopes)
        assert not strided.is_contiguous()
        assert torch.equal(attn_torch.attention(
            q, k, v, causal=True, alibi_slopes=strided), direct)
        shared = attn_torch.attention(q, k, v, causal=True,
                                      alibi_slopes=slopes[0])
        assert torch.equal(attn_torch.attention(
            q, k, v, causal=True,
            alibi_slopes=slopes[:1].expand(b, hq)), shared)
        standard = attn_torch.standard_alibi_slopes(hq, "cuda")
        assert torch.equal(attn_torch.attention(q, k, v, causal=True,
                                                alibi=True),
                           attn_torch.attention(q, k, v, causal=True,
                                                alibi_slopes=standard))
    assert len(dirs) == 1


def test_alibi_errors_on_cuda():
    q, k, v = inputs(2, 4, 2, 16, 16, 64, torch.bfloat16)
    with pytest.raises(ValueError, match=r"alibi_slopes is on cpu, q on "
                                         r"cuda"):
        attn_torch.attention(q, k, v, alibi_slopes=torch.rand(4))
    with pytest.raises(TypeError, match=r"alibi_slopes must be "
                                        r"torch.float32, got torch.bfloat16"):
        attn_torch.attention(q, k, v, alibi_slopes=fa_slopes(4).bfloat16())
    with pytest.raises(ValueError, match=r"alibi_slopes must have shape "
                                         r"\[Hq\] = \[4\] or \[B, Hq\]"):
        attn_torch.attention(q, k, v, alibi_slopes=fa_slopes(2))
    with pytest.raises(ValueError, match=r"give alibi=True .* not both"):
        attn_torch.attention(q, k, v, alibi=True, alibi_slopes=fa_slopes(4))


def test_alibi_with_key_range_padded_head_dim_and_compile():
    """ALiBi with key ranges (a padded batch), with a head dim the op pads
    (d = 36, padded to 40) and under torch.compile(fullgraph=True),
    forward and gradients."""
    b, hq, hkv, nq, nk, d = 3, 4, 2, 65, 300, 36
    q, k, v = inputs(b, hq, hkv, nq, nk, d, torch.bfloat16, seed=41)
    start = torch.tensor([0, 37, 299], device="cuda")
    end = torch.tensor([300, 250, 300], device="cuda")
    slopes = fa_slopes(b, hq, seed=42)
    variant = make_variant(causal=True, alibi=True)

    def f(q, k, v, slopes):
        return attn_torch.attention(q, k, v, causal=True, alibi_slopes=slopes,
                                    key_range=(start, end))

    for fn in (f, torch.compile(f, fullgraph=True)):
        ours = [t.clone().requires_grad_(True) for t in (q, k, v)]
        out = fn(*ours, slopes)
        refs = [t.double().requires_grad_(True) for t in (q, k, v)]
        want, _ = reference64(*refs, variant, key_range=(start, end),
                              slopes=slopes)
        assert rel_err(out, want) <= 1e-2
        if not _backward_available():
            continue
        grad = torch.randn_like(out)
        out.backward(grad)
        want.backward(grad.double())
        for name, a, r in zip("qkv", ours, refs):
            assert rel_err(a.grad, r.grad) <= 1e-2, f"d{name}"
