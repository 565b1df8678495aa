"""Writes a backward tuning bundle for attn-tune through the host-only
libcuda stand-in (test/Runtime/FakeCuda.cpp runs entries naive_bwd_* on the
host): two correct candidates (one the heuristic's choice), one that writes
zero gradients, and the runtime's naive forward test kernel as the kernel
that makes O and the LSE.

  python3 make-fake-bwd-bundle.py <runtime-inputs-dir> <out-dir> [det]
"""
import json
import os
import shutil
import sys

rt, out = sys.argv[1], sys.argv[2]
det = len(sys.argv) > 3 and sys.argv[3] == "det"
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
shutil.copytree(os.path.join(rt, "good", "naive-f32-d64"),
                os.path.join(out, "forward"))
problem = {"batch": 2, "heads_q": 4, "heads_kv": 4, "seq_q": 100,
           "seq_kv": 90, "head_dim": 64, "value_head_dim": 64,
           "dtype": "f32", "causal": False}


def kernel_dir(name, prefix, block_m, block_n):
    d = os.path.join(out, name)
    os.makedirs(d)
    roles = ["preprocess", "dkdv", "dq" if det else "convert"]
    entries = ["%s_%s" % (prefix, r) for r in roles]
    with open(os.path.join(d, "kernel.ptx"), "w") as f:
        f.write(".version 9.0\n.target sm_90a\n.address_size 64\n\n")
        for e in entries:
            f.write(".visible .entry %s(\n)\n{\n}\n" % e)
    params = [{"name": n, "type": "ptr"} for n in
              ["q", "k", "v", "o", "do", "lse", "dq", "dk", "dv",
               "workspace"]]
    params += [{"name": n, "type": "i32"} for n in
               ["seq_q", "seq_kv", "heads_q", "heads_kv"]]
    params += [{"name": "softmax_scale", "type": "f32"}]
    for t in ["q", "k", "v", "o", "do", "dq", "dk", "dv"]:
        params += [{"name": "%s_stride_%s" % (t, x), "type": "i64"}
                   for x in "bhn"]
    params += [{"name": "lse_stride_b", "type": "i64"},
               {"name": "lse_stride_h", "type": "i64"}]
    # y = batch * heads_kv, which the fake driver's dkdv reads.
    grid = {"policy": "key_tiles", "block_rows": block_n}
    manifest = {
        "format": "attn-kernel/1", "direction": "backward",
        "entry": entries[1], "family": "naive-test", "chip": "sm_90a",
        "ptx": "kernel.ptx",
        "problem": dict(problem, scale=0.125, with_lse=True),
        "tile": {"block_m": block_m, "block_n": block_n, "warps": 2,
                 "stages": 2, "source": "hand-written test kernel",
                 "deterministic": det},
        "threads": 64, "grid": grid, "dynamic_shared_memory": 0,
        "workspace": "batch * heads_q * ceil(seq_q / 4) * 4 * "
                     "(head_dim + 2) * 4",
        "launches": [{"role": r, "entry": e, "threads": 64, "grid": grid,
                      "dynamic_shared_memory": 0}
                     for r, e in zip(roles, entries)],
        "params": params,
    }
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)


kernel_dir("good-a", "naive_bwd_f32_d64_a", 64, 128)
kernel_dir("good-b", "naive_bwd_f32_d64_b", 32, 64)
kernel_dir("wrong", "naive_bwd_zero_f32_d64", 64, 64)


def tile(m, n, heuristic):
    return {"family": "naive-test", "block_m": m, "block_n": n,
            "warp_rows": 16, "stages": 2, "heuristic": heuristic,
            "family_heuristic": heuristic}


bundle = {
    "format": "attn-tune-bundle", "version": 3, "direction": "backward",
    "deterministic": det, "compiler": "test-compiler", "chip": "sm_90a",
    "family": "naive-test",
    "key": "bwd f32 d64 g1 nomask q128 kv128 sm_90a naive-test "
           "compiler=test-compiler",
    "problem": problem,
    "shapes": [{"batch": 2, "seq_q": 100, "seq_kv": 90}],
    "forward": "forward",
    "candidates": [dict(tile(64, 128, True), dir="good-a"),
                   dict(tile(64, 64, False), dir="wrong"),
                   dict(tile(32, 64, False), dir="good-b")],
    "pruned": [dict(tile(64, 32, False), stage="static",
                    reason="cannot split dQ")],
}
with open(os.path.join(out, "bundle.json"), "w") as f:
    json.dump(bundle, f, indent=2)
