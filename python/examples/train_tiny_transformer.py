"""A two-layer transformer trained with attn.torch.attention and with
PyTorch's SDPA from the same initialisation on the same batches; prints
both loss curves and the final losses (bf16 autocast, causal attention).

    python python/examples/train_tiny_transformer.py --steps 300

The task (copy the first half of each sequence into the second half, 20%
of it replaced by noise) can only be solved through attention, so a broken
forward or backward shows up as a loss that does not fall like SDPA's. Exit status 1 when the final
losses differ by more than --tolerance (relative).
"""

import argparse
import math
import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import attn.torch as attn_torch  # noqa: E402


class Block(nn.Module):
    def __init__(self, width, heads, use_attn):
        super().__init__()
        self.heads, self.use_attn = heads, use_attn
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        b, n, w = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads,
                                              w // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [B, H, N, D] views
        if self.use_attn:
            y = attn_torch.attention(q, k, v, causal=True)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, n, w))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab, width, heads, layers, seq, use_attn):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        # Large position embeddings: the copy is a fixed-offset lookup,
        # found sooner when positions are distinct from the start.
        self.pos = nn.Parameter(torch.randn(seq, width) * 0.5)
        self.blocks = nn.ModuleList(Block(width, heads, use_attn)
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def batches(steps, batch, seq, vocab, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    for _ in range(steps):
        half = torch.randint(0, vocab, (batch, seq // 2), device="cuda",
                             generator=g)
        # 20% of the copies are noise: an entropy floor keeps the final
        # loss away from 0, where relative differences mean little.
        noise = torch.randint(0, vocab, half.shape, device="cuda", generator=g)
        keep = torch.rand(half.shape, device="cuda", generator=g) >= 0.2
        yield torch.cat([half, torch.where(keep, half, noise)], dim=1)


def train(use_attn, args):
    torch.manual_seed(args.seed)
    model = TinyLM(args.vocab, args.width, args.heads, 2, args.seq,
                   use_attn).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    losses = []
    for step, tokens in enumerate(batches(args.steps, args.batch, args.seq,
                                          args.vocab, args.seed)):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens[:, :-1])
        # Only the copied half is predictable.
        half = args.seq // 2
        loss = F.cross_entropy(logits[:, half - 1:].float().reshape(
            -1, args.vocab), tokens[:, half:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--vocab", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tolerance", type=float, default=0.01)
    args = p.parse_args()
    ours, sdpa = train(True, args), train(False, args)
    print(f"{'step':>6} {'attn':>9} {'sdpa':>9}")
    for step in list(range(0, args.steps, max(1, args.steps // 12))) + [
            args.steps - 1]:
        print(f"{step:>6} {ours[step]:>9.4f} {sdpa[step]:>9.4f}")
    tail = max(1, args.steps // 20)
    final_ours = sum(ours[-tail:]) / tail
    final_sdpa = sum(sdpa[-tail:]) / tail
    rel = abs(final_ours - final_sdpa) / max(final_sdpa, 1e-12)
    print(f"final loss (mean of the last {tail} steps): attn {final_ours:.4f}, "
          f"sdpa {final_sdpa:.4f}, relative difference {rel:.2%} "
          f"(start {math.log(args.vocab):.3f} = ln vocab)")
    return 0 if rel <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
