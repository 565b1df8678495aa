"""Drives libattn_runtime.so's C ABI through python/attn/runtime.py's ctypes
declarations, without PyTorch or a GPU: with ATTN_LIBCUDA pointing at the
host-only driver stand-in, "device" memory is host memory, so ctypes arrays
serve as Q, K, V, O and LSE. Usage: capi_smoke.py <repo> <kernel-dir>
(the naive f32 D=64 kernel)."""
import ctypes
import math
import random
import sys

sys.path.insert(0, sys.argv[1] + "/python")
from attn.runtime import BackwardArgs, LaunchArgs, load_library  # noqa: E402

lib = load_library()
print("abi", lib.attn_runtime_abi_version())

bad = lib.attn_kernel_load(b"/nonexistent/kernel", 0)
print("bad dir:", bad is None, lib.attn_runtime_last_error().decode())

kern = lib.attn_kernel_load(sys.argv[2].encode(), 0)
if not kern:
    sys.exit("load failed: " + lib.attn_runtime_last_error().decode())
print("entry", lib.attn_kernel_entry(kern).decode(),
      "from", lib.attn_kernel_loaded_from(kern).decode())

B, Hq, Hkv, Nq, Nk, D = 1, 2, 1, 3, 5, 64
rng = random.Random(1)
def tensor(n, fill=None):
    arr = (ctypes.c_float * n)()
    for i in range(n):
        arr[i] = rng.uniform(-1, 1) if fill is None else fill
    return arr
q, k, v = tensor(B * Hq * Nq * D), tensor(B * Hkv * Nk * D), tensor(B * Hkv * Nk * D)
o, lse = tensor(B * Hq * Nq * D, math.nan), tensor(B * Hq * Nq, math.nan)

args = LaunchArgs()
args.q, args.k, args.v, args.o, args.lse = (ctypes.addressof(t) for t in (q, k, v, o, lse))
args.batch, args.heads_q, args.heads_kv, args.seq_q, args.seq_kv = B, Hq, Hkv, Nq, Nk
args.q_stride[:] = [Hq * Nq * D, Nq * D, D]
args.k_stride[:] = [Hkv * Nk * D, Nk * D, D]
args.v_stride[:] = [Hkv * Nk * D, Nk * D, D]
args.o_stride[:] = [Hq * Nq * D, Nq * D, D]
args.lse_stride[:] = [Hq * Nq, Nq]
args.softmax_scale = 0.125

grid = (ctypes.c_uint32 * 3)()
print("grid rc", lib.attn_kernel_grid(kern, ctypes.byref(args), grid), list(grid))
print("launch rc", lib.attn_kernel_launch(kern, ctypes.byref(args), None))

err = 0.0
for h in range(Hq):
    for i in range(Nq):
        s = [sum(q[(h * Nq + i) * D + x] * k[j * D + x] for x in range(D)) / 8
             for j in range(Nk)]
        m = max(s)
        p = [math.exp(x - m) for x in s]
        l = sum(p)
        err = max(err, abs(lse[h * Nq + i] - (m + math.log(l))))
        for x in range(D):
            want = sum(p[j] * v[j * D + x] for j in range(Nk)) / l
            err = max(err, abs(o[(h * Nq + i) * D + x] - want))
print("max abs err below 1e-5:", err < 1e-5)

args.heads_kv = 3
print("bad launch rc", lib.attn_kernel_launch(kern, ctypes.byref(args), None),
      lib.attn_runtime_last_error().decode())
args.heads_kv = Hkv


def launch_with(what, **changes):
    """Launches with some fields changed; prints rc and the error."""
    saved = {f: getattr(args, f) for f in changes if not f.endswith("stride")}
    saved_strides = {f: list(getattr(args, f)) for f in changes
                     if f.endswith("stride")}
    for f, val in changes.items():
        if f.endswith("stride"):
            getattr(args, f)[:] = val
        else:
            setattr(args, f, val)
    rc = lib.attn_kernel_launch(kern, ctypes.byref(args), None)
    print(what, "rc", rc, lib.attn_runtime_last_error().decode() if rc else "")
    for f, val in saved.items():
        setattr(args, f, val)
    for f, val in saved_strides.items():
        getattr(args, f)[:] = val


# Bad arguments are errors naming the argument, never a launch.
launch_with("misaligned q", q=ctypes.addressof(q) + 4)
launch_with("null v", v=0)
launch_with("negative seq_kv", seq_kv=-1)
launch_with("odd k stride", k_stride=[Hkv * Nk * D, Nk * D, 66])
launch_with("negative q stride", q_stride=[-1, Nq * D, D])
launch_with("overlapping o rows", o_stride=[Hq * Nq * D, Nq * D, 32])
launch_with("seq_q beyond i32", seq_q=2**31)
launch_with("forgotten scale", softmax_scale=0.0)
launch_with("nan scale", softmax_scale=float("nan"))
launch_with("scale beyond f32", softmax_scale=1e39)
# An empty batch (or no query rows) launches nothing and succeeds: O keeps
# its poison.
for i in range(len(o)):
    o[i] = math.nan
