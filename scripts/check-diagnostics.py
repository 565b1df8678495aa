#!/usr/bin/env python3
"""Diagnostics coverage: every message attn can show a user has a test.

Lists each diagnostic in lib/ and tools/ -- MLIR diagnostics (emitError,
emitOpError, emitWarning, emitRemark) and the runtime's and tools' error
messages (Status::error, createStringError and the tools' fail/usageError/
error helpers) -- takes its stable text (the longest string-literal run of
the message, the parts around values left out) and looks for that text in
the tests' expectations: expected-error/-warning/-remark and CHECK lines in
test/**, plus the expected strings of the runtime's unit tests.

A message that no test expects is "uncovered". Exit status 1 when there is
an uncovered message that is not in scripts/diagnostics-allowlist.txt (the
few that no input can reach, each with the reason), or when an allowlist
entry no longer matches anything (stale). scripts/test.sh runs this.

  python3 scripts/check-diagnostics.py            # summary + uncovered
  python3 scripts/check-diagnostics.py --list     # every message, status
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# MLIR diagnostics are always user-facing; the other functions are only
# counted where their argument holds a string literal.
MLIR_DIAG = r"emitError|emitOpError|emitWarning|emitRemark"
OTHER_DIAG = r"Status::error|createStringError|usageError|fail|error"
CALL_RE = re.compile(r"(?<![\w.])(?:[\w:]*(?:->|\.))?(" + MLIR_DIAG + "|" +
                     OTHER_DIAG + r")\s*\(")
STRING_RE = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
MIN_STABLE = 6


def strip_comments(text):
    """Blanks out // and /* */ comments, keeping offsets and strings."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        else:
            i += 1
    return "".join(out)


def statement_end(text, start):
    """Offset of the `;` (or unmatched closing brace) ending the statement."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return i
        elif c == ";" and depth == 0:
            return i
        i += 1
    return n


def unescape(literal):
    """The C++ string literal's text (the escapes messages use)."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(
        m.group(1), m.group(1)), literal)


def literal_runs(stmt):
    """Runs of adjacent string literals: the message's fixed parts."""
    runs, current, last_end = [], None, None
    for m in STRING_RE.finditer(stmt):
        between = stmt[last_end:m.start()] if last_end is not None else None
        piece = unescape(m.group(1))
        if current is not None and between is not None and not between.strip():
            current += piece
        else:
            if current is not None:
                runs.append(current)
            current = piece
        last_end = m.end()
    if current is not None:
        runs.append(current)
    return runs


class Site:
    def __init__(self, path, line, func, stable, statement):
        self.path, self.line, self.func = path, line, func
        self.stable, self.statement = stable, statement
        self.covered_by = None

    def where(self):
        return "%s:%d" % (self.path, self.line)


def collect_sites():
    sites = []
    for top in ("lib", "tools"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)
                text = strip_comments(open(path, encoding="utf-8").read())
                for m in CALL_RE.finditer(text):
                    func = m.group(1)
                    # Definitions of the helpers themselves are not messages.
                    before = text[max(0, m.start() - 40):m.start()]
                    if re.search(r"(int|Error|Status|auto|void)\s+$", before):
                        continue
                    close = statement_end(text, m.end())
                    after = text[close + 1:close + 40].lstrip()
                    if after.startswith("{") or after.startswith("const"):
                        continue  # a helper's definition, not a message
                    end = statement_end(text, m.end() - 1)
                    stmt = text[m.start():end]
                    runs = [r.strip() for r in literal_runs(stmt)]
                    runs = [r for r in runs if len(r) >= MIN_STABLE]
                    if not runs:
                        continue  # forwards a message built elsewhere
                    if func not in MLIR_DIAG.split("|") and \
                            not STRING_RE.search(stmt):
                        continue
                    stable = max(runs, key=len)
                    line = text.count("\n", 0, m.start()) + 1
                    # fail(Status::error("...")): one message, not two.
                    if any(s.path == rel and s.stable == stable and
                           abs(s.line - line) <= 1 for s in sites):
                        continue
                    sites.append(Site(rel, line, func, stable,
                                      " ".join(stmt.split())))
    return sites


# Where tests state what a user sees: -verify-diagnostics expectations and
# FileCheck lines under any prefix (CHECK:, BADM:, ERR-NEXT: ...), but not
# -NOT lines, which say a text must be absent.
EXPECT_RE = re.compile(
    r"expected-(?:error|warning|remark|note)[^{]*\{\{.*\}\}|"
    r"^\W*[A-Z][A-Z0-9_]*(?:-[A-Z0-9_]+)*(?<!-NOT)(?<!^RUN)(?<!\WRUN):")


