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
torch.cuda.synchronize()
print(f"torch smoke: {passed} checks passed")
