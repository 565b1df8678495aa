"""What bench/transformers_gpu.py (checks) and bench/transformers_bench.py
(benchmark) share: the command line, the model families' configs (realistic
sizes on the GPU, tiny ones for --tiny), building a model on the device,
and the case records (a line printed per case, JSON and markdown written
under --out, a summary table last).

attn as a Hugging Face transformers backend (issue 25):
attn.integrations.transformers.register() -> attn_implementation="attn".
"""

import argparse
import json
import math
import os
import platform
import sys
import time
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no network on the GPU host

import torch  # noqa: E402

# The checkout's package when the wheel is not installed (CPU tests here).
_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
try:
    import attn  # noqa: F401
except ImportError:
    sys.path.insert(0, _PY)
    import attn  # noqa: F401
import attn.integrations.transformers as attn_hf  # noqa: E402
import transformers as T  # noqa: E402


def parse_args(description, extra=None, argv=None):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--tiny", action="store_true",
                   help="tiny configs (float32 on the CPU unless --dtype): "
                   "the same code paths, for testing the script")
    p.add_argument("--dtype", choices=("bf16", "fp16", "fp32"),
                   help="default: bf16 (fp32 with --tiny)")
    p.add_argument("--out", default=os.environ.get("OUT", "gpu-out"),
                   help="folder for the JSON and markdown (default $OUT)")
    if extra:
        extra(p)
    args = p.parse_args(argv)
    args.dtype = {"bf16": torch.bfloat16, "fp16": torch.float16,
                  "fp32": torch.float32, None: None}[args.dtype]
    if args.dtype is None:
        args.dtype = torch.float32 if args.tiny else torch.bfloat16
    return args


def setup(args):
    """Registers attn; returns a dict describing the environment."""
    attn_hf.register()
    torch.manual_seed(0)
    env = dict(torch=torch.__version__, transformers=T.__version__,
               attn=getattr(attn, "__version__", "?"),
               python=platform.python_version(), device=args.device,
               dtype=str(args.dtype).replace("torch.", ""), tiny=args.tiny)
    if args.device == "cuda":
        env["gpu"] = torch.cuda.get_device_name()
    print(" ".join(f"{k} {v}" for k, v in env.items()), flush=True)
    return env


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


# --- model families ----------------------------------------------------------

def families(tiny):
    """name -> (causal LM class, base model class, config, reference
    implementation). Realistic attention shapes (head counts, head dims,
    windows shorter than the 1-2k sequences) with few layers and small
    vocabularies; tiny ones with the same structure for --tiny."""
    if tiny:
        llama = dict(hidden_size=64, intermediate_size=128,
                     num_attention_heads=4, num_key_value_heads=2)
        win, common = 8, dict(num_hidden_layers=2, vocab_size=128,
                              max_position_embeddings=128)
        qwen = dict(llama)
        g2 = dict(hidden_size=64, intermediate_size=128,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=16)
        g3 = dict(hidden_size=64, intermediate_size=128,
                  num_attention_heads=4, num_key_value_heads=1, head_dim=16)
        gpt2 = dict(n_embd=64, n_head=4, n_layer=2, vocab_size=128,
                    n_positions=128, bos_token_id=1, eos_token_id=2)
        g2_scalar = 24
    else:
        # Llama-3-8B / Mistral-7B attention: 32 q heads, 8 kv heads, D 128.
        llama = dict(hidden_size=4096, intermediate_size=8192,
                     num_attention_heads=32, num_key_value_heads=8)
        win, common = 512, dict(num_hidden_layers=2, vocab_size=8192,
                                max_position_embeddings=4096)
        # Qwen2-7B: 28 q heads, 4 kv heads, D 128, q/k/v biases.
        qwen = dict(hidden_size=3584, intermediate_size=8192,
                    num_attention_heads=28, num_key_value_heads=4)
        # Gemma-2-2B (D 256, 8/4 heads); the scale from
        # query_pre_attn_scalar 224, not 1/sqrt(256).
        g2 = dict(hidden_size=2304, intermediate_size=9216,
                  num_attention_heads=8, num_key_value_heads=4, head_dim=256)
        # Gemma-3-1B text (D 256, 4 q heads, 1 kv head).
        g3 = dict(hidden_size=1152, intermediate_size=6912,
                  num_attention_heads=4, num_key_value_heads=1, head_dim=256)
        # GPT-2 medium (16 heads, D 64).
        gpt2 = dict(n_embd=1024, n_head=16, n_layer=2, vocab_size=8192,
                    n_positions=4096, bos_token_id=1, eos_token_id=2)
        g2_scalar = 224
    return {
        "llama": (T.LlamaForCausalLM, T.LlamaModel,
                  T.LlamaConfig(**llama, **common), "sdpa"),
        "mistral": (T.MistralForCausalLM, T.MistralModel,
                    T.MistralConfig(**llama, **common, sliding_window=win),
                    "sdpa"),
        # Layer 0 full attention, layer 1 sliding (max_window_layers 1).
        "qwen2": (T.Qwen2ForCausalLM, T.Qwen2Model,
                  T.Qwen2Config(**qwen, **common, use_sliding_window=True,
                                sliding_window=win, max_window_layers=1),
                  "sdpa"),
        # Sliding and full layers, logit softcap 50; transformers has no
        # SDPA path for Gemma 2 (softcap): eager is the reference.
        "gemma2": (T.Gemma2ForCausalLM, T.Gemma2Model,
                   T.Gemma2Config(**g2, **common, sliding_window=win,
                                  query_pre_attn_scalar=g2_scalar,
                                  attn_logit_softcapping=50.0,
                                  final_logit_softcapping=30.0),
                   "eager"),
        "gemma3": (T.Gemma3ForCausalLM, T.Gemma3TextModel,
                   T.Gemma3TextConfig(**g3, **common, sliding_window=win,
                                      query_pre_attn_scalar=g3["head_dim"],
                                      layer_types=["sliding_attention",
                                                   "full_attention"]),
                   "sdpa"),
        "gpt2": (T.GPT2LMHeadModel, T.GPT2Model,
                 T.GPT2Config(**gpt2, attn_pdrop=0.0, resid_pdrop=0.0,
                              embd_pdrop=0.0), "sdpa"),
    }