def collect_expectations():
    texts = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "test")):
        for name in files:
            if not name.endswith((".mlir", ".test", ".cpp", ".py", ".c")):
                continue
            path = os.path.join(dirpath, name)
            try:
                content = open(path, encoding="utf-8").read()
            except UnicodeDecodeError:
                continue
            rel = os.path.relpath(path, ROOT)
            # Unit tests (C++/Python/C) state expected messages as string
            # literals; lit tests in expectation lines.
            if name.endswith((".cpp", ".py", ".c")):
                for lit in STRING_RE.findall(content):
                    texts.append((rel, lit.replace('\\"', '"')))
                for lit in re.findall(r"'((?:[^'\\\n]|\\.)*)'", content):
                    texts.append((rel, lit))
            else:
                for line in content.splitlines():
                    if EXPECT_RE.search(line):
                        texts.append((rel, line))
    return texts


def normalise(s):
    return " ".join(s.split())


# A test that checks only part of a message still pins it down when the part
# it checks, in one piece, is at least half of the stable text and at least
# MIN_PIECE characters (or the whole stable text, when that is shorter).
MIN_PIECE = 16


def expectation_blob(expectations):
    """All expectations in one string, FileCheck regex and variable blocks cut
    out (replaced by a separator no message contains); -verify-diagnostics'
    {{...}} hold literal text and stay."""
    parts = []
    for _, t in expectations:
        if "expected-" not in t:
            t = re.sub(r"\{\{.*?\}\}|\[\[.*?\]\]", "\x00", t)
        parts.append(t)
    return "\x00".join(parts)


def covered(blob, stable):
    need = min(len(stable), max(MIN_PIECE, (len(stable) + 1) // 2))
    return any(stable[i:i + need] in blob
               for i in range(len(stable) - need + 1))


def load_allowlist(path):
    entries = []
    if not os.path.exists(path):
        return entries
    for raw in open(path, encoding="utf-8"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        text, _, reason = line.partition(" | ")
        entries.append((text.strip(), reason.strip()))
    return entries


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", action="store_true",
                    help="print every message with its status")
    args = ap.parse_args()

    sites = collect_sites()
    expectations = [(f, normalise(t)) for f, t in collect_expectations()]
    blob = expectation_blob(expectations)
    for s in sites:
        want = normalise(s.stable)
        if covered(blob, want):
            # Name a file that holds it, for --list.
            s.covered_by = next((f for f, t in expectations if want in t),
                                "tests")

    allow_path = os.path.join(ROOT, "scripts", "diagnostics-allowlist.txt")
    allow = load_allowlist(allow_path)
    used = set()
    uncovered, allowed = [], []
    for s in sites:
        if s.covered_by:
            continue
        hit = [a for a in allow if a[0] == s.stable]
        if hit:
            used.add(hit[0][0])
            allowed.append((s, hit[0][1]))
        else:
            uncovered.append(s)
    stale = [a for a in allow if a[0] not in used]

    mlir = [s for s in sites if s.func in MLIR_DIAG.split("|")]
    mlir_cov = sum(1 for s in mlir if s.covered_by)
    if args.list:
        for s in sites:
            status = ("covered by " + s.covered_by) if s.covered_by else (
                "allowlisted" if any(s is a[0] for a in allowed)
                else "UNCOVERED")
            print("%-55s %-16s %s\n    \"%s\"" % (s.where(), s.func, status,
                                                 s.stable))
    print("diagnostics: %d messages, %d covered by a test, %d allowlisted, "
          "%d uncovered; MLIR diagnostics %d/%d covered" %
          (len(sites), sum(1 for s in sites if s.covered_by), len(allowed),
           len(uncovered), mlir_cov, len(mlir)))
    for s in uncovered:
        print("UNCOVERED %s (%s): \"%s\"" % (s.where(), s.func, s.stable))
    for text, _ in stale:
        print("STALE allowlist entry (matches no uncovered message): \"%s\""
              % text)
    if uncovered or stale:
        print("Add a test that expects each message above (expected-error, "
              "CHECK, or a unit-test string), or, if no input can reach it, "
              "an entry with the reason in scripts/diagnostics-allowlist.txt.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
