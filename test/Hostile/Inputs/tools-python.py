"""Hostile input through the Python package (attn.opt, attn.compile over
the compiler's C API): each prints the CompileError (lines joined by " | "), or
"ok". argv[1]: the package's parent folder (python/)."""
import subprocess
import sys

sys.path.insert(0, sys.argv[1])
import attn  # noqa: E402

deep = sys.argv[1] + "/../test/Hostile/Inputs/tools-deep.py"


def text(kind, n):
    return subprocess.run([sys.executable, deep, kind, str(n)], check=True,
                          capture_output=True, text=True).stdout


def show(label, call):
    try:
        call()
        print(f"{label}: ok")
    except attn.CompileError as ex:
        print(f"{label}: " + " | ".join(str(ex).splitlines()))


show("regions", lambda: attn.opt(text("scf", 5000), "canonicalize"))
show("tuple", lambda: attn.opt(text("tuple", 20000), "canonicalize"))
show("chain", lambda: attn.opt(text("chain", 200000), "canonicalize"))
show("scf 500", lambda: attn.opt(text("scf", 500), "canonicalize"))
for chip in ("sm_90x", "sm_999", "sm_90a "):
    show(f"compile {chip!r}", lambda: attn.compile(chip=chip, assemble=False))
show("opt sm_80a", lambda: attn.opt(attn.attention_mlir(head_dim=64),
                                    "attn-to-ptx{chip=sm_80a}"))
show("compile block_m", lambda: attn.compile(block_m=4294967312,
                                            assemble=False))
show("compile sm_120a", lambda: attn.compile(chip="sm_120a", assemble=False))
print("interpreter alive")
