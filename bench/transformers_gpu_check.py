"""attn as a transformers backend on a GPU host, bf16, tiny random models (issue 25).

With the attn wheel and the pinned transformers wheels installed (pip --no-deps --target DIR),
HF_HUB_OFFLINE=1 PYTHONPATH=DIR python3 bench/transformers_gpu_check.py: logits against sdpa
(eager for Gemma-2) with no/left/right padding, gradients (Llama, GPT-2) with each side's
non-finite gradients named, greedy generation of a left-padded batch against sdpa.
"""
import copy, sys, time, torch
import attn, attn.integrations.transformers as attn_hf
import transformers as T
print("torch", torch.__version__, "transformers", T.__version__, torch.cuda.get_device_name())
attn_hf.register()
dev, dt = "cuda", torch.bfloat16
TINY = dict(hidden_size=256, intermediate_size=512, num_attention_heads=4,
            num_key_value_heads=2, num_hidden_layers=2, vocab_size=128,
            max_position_embeddings=256)
def pair(cls, cfg, ref_impl="sdpa"):
    torch.manual_seed(0)
    ref = cls._from_config(copy.deepcopy(cfg), attn_implementation=ref_impl, dtype=dt).to(dev).eval()
    m = cls._from_config(copy.deepcopy(cfg), attn_implementation="attn", dtype=dt).to(dev).eval()
    m.load_state_dict(ref.state_dict()); return m, ref
N = 64
ids = torch.randint(0, 128, (3, N), device=dev)
masks = {}
for pad in ("none", "left", "right"):
    mk = torch.ones(3, N, dtype=torch.long, device=dev)
    if pad == "left": mk[1, :10] = 0; mk[2, :37] = 0
    if pad == "right": mk[1, -10:] = 0; mk[2, -37:] = 0
    masks[pad] = mk
ok = True
for name, cls, cfg, ref_impl in [
        ("llama", T.LlamaForCausalLM, T.LlamaConfig(**TINY), "sdpa"),
        ("mistral", T.MistralForCausalLM, T.MistralConfig(**TINY, sliding_window=16), "sdpa"),
        ("gemma2", T.Gemma2ForCausalLM, T.Gemma2Config(**TINY, head_dim=64, sliding_window=16, query_pre_attn_scalar=48, attn_logit_softcapping=2.0, final_logit_softcapping=None), "eager"),
        ("gpt2", T.GPT2LMHeadModel, T.GPT2Config(n_embd=256, n_head=4, n_layer=2, vocab_size=128, n_positions=256, attn_pdrop=0.0, resid_pdrop=0.0, embd_pdrop=0.0), "sdpa")]:
    m, ref = pair(cls, cfg, ref_impl)
    for pad, mk in masks.items():
        try:
            with torch.no_grad():
                a = m(ids, attention_mask=mk).logits.float(); r = ref(ids, attention_mask=mk).logits.float()
            real = mk.bool()
            err = (a - r)[real].abs().max().item(); scale = r[real].abs().max().item()
            fin = torch.isfinite(a).all().item()
            print(f"{name:8s} {pad:5s} fwd max|attn-{ref_impl}| {err:.4f} (|ref| {scale:.3f}) finite {fin}")
            ok &= err < 0.05 * max(scale, 1) and fin
        except Exception as ex:
            print(f"{name:8s} {pad:5s} fwd ERROR {type(ex).__name__}: {ex}"); ok = False
    if name in ("llama", "gpt2"):
        for pad, mk in masks.items():
            try:
                gs = []
                for mm in (m, ref):
                    mm.zero_grad(); lo = mm(ids, attention_mask=mk).logits.float()
                    lo[mk.bool()].square().mean().backward()
                    gs.append({n: p.grad.float() for n, p in mm.named_parameters() if p.grad is not None})
                for tag, g in zip(("attn", ref_impl), gs):
                    bad = [n for n, x in g.items() if not torch.isfinite(x).all()]
                    print(f"{name:8s} {pad:5s} bwd {tag}: {len(bad)} of {len(g)} grads non-finite {bad[:3]}")
                worst = max(((gs[0][n] - gs[1][n]).norm() / gs[1][n].norm().clamp(min=1e-12)).item() for n in gs[1])
                print(f"{name:8s} {pad:5s} bwd worst relative grad err {worst:.4f}")
                ok &= worst < 0.05
            except Exception as ex:
                print(f"{name:8s} {pad:5s} bwd ERROR {type(ex).__name__}: {ex}"); ok = False
    if name in ("llama", "mistral"):
        kw = dict(attention_mask=masks["left"], max_new_tokens=8, do_sample=False, pad_token_id=0)
        with torch.no_grad():
            g1 = m.generate(ids, **kw)[:, N:]; g2 = ref.generate(ids, **kw)[:, N:]
        same = (g1 == g2).float().mean().item()
        print(f"{name:8s} generate left-padded: tokens equal to sdpa {same*100:.0f}%")
print("OK" if ok else "FAILED")
