"""attn as a Hugging Face transformers backend on a GPU host: model-level
speed (issue 25). A Llama-3-8B-shaped decoder stack (LlamaModel: hidden
4096, 32 q / 8 kv heads, head dim 128, intermediate 14336, --layers
layers, random weights, bf16) and a Gemma-2-9B-shaped one (Gemma2Model:
hidden 3584, 16 / 8 heads, head dim 256, softcap 50, sliding window 4096
on every other layer, query_pre_attn_scalar 256) at 4k and 16k tokens
(batch x seq: 1x4096, 4x4096, 1x16384): prefill (forward, no grad,
use_cache=False) and forward+backward (a loss on the last hidden state,
gradients of every weight), with attn_implementation "attn" vs "sdpa" vs
"flex_attention" (Gemma-2: "eager" too, up to 8k keys; transformers has no
SDPA path for its softcap). Median of --iters timed iterations after
--warmup, torch.cuda.synchronize around each; tokens/s = tokens / median.
Prefill outputs are compared with attn's (out_rel, relative L2).

attn and sdpa run first, flex_attention (compiled by transformers through
torch.compile, per shape) after them; cases past --budget seconds are
reported as skipped. Errors of "sdpa", "flex_attention" and "eager" are
reported, not failures; an attn error (not "not supported") is, and the
script then exits 1. Writes transformers_bench.json and .md under --out.
    PYTHONPATH=python python bench/transformers_bench.py --device cpu --tiny
"""

import statistics
import time

import torch

from transformers_common import Report, build, parse_args, setup, sync

REFS = ("sdpa", "flex_attention", "eager")


def _extra(p):
    p.add_argument("--models", default="llama8b,gemma2")
    p.add_argument("--shapes", help="batch x seq list, default "
                   "1x4096,4x4096,1x16384 (tiny 1x32,2x32)")
    p.add_argument("--modes", default="prefill,fwd+bwd")
    p.add_argument("--impls", default="attn,sdpa,flex_attention,eager",
                   help="eager runs for Gemma-2 only")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--warmup", type=int, help="default 3 (tiny 1)")
    p.add_argument("--iters", type=int, help="default 10 (tiny 2)")
    p.add_argument("--budget", type=float, default=330.0,
                   help="seconds after which the remaining cases are skipped")
    p.add_argument("--eager-max-seq", type=int, default=8192)


def stacks(args):
    """name -> (base model class, config)."""
    import transformers as T
    n = args.layers
    if args.tiny:
        return {
            "llama8b": (T.LlamaModel, T.LlamaConfig(
                hidden_size=64, intermediate_size=128, num_attention_heads=4,
                num_key_value_heads=2, num_hidden_layers=n, vocab_size=128,
                max_position_embeddings=256)),
            "gemma2": (T.Gemma2Model, T.Gemma2Config(
                hidden_size=64, intermediate_size=128, num_attention_heads=4,
                num_key_value_heads=2, head_dim=32, num_hidden_layers=n,
                vocab_size=128, max_position_embeddings=256,
                sliding_window=16, query_pre_attn_scalar=32,
                attn_logit_softcapping=50.0)),
        }
    return {
        "llama8b": (T.LlamaModel, T.LlamaConfig(
            hidden_size=4096, intermediate_size=14336, num_attention_heads=32,
            num_key_value_heads=8, num_hidden_layers=n, vocab_size=32000,
            max_position_embeddings=16384, rope_theta=500000.0)),
        "gemma2": (T.Gemma2Model, T.Gemma2Config(
            hidden_size=3584, intermediate_size=14336, num_attention_heads=16,
            num_key_value_heads=8, head_dim=256, num_hidden_layers=n,
            vocab_size=32000, max_position_embeddings=16384,
            sliding_window=4096, query_pre_attn_scalar=256,
            attn_logit_softcapping=50.0)),
    }


def timed(fn, device, warmup, iters):
    """(median s, min s, peak GiB) of fn() after warm-up."""
    for _ in range(warmup):
        fn()
    sync(device)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(iters):
        sync(device)
        t = time.perf_counter()
        fn()
        sync(device)
        times.append(time.perf_counter() - t)
    peak = torch.cuda.max_memory_allocated() / 2**30 \
        if device == "cuda" else 0.0
    return statistics.median(times), min(times), peak


