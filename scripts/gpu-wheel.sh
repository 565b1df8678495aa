#!/usr/bin/env bash
# The wheel on a GPU host: installs dist/attn-*.whl alone (no index, no
# dependencies) into a fresh folder that python3 (the host's, with its
# PyTorch) imports first; then, outside the checkout, compiles kernels with
# the wheel's compiler, launches them through its runtime (cubin, and PTX
# only through the driver's JIT) and runs the PyTorch op, each against SDPA.
#   bash scripts/build-wheel.sh && bash scripts/gpu-wheel.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SITE="${ATTN_WHEEL_SITE:-/tmp/attn-wheel-site}"
rm -rf "$SITE"
python3 -m pip install --quiet --no-index --no-deps --target "$SITE" \
  "$ROOT"/dist/attn-*.whl
cd /tmp
PYTHONPATH="$SITE" exec python3 - <<'PY'
import os, platform, subprocess, tempfile, time
import torch, torch.nn.functional as F
import attn, attn.torch
from attn import _native, runtime

lib = _native.compiler_library()
print("attn", attn.__version__, "from", lib)
print("glibc", platform.libc_ver()[1], "torch", torch.__version__,
      torch.cuda.get_device_name())
print("ldd:", " ".join(l.split()[0] for l in subprocess.run(
    ["ldd", str(lib)], capture_output=True, text=True).stdout.splitlines()))
tmp = tempfile.mkdtemp()
q, k, v = (torch.randn(2, 8, 1024, 128, device="cuda", dtype=torch.bfloat16)
           for _ in range(3))
ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
for assemble in (True, False):
    t = time.time()
    kern = attn.compile(batch=2, heads_q=8, seq_q=1024, head_dim=128,
                        dtype="bf16", causal=True, assemble=assemble)
    d = kern.write(os.path.join(tmp, f"k{int(assemble)}"))
    took = time.time() - t
    launch = runtime.Kernel(str(d))
    out, lse = launch(q, k, v)
    torch.cuda.synchronize()
    print(f"{kern.entry} ({kern.manifest['family']}, compiled in {took:.1f} s,"
          f" cubin {len(kern.cubin)} bytes) loaded from {launch.loaded_from}:"
          f" max |out - sdpa| = {(out - ref).abs().max().item():.4f}")
os.environ["ATTN_CACHE_DIR"] = os.path.join(tmp, "cache")
out = attn.torch.attention(q, k, v, causal=True)
print("attn.torch.attention (compiled on first use): max |out - sdpa| =",
      f"{(out - ref).abs().max().item():.4f}")
qg = q.detach().clone().requires_grad_()
try:
    attn.torch.attention(qg, k, v, causal=True).sum().backward()
    qr = q.detach().clone().requires_grad_()
    F.scaled_dot_product_attention(qr, k, v, is_causal=True).sum().backward()
    print("backward: max |dq - sdpa dq| =",
          f"{(qg.grad - qr.grad).abs().max().item():.4f}")
except Exception as ex:  # print it, then the script ends with an error
    print("backward:", type(ex).__name__, str(ex).splitlines()[0][:300])
    raise
PY
