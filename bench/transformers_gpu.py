"""attn as a Hugging Face transformers backend on a GPU host: the checks of
issue 25 at realistic attention shapes (bench/transformers_common.py has
the configs), random weights, bf16.

1. logits: Llama (GQA 32/8, D 128), Mistral and Qwen2 (sliding window 512
   of 2048 tokens), Gemma-2 (D 256, softcap 50, sliding window,
   query_pre_attn_scalar), Gemma-3 text (D 256), GPT-2 (MHA, D 64); batch
   3 x 2048 with no, left and right padding; "attn" against the same
   weights under "sdpa" ("eager" for Gemma-2, which has no SDPA path),
   with "eager" vs "sdpa" as the noise floor where both exist;
   gradients of every parameter the same way, where attn's backward
   supports the layer (the rest: "not supported", attn's own message);
2. greedy generation (32 tokens) of a left-padded batch against the
   reference, token for token;
3. a 4-layer Llama trained 100 AdamW steps (fixed data and seed; float32
   weights under bf16 autocast, or --train-precision bf16) with attn,
   sdpa and eager: final losses within 1%, step times; then the trained
   model's greedy generation of a left-padded batch, token for token.

Writes transformers_gpu.json and .md under --out ($OUT), prints a summary
table last, exits 1 if a check fails. scripts/gpu-transformers.sh runs it
on the GPU host; here, on the CPU (attn's CPU path, float32):
    PYTHONPATH=python python bench/transformers_gpu.py --device cpu --tiny
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from transformers_common import (Report, build, families, parse_args, setup,
                                 sync)

SECTIONS = ("logits", "grads", "generate", "train")


def _extra(p):
    p.add_argument("--models", default="llama,mistral,qwen2,gemma2,gemma3,"
                   "gpt2")
    p.add_argument("--sections", default=",".join(SECTIONS))
    p.add_argument("--seq", type=int, help="default 2048 (tiny 24)")
    p.add_argument("--gen-steps", type=int, help="default 32 (tiny 4)")
    p.add_argument("--train-seed", type=int, default=0,
                   help="offset of the training run's data and weight seeds")
    p.add_argument("--steps", type=int, help="training steps, default 100 "
                   "(tiny 20)")
    p.add_argument("--train-precision", default="mixed",
                   choices=("mixed", "bf16"),
                   help="mixed: float32 weights under torch.autocast; bf16: "
                   "the model and optimizer in --dtype")


def tolerances(dtype):
    """(relative L2 error of logits, of each gradient, of a generation
    step's logits): an error is accepted up to max(tolerance, 3 x the
    noise floor eager-vs-sdpa where measured)."""
    if dtype == torch.float32:
        return 1e-4, 1e-3, 1e-3
    return 0.03, 0.05, 0.05


def paddings(n):
    """Token masks [3, n]: a full row and two rows padded on one side by
    15% and 55% of n (2048: 307 and 1126; the shorter row's 922 real tokens
    still exceed the 512-token windows)."""
    p1, p2 = round(0.15 * n), round(0.55 * n)
    out = {}
    for pad in ("none", "left", "right"):
        m = torch.ones(3, n, dtype=torch.long)
        if pad == "left":
            m[1, :p1] = 0
            m[2, :p2] = 0
        elif pad == "right":
            m[1, n - p1:] = 0
            m[2, n - p2:] = 0
        out[pad] = m
    return out


def rel(a, b):
    a, b = a.float(), b.float()
    return ((a - b).norm() / b.norm().clamp(min=1e-30)).item()


def logits_of(model, impl, ids, mask):
    model.set_attn_implementation(impl)
    with torch.no_grad():
        return model(ids, attention_mask=mask, use_cache=False).logits


def grads_of(model, impl, ids, mask, labels):
    """{name: grad} of a cross-entropy over the real tokens (raises what
    the backward raises)."""
    model.set_attn_implementation(impl)
    model.zero_grad(set_to_none=True)
    logits = model(ids, attention_mask=mask, use_cache=False).logits
    real = mask.bool()
    F.cross_entropy(logits[real].float(), labels[real]).backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()
             if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return grads


def nonfinite(grads):
    return [n for n, g in grads.items() if not torch.isfinite(g).all()]


def worst_rel(got, want):
    errs = {n: rel(got[n], want[n]) for n in want
            if want[n].float().norm() > 0}
    name = max(errs, key=errs.get)
    return errs[name], name


def check_logits(rep, args, name, model, ref, masks, ids, tol):
    others = [i for i in ("sdpa", "eager") if i != ref]
    base_impl = others[0] if ref == "sdpa" else None
    for pad, mask in masks.items():
        def case():
            want = logits_of(model, ref, ids, mask)
            got = logits_of(model, "attn", ids, mask)
            real = mask.bool()
            fig = dict(rel_err=rel(got[real], want[real]),
                       max_abs=(got[real].float() - want[real].float()
                                ).abs().max().item(),
                       ref_max=want[real].float().abs().max().item(),
                       argmax_eq=(got[real].argmax(-1) == want[real].argmax(
                           -1)).float().mean().item(),
                       finite=bool(torch.isfinite(got).all()))
            bound = tol
            if base_impl:
                base = logits_of(model, base_impl, ids, mask)
                fig["floor"] = rel(base[real], want[real])
                bound = max(tol, 3 * fig["floor"])
            ok = fig["finite"] and fig["rel_err"] <= bound
            return ("ok" if ok else "FAIL",
                    f"vs {ref}; bound {bound:.3g}" if ok else
                    f"vs {ref}: rel_err above {bound:.3g}", fig)
        rep.run("logits", name, f"{pad} padding", case)


def check_grads(rep, args, name, model, ref, masks, ids, labels, tol):
    model.train()  # (dropout is 0 in every config)
    for pad, mask in masks.items():
        def case():
            got = grads_of(model, "attn", ids, mask, labels)
            refs = {ref: grads_of(model, ref, ids, mask, labels)}
            if ref != "eager":
                refs["eager"] = grads_of(model, "eager", ids, mask, labels)
            bad = {i: nonfinite(g) for i, g in refs.items()}
            usable = [i for i in refs if not bad[i]]
            notes = [f"{i}: {len(b)} of {len(refs[i])} grads non-finite"
                     for i, b in bad.items() if b]
            fig = dict(attn_nonfinite=len(nonfinite(got)))
            if not usable:
                return "FAIL", "; ".join(notes + ["no finite reference"]), \
                    fig
            want = refs[usable[0]]
            fig["worst_rel"], worst = worst_rel(got, want)
            fig["median_rel"] = statistics.median(
                rel(got[n], want[n]) for n in want
                if want[n].float().norm() > 0)
            bound = tol
            if len(usable) > 1:
                fig["floor"] = worst_rel(refs[usable[1]], want)[0]
                bound = max(tol, 3 * fig["floor"])
            ok = fig["attn_nonfinite"] == 0 and fig["worst_rel"] <= bound
            notes.insert(0, f"vs {usable[0]}, worst {worst}; bound "
                         f"{bound:.3g}")
            return "ok" if ok else "FAIL", "; ".join(notes), fig
        rep.run("grads", name, f"{pad} padding", case,
                unsupported=(NotImplementedError,))
    model.eval()


def generate(model, impl, ids, mask, steps):
    """Greedy generation: (new tokens [B, steps], their logits [B, steps,
    vocab] in float32)."""
    model.set_attn_implementation(impl)
    with torch.no_grad():
        out = model.generate(ids, attention_mask=mask, max_new_tokens=steps,
                             min_new_tokens=steps, do_sample=False,
                             pad_token_id=0, output_logits=True,
                             return_dict_in_generate=True)
    return out.sequences[:, ids.shape[1]:], torch.stack(out.logits, 1).float()


def divergences(a_tok, a_log, r_tok, r_log, ref, tol):
    """(all near-ties, notes) for the first step where each row's tokens
    differ: a near-tie when the step's logits agree within ``tol``."""
    notes, ok = [], True
    same = a_tok == r_tok
    for row in range(a_tok.shape[0]):
        diff = (~same[row]).nonzero()
        if not len(diff):
            continue
        s = int(diff[0])
        want, got = r_log[row, s], a_log[row, s]
        gap = (want[r_tok[row, s]] - want[a_tok[row, s]]).item()
        err = rel(got, want)
        near = err <= tol
        ok &= near
        notes.append(f"row {row} diverges at step {s}: {ref}'s gap "
                     f"{gap:.3g} between the two tokens, logits rel_err "
                     f"{err:.3g} ({'a near-tie' if near else 'too large'})")
    return ok, notes


