"""attn as a Hugging Face transformers backend (attn.integrations.
transformers, issue 25), on the CPU: tiny random-init models built from
configs in code (no download) run with attn_implementation="attn" against
the same weights with "sdpa" ("eager" where SDPA has no softcap): logits
and gradients in float32 with left and right padding, greedy generation
of a left-padded batch, the masks the backend accepts and the errors for
those it does not."""

import copy
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # read when the hub loads

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
transformers = pytest.importorskip("transformers",
                                   reason="transformers is not installed")

from attn import cpu as attn_cpu  # noqa: E402
from attn.integrations import transformers as attn_hf  # noqa: E402
from transformers import masking_utils  # noqa: E402

T = transformers
SEQ = 8
VOCAB = 128
TINY = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4,
            num_key_value_heads=2, num_hidden_layers=2, vocab_size=VOCAB,
            max_position_embeddings=64)


def _configs():
    """(model class, config, reference implementation) by name."""
    return {
        "llama": (T.LlamaForCausalLM, T.LlamaConfig(**TINY), "sdpa"),
        # A window shorter than the sequence: the window is real.
        "mistral": (T.MistralForCausalLM,
                    T.MistralConfig(**TINY, sliding_window=3), "sdpa"),
        "qwen2": (T.Qwen2ForCausalLM,
                  T.Qwen2Config(**TINY, use_sliding_window=True,
                                sliding_window=4, max_window_layers=1),
                  "sdpa"),
        # Softcap, a sliding layer and a full one, scale from
        # query_pre_attn_scalar (not 1/sqrt(head_dim)); Gemma 2 has no
        # SDPA path in transformers.
        "gemma2": (T.Gemma2ForCausalLM,
                   T.Gemma2Config(**TINY, head_dim=16, sliding_window=4,
                                  query_pre_attn_scalar=24,
                                  attn_logit_softcapping=2.0,
                                  initializer_range=0.2,
                                  final_logit_softcapping=None), "eager"),
        "gemma2_nocap": (T.Gemma2ForCausalLM,
                         T.Gemma2Config(**TINY, head_dim=16, sliding_window=4,
                                        query_pre_attn_scalar=24,
                                        attn_logit_softcapping=None,
                                        final_logit_softcapping=None),
                         "eager"),
        "gemma3": (T.Gemma3ForCausalLM,
                   T.Gemma3TextConfig(**TINY, head_dim=16, sliding_window=4,
                                      query_pre_attn_scalar=24,
                                      layer_types=["sliding_attention",
                                                   "full_attention"]),
                   "sdpa"),
        "gpt2": (T.GPT2LMHeadModel,
                 T.GPT2Config(n_embd=64, n_head=4, n_layer=2,
                              vocab_size=VOCAB, n_positions=64,
                              attn_pdrop=0.0, resid_pdrop=0.0, embd_pdrop=0.0),
                 "sdpa"),
    }


@pytest.fixture(autouse=True)
def _registered():
    if not attn_cpu.available():
        pytest.fail("libattn-c.so with the CPU entry points is not built "
                    "(ninja AttnCAPI): " + str(attn_cpu.library_candidates()))
    attn_hf.register()


def _pair(name):
    """(attn model, reference model) with the same random weights."""
    cls, config, ref_impl = _configs()[name]
    torch.manual_seed(0)
    ref = cls._from_config(copy.deepcopy(config),
                           attn_implementation=ref_impl).eval()
    model = cls._from_config(copy.deepcopy(config),
                             attn_implementation="attn").eval()
    model.load_state_dict(ref.state_dict())
    assert model.config._attn_implementation == "attn"
    return model, ref


def _batch(padding):
    """Token ids [3, SEQ] and a 2-D mask: one full row, one padded by 3 on
    the padding side, one by 5."""
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (3, SEQ), generator=g)
    mask = torch.ones(3, SEQ, dtype=torch.long)
    if padding == "left":
        mask[1, :3] = 0
        mask[2, :5] = 0
    elif padding == "right":
        mask[1, -3:] = 0
        mask[2, -5:] = 0
    return ids, mask


def _close(a, b, what):
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4, msg=what)


MODELS = ["llama", "mistral", "qwen2", "gemma2", "gemma3", "gpt2"]


@pytest.mark.parametrize("padding", ["none", "left", "right"])
@pytest.mark.parametrize("name", MODELS)
def test_logits_match(name, padding):
    model, ref = _pair(name)
    ids, mask = _batch(padding)
    with torch.no_grad():
        got = model(ids, attention_mask=mask).logits
        want = ref(ids, attention_mask=mask).logits
    real = mask.bool()
    assert torch.isfinite(got).all()  # padded rows too
    _close(got[real], want[real], f"{name}, {padding} padding")


