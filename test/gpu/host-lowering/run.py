"""Run the host-lowered attention of attention-dps.mlir on the GPU.

Usage on the GPU host (scripts/gpu-host-lowering.sh builds libattn_mgpu.so
and runs this):

    python3 test/gpu/host-lowering/run.py --mgpu build-gpu/lib/libattn_mgpu.so \
        --lib gpu-host-lowering/libattn_e2e_sm90a.so [--lib ...]

Each --lib is the caller's function compiled with its kernel inside
(scripts/compile-host-lowering.sh): `_mlir_ciface_attention(Q, K, V, O, LSE)`
on memref descriptors of CUDA tensors. Per shape: fresh random Q/K/V, O and
LSE poisoned with NaN, one call (which loads the module, builds the tensor
maps, computes the grid and launches), then a float64 reference of the
causal (bottom-right) grouped-query attention. Rows that see no key must
give O = 0 and LSE = -inf. Prints one JSON line per case and a summary;
exits 1 if any case fails.
"""

import argparse
import ctypes
import json
import math
import sys

import torch

HQ, HKV, D = 8, 2, 64
SHAPES = [(1, 1), (17, 17), (200, 200), (1000, 1000), (4096, 4096),
          (777, 1500), (1500, 777), (128, 4096)]


class MemRef(ctypes.Structure):
    """MLIR's ranked memref descriptor (allocated, aligned, offset, sizes,
    strides) for one rank."""

    @classmethod
    def of_rank(cls, rank):
        return type(f"MemRef{rank}", (ctypes.Structure,), {"_fields_": [
            ("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
            ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
            ("strides", ctypes.c_int64 * rank)]})


def descriptor(t):
    desc = MemRef.of_rank(t.dim())()
    desc.allocated = desc.aligned = t.data_ptr()
    desc.offset = 0
    for i, (n, s) in enumerate(zip(t.shape, t.stride())):
        desc.sizes[i], desc.strides[i] = n, s
    return desc


def reference(q, k, v):
    """float64 causal attention, bottom-right aligned, GQA."""
    nq, nk = q.shape[2], k.shape[2]
    group = HQ // HKV
    k = k.double().repeat_interleave(group, dim=1)
    v = v.double().repeat_interleave(group, dim=1)
    s = (q.double() @ k.transpose(-1, -2)) / math.sqrt(D)
    i = torch.arange(nq, device=q.device)[:, None]
    j = torch.arange(nk, device=q.device)[None, :]
    s = s.masked_fill(j > i + (nk - nq), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    return p @ v, lse


def run_case(fn, nq, nk, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(1, HQ, nq, D, device="cuda", generator=g).bfloat16()
    k = torch.randn(1, HKV, nk, D, device="cuda", generator=g).bfloat16()
    v = torch.randn(1, HKV, nk, D, device="cuda", generator=g).bfloat16()
    o = torch.full((1, HQ, nq, D), float("nan"), device="cuda",
                   dtype=torch.bfloat16)
    lse = torch.full((1, HQ, nq), float("nan"), device="cuda")
    args = [descriptor(t) for t in (q, k, v, o, lse)]
    torch.cuda.synchronize()
    fn(*[ctypes.byref(a) for a in args])
    torch.cuda.synchronize()
    ref_o, ref_lse = reference(q, k, v)
    seen = torch.isfinite(ref_lse)
    rel = ((o.double() - ref_o).norm() / ref_o.norm().clamp_min(1e-30)).item()
    lse_err = (lse.double()[seen] - ref_lse[seen]).abs().max().item() \
        if seen.any() else 0.0
    empty_ok = bool((o[~seen] == 0).all() and (lse[~seen] == float("-inf")).all())
    finite = bool(torch.isfinite(o).all())
    ok = finite and empty_ok and rel < 1e-2 and lse_err < 1e-3
    return {"seq_q": nq, "seq_kv": nk, "rel_err": rel, "lse_max_abs_err": lse_err,
            "rows_without_keys": int((~seen).sum()), "empty_rows_ok": empty_ok,
            "finite": finite, "ok": ok}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mgpu", required=True, help="libattn_mgpu.so")
    ap.add_argument("--lib", action="append", required=True)
    args = ap.parse_args()
    # The compiled callers resolve mgpu*/attn* against the process.
    ctypes.CDLL(args.mgpu, mode=ctypes.RTLD_GLOBAL)
    failed = total = 0
    for path in args.lib:
        fn = ctypes.CDLL(path)._mlir_ciface_attention
        fn.restype = None
        for seed, (nq, nk) in enumerate(SHAPES):
            try:
                row = run_case(fn, nq, nk, seed)
            except Exception as e:  # a failed launch surfaces here
                row = {"seq_q": nq, "seq_kv": nk, "ok": False, "error": repr(e)}
            row["lib"] = path.rsplit("/", 1)[-1]
            print(json.dumps(row), flush=True)
            total += 1
            failed += not row["ok"]
    print(f"{total - failed} of {total} host-lowering cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
