"""FlashAttention's tests on attn (run.sh): installs attn.flash_attn_shim
as the ``flash_attn`` module, selects and samples the parametrisations and
writes the counts.

FlashAttention's test file (its PyPI sdist's tests/test_flash_attn.py, run
unmodified) imports more than the functions under test: its
``flash_attn.bert_padding`` comes from the same sdist ($ATTN_FA_UPSTREAM,
the sdist's root); the KV-cache and rotary functions, which only the
deselected kvcache/splitkv tests call, raise NotImplementedError; einops
falls back to einops_compat.py where it is not installed.

Options:
  --attn-functions F,..  the test functions to collect (default: all);
                    parametrisations with dropout_p != 0 are deselected
                    (attn has no dropout);
  --attn-sample N   keep N parametrisations of each test function, drawn
                    with a seeded random generator (0 = all; -k selects
                    before sampling);
  --attn-seed S     the generator's seed (default 0: the same selection on
                    every run);
  --attn-counts F   where the counts go (JSON, rewritten after every test,
                    so a run cut short still leaves them).

A NotImplementedError (what attn or the shim refuses: dropout, other ALiBi
slopes, a backward of a variant) is reported as a skip with its message;
the counts keep these apart ("not_implemented") from FlashAttention's own
skips. Failures are counted by exception type and the failing statement
(an assert) or the message's first line.
"""

import collections
import importlib.util
import json
import os
import random
import sys
import types

import pytest

from attn import flash_attn_shim

flash_attn_shim.install()
import flash_attn  # noqa: E402

assert flash_attn is flash_attn_shim, "flash_attn is not attn's shim"

try:
    import einops  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.dirname(__file__))
    import einops_compat
    sys.modules["einops"] = einops_compat


def _not_implemented(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(f"{name}: not in attn's flash_attn shim")
    return refuse


def _install_upstream_helpers():
    """What FlashAttention's test file imports beyond the shim."""
    for name in ("flash_attn_with_kvcache",):
        if not hasattr(flash_attn, name):
            setattr(flash_attn, name, _not_implemented(name))
    if not hasattr(flash_attn, "_get_block_size_n"):  # dropout tests only
        flash_attn._get_block_size_n = _not_implemented("_get_block_size_n")
    layers = types.ModuleType("flash_attn.layers")
    rotary = types.ModuleType("flash_attn.layers.rotary")
    rotary.apply_rotary_emb = _not_implemented("apply_rotary_emb")
    layers.rotary = rotary
    sys.modules.setdefault("flash_attn.layers", layers)
    sys.modules.setdefault("flash_attn.layers.rotary", rotary)
    root = os.environ.get("ATTN_FA_UPSTREAM")
    if root:
        path = os.path.join(root, "flash_attn", "bert_padding.py")
        spec = importlib.util.spec_from_file_location(
            "flash_attn.bert_padding", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["flash_attn.bert_padding"] = module
        spec.loader.exec_module(module)


_install_upstream_helpers()


def pytest_addoption(parser):
    parser.addoption("--attn-functions", default="")
    parser.addoption("--attn-sample", type=int, default=0)
    parser.addoption("--attn-seed", default="0")
    parser.addoption("--attn-counts", default="")


def pytest_collection_modifyitems(config, items):
    functions = {f for f in config.getoption("--attn-functions").split(",")
                 if f}

    def wanted(item):
        params = getattr(getattr(item, "callspec", None), "params", {})
        return ((not functions or item.originalname in functions) and
                not params.get("dropout_p", 0.0))
    dropped = [i for i in items if not wanted(i)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if wanted(i)]
    n = config.getoption("--attn-sample")
    if n <= 0:
        return
    by_function = collections.defaultdict(list)
    for item in items:
        by_function[item.originalname].append(item)
    keep = set()
    for name, group in by_function.items():
        rng = random.Random(f"{config.getoption('--attn-seed')}-{name}")
        keep.update(id(i) for i in rng.sample(group, min(n, len(group))))
    config.hook.pytest_deselected(items=[i for i in items
                                         if id(i) not in keep])
    items[:] = [i for i in items if id(i) in keep]


_results = []  # (nodeid, function, outcome, reason)


def _reason(call):
    ex = call.excinfo
    if ex.errisinstance(AssertionError):
        entry = ex.traceback[-1]
        try:
            stmt = str(entry.statement).strip().splitlines()[0]
        except Exception:  # no source
            stmt = f"line {entry.lineno + 1}"
        return f"AssertionError: {stmt}"
    text = str(ex.value).strip().splitlines()
    return f"{ex.typename}: {text[0][:200] if text else ''}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if call.excinfo is not None and rep.failed and \
            call.excinfo.errisinstance(NotImplementedError):
        rep.outcome = "skipped"
        rep.longrepr = (str(item.path), item.location[1],
                        f"not implemented: {_reason(call)}")
    if rep.when == "call" or (rep.when == "setup" and not rep.passed):
        if rep.skipped:
            why = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else \
                str(rep.longrepr)
            kind = ("not_implemented" if why.startswith("not implemented")
                    else "skipped")
            _results.append((item.nodeid, item.originalname, kind, why))
        elif rep.failed:
            _results.append((item.nodeid, item.originalname, "failed",
                             _reason(call)))
        else:
            _results.append((item.nodeid, item.originalname, "passed", ""))
        _write(item.config)


def _write(config):
    path = config.getoption("--attn-counts")
    if not path:
        return
    totals = collections.Counter(r[2] for r in _results)
    per_test = collections.defaultdict(collections.Counter)
    reasons = collections.defaultdict(lambda: collections.defaultdict(list))
    for nodeid, function, outcome, why in _results:
        per_test[function][outcome] += 1
        if why:
            reasons[outcome][why].append(nodeid.split("::")[-1])
    data = {
        "totals": {k: totals.get(k, 0) for k in
                   ("passed", "failed", "skipped", "not_implemented")},
        "per_test": {f: dict(c) for f, c in sorted(per_test.items())},
        "by_reason": {
            outcome: sorted(({"reason": why, "count": len(ids),
                              "examples": ids[:3]}
                             for why, ids in group.items()),
                            key=lambda r: -r["count"])
            for outcome, group in reasons.items()},
    }
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def pytest_terminal_summary(terminalreporter, config):
    path = config.getoption("--attn-counts")
    if path and os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
        terminalreporter.write_line(f"attn counts ({path}): "
                                    f"{json.dumps(data['totals'])}")
        for outcome in ("failed", "not_implemented", "skipped"):
            for r in data["by_reason"].get(outcome, [])[:15]:
                terminalreporter.write_line(
                    f"  {outcome} x{r['count']}: {r['reason'][:160]}")
