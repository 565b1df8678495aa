"""Collect the tuner's winners as kernel directories that bench.py times.

Usage (GPU host, after scripts/gpu-tune.sh wrote the database):

    python3 bench/tuned_kernels.py DB BUNDLES OUT

For every forward entry of the tuning database DB, finds the bundle under
BUNDLES (attn-compile --tune-bundle) that tuned it (same head dims, dtype,
mask and a launch shape equal to the entry's tuned shape) and in it the
candidate whose tile is the entry's winner, and copies that candidate's
kernel directory to OUT/d<D>[_causal]_n<N> with the manifest's problem
set to the tuned shape: `bench.py --kernels OUT` (no --seqs) then times
exactly what `attn-compile --tuning-db DB` would compile for each shape
(the same config; the bundle's candidates are ordinary kernel
directories). Prints one line per entry; exits 1 when a winner has no
candidate directory.
"""

import json
import shutil
import sys
from pathlib import Path

TILE_FIELDS = ("family", "block_m", "block_n", "warp_rows", "stages")


def tile_matches(cand, winner):
    if any(cand.get(f) != winner.get(f) for f in TILE_FIELDS):
        return False
    if "schedule" in winner and cand.get("schedule") != winner["schedule"]:
        return False
    return bool(cand.get("persistent", False)) == bool(
        winner.get("persistent", False))


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    db_path, bundles_root, out = Path(argv[1]), Path(argv[2]), Path(argv[3])
    db = json.loads(db_path.read_text())
    bundles = [(p.parent, json.loads(p.read_text()))
               for p in sorted(bundles_root.rglob("bundle.json"))]
    out.mkdir(parents=True, exist_ok=True)
    missing = 0
    for e in db.get("entries", []):
        key, shape = e["key"], e["tuned_shape"]
        if key.get("direction", "fwd") != "fwd":
            continue
        causal = key["mask"] != "none"
        found = None
        for root, b in bundles:
            p = b.get("problem", {})
            if (b.get("direction", "forward") != "forward"
                    or p.get("head_dim") != key["head_dim"]
                    or p.get("value_head_dim") != key["value_head_dim"]
                    or p.get("dtype") != key["dtype"]
                    or bool(p.get("causal")) != causal):
                continue
            if not any(s.get("batch") == shape["batch"]
                       and s.get("seq_q") == shape["seq_q"]
                       and s.get("seq_kv") == shape["seq_kv"]
                       for s in b.get("shapes", [])):
                continue
            for c in b.get("candidates", []):
                if tile_matches(c, e["winner"]):
                    found = root / c["dir"]
                    break
            if found:
                break
        name = (f"d{key['head_dim']}{'_causal' if causal else ''}"
                f"_n{shape['seq_q']}")
        if not found or not (found / "manifest.json").exists():
            print(f"!! {name}: no candidate directory for {e['winner']}")
            missing += 1
            continue
        dest = out / name
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(found, dest)
        manifest = json.loads((dest / "manifest.json").read_text())
        for f in ("batch", "heads_q", "heads_kv", "seq_q", "seq_kv"):
            manifest["problem"][f] = shape[f]
        (dest / "manifest.json").write_text(json.dumps(manifest, indent=2))
        print(f"{name}: {found.name} ({e['time_ms']:.4f} ms when tuned)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
