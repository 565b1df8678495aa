"""The CPU path (attn-c/Execution.h) of the library given as argv[1], from
plain ctypes: a small causal f32 attention against a Python reference, and
which MLIR/LLVM shared libraries the process has mapped afterwards (none
for the wheel's self-contained library: the JIT's runtime functions are
attn's own, lib/Execution/HostRuntime.cpp)."""

import ctypes
import math
import random
import sys


class Problem(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in
                ("batch", "headsQ", "headsKv", "seqQ", "seqKv", "headDim",
                 "valueHeadDim")] + [
        ("dtype", ctypes.c_int32), ("causal", ctypes.c_bool),
        ("topLeft", ctypes.c_bool), ("windowLeft", ctypes.c_int64),
        ("windowRight", ctypes.c_int64), ("hasScale", ctypes.c_bool),
        ("scale", ctypes.c_double), ("softcap", ctypes.c_double),
        ("alibiSlopes", ctypes.POINTER(ctypes.c_float)),
        ("keyStart", ctypes.POINTER(ctypes.c_int32)),
        ("keyEnd", ctypes.POINTER(ctypes.c_int32))]


lib = ctypes.CDLL(sys.argv[1])
lib.attnCPUProblemGetDefault.restype = Problem
lib.attnCPUAttentionForward.restype = ctypes.c_char_p
p = lib.attnCPUProblemGetDefault()
n, d = 5, 8
p.seqQ, p.seqKv, p.headDim, p.dtype, p.causal = n, n, d, 2, True
rng = random.Random(0)
q, k, v = ([rng.uniform(-1, 1) for _ in range(n * d)] for _ in range(3))
buf = lambda xs: (ctypes.c_float * len(xs))(*xs)
out, lse = buf([float("nan")] * (n * d)), buf([float("nan")] * n)
err = lib.attnCPUAttentionForward(ctypes.byref(p), buf(q), buf(k), buf(v),
                                  out, lse)
print("forward:", err or "ok")
worst = 0.0
for i in range(n):
    s = [sum(q[i * d + c] * k[j * d + c] for c in range(d)) / math.sqrt(d)
         for j in range(i + 1)]
    m = max(s)
    w = [math.exp(x - m) for x in s]
    for c in range(d):
        ref = sum(w[j] * v[j * d + c] for j in range(i + 1)) / sum(w)
        worst = max(worst, abs(out[i * d + c] - ref))
print("max error below 1e-5:", worst < 1e-5)
print("mapped:", sorted({line.split()[-1].rsplit("/", 1)[-1]
                         for line in open("/proc/self/maps")
                         if "libMLIR" in line or "libLLVM" in line
                         or "runner_utils" in line}))
