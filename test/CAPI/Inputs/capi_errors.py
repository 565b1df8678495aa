"""Bad requests to the compiler's C API (attn-c/Compiler.h) through the
Python package: each prints the first line of its {"error": ...} result.
argv[1]: the package's parent folder (python/)."""

import ctypes
import json
import sys

sys.path.insert(0, sys.argv[1])
import attn  # noqa: E402
from attn import compiler  # noqa: E402

MODULE = attn.attention_mlir(head_dim=64)
REQUESTS = [
    ("Compile", {"dtype": "fp8"}),
    ("Compile", {"dtype": "f32"}),
    ("Compile", {"head_dim": 0}),
    ("Compile", {"family": "sm100"}),
    ("Compile", {"opt_level": 7}),
    ("Compile", {"head_dim": "64"}),
    ("Compile", {"causal": 1}),
    ("Compile", {"scale": "x"}),
    ("Compile", {"mlir": "func.func @f() {\n  %y = bogus\n}\n"}),
    ("Opt", {"mlir": MODULE, "pipeline": "no-such-pass"}),
    ("Opt", {"mlir": MODULE, "pipeline": "attn-to-ptx{chip=sm_75}"}),
    ("CompileBackward", {"head_dim": 64}),
    ("CompileBackward", {"dir": "unused", "warp_rows": 16}),
    ("WriteKernel", {"ptx": ""}),
    ("WriteKernel", {"dir": "unused", "cubin": "not base64!"}),
    ("TuneBundle", {"mlir": MODULE}),
    ("TuneBundle", {"mlir": MODULE, "dir": "unused", "opt_level": 9}),
    ("TuneBundle", {"mlir": MODULE, "dir": "unused", "jobs": -1}),
    ("TuneBundle", {"mlir": MODULE, "dir": "unused", "only": "m64"}),
    ("TuneBundle", {"mlir": MODULE, "dir": "unused",
                    "default_family": "x"}),
    # Fields a request does not take.
    ("CompileBackward", {"dir": "unused", "bias": "bh"}),
    ("Compile", {"deterministic": True, "tuning": "x"}),
    ("AttentionModule", {"bias": "bh"}),
    ("Opt", {"mlir": MODULE, "pipeline": "", "pipline": "x"}),
    ("WriteKernel", {"dir": "unused", "cubin64": ""}),
    ("TuneBundle", {"mlir": MODULE, "dir": "unused", "block_m": 64}),
    ("Version", {"verbose": True}),
    ("Compile", {"mlir": MODULE, "head_dim": 128}),
]
for function, request in REQUESTS:
    try:
        compiler._call(function, request)
        print(f"{function}: no error")
    except attn.CompileError as ex:
        print(f"{function}: {str(ex).splitlines()[0]}")

lib = compiler._library()
for raw in (b"not json", b"[1, 2]"):
    result = lib.attnCompilerCompile(raw)
    print("raw:", json.loads(ctypes.string_at(result))["error"])
    lib.attnFreeString(result)
