#!/usr/bin/env python3
"""The tables of a tuning run, from its database (and attn-tune's per-shape
time lines): per direction (forward, backward) one row per entry with the
winner, its time, the runner-up, the heuristic's choice and the speed-up
over it, the heuristic's rank among the correct candidates, and the
seconds spent on the shape; then the issue's bar (tuned/heuristic <= 1.02
everywhere, >= 1.10x on a quarter of the points, < 60 s per shape).

  scripts/tuning-report.py [--heuristic auto|default] TUNING.json [TIMES.log]

--heuristic auto (the default): the forward heuristic is what
`attn-compile --family auto` picks without a database: the sm90a-wgmma
family's choice where that family was a candidate, else the sm80-mma one
(the candidates marked family_heuristic). --heuristic default: the
candidate marked "heuristic" (attn-compile's default --family when the
bundle was compiled). Backward entries have one family: its heuristic.
"""
import argparse
import json
import re


def name(t):
    if t.get("family") == "sm90a-wgmma":
        s = "wg-m%dn%ds%d" % (t["block_m"], t["block_n"], t["stages"])
        if t.get("persistent"):
            s += "-p"
        if t.get("schedule") == "overlap":
            s += "-nopp"
        elif t.get("schedule") == "serial":
            s += "-serial"
        return s
    return "m%dn%dr%ds%d" % (t["block_m"], t["block_n"], t["warp_rows"],
                            t["stages"])


def label(e):
    """attn-tune's shape label (its per-shape time lines use it)."""
    k, s = e["key"], e["tuned_shape"]
    text = "%s d%d b%d h%d" % (k["dtype"], k["head_dim"], s["batch"],
                               s["heads_q"])
    if s["heads_kv"] != s["heads_q"]:
        text += "/%d" % s["heads_kv"]
    text += " n%d" % s["seq_q"]
    if s["seq_kv"] != s["seq_q"]:
        text += "/%d" % s["seq_kv"]
    text += " causal" if k["mask"] == "causal" else ""
    if k.get("direction") == "bwd":
        text += " bwd det" if k.get("deterministic") else " bwd"
    return text


def heuristic_of(e, mode):
    cands = e["candidates"]
    if mode == "default" or e["key"].get("direction") == "bwd":
        return next((c for c in cands if c.get("heuristic")), None)
    fam = [c for c in cands if c.get("family_heuristic")]
    wg = [c for c in fam if c.get("family") == "sm90a-wgmma"]
    return (wg or fam or [None])[0]


def table(entries, mode, seconds, title):
    rows, gains, ratios, times, gaps = [], 0, [], [], []
    for e in entries:
        cands = e["candidates"]
        ok = sorted((c for c in cands if c["status"] == "ok"),
                    key=lambda c: c["time_ms"])
        finals = [c for c in ok if c.get("note", "").startswith("final")]
        heur = heuristic_of(e, mode)
        runner = finals[1] if len(finals) > 1 else None
        speed = None
        if heur and heur["status"] == "ok":
            speed = heur["time_ms"] / e["time_ms"]
            gains += speed >= 1.10
            ratios.append(e["time_ms"] / heur["time_ms"])
        # How good the heuristic already is: its rank among the correct
        # candidates (screening and final times alike).
        rank = next((i + 1 for i, c in enumerate(ok) if heur is not None
                     and name(c) == name(heur)
                     and c.get("family") == heur.get("family")), None)
        lab = label(e)
        secs = seconds.get(lab)
        if secs is not None:
            times.append(secs)
        win = e["winner"]
        rows.append("| %s | %s | %.4f | %s | %s | %s | %s | %d/%d | %s |" % (
            lab, name(win) + ("*" if heur and name(heur) == name(win)
                              and heur.get("family") == win.get("family")
                              else ""),
            e["time_ms"],
            "%s %.4f" % (name(runner), runner["time_ms"]) if runner else "-",
            "%s %.4f" % (name(heur), heur["time_ms"]) if heur else "-",
            "%.3fx" % speed if speed else "n/a",
            "%d of %d" % (rank, len(ok)) if rank else "-",
            len(ok), len(cands),
            "%.1f" % secs if secs is not None else "-"))
    print("### " + title)
    print()
    print("| shape | winner | time ms | runner-up | heuristic | speed-up | "
          "heuristic's rank | ok/candidates | tune s |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    print("Points: %d; >= 1.10x over the heuristic: %d (bar: %d); worst "
          "tuned/heuristic: %.3f (bar: <= 1.02); tune seconds per shape: "
          "%s (bar: < 60)" % (
              len(rows), gains, (len(rows) + 3) // 4,
              max(ratios) if ratios else float("nan"),
              "%.1f-%.1f, mean %.1f" % (min(times), max(times),
                                        sum(times) / len(times))
              if times else "n/a"))
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--heuristic", choices=["auto", "default"],
                    default="auto")
    ap.add_argument("db")
    ap.add_argument("times", nargs="?")
    args = ap.parse_args()
    db = json.load(open(args.db))
    seconds = {}
    if args.times:
        for line in open(args.times):
            m = re.match(r"attn-tune: (.*): ([0-9.]+) s \(", line)
            if m:
                seconds[m.group(1)] = float(m.group(2))
    key = lambda e: (e["key"]["head_dim"], e["key"]["mask"],
                     e["key"].get("deterministic", False),
                     e["tuned_shape"]["seq_q"])
    fwd = sorted((e for e in db["entries"]
                  if e["key"].get("direction", "fwd") == "fwd"), key=key)
    bwd = sorted((e for e in db["entries"]
                  if e["key"].get("direction") == "bwd"), key=key)
    if fwd:
        table(fwd, args.heuristic, seconds, "Forward (heuristic: %s)"
              % ("attn-compile --family auto" if args.heuristic == "auto"
                 else "attn-compile's default family"))
    if bwd:
        table(bwd, args.heuristic, seconds, "Backward (heuristic: "
              "attn-compile --backward)")


if __name__ == "__main__":
    main()