def main(argv=None):
    args = parse_args(__doc__.splitlines()[0], _extra, argv)
    env = setup(args)
    rep = Report("transformers_bench", env, args)
    # transformers compiles flex_attention once per shape (and training
    # flag); every model and shape here is a recompile of the same code.
    for knob in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 64)
    warmup = args.warmup if args.warmup is not None else \
        (1 if args.tiny else 3)
    iters = args.iters or (2 if args.tiny else 10)
    shapes = [tuple(int(x) for x in s.split("x")) for s in (
        args.shapes or ("1x32,2x32" if args.tiny else
                        "1x4096,4x4096,1x16384")).split(",")]
    impls = args.impls.split(",")
    built = {}
    attn_out = {}
    results = {}
    env["layers"] = args.layers

    def model_of(name):
        if name not in built:
            cls, cfg = stacks(args)[name]
            built[name] = build(cls, cfg, "attn", args)
        return built[name]

    def case(name, mode, shape, impl):
        b, n = shape
        model = model_of(name)
        try:
            model.set_attn_implementation(impl)
        except (ValueError, ImportError) as ex:  # transformers refuses
            return "not supported", "transformers: " + \
                str(ex).split(". ")[0][:200], {}
        model.train(mode != "prefill")
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(0, model.config.vocab_size, (b, n),
                            generator=g).to(args.device)
        key = (name, mode, shape)
        if mode == "prefill":
            def fn():
                with torch.no_grad():
                    return model(ids, use_cache=False).last_hidden_state
        else:
            def fn():
                model.zero_grad(set_to_none=True)
                out = model(ids, use_cache=False).last_hidden_state
                out.float().square().mean().backward()
        med, best, peak = timed(fn, args.device, warmup, iters)
        fig = dict(ms=1e3 * med, min_ms=1e3 * best, tok_s=b * n / med,
                   peak_GiB=peak)
        note = ""
        if mode == "prefill":
            out = fn().float()
            if impl == "attn":
                attn_out[key] = out
            elif key in attn_out:
                ref = attn_out[key]
                fig["out_rel"] = ((out - ref).norm() / out.norm()).item()
                note = "out_rel: relative L2 distance to attn's output"
        model.zero_grad(set_to_none=True)
        results[key + (impl,)] = fig["tok_s"]
        return "ok", note, fig

    plan = []
    for impl_pass in ([i for i in impls if i != "flex_attention"],
                      [i for i in impls if i == "flex_attention"]):
        for name in args.models.split(","):
            for mode in args.modes.split(","):
                for shape in shapes:
                    for impl in impl_pass:
                        if impl == "eager" and not name.startswith("gemma"):
                            continue
                        plan.append((name, mode, shape, impl))
    for name, mode, shape, impl in plan:
        label = f"{mode} {shape[0]}x{shape[1]} {impl}"
        if impl == "eager" and shape[1] > args.eager_max_seq:
            rep.add("speed", name, label, "skipped",
                    note=f"eager materialises [N, N] scores: N > "
                    f"{args.eager_max_seq}")
            continue
        if time.time() - rep.t0 > args.budget:
            rep.add("speed", name, label, "skipped",
                    note=f"past the time budget ({args.budget:.0f} s)")
            continue
        # attn: an error fails the script, NotImplementedError is "not
        # supported"; the references' errors (flex, OOM) are reported.
        rep.run("speed", name, label,
                lambda: case(name, mode, shape, impl),
                unsupported=(NotImplementedError,) if impl == "attn" else (),
                error_status="error" if impl == "attn" else "ref error")
    for (name, mode, shape, impl), tok in list(results.items()):
        if impl != "attn":
            continue
        figs = {f"vs_{r}": tok / results[(name, mode, shape, r)]
                for r in REFS if (name, mode, shape, r) in results}
        rep.add("speedup", name, f"{mode} {shape[0]}x{shape[1]}", "ok",
                note="attn tokens/s over each", attn_tok_s=tok, **figs)
    rep.write()
    return rep.summary(keep=("model", "case", "status", "ms", "tok_s",
                             "peak_GiB", "out_rel", "attn_tok_s", "vs_sdpa",
                             "vs_flex_attention", "vs_eager", "note"))


if __name__ == "__main__":
    raise SystemExit(main())