def check_generate(rep, args, name, model, ref, n, steps, tol):
    """Random weights: the two best logits are often within bf16's rounding
    of each other, so two correct backends can pick different tokens. The
    first divergence of each row must be such a near-tie; "eager" against
    the reference, where it is another backend, measures how often a
    correct one diverges (peer_tokens_equal)."""
    vocab = model.config.vocab_size
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(1, vocab, (3, n), generator=g).to(args.device)
    mask = paddings(n)["left"].to(args.device)
    model.generation_config.eos_token_id = None  # all `steps` tokens

    def case():
        a_tok, a_log = generate(model, "attn", ids, mask, steps)
        r_tok, r_log = generate(model, ref, ids, mask, steps)
        fig = dict(tokens_equal=(a_tok == r_tok).float().mean().item(),
                   steps=steps)
        if ref != "eager":
            e_tok, _ = generate(model, "eager", ids, mask, steps)
            fig["peer_tokens_equal"] = (e_tok == r_tok).float().mean().item()
        if bool((a_tok == r_tok).all()):
            return "ok", f"{steps} tokens x 3 rows equal to {ref}", fig
        ok, notes = divergences(a_tok, a_log, r_tok, r_log, ref, tol)
        return "ok" if ok else "FAIL", "; ".join(notes), fig
    rep.run("generate", name, f"left-padded, {steps} tokens", case)