def build(cls, config, impl, args, seed=0):
    """A random-init model of ``cls`` on the device, in args.dtype, built
    there (no host copy of realistic-size weights)."""
    import copy
    torch.manual_seed(seed)
    with torch.device(args.device):
        model = cls._from_config(copy.deepcopy(config),
                                 attn_implementation=impl, dtype=args.dtype)
    return model.to(args.device)


# --- case records --------------------------------------------------------------

FAILING = ("FAIL", "error")


class Report:
    """Records one dict per case: section, model, case, status (ok, FAIL,
    error, not supported, skipped) and its figures; prints each as it
    comes."""

    def __init__(self, name, env, args):
        self.name, self.env, self.args = name, env, args
        self.rows = []
        self.t0 = time.time()

    def add(self, section, model, case, status, note="", **figures):
        row = dict(section=section, model=model, case=case, status=status,
                   **figures, note=note)
        self.rows.append(row)
        shown = " ".join(f"{k} {_fmt(v)}" for k, v in figures.items()
                         if not isinstance(v, (list, dict)))
        print(f"[{section}] {model:8s} {case:22s} {status:13s} {shown}"
              + (f"  ({note})" if note else ""), flush=True)
        return row

    def run(self, section, model, case, fn, unsupported=(),
            error_status="error"):
        """Runs fn() -> (status, note, figures); an exception is an
        ``error_status`` row (a failure when "error"), an ``unsupported``
        one (with attn's message) a "not supported" row. Returns the
        row."""
        try:
            status, note, figures = fn()
        except unsupported as ex:
            return self.add(section, model, case, "not supported",
                            note=_first_line(ex))
        except Exception as ex:  # noqa: BLE001 -- each case is reported
            traceback.print_exc(limit=4)
            status, note, figures = error_status, \
                f"{type(ex).__name__}: {_first_line(ex)}", {}
        finally:
            if self.args.device == "cuda":
                torch.cuda.empty_cache()
        return self.add(section, model, case, status, note=note, **figures)

    def failed(self):
        return [r for r in self.rows if r["status"] in FAILING]

    def write(self):
        os.makedirs(self.args.out, exist_ok=True)
        base = os.path.join(self.args.out, self.name)
        with open(base + ".json", "w") as f:
            json.dump(dict(env=self.env, seconds=round(time.time() - self.t0,
                                                       1),
                           rows=self.rows), f, indent=1, default=str)
        with open(base + ".md", "w") as f:
            f.write(f"# {self.name}\n\n"
                    + ", ".join(f"{k} {v}" for k, v in self.env.items())
                    + f"; {time.time() - self.t0:.0f} s\n")
            for section in dict.fromkeys(r["section"] for r in self.rows):
                f.write(f"\n## {section}\n\n" + self.table(section) + "\n")
        print(f"wrote {base}.json and {base}.md")

    def table(self, section, keep=None, width=None):
        rows = [r for r in self.rows if r["section"] == section]
        keys = []
        for r in rows:
            keys += [k for k in r if k not in keys and k != "section"
                     and not isinstance(r[k], (list, dict))]
        keys = [k for k in keys if k != "note"] + ["note"]
        if keep is not None:
            keys = [k for k in keys if k in keep]
        lines = ["| " + " | ".join(keys) + " |",
                 "|" + "---|" * len(keys)]
        for r in rows:
            cells = [_fmt(r.get(k, "")).replace("|", "/") for k in keys]
            if width:
                cells = [c if len(c) <= width else c[:width - 3] + "..."
                         for c in cells]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def summary(self, keep=None):
        print(f"\n== summary ({self.name}, {time.time() - self.t0:.0f} s)")
        for section in dict.fromkeys(r["section"] for r in self.rows):
            print(f"\n{section}\n" + self.table(section, keep, 110))
        bad = self.failed()
        print(f"\n{len(self.rows)} cases, {len(bad)} failed"
              + "".join(f"\n  FAILED {r['section']} {r['model']} {r['case']}"
                        f": {r['status']} {r['note']}" for r in bad))
        return 1 if bad else 0


def _first_line(ex):
    text = str(ex).strip().splitlines()
    return text[0][:300] if text else type(ex).__name__


def _fmt(v):
    if isinstance(v, float):
        if v == 0 or not math.isfinite(v):
            return str(v)
        return f"{v:.3g}" if abs(v) < 1e-2 or abs(v) >= 1e5 else \
            f"{v:.4g}"
    return str(v)
