#!/usr/bin/env python3
"""attn-compile over the flag x direction x family matrix of docs/variants.md.

The table between the kernel-capabilities markers of docs/variants.md says,
for each attn-compile flag set, whether each family compiles it forward and
backward ("yes") or refuses it with a diagnostic ("no"). This script runs
attn-compile --no-cubin --emit manifest for every cell and fails on any cell
where the tool disagrees: a kernel where the table says "no", an error where
it says "yes", a refusal from the capability table (KernelCapabilities.h)
that does not name the family and direction, or a kernel of another family.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys

BASE = ["--heads-q", "2", "--chip",
        "sm_90a", "--no-cubin", "--emit", "manifest", "--tuning-db", "none"]
COLUMNS = [("sm80", "forward"), ("sm90a", "forward"), ("sm80", "backward"),
           ("sm90a", "backward")]
FAMILY = {"sm80": "sm80-mma", "sm90a": "sm90a-wgmma"}


def read_table(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r"<!-- kernel-capabilities -->(.*?)<!-- /kernel-capabilities -->",
                  text, re.S)
    if not m:
        sys.exit(f"{path}: no kernel-capabilities table")
    rows = []
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 1 + len(COLUMNS) or not cells[0].startswith("`"):
            continue
        rows.append((cells[0].strip("`"), cells[1:]))
    if not rows:
        sys.exit(f"{path}: the kernel-capabilities table has no rows")
    return rows


def run(tool, flags, family, direction):
    extra = shlex.split(flags)
    dtype = [] if "--dtype" in extra else ["--dtype", "bf16"]
    cmd = [tool] + BASE + dtype + extra + ["--family", family]
    if direction == "backward":
        cmd.append("--backward")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return cmd, p


def check(tool, flags, family, direction, expected):
    cmd, p = run(tool, flags, family, direction)
    where = f"{flags or '(no flag)'} x {direction} x {family}"
    err = p.stderr.strip()
    if expected == "yes":
        if p.returncode != 0:
            return f"{where}: expected a kernel, got: {err}"
        family_got = json.loads(p.stdout).get("family")
        if family_got != FAMILY[family]:
            return f"{where}: expected a {FAMILY[family]} kernel, got {family_got}"
        return None
    if p.returncode == 0:
        return f"{where}: expected a diagnostic, got a kernel"
    if "error" not in err:
        return f"{where}: expected a diagnostic, got exit {p.returncode}: {err}"
    if "is not supported by the" in err and \
            f"{FAMILY[family]} {direction} kernels" not in err:
        return f"{where}: the diagnostic does not name the {FAMILY[family]} " \
               f"{direction} kernels: {err}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", required=True)
    ap.add_argument("--attn-compile", default="attn-compile")
    args = ap.parse_args()
    jobs = []
    for flags, cells in read_table(args.table):
        for (family, direction), expected in zip(COLUMNS, cells):
            if expected not in ("yes", "no"):
                sys.exit(f"{flags}: cell '{expected}' is neither yes nor no")
            jobs.append((flags, family, direction, expected))
    workers = max(1, min(4, os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(
            lambda j: check(args.attn_compile, *j), jobs))
    failures = [r for r in results if r]
    for f in failures:
        print("MISMATCH:", f)
    print(f"{len(jobs)} cells, {len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