launch_with("empty batch", batch=0, q=0, k=0, v=0, o=0, lse=0)
launch_with("no query rows", seq_q=0)
print("o untouched:", all(math.isnan(x) for x in o))
print("null args rc", lib.attn_kernel_launch(kern, None, None),
      lib.attn_runtime_last_error().decode())
print("null grid rc", lib.attn_kernel_grid(kern, None, grid),
      lib.attn_runtime_last_error().decode())
print("null dir:", lib.attn_kernel_load(None, 0) is None,
      lib.attn_runtime_last_error().decode())
lib.attn_kernel_destroy(kern)

# The backward launch's argument checks: the naive kernel relabelled as a
# backward directory (one launch, the backward ABI's parameters). Every call
# below must fail before anything is launched (the stand-in would run the
# forward kernel on these parameters).
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

bdir = tempfile.mkdtemp()
for f in ("kernel.ptx", "kernel.cubin"):
    shutil.copy(os.path.join(sys.argv[2], f), bdir)
man = json.load(open(os.path.join(sys.argv[2], "manifest.json")))
man["direction"] = "backward"
man["launches"] = [{"role": "dkdv", "entry": man["entry"], "threads": 64,
                    "dynamic_shared_memory": 0, "grid": man["grid"]}]
names = ["q", "k", "v", "o", "do", "lse", "dq", "dk", "dv", "workspace"]
man["params"] = [{"name": n, "type": "ptr"} for n in names] + [
    {"name": n, "type": "i32"}
    for n in ("seq_q", "seq_kv", "heads_q", "heads_kv")] + [
    {"name": "softmax_scale", "type": "f32"}] + [
    {"name": f"{t}_stride_{d}", "type": "i64"}
    for t in ("q", "k", "v", "o", "do", "dq", "dk", "dv") for d in "bhn"] + [
    {"name": "lse_stride_b", "type": "i64"}, {"name": "lse_stride_h", "type": "i64"}]
json.dump(man, open(os.path.join(bdir, "manifest.json"), "w"))
bk = lib.attn_kernel_load(bdir.encode(), 0)
if not bk:
    sys.exit("backward load failed: " + lib.attn_runtime_last_error().decode())
print("is backward", lib.attn_kernel_is_backward(bk))
print("forward launch of a backward kernel rc",
      lib.attn_kernel_launch(bk, ctypes.byref(args), None),
      lib.attn_runtime_last_error().decode())
print("grid of a backward kernel rc", lib.attn_kernel_grid(bk, ctypes.byref(args), grid),
      lib.attn_runtime_last_error().decode())
d_o, dq, dk, dv = (tensor(len(t), 0.0) for t in (o, q, k, v))
ws = (ctypes.c_float * 4096)()


def backward_with(what, **changes):
    b = BackwardArgs()
    b.q, b.k, b.v, b.o, b.d_o, b.lse = (ctypes.addressof(t) for t in (q, k, v, o, d_o, lse))
    b.dq, b.dk, b.dv = (ctypes.addressof(t) for t in (dq, dk, dv))
    b.workspace = ctypes.addressof(ws)
    b.batch, b.heads_q, b.heads_kv, b.seq_q, b.seq_kv = B, Hq, Hkv, Nq, Nk
    for name, src in (("q_stride", args.q_stride), ("k_stride", args.k_stride),
                      ("v_stride", args.v_stride), ("o_stride", args.o_stride),
                      ("do_stride", args.o_stride), ("dq_stride", args.q_stride),
                      ("dk_stride", args.k_stride), ("dv_stride", args.v_stride)):
        getattr(b, name)[:] = list(src)
    b.lse_stride[:] = list(args.lse_stride)
    b.softmax_scale = args.softmax_scale
    for key, value in changes.items():
        if isinstance(value, list):
            getattr(b, key)[:] = value
        else:
            setattr(b, key, value)
    rc = lib.attn_kernel_launch_backward(bk, ctypes.byref(b), None)
    print(what, "rc", rc, lib.attn_runtime_last_error().decode() if rc else "")


backward_with("null workspace", workspace=0)
backward_with("misaligned workspace", workspace=ctypes.addressof(ws) + 4)
backward_with("misaligned dk", dk=ctypes.addressof(dk) + 4)
backward_with("null lse", lse=0)
backward_with("null dq", dq=0)
backward_with("null k", k=0)
backward_with("odd dv stride", dv_stride=[Hkv * Nk * D, Nk * D, 66])
backward_with("grid beyond the device", batch=5000, heads_q=16, heads_kv=16)
backward_with("empty batch", batch=0, q=0, k=0, v=0, o=0, d_o=0, lse=0, dq=0,
              dk=0, dv=0, workspace=0)
print("null backward args rc", lib.attn_kernel_launch_backward(bk, None, None),
      lib.attn_runtime_last_error().decode())
lib.attn_kernel_destroy(bk)
shutil.rmtree(bdir)
