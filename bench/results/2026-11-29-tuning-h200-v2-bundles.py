#!/usr/bin/env python3
"""The stand-in for attn-compile --tune-bundle that made the bundles of
2026-11-29-tuning-h200-v2.md (same bundle v2 format), driving an
attn-compile binary of the committed compiler (sm80-mma and sm90a-wgmma with
block-m/block-n/stages options and the ATTN_SM90_SERIAL /
ATTN_SM90_NO_PINGPONG switches) one candidate at a time. Kept as the record
of that run; scripts/tune-grid.sh is the way to make such bundles.

  python3 THIS ATTN_COMPILE OUT_DIR COMPILER_VERSION [DIMS]"""
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import time

AC = sys.argv[1]
OUT = sys.argv[2]
COMPILER = sys.argv[3]
DIMS = [int(x) for x in sys.argv[4].split(",")] if len(sys.argv) > 4 else [64, 128, 256]
JOBS = 2
SHAPES = [(32, 512), (16, 1024), (8, 2048), (4, 4096), (2, 8192), (1, 16384)]


def sm80_space(d):
    heur = (128, 64, 32) if d <= 128 else (64, 32, 16)
    out = []
    for m in (64, 128, 256):
        for n in (32, 64, 128):
            for r in (16, 32):
                out.append(dict(family="sm80-mma", block_m=m, block_n=n,
                                warp_rows=r, stages=2,
                                family_heuristic=(m, n, r) == heur))
    return out


def sm90_space(d):
    if d <= 64:
        heur = (128, 128, 3)
    elif d <= 128:
        heur = (128, 128, 2)
    else:
        heur = (128, 64, 2)
    ns = [64, 128, 160, 176, 192, 224] if d <= 128 else [32, 48, 64, 80, 96]
    out = []

    def add(m, n, s, sched):
        t = dict(family="sm90a-wgmma", block_m=m, block_n=n, warp_rows=16,
                 stages=s, schedule=sched, persistent=False,
                 family_heuristic=(m, n, s) == heur and sched == "pingpong")
        if not any(all(o[k] == t[k] for k in ("block_m", "block_n", "stages", "schedule")) for o in out):
            out.append(t)
    add(*heur, "pingpong")
    for m in (64, 128):
        for n in ns:
            if m == 64 and n != (128 if d <= 128 else 64):
                continue
            sched = "overlap" if m == 64 else "pingpong"
            for s in (2, 3):
                if s == 2 or n <= 128:
                    add(m, n, s, sched)
    for sched in ("overlap", "serial"):
        add(heur[0], heur[1], heur[2], sched)
    return out


def name(t):
    if t["family"] == "sm90a-wgmma":
        s = "wg-m%dn%ds%d" % (t["block_m"], t["block_n"], t["stages"])
        return s + {"pingpong": "", "overlap": "-nopp", "serial": "-serial"}[t["schedule"]]
    return "m%dn%dr%ds%d" % (t["block_m"], t["block_n"], t["warp_rows"], t["stages"])


def compile_one(d, causal, t, bdir):
    h = 2048 // d
    nm = name(t)
    cmd = [AC, "--head-dim", str(d), "--heads-q", str(h), "--batch", "32",
           "--seq-q", "512", "--dtype", "bf16", "--tuning-db", "none",
           "--block-m", str(t["block_m"]), "--block-n", str(t["block_n"]),
           "--stages", str(t["stages"]), "-o", os.path.join(bdir, nm)]
    env = dict(os.environ)
    env.pop("ATTN_TUNING_DB", None)
    if t["family"] == "sm80-mma":
        cmd += ["--family", "sm80", "--warp-rows", str(t["warp_rows"])]
    else:
        cmd += ["--family", "sm90a"]
        if t["schedule"] == "serial":
            env["ATTN_SM90_SERIAL"] = "1"
        if t["schedule"] == "overlap":
            env["ATTN_SM90_NO_PINGPONG"] = "1"
    if causal:
        cmd.append("--causal")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        shutil.rmtree(os.path.join(bdir, nm), ignore_errors=True)
        msg = p.stderr.strip().splitlines()
        why = next((l for l in msg if "cannot be compiled" in l or "error" in l), msg[-1] if msg else "?")
        return t, "static", why.split("error: ")[-1], -1
    man = json.load(open(os.path.join(bdir, nm, "manifest.json")))
    px = man.get("ptxas", {})
    if px.get("spill_stores", 0) or px.get("spill_loads", 0) or px.get("local_memory", 0):
        shutil.rmtree(os.path.join(bdir, nm), ignore_errors=True)
        return t, "ptxas", "spills (%d bytes stored, %d loaded, %d bytes of local memory)" % (
            px.get("spill_stores", 0), px.get("spill_loads", 0), px.get("local_memory", 0)), px.get("registers", -1)
    return t, "", "", px.get("registers", -1)


def main():
    for d in DIMS:
        for causal in (False, True):
            start = time.time()
            bname = "d%d-%s" % (d, "causal" if causal else "none")
            bdir = os.path.join(OUT, bname)
            shutil.rmtree(bdir, ignore_errors=True)
            os.makedirs(bdir)
            space = sm80_space(d) + sm90_space(d)
            for t in space:
                # attn-compile's default family is sm80: its heuristic.
                t["heuristic"] = t["family"] == "sm80-mma" and t["family_heuristic"]
            with cf.ThreadPoolExecutor(JOBS) as ex:
                res = list(ex.map(lambda t: compile_one(d, causal, t, bdir), space))
            cands, pruned = [], []
            for t, stage, why, regs in res:
                tile = {k: t[k] for k in ("family", "block_m", "block_n", "warp_rows", "stages")}
                if t["family"] == "sm90a-wgmma":
                    tile["schedule"] = t["schedule"]
                    tile["persistent"] = False
                tile["heuristic"] = t["heuristic"]
                tile["family_heuristic"] = t["family_heuristic"]
                if stage:
                    pruned.append(dict(tile, stage=stage, reason=why))
                else:
                    cands.append(dict(dir=name(t), **tile, registers=regs))
            h = 2048 // d
            bundle = {
                "format": "attn-tune-bundle", "version": 2, "compiler": COMPILER,
                "chip": "sm_90a", "family": "auto",
                "key": "fwd bf16 d%d g1 %s q512 kv512 sm_90a auto compiler=%s" % (
                    d, "causal" if causal else "nomask", COMPILER),
                "problem": {"batch": 32, "heads_q": h, "heads_kv": h, "seq_q": 512,
                            "seq_kv": 512, "head_dim": d, "value_head_dim": d,
                            "dtype": "bf16", "causal": causal},
                "shapes": [{"batch": b, "seq_q": n, "seq_kv": n} for b, n in SHAPES],
                "candidates": cands, "pruned": pruned}
            json.dump(bundle, open(os.path.join(bdir, "bundle.json"), "w"), indent=2)
            print("%s: %d candidates, %d pruned (%.0f s)" % (bname, len(cands), len(pruned), time.time() - start), flush=True)
            for p in pruned:
                print("   pruned %s (%s): %s" % (name(p), p["stage"], p["reason"][:150]), flush=True)


main()
