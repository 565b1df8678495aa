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
@pytest.mark.parametrize("d", [64, 128, 256])
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
    q, k, v = inputs(1, 4, 4, 96, 96, 64, torch.bfloat16, seed=1)
    out = attn_torch.attention(q, k, v, scale=0.3)
    assert rel_err(out, reference(q, k, v, False, 0.3)[0]) <= 1e-2


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
           None)
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
