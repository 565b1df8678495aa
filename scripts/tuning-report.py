#!/usr/bin/env python3
"""The table of a tuning run, from its database (and attn-tune's per-shape
time lines): one row per entry with the winner, its time, the runner-up,
attn-compile's heuristic choice and the speed-up over it, the other
family's heuristic, and the seconds spent on the shape; then the issue's
bar (tuned/heuristic <= 1.02 everywhere, >= 1.10x on a quarter of the
points, < 60 s per shape).

  scripts/tuning-report.py TUNING.json [TIMES.log] > table.md
"""
import json
import re
import sys


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
    k, s = e["key"], e["tuned_shape"]
    text = "%s d%d b%d h%d n%d" % (k["dtype"], k["head_dim"], s["batch"],
                                  s["heads_q"], s["seq_q"])
    return text + (" causal" if k["mask"] == "causal" else "")


def main():
    db = json.load(open(sys.argv[1]))
    seconds = {}
    if len(sys.argv) > 2:
        for line in open(sys.argv[2]):
            m = re.match(r"attn-tune: (.*): ([0-9.]+) s \(", line)
            if m:
                seconds[m.group(1)] = float(m.group(2))
    rows, gains, ratios, times = [], 0, [], []
    other_gains, other_ratios = 0, []
    entries = sorted(db["entries"], key=lambda e: (
        e["key"]["head_dim"], e["key"]["mask"], e["tuned_shape"]["seq_q"]))
    for e in entries:
        cands = e["candidates"]
        ok = sorted((c for c in cands if c["status"] == "ok"
                     and c.get("note", "").startswith("final")),
                    key=lambda c: c["time_ms"])
        win = e["winner"]
        heur = next((c for c in cands if c.get("heuristic")), None)
        other = next((c for c in cands if c.get("family_heuristic")
                      and not c.get("heuristic")), None)
        runner = ok[1] if len(ok) > 1 else None
        speed = heur["time_ms"] / e["time_ms"] if heur and heur["status"] == "ok" else None
        if speed:
            gains += speed >= 1.10
            ratios.append(e["time_ms"] / heur["time_ms"])
        if other and other["status"] == "ok":
            other_gains += other["time_ms"] / e["time_ms"] >= 1.10
            other_ratios.append(e["time_ms"] / other["time_ms"])
        lab = label(e)
        secs = seconds.get(lab)
        if secs is not None:
            times.append(secs)
        n_ok = sum(c["status"] == "ok" for c in cands)
        rows.append("| %s | %s | %.4f | %s | %s | %s | %s | %d/%d | %s |" % (
            lab, name(win) + ("*" if heur and name(heur) == name(win) else ""),
            e["time_ms"],
            "%s %.4f" % (name(runner), runner["time_ms"]) if runner else "-",
            "%s %.4f" % (name(heur), heur["time_ms"]) if heur else "-",
            "%.3fx" % speed if speed else "n/a",
            "%s %.4f (%.3fx)" % (name(other), other["time_ms"],
                                 other["time_ms"] / e["time_ms"])
            if other and other["status"] == "ok" else "-",
            n_ok, len(cands),
            "%.1f" % secs if secs is not None else "-"))
    print("| shape | winner | time ms | runner-up | heuristic (attn-compile "
          "default) | speed-up | other family's heuristic (speed-up) | ok/"
          "candidates | tune s |")
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
    if other_ratios:
        print("Against the other family's heuristic: >= 1.10x at %d of %d "
              "points; worst tuned/heuristic %.3f" % (
                  other_gains, len(other_ratios), max(other_ratios)))


if __name__ == "__main__":
    main()