@pytest.mark.parametrize("padding", ["none", "left", "right"])
@pytest.mark.parametrize("name", ["llama", "mistral", "gemma2", "gemma2_nocap",
                                  "gpt2"])
def test_gradients_match(name, padding):
    model, ref = _pair(name)
    ids, mask = _batch(padding)
    grads = []
    for m in (model, ref):
        m.zero_grad()
        logits = m(ids, attention_mask=mask).logits
        logits[mask.bool()].square().mean().backward()
        grads.append({n: p.grad for n, p in m.named_parameters()
                      if p.grad is not None})
    assert grads[0].keys() == grads[1].keys()
    for n in grads[1]:
        assert torch.isfinite(grads[0][n]).all(), n
        _close(grads[0][n], grads[1][n], f"{name}, {padding}: d {n}")


def test_mixed_precision_training_step_matches_sdpa():
    """float32 weights under torch.autocast(bf16), as models are trained:
    the rotary embedding hands attention a float32 query and a bfloat16
    value; attn runs them in bf16 as SDPA does (gradients in float32)."""
    model, ref = _pair("llama")
    ids, mask = _batch("right")
    labels = ids.masked_fill(mask == 0, -100)  # padded rows are not read
    grads = []
    for m in (model, ref):
        m.train()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = m(ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        grads.append({n: p.grad for n, p in m.named_parameters()})
    for n, want in grads[1].items():
        got = grads[0][n]
        assert got.dtype == torch.float32 and torch.isfinite(got).all(), n
        err = ((got - want).norm() / want.norm().clamp_min(1e-30)).item()
        assert err <= 0.02, f"d {n}: rel err {err:.3g}"


@pytest.mark.parametrize("name", ["llama", "mistral"])
def test_greedy_generation_left_padded(name):
    # With a KV cache the queries are the last positions: bottom-right.
    model, ref = _pair(name)
    ids, mask = _batch("left")
    kw = dict(attention_mask=mask, max_new_tokens=4, do_sample=False,
              pad_token_id=0)
    with torch.no_grad():
        got = model.generate(ids, **kw)
        want = ref.generate(ids, **kw)
    assert torch.equal(got, want)


def test_mask_function_gives_key_padding_not_a_dense_mask():
    mask = torch.ones(2, SEQ, dtype=torch.bool)
    mask[1, :2] = False
    for fn in (masking_utils.causal_mask_function,
               masking_utils.sliding_window_causal_mask_function(3),
               masking_utils.bidirectional_mask_function):
        got = attn_hf.attention_mask(2, SEQ, SEQ, mask_function=fn,
                                     attention_mask=mask)
        assert torch.equal(got, mask)
        assert attn_hf.attention_mask(
            2, SEQ, SEQ, mask_function=fn,
            attention_mask=torch.ones_like(mask)) is None
    # Anything else: transformers' dense mask, checked by the attention.
    odd = masking_utils.or_masks(masking_utils.causal_mask_function,
                                 lambda b, h, q, kv: kv == 0)
    dense = attn_hf.attention_mask(2, SEQ, SEQ, mask_function=odd,
                                   attention_mask=mask)
    assert dense.shape == (2, 1, SEQ, SEQ)


def test_4d_causal_padding_mask_is_run():
    model, ref = _pair("mistral")
    ids, mask = _batch("left")
    dense = masking_utils.sdpa_mask(
        3, SEQ, SEQ, mask_function=masking_utils.
        sliding_window_causal_mask_function(3), attention_mask=mask.bool(),
        allow_is_causal_skip=False)
    with torch.no_grad():
        got = model(ids, attention_mask=dense).logits
        want = ref(ids, attention_mask=mask).logits
    _close(got[mask.bool()], want[mask.bool()], "4-D mask")
    # Its float (additive) form too.
    additive = torch.zeros(dense.shape).masked_fill(~dense, float("-inf"))
    with torch.no_grad():
        got = model(ids, attention_mask=additive).logits
    _close(got[mask.bool()], want[mask.bool()], "additive 4-D mask")


def _qkv(b=2, n=SEQ):
    g = torch.Generator().manual_seed(2)
    return (torch.randn(b, 4, n, 16, generator=g),
            torch.randn(b, 2, n, 16, generator=g),
            torch.randn(b, 2, n, 16, generator=g))


class _Layer(torch.nn.Module):
    is_causal = True


def test_what_attn_cannot_run_is_named():
    q, k, v = _qkv()
    run = lambda mask, **kw: attn_hf.attention_forward(  # noqa: E731
        _Layer(), q, k, v, mask, **kw)
    with pytest.raises(NotImplementedError, match="dropout=0.1"):
        run(None, dropout=0.1)
    with pytest.raises(NotImplementedError, match="s_aux"):
        run(None, s_aux=torch.zeros(4))
    holes = torch.ones(2, SEQ, dtype=torch.bool)
    holes[1, 3] = False
    with pytest.raises(NotImplementedError, match="sequence 1 has padding "
                       "between real tokens"):
        run(holes)
    arbitrary = torch.rand(2, 1, SEQ, SEQ) > 0.5
    with pytest.raises(NotImplementedError, match="not the layer's causal"):
        run(arbitrary)
    bias = torch.randn(2, 1, SEQ, SEQ)
    with pytest.raises(NotImplementedError, match="additive attention mask"):
        run(bias)
    with pytest.raises(NotImplementedError, match="shape"):
        run(torch.ones(2, SEQ + 1, dtype=torch.bool))


@pytest.mark.parametrize("name", ["llama", "mistral", "gemma2"])
def test_packed_sequences_run_as_varlen(name):
    """position_ids restarting within one row (transformers' padding-free
    format): logits and gradients equal the reference backend's, which
    runs transformers' block-diagonal mask, and each sequence's own run."""
    model, ref = _pair(name)
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(0, VOCAB, (1, SEQ), generator=g)
    pos = torch.tensor([[0, 1, 2, 0, 1, 2, 3, 4]])
    out = model(ids, position_ids=pos, use_cache=False).logits
    want = ref(ids, position_ids=pos, use_cache=False).logits
    _close(out, want, "logits")
    alone = ref(ids[:, 3:], position_ids=pos[:, 3:], use_cache=False).logits
    _close(out[:, 3:], alone, "the second sequence alone")
    out.square().sum().backward()
    want.square().sum().backward()
    for (n, p), (_, r) in zip(model.named_parameters(),
                              ref.named_parameters()):
        if p.grad is not None:
            torch.testing.assert_close(p.grad, r.grad, rtol=1e-3, atol=1e-4,
                                       msg=n)


def test_varlen_keywords_run_as_varlen():
    """FlashAttention's varlen keywords (DataCollatorWithFlattening's
    cu_seq_lens_q/k, max_length_q/k) on one packed row: each sequence's
    own causal attention."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 4, 9, 16) for _ in range(3))
    cu = torch.tensor([0, 2, 9], dtype=torch.int32)
    module = torch.nn.Module()
    out, _ = attn_hf.attention_forward(
        module, q, k, v, None, scaling=0.25, cu_seq_lens_q=cu,
        cu_seq_lens_k=cu, max_length_q=7, max_length_k=7)
    for s, e in ((0, 2), (2, 9)):
        one = torch.nn.functional.scaled_dot_product_attention(
            q[..., s:e, :], k[..., s:e, :], v[..., s:e, :], is_causal=True,
            scale=0.25)
        _close(out[:, s:e], one.transpose(1, 2), f"sequence {s}:{e}")


def test_packed_sequences_with_another_mask_are_refused():
    q, k, v = (torch.randn(1, 4, 6, 16) for _ in range(3))
    pos = torch.tensor([[0, 1, 2, 0, 1, 2]])
    wrong = torch.ones(6, 6, dtype=torch.bool).tril()[None, None]
    with pytest.raises(NotImplementedError, match="beside packed sequences"):
        attn_hf.attention_forward(torch.nn.Module(), q, k, v, wrong,
                                  position_ids=pos)


def test_fully_padded_row_is_zero():
    q, k, v = _qkv()
    mask = torch.ones(2, SEQ, dtype=torch.bool)
    mask[1] = False
    out, weights = attn_hf.attention_forward(_Layer(), q, k, v, mask)
    assert weights is None and out.shape == (2, SEQ, 4, 16)
    assert torch.equal(out[1], torch.zeros_like(out[1]))


def test_bidirectional_window_matches_transformers_mask():
    # An encoder-style layer (is_causal False) with a window: attn's window
    # must be transformers' own |q - kv| <= W, so the dense form of that
    # mask is accepted as no padding and gives SDPA's numbers.
    q, k, v = _qkv()
    layer = _Layer()
    layer.is_causal = False
    fn = masking_utils.sliding_window_bidirectional_mask_function(2)
    pad = torch.ones(2, SEQ, dtype=torch.bool)
    pad[1, -2:] = False
    assert torch.equal(attn_hf.attention_mask(2, SEQ, SEQ, mask_function=fn,
                                              attention_mask=pad), pad)
    dense = masking_utils.sdpa_mask(2, SEQ, SEQ, mask_function=fn,
                                    attention_mask=pad,
                                    allow_is_causal_skip=False)
    for mask in (pad, dense):
        got, _ = attn_hf.attention_forward(layer, q, k, v, mask,
                                           sliding_window=2)
        want = torch.nn.functional.scaled_dot_product_attention(
            q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1),
            attn_mask=dense)
        got = got.transpose(1, 2)
        _close(got[:, :, pad[1]], want[:, :, pad[1]], "bidirectional window")
        assert torch.equal(got[1, :, -2:], torch.zeros_like(got[1, :, -2:]))


def test_window_that_masks_nothing_is_left_out(monkeypatch):
    # Mistral's 4096 on a short sequence is no window: the call must not
    # carry one (the GPU backward has none).
    seen = []
    real = attn_hf._attn_torch.attention
    monkeypatch.setattr(attn_hf._attn_torch, "attention",
                        lambda *a, **kw: seen.append(kw["window"]) or
                        real(*a, **kw))
    q, k, v = _qkv()
    for w in (SEQ, 4096, SEQ - 1):
        attn_hf.attention_forward(_Layer(), q, k, v, None, sliding_window=w)
    assert seen == [None, None, (SEQ - 2, 0)]


def test_from_pretrained_with_attn(tmp_path):
    _, ref = _pair("llama")
    ref.save_pretrained(tmp_path)
    model = T.AutoModelForCausalLM.from_pretrained(
        tmp_path, attn_implementation="attn").eval()
    assert model.config._attn_implementation == "attn"
    ids, mask = _batch("left")
    with torch.no_grad():
        got = model(ids, attention_mask=mask).logits
        want = ref(ids, attention_mask=mask).logits
    _close(got[mask.bool()], want[mask.bool()], "from_pretrained")
    ref.set_attn_implementation("attn")
    assert ref.config._attn_implementation == "attn"


def test_inference_mode_and_a_reused_mask():
    # Inference tensors have no version counter; a mask changed in place
    # between calls is read again.
    model, ref = _pair("llama")
    ids, mask = _batch("left")
    with torch.inference_mode():
        got = model(ids, attention_mask=mask).logits
        want = ref(ids, attention_mask=mask).logits
    _close(got[mask.bool()], want[mask.bool()], "inference mode")
    q, k, v = _qkv()
    pad = torch.ones(2, SEQ, dtype=torch.bool)
    first, _ = attn_hf.attention_forward(_Layer(), q, k, v, pad)
    pad[1, :4] = False
    second, _ = attn_hf.attention_forward(_Layer(), q, k, v, pad)
    assert torch.equal(second[1, :4], torch.zeros_like(second[1, :4]))
    assert not torch.equal(first[1, :4], second[1, :4])
    with pytest.raises(NotImplementedError, match="of type list"):
        attn_hf.attention_forward(_Layer(), q, k, v, [[1]])


@pytest.mark.parametrize("padding", ["left", "right"])
def test_padded_batch_is_one_call_with_key_ranges(monkeypatch, padding):
    # Three sequences, three paddings: one attn call per layer, each
    # sequence's run of real keys as the op's key_range (issue 25: the
    # padding inside the kernels, no per-padding slices).
    calls = []
    real = attn_hf._attn_torch.attention
    monkeypatch.setattr(attn_hf._attn_torch, "attention",
                        lambda *a, **kw: calls.append(kw.get("key_range"))
                        or real(*a, **kw))
    model, ref = _pair("llama")
    ids, mask = _batch(padding)
    with torch.no_grad():
        got = model(ids, attention_mask=mask).logits
        want = ref(ids, attention_mask=mask).logits
    layers = model.config.num_hidden_layers
    assert len(calls) == layers
    start, end = calls[0]
    if padding == "left":
        assert start.tolist() == [0, 3, 5] and end.tolist() == [SEQ] * 3
    else:
        assert start.tolist() == [0] * 3 and \
            end.tolist() == [SEQ, SEQ - 3, SEQ - 5]
    real_tokens = mask.bool()
    _close(got[real_tokens], want[real_tokens], f"{padding} padding")
