"""python/attn/runtime.py on a GPU with PyTorch: the hand-written ABI
kernels on torch tensors (contiguous, strided views, grouped heads, a side
stream), checked against a float64 reference, and the errors it raises.
Usage: torch_smoke.py <repo> (prints "torch smoke: N checks passed")."""
import sys

import torch

repo = sys.argv[1]
sys.path.insert(0, repo + "/python")
from attn.runtime import AttnRuntimeError, Kernel, attention  # noqa: E402

inputs = repo + "/test/Runtime/Inputs"
torch.manual_seed(0)
passed = 0


def check(cond, what):
    global passed
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    passed += 1


def reference(q, k, v, causal, scale):
    """float64 O and LSE; bottom-right causal; rows with no key: 0, -inf."""
    group = q.shape[1] // k.shape[1]
    qd = q.double()
    kd = k.double().repeat_interleave(group, dim=1)
    vd = v.double().repeat_interleave(group, dim=1)
    s = qd @ kd.transpose(-1, -2) * scale
    nq, nk = q.shape[2], k.shape[2]
    if causal:
        i = torch.arange(nq, device=q.device)[:, None]
        j = torch.arange(nk, device=q.device)[None, :]
        s.masked_fill_(j > i + (nk - nq), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    return p @ vd, lse


def rel(got, want):
    got, want = got.double(), want.double()
    fin = torch.isfinite(want)
    if not torch.equal(torch.isfinite(got), fin):
        return float("inf")
    return ((got[fin] - want[fin]).norm() / want[fin].norm()).item()


# f32, contiguous, default stream, outputs allocated by the wrapper.
kern = Kernel(inputs + "/good/naive-f32-d64")
q = torch.rand(2, 4, 300, 64, device="cuda") * 2 - 1
k = torch.rand(2, 4, 200, 64, device="cuda") * 2 - 1
v = torch.rand(2, 4, 200, 64, device="cuda") * 2 - 1
out, lse = kern(q, k, v)
o_ref, l_ref = reference(q, k, v, False, kern.scale)
e_o, e_l = rel(out, o_ref), rel(lse, l_ref)
print(f"f32: from {kern.loaded_from}, grid {kern.grid(q, k)}, rel_err {e_o:.2e}, lse {e_l:.2e}")
check(kern.loaded_from == "cubin", "f32 kernel loads its sm_90a cubin")
check(e_o < 1e-5 and e_l < 1e-5, "f32 within 1e-5")

# bf16, causal, grouped heads, Nq > Nk (masked rows), [B, N, H, D] storage
# seen as [B, H, N, D] (non-contiguous strides), on a side stream.
kb = Kernel(inputs + "/good/naive-bf16-d64-causal")
B, Hq, Hkv, Nq, Nk = 2, 8, 2, 333, 250
qs = torch.randn(B, Nq, Hq, 64, device="cuda", dtype=torch.bfloat16)
ks = torch.randn(B, Nk, Hkv, 64, device="cuda", dtype=torch.bfloat16)
vs = torch.randn(B, Nk, Hkv, 64, device="cuda", dtype=torch.bfloat16)
q, k, v = (t.transpose(1, 2) for t in (qs, ks, vs))
out = torch.full((B, Nq, Hq, 64), float("nan"), device="cuda",
                 dtype=torch.bfloat16).transpose(1, 2)
lse = torch.full((B, Hq, Nq), float("nan"), device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    kb(q, k, v, out=out, lse=lse)
torch.cuda.current_stream().wait_stream(side)
o_ref, l_ref = reference(q, k, v, True, kb.scale)
e_o, e_l = rel(out, o_ref), rel(lse, l_ref)
masked = int(torch.isinf(lse).sum().item())
print(f"bf16 causal GQA strided: from {kb.loaded_from}, rel_err {e_o:.2e}, "
      f"lse {e_l:.2e}, rows with LSE -inf {masked}")
check(kb.loaded_from == "ptx", "sm_80 cubin falls back to PTX")
check(e_o < 1e-2 and e_l < 1e-2, "bf16 within 1e-2")
check(masked == B * Hq * (Nq - Nk), "rows that see no key have LSE -inf")

# The module-level helper caches one Kernel per directory and device.
o2, _ = attention(inputs + "/good/naive-bf16-d64-causal", q, k, v)
check(torch.equal(o2, out), "attention() gives the same output")

# Errors.
try:
    Kernel(inputs + "/bad/bad-entry")(q.float(), k.float(), v.float())
    check(False, "bad entry raises")
except AttnRuntimeError as ex:
    print("bad entry:", ex)
    check("CUDA_ERROR_NOT_FOUND" in str(ex), "the error names CUDA_ERROR_NOT_FOUND")
try:
    kern(q, k, v)
    check(False, "wrong dtype raises")
except ValueError as ex:
    print("wrong dtype:", ex)
    check("float32" in str(ex), "the error names the dtype")
try:
    Kernel(inputs + "/bad/bad-format")(q, k, v)
    check(False, "bad format raises")
except (AttnRuntimeError, ValueError) as ex:
    print("bad format:", ex)
    check("attn-kernel/2" in str(ex), "the error names the format")


# Every bad argument raises before anything is launched, naming the tensor
# (docs/reliability.md, "Runtime input validation").
def raises(what, call, exc, needle):
    try:
        call()
    except exc as ex:
        print(f"{what}: {type(ex).__name__}: {ex}")
        check(needle in str(ex), f"{what}: the error says {needle!r}")
        return
    check(False, f"{what} raises {exc.__name__}")


qf = torch.rand(1, 4, 64, 64, device="cuda")
raises("cpu tensor", lambda: kern(qf.cpu(), qf, qf), ValueError,
       "q must be a CUDA tensor")
raises("3-D tensor", lambda: kern(qf, qf[0], qf), ValueError,
       "k must be 4-D [B, H, N, D], got (4, 64, 64)")
raises("last dim not contiguous",
       lambda: kern(qf, qf, qf.transpose(2, 3)), ValueError,
       "v's last dimension must be contiguous")
raises("head dim", lambda: kern(qf[..., :32], qf[..., :32], qf[..., :32]),
       ValueError, "head dim: the kernel takes 64, got q 32, k 32")
raises("v shape", lambda: kern(qf, qf, qf[:, :, :10]), ValueError,
       "v must be (1, 4, 64, 64), got (1, 4, 10, 64)")
raises("heads", lambda: kern(qf, qf[:, :3], qf[:, :3]), ValueError,
       "heads_q (4) must be a multiple of heads_kv (3)")
raises("out shape", lambda: kern(qf, qf, qf, out=qf[:, :2]), ValueError,
       "out must be a CUDA tensor of shape (1, 4, 64, 64)")
raises("lse dtype",
       lambda: kern(qf, qf, qf, lse=torch.empty(1, 4, 64, device="cuda",
                                                dtype=torch.float64)),
       ValueError, "lse must be a float32 CUDA tensor of shape (1, 4, 64)")
# A pointer off 16-byte alignment (a view one element into its storage):
# the runtime's own check, through the C ABI, names the argument.
mis = torch.rand(1 * 4 * 64 * 64 + 1, device="cuda")[1:].view(1, 4, 64, 64)
raises("misaligned q", lambda: kern(mis, qf, qf), AttnRuntimeError,
       "the q pointer")
# A row stride that leaves rows off 16-byte alignment (66 floats).
wide = torch.rand(1, 4, 64, 66, device="cuda")[..., :64]
raises("odd row stride", lambda: kern(qf, wide, qf), AttnRuntimeError,
       "k_stride_n = 66 elements")
# Out of memory: a broadcast view (no memory) whose output would need
# 256 GiB; torch's allocator refuses it before anything is launched, and
# the GPU stays usable.
huge = torch.rand(1, 4, 1, 64, device="cuda").expand(1, 4, 1 << 28, 64)
raises("out of memory", lambda: kern(huge, qf, qf), torch.OutOfMemoryError,
       "out of memory")
out, lse = kern(qf, qf, qf)
check(bool(torch.isfinite(out).all()), "the GPU still works after the errors")
# An empty batch: nothing launched, no error, nothing written.
empty = torch.empty(0, 4, 64, 64, device="cuda")
eo, el = kern(empty, empty, empty)
check(eo.shape == (0, 4, 64, 64), "an empty batch returns an empty output")

torch.cuda.synchronize()
print(f"torch smoke: {passed} checks passed")