# Successor probabilities of the training data's Markov chain: one likely
# successor, so a trained model's greedy choice has a clear margin.
SUCCESSORS = (0.72,) + (0.04,) * 7


def markov_batches(vocab, steps, batch, n, device, seed=3):
    """Fixed training data: a random Markov chain of 8 successors a token,
    the first taken 72% of the time (learnable: the loss falls from
    ln(vocab) towards the chain's entropy, 1.08 nats)."""
    g = torch.Generator().manual_seed(seed)
    succ = torch.randint(0, vocab, (vocab, 8), generator=g)
    x = torch.empty(steps * batch, n, dtype=torch.long)
    x[:, 0] = torch.randint(0, vocab, (steps * batch,), generator=g)
    pick = torch.multinomial(torch.tensor(SUCCESSORS), steps * batch * n,
                             replacement=True, generator=g).view(-1, n)
    for t in range(1, n):
        x[:, t] = succ[x[:, t - 1], pick[:, t]]
    return x.view(steps, batch, n).to(device)


def check_train(rep, args, steps, gen_steps, tol):
    """Trains a 4-layer Llama with attn, sdpa and eager from the same
    weights on the same batches; "mixed" precision (the default): float32
    weights and AdamW, the model run under torch.autocast(bf16), as
    training is done; "bf16": bf16 weights and optimizer state. Then the
    sdpa-trained model (in args.dtype) generates from a left-padded batch
    of held-out sequences with each backend: its choices have wider
    margins than a random model's, but a divergence at a near-tie is
    still accepted (and counted: tokens_equal, eager's
    peer_tokens_equal)."""
    import transformers as T
    if args.tiny:
        cfg = T.LlamaConfig(hidden_size=64, intermediate_size=128,
                            num_attention_heads=4, num_key_value_heads=2,
                            num_hidden_layers=4, vocab_size=128,
                            max_position_embeddings=64)
        batch, n = 4, 32
    else:
        # 4 layers, hidden 2048, 16 q heads / 4 kv heads, D 128.
        cfg = T.LlamaConfig(hidden_size=2048, intermediate_size=5632,
                            num_attention_heads=16, num_key_value_heads=4,
                            num_hidden_layers=4, vocab_size=4096,
                            max_position_embeddings=2048)
        batch, n = 8, 1024
    mixed = args.train_precision == "mixed" and args.dtype != torch.float32
    precision = "mixed" if mixed else str(args.dtype).replace("torch.", "")
    data = markov_batches(cfg.vocab_size, steps + 1, batch, n, args.device,
                          seed=3 + args.train_seed)
    held_out, data = data[-1], data[:-1]
    weights = argparse.Namespace(**vars(args))
    if mixed:
        weights.dtype = torch.float32
    model = build(T.LlamaForCausalLM, cfg, "sdpa", weights,
                  seed=4 + args.train_seed)
    init = {k: v.clone() for k, v in model.state_dict().items()}
    runs, trained = {}, {}

    def train(impl):
        model.load_state_dict(init)
        model.set_attn_implementation(impl)
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=5e-4,
                                weight_decay=0.01)
        losses, times = [], []
        for x in data:
            sync(args.device)
            t = time.perf_counter()
            with torch.autocast(args.device, dtype=args.dtype,
                                enabled=mixed):
                loss = model(x, labels=x, use_cache=False).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            sync(args.device)
            times.append(time.perf_counter() - t)
            losses.append(loss.item())
        if impl == "sdpa":
            trained.update({k: v.clone() for k, v in
                            model.state_dict().items()})
        tail = max(1, min(10, steps // 5))
        return dict(final=sum(losses[-tail:]) / tail, first=losses[0],
                    step_ms=1e3 * statistics.median(times[min(5, steps - 1):]),
                    losses=[round(v, 5) for v in losses])

    # eager: how far two correct implementations drift apart over the same
    # steps (bf16 rounding differs; a sharp drop of the loss amplifies it).
    for impl in ("attn", "sdpa", "eager"):
        def case(impl=impl):
            runs[impl] = train(impl)
            r = runs[impl]
            return "ok", f"loss {r['first']:.4f} -> {r['final']:.4f}", dict(
                final_loss=r["final"], first_loss=r["first"],
                step_ms=r["step_ms"], losses=r["losses"])
        rep.run("train", "llama", f"{impl}, {precision}, {steps} steps", case,
                unsupported=(NotImplementedError,))

    def compare():
        a, s = runs["attn"]["final"], runs["sdpa"]["final"]
        d = abs(a - s) / abs(s)
        e = runs.get("eager", {}).get("final")
        spread = abs(e - s) / abs(s) if e is not None else 0.0
        status = "ok" if d <= 0.01 else "FAIL"
        note = (f"final loss (mean of the last steps) attn {a:.4f}, sdpa "
                f"{s:.4f}" + (f", eager {e:.4f} (eager vs sdpa "
                              f"{spread:.4f})" if e is not None else ""))
        return (status, note,
                dict(rel_diff=d, eager_rel_diff=spread, attn_final=a,
                     sdpa_final=s, attn_step_ms=runs["attn"]["step_ms"],
                     sdpa_step_ms=runs["sdpa"]["step_ms"]))
    if "attn" in runs and "sdpa" in runs:
        rep.run("train", "llama", f"attn vs sdpa, {precision}", compare)
    else:
        rep.add("train", "llama", f"attn vs sdpa, {precision}", "FAIL",
                note="a training run did not finish")
    if not trained:
        return

    def generate_trained():
        model.load_state_dict(trained)
        model.to(args.dtype).eval()
        model.generation_config.eos_token_id = None
        ids = held_out[:3]
        mask = paddings(n)["left"].to(args.device)
        a_tok, a_log = generate(model, "attn", ids, mask, gen_steps)
        r_tok, r_log = generate(model, "sdpa", ids, mask, gen_steps)
        e_tok, _ = generate(model, "eager", ids, mask, gen_steps)
        top2 = r_log.topk(2, dim=-1).values
        fig = dict(tokens_equal=(a_tok == r_tok).float().mean().item(),
                   peer_tokens_equal=(e_tok == r_tok).float().mean().item(),
                   attn_eager_equal=(a_tok == e_tok).float().mean().item(),
                   min_margin=(top2[..., 0] - top2[..., 1]).min().item(),
                   steps=gen_steps)
        if bool((a_tok == r_tok).all()):
            return "ok", f"{gen_steps} tokens x 3 rows equal to sdpa", fig
        # As with random weights: a divergence must start at a near-tie.
        ok, notes = divergences(a_tok, a_log, r_tok, r_log, "sdpa", tol)
        return "ok" if ok else "FAIL", "; ".join(notes), fig
    rep.run("generate", "llama-trained",
            f"left-padded, {gen_steps} tokens", generate_trained)


def main(argv=None):
    args = parse_args(__doc__.splitlines()[0], _extra, argv)
    env = setup(args)
    rep = Report("transformers_gpu", env, args)
    tol_logits, tol_grads, tol_gen = tolerances(args.dtype)
    n = args.seq or (24 if args.tiny else 2048)
    gen_steps = args.gen_steps or (4 if args.tiny else 32)
    train_steps = args.steps or (20 if args.tiny else 100)
    sections = args.sections.split(",")
    fams = families(args.tiny)
    masks = {k: v.to(args.device) for k, v in paddings(n).items()}
    for name in filter(None, args.models.split(",")):
        lm_cls, _, cfg, ref = fams[name]
        try:
            model = build(lm_cls, cfg, ref, args).eval()
        except Exception as ex:  # noqa: BLE001
            rep.add("logits", name, "build", "error",
                    note=f"{type(ex).__name__}: {ex}")
            continue
        g = torch.Generator().manual_seed(1)
        ids = torch.randint(0, cfg.vocab_size, (3, n), generator=g).to(
            args.device)
        labels = torch.randint(0, cfg.vocab_size, (3, n), generator=g).to(
            args.device)
        t = time.time()
        if "logits" in sections:
            check_logits(rep, args, name, model, ref, masks, ids, tol_logits)
        if "grads" in sections:
            check_grads(rep, args, name, model, ref, masks, ids, labels,
                        tol_grads)
        if "generate" in sections:
            check_generate(rep, args, name, model, ref,
                           16 if args.tiny else 1024, gen_steps, tol_gen)
        print(f"-- {name}: {time.time() - t:.1f} s", flush=True)
        del model
        if args.device == "cuda":
            torch.cuda.empty_cache()
    if "train" in sections:
        check_train(rep, args, train_steps, gen_steps, tol_gen)
    rep.write()
    return rep.summary(keep=("model", "case", "status", "rel_err", "floor",
                             "worst_rel", "argmax_eq", "tokens_equal",
                             "peer_tokens_equal", "attn_eager_equal",
                             "min_margin", "final_loss", "step_ms",
                             "rel_diff", "note"))


if __name__ == "__main__":
    raise SystemExit(main())
