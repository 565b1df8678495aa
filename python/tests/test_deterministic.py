"""attn.torch.attention(..., deterministic=True): the backward's dQ mode,
a kernel specialisation of its own (attn-compile --backward
--deterministic; spec name and cache key "-det", the tuning database's
deterministic key); on CPU tensors the CPU path, deterministic anyway."""

import dataclasses
import json

import pytest

torch = pytest.importorskip("torch")

import attn.torch as attn_torch  # noqa: E402
from attn import cache, families, tuning  # noqa: E402
from attn import cpu as attn_cpu  # noqa: E402
from attn.cache import KernelCache, KernelSpec  # noqa: E402


def _grads(deterministic, causal=True):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, n, 32, requires_grad=True)
               for n in (33, 47, 47))
    k2 = k.detach()[:, :2].clone().requires_grad_()  # GQA
    v2 = v.detach()[:, :2].clone().requires_grad_()
    out = attn_torch.attention(q, k2, v2, causal=causal,
                               deterministic=deterministic)
    out.backward(torch.randn_like(out))
    return out.detach(), q.grad, k2.grad, v2.grad


@pytest.mark.skipif(attn_cpu._library() is None,
                    reason="the compiler's CPU path is not built")
def test_cpu_deterministic_is_accepted_and_identical_over_runs():
    first = _grads(True)
    for _ in range(2):
        assert all(torch.equal(a, b) for a, b in zip(first, _grads(True)))
    # The CPU path has no atomics: the default mode gives the same bits.
    assert all(torch.equal(a, b) for a, b in zip(first, _grads(False)))


def test_deterministic_must_be_a_bool():
    q = torch.randn(1, 1, 4, 32)
    with pytest.raises(TypeError, match=r"attn.torch.attention: "
                                        r"deterministic must be a bool, got "
                                        r"'yes'"):
        attn_torch.attention(q, q, q, deterministic="yes")


def _spec(kind, deterministic):
    q = torch.empty(1, 2, 64, 64, dtype=torch.bfloat16)
    return attn_torch._spec_and_shape(kind, q, q, q, True, None, "",
                                      "sm_90a", deterministic)[0]


def test_the_deterministic_backward_is_its_own_kernel():
    det, atomic = _spec("bwd", True), _spec("bwd", False)
    assert det.deterministic and not atomic.deterministic
    assert det.name == atomic.name.replace("-sm_90a", "-sm_90a-det")
    assert det.name.startswith("bwd-d64-bf16-causal-sm_90a-det")
    c = KernelCache()
    assert c.entry_path(det, "v") != c.entry_path(atomic, "v")
    # The forward is the same kernel either way.
    assert _spec("fwd", True) == _spec("fwd", False)
    q = torch.empty(1, 2, 64, 64, dtype=torch.bfloat16)
    keys = {attn_torch._launcher_key("bwd", q, q, q, True, None, "", 0, d)
            for d in (False, True)}
    assert len(keys) == 2


def test_the_deterministic_backward_looks_up_its_key(monkeypatch):
    seen = []

    def fake_select(spec, shape, gpu, sms, deterministic=None):
        seen.append(deterministic)
        return tuning.Selection(spec.resolved(), "heuristic", "", "db")
    monkeypatch.setattr(tuning, "select", fake_select)
    monkeypatch.setattr(attn_torch, "_device_info", lambda i: ("GPU", 8))
    for det in (True, False):
        sel = attn_torch._select("bwd", _spec("bwd", det),
                                 tuning.Shape(1, 2, 2, 64, 64), 0)
        assert sel.spec.deterministic is det
    assert seen == [True, False]


def test_the_autograd_formula_passes_the_mode(monkeypatch):
    """The op carries deterministic to its backward (the GPU kernels')."""
    seen = []
    real = torch.ops.attn.attention_backward

    def spy(*args):
        # (grad_out, q, k, v, out, lse, causal, scale, variant,
        # deterministic, key_start, key_end)
        seen.append(args[9])
        return real(*args)
    monkeypatch.setattr(torch.ops.attn, "attention_backward", spy)
    if attn_cpu._library() is None:
        pytest.skip("the compiler's CPU path is not built")
    for det in (True, False):
        q = torch.randn(1, 1, 8, 32, requires_grad=True)
        attn_torch.attention(q, q, q, deterministic=det).sum().backward()
    assert seen == [True, False]


def test_backward_tile_options_follow_the_dq_mode():
    det = families.parse_tile("wg-m64n128s2-det")
    assert families.backward_tile_options(det, deterministic=True) == [
        "--block-m", "64", "--block-n", "128", "--stages", "2",
        "--sm90-schedule", "deterministic"]
    with pytest.raises(ValueError, match=r"deterministic backward tile"):
        families.backward_tile_options(det)
    with pytest.raises(ValueError, match=r"deterministic dQ schedule \(-det\)"
                                         r", got 'dq-first'"):
        families.backward_tile_options(
            families.parse_tile("wg-m64n128s3-dqfirst"), deterministic=True)
    sm80 = families.parse_tile("m64n64r16s2")
    assert families.backward_tile_options(sm80, True) == \
        families.backward_tile_options(sm80)


@pytest.mark.parametrize("tile", ["", "wg-m64n128s2-det", "m64n64r16s2"])
def test_deterministic_kernels_compile_into_the_cache(compiler, tile):
    """compile_spec builds the deterministic kernels (sm80: the dq launch,
    no convert; sm90a: the dkdv kernel orders its dQ additions, then
    convert), and the cache tells them from the atomic ones."""
    if not cache.backward_compiler_available():
        pytest.skip("no backward compiler")
    spec = dataclasses.replace(_spec("bwd", True), tile=tile).resolved()
    path = KernelCache().get(spec, compiler.version(), cache.compile_spec)
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["tile"]["deterministic"] is True
    last = "dq" if manifest["family"] == "sm80-mma" else "convert"
    assert [l["role"] for l in manifest["launches"]][-1] == last
    if tile:
        assert cache.manifest_tile_name(manifest) == tile
    atomic = dataclasses.replace(spec, deterministic=False)
    if not tile.endswith("-det"):  # (else the tile name differs first)
        assert cache.validate_kernel_dir(path, atomic) == \
            "manifest tile.deterministic is not False"
