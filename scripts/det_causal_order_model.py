"""Model of the sm90a deterministic backward's causal dQ turn orders (the
rotated order without a mask: det_turn_order_model.py).

It replays what HopperBackwardKernel.cpp computes (backwardQueryWalk,
stepAt, waitForTurn's ranks, the causal section renumbering and the
descending order's reversed grid) on a simulated GPU of `sms` slots that
takes thread blocks in launch order, one per slot, and times each block in
units of one step's products: a step's dQ addition waits for its turn (the
semaphore of its (head, query block) at this block's rank) and passes it
on `hop` later; the dQ tile kernels (D <= 128) hold two additions in
flight, transposed-dkv (D = 256) adds from registers and goes on.

Orders:
  descending  the causal default (FlashAttention-3's): forward walk, key
              blocks of a query block add last first, each head's key
              blocks dispatched last first, head-major;
  mirrored    (reversedWalk, branch exp/mirrored-turns) the walk from the
              last query block, query block by query block over the group's
              heads, ascending turns, the atomic kernel's dispatch (longest
              first in sections);
  atomic      the atomic kernel: forward walk in sections, no waits.

Without a mask it also times the ascending order (every block walks from
query block 0) against the rotated one (rotationOf: Nb <= 64).

Checks, at every shape: the ranks of the blocks that visit a query block
are 0..k-1 (else a wait never ends), each semaphore's additions come in
rank order, and no run deadlocks with fewer slots than a head's blocks.
Then prints each order's time against the atomic one.

    python3 scripts/det_causal_order_model.py [--quick]
"""
import heapq
import random
import sys


def cdiv(a, b):
    return -(-a // b)


class Shape:
    def __init__(self, nq, nk, heads_kv, group, block_m, block_n, d, dv=None,
                 key_ranges=None, section_bytes=32 << 20, causal=True):
        self.nq, self.nk, self.heads_kv, self.group = nq, nk, heads_kv, group
        self.bm, self.bn = block_m, block_n
        self.row_bytes = (d + (dv or d)) * 2
        self.key_ranges = key_ranges  # per kv head: (start, end), or None
        self.section_bytes = section_bytes if causal else 0
        self.causal = causal
        self.nb = cdiv(nk, block_n)
        self.nqb = cdiv(nq, block_m)
        self.diagonal = nk - nq  # bottom-right causal

    def keys(self, bh):
        return self.key_ranges[bh] if self.key_ranges else (0, self.nk)

    def walk(self, bh, n):
        """backwardQueryWalk + keyBlockSteps: (qStart, qSteps, numSteps)."""
        kv0 = n * self.bn
        first = kv0 - self.diagonal if self.causal else 0
        q_start = min(max(first, 0) // self.bm, self.nqb)
        q_steps = self.nqb - q_start
        start, end = self.keys(bh)
        overlaps = kv0 < end and start < kv0 + self.bn
        return q_start, q_steps, q_steps * self.group if overlaps else 0

    def launch_order(self, order, section_bytes):
        """(bh, n) in launch order: linear = bh·Nb + x, renumbered."""
        tiles = []
        heads = self.heads_kv
        for linear in range(heads * self.nb):
            bh, x = divmod(linear, self.nb)
            if section_bytes > 0:
                per = min(max(section_bytes // self.row_bytes // self.group //
                              self.nq, 1), heads)
                section_tiles = self.nb * per
                first = linear // section_tiles * per
                width = min(heads - first, per)
                within = linear % section_tiles
                x, bh = within // width, first + within % width
            if order == "descending":
                x = self.nb - 1 - x
            tiles.append((bh, x))
        return tiles

    def step_at(self, order, bh, n, it):
        """stepAt: (head in group, query block) of step `it`."""
        q_start, q_steps, _ = self.walk(bh, n)
        if order == "mirrored":
            return it % self.group, q_start + q_steps - 1 - it // self.group
        if order == "rotated" and self.rotates():
            it = (it + n) % (q_steps * self.group)
        return it // q_steps, q_start + it % q_steps

    def rotates(self):
        """rotationOf: Nb <= T and Nb <= 64 (no mask, no key range)."""
        return (not self.causal and not self.key_ranges and
                self.nb <= min(64, self.nqb * self.group))

    def rank(self, order, bh, n, h, q):
        """waitForTurn's turn for block n at query block q."""
        start, end = self.keys(bh)
        kv0 = n * self.bn
        if order == "descending":
            q0 = q * self.bm
            row_edge = self.diagonal + self.bm - 1 - kv0
            last_block_turn = (end - 1 - kv0) // self.bn
            return min((q0 + row_edge) // self.bn, last_block_turn)
        if order == "rotated" and self.rotates():
            # Unit t takes blocks t, t - 1, ... (cyclic, those below Nb).
            t = h * self.nqb + q  # the unit (no mask: qStart = 0)
            rank = min(t, self.nb - 1) - n
            return rank + (self.nb if t < n else 0)
        return n - start // self.bn


def check_ranks(shape, order):
    """The blocks that visit each (kv head, head in group, query block)
    have the ranks 0..k-1."""
    seen = {}
    for bh in range(shape.heads_kv):
        for n in range(shape.nb):
            steps = shape.walk(bh, n)[2]
            for it in range(steps):
                h, q = shape.step_at(order, bh, n, it)
                seen.setdefault((bh, h, q), []).append(
                    shape.rank(order, bh, n, h, q))
    for key, ranks in seen.items():
        if sorted(ranks) != list(range(len(ranks))):
            raise AssertionError(f"{order}: ranks {sorted(ranks)} at {key}")


def simulate(shape, order, sms, step=1.0, hop=0.4, buffers=2,
             registers=False, jitter=0.0, seed=0):
    """Makespan, and each semaphore's blocks in addition order; None on a
    deadlock. An addition begins once its step's products are done, its
    adder is free and (but for the atomic order) its turn came; the turn
    passes `hop` later, when its adder is free again. `buffers` adders
    (the dQ warps, one per dQ tile) take the steps in turn; step j's
    products need the buffer of step j − buffers back: at the addition's
    end (a dQ tile), or at its beginning (`registers`: the
    transposed-dkv consumers add their dQᵀ from registers and go on while
    the turn warp fences and passes the turn). The atomic order's
    additions take half a hop (no fence, no turn)."""
    rnd = random.Random(seed)
    section = 0 if order == "descending" else shape.section_bytes
    launch = shape.launch_order(order, section)
    waits = order != "atomic"
    if not waits:
        hop = hop / 2
    adders = 1 if registers else buffers
    sem = {}          # (bh, h, q) -> turns passed
    waiting = {}      # (bh, h, q) -> blocks waiting for a turn of it
    log = {}
    state = {}
    events = []       # (time, seq, kind, block)
    seq = 0
    free = sms
    next_tile = 0
    now = 0.0

    def push(t, kind, b, arg=None):
        nonlocal seq
        heapq.heappush(events, (t, seq, kind, b, arg))
        seq += 1

    def start_blocks():
        nonlocal free, next_tile
        while free > 0 and next_tile < len(launch):
            bh, n = launch[next_tile]
            next_tile += 1
            free -= 1
            steps = shape.walk(bh, n)[2]
            b = (bh, n)
            state[b] = dict(steps=steps, computed=0, begun=0, released=0,
                            done_adds=0, busy=[False] * adders,
                            computing=False, finished=False)
            push(now, "try", b)

    def try_progress(b):
        s = state[b]
        if (not s["computing"] and s["computed"] < s["steps"] and
                s["computed"] - s["released"] < buffers):
            s["computing"] = True
            d = step * (1 + jitter * (rnd.random() - 0.5))
            push(now + d, "computed", b)
        while s["begun"] < s["computed"]:
            it = s["begun"]
            if s["busy"][it % adders]:
                break
            h, q = shape.step_at(order, b[0], b[1], it)
            key = (b[0], h, q)
            turn = shape.rank(order, b[0], b[1], h, q)
            if waits and sem.get(key, 0) != turn:
                if b not in waiting.get(key, []):
                    waiting.setdefault(key, []).append(b)
                break
            s["busy"][it % adders] = True
            s["begun"] += 1
            if registers:
                s["released"] += 1
            push(now + hop, "added", b, (it, key))
            if registers:
                try_progress(b)
                return
        if s["done_adds"] == s["steps"] and not s["finished"]:
            s["finished"] = True
            push(now, "retire", b)

    start_blocks()
    while events:
        now, _, kind, b, arg = heapq.heappop(events)
        s = state[b]
        if kind == "computed":
            s["computing"] = False
            s["computed"] += 1
        elif kind == "added":
            it, key = arg
            sem[key] = sem.get(key, 0) + 1
            log.setdefault(key, []).append(b[1])
            s["busy"][it % adders] = False
            s["done_adds"] += 1
            if not registers:
                s["released"] += 1
            for w in waiting.pop(key, []):
                push(now, "try", w)
        elif kind == "retire":
            free += 1
            start_blocks()
            continue
        try_progress(b)
    if any(not st["finished"] for st in state.values()) or \
            next_tile < len(launch):
        return None, log
    return now, log


def main():
    quick = "--quick" in sys.argv
    # Correctness of the orders on awkward shapes: not multiples of the
    # tiles, Nq != Nk both ways, GQA, key ranges, few slots.
    awkward = [
        Shape(1000, 1000, 2, 1, 64, 80, 256),
        Shape(333, 777, 2, 3, 64, 128, 128),
        Shape(777, 333, 3, 2, 128, 128, 64),
        Shape(1000, 17, 2, 1, 64, 128, 128),
        Shape(17, 1000, 2, 2, 64, 80, 256),
        Shape(1000, 1000, 2, 1, 64, 128, 128,
              key_ranges=[(0, 1000), (300, 700)]),
        Shape(640, 900, 4, 2, 64, 80, 256, key_ranges=[
            (0, 900), (81, 500), (0, 1), (899, 900)], section_bytes=1 << 20),
    ]
    plain = [Shape(1000, 1000, 2, 1, 64, 80, 256, causal=False),
             Shape(333, 777, 3, 1, 64, 128, 128, causal=False),
             Shape(777, 333, 2, 2, 128, 128, 64, causal=False)]
    for shape in plain:
        for order in ("ascending", "rotated"):
            check_ranks(shape, order)
            assert simulate(shape, order, 3 if order == "ascending"
                            else 64, jitter=0.5)[0] is not None
    for shape in awkward:
        for order in ("descending", "mirrored"):
            check_ranks(shape, order)
            logs = []
            for sms, seed in ((3, 1), (5, 2), (64, 3)):
                t, log = simulate(shape, order, sms, jitter=0.5, seed=seed,
                                  registers=shape.bn == 80)
                assert t is not None, f"{order} deadlocked, {sms} slots"
                for key, blocks in log.items():
                    ranks = [shape.rank(order, key[0], n, key[1], key[2])
                             for n in blocks]
                    assert ranks == sorted(ranks), (order, key, ranks)
                logs.append(log)
            assert logs[0] == logs[1] == logs[2], f"{order}: order varies"
    print("ranks, order and deadlock freedom: ok on", len(awkward),
          "shapes (3 to 64 slots, jittered steps)")

    # Timing at the bar's shapes: B·H = 16384/N · 2048/D kv heads, one
    # block per SM on 132 SMs, hops in units of one step. Every table of
    # bench/results/2026-12-05-det-order-model.md.
    kernels = {64: (128, 128, False), 128: (64, 128, False),
               256: (64, 80, True)}  # block-m, block-n, dQ from registers

    def against_atomic(d, n, order, hop, causal=True, section_mb=32):
        bm, bn, registers = kernels[d]
        heads = 16384 // n * 2048 // d
        atomic = Shape(n, n, heads, 1, bm, bn, d, causal=causal)
        shape = Shape(n, n, heads, 1, bm, bn, d, causal=causal,
                      section_bytes=section_mb << 20)
        base = simulate(atomic, "atomic", 132, registers=registers)[0]
        return base / simulate(shape, order, 132, hop=hop,
                               registers=registers)[0]

    seqs = (2048, 8192) if quick else (1024, 2048, 4096, 8192, 16384)
    print("\ncausal: order / atomic time, 132 SMs (hop: a turn's hand-off "
          "in steps)")
    for d in kernels:
        for n in seqs:
            for hop in (0.25, 0.5) if quick else (0.25, 0.5, 1.0):
                print(f"D={d:3} N={n:5} hop={hop:4}: descending "
                      f"{against_atomic(d, n, 'descending', hop):.3f}  "
                      f"mirrored {against_atomic(d, n, 'mirrored', hop):.3f}")

    if not quick:
        print("\ncausal, mirrored in wider sections (the atomic kernel's "
              "in 32 MiB)")
        for d in (64, 256):
            for n in (4096, 16384):
                for section_mb in (32, 128):
                    cells = [against_atomic(d, n, "mirrored", hop,
                                            section_mb=section_mb)
                             for hop in (0.5, 1.0)]
                    print(f"D={d:3} N={n:5} {section_mb:3} MiB: hop 0.5 "
                          f"{cells[0]:.3f}  hop 1.0 {cells[1]:.3f}")

    # Without a mask: the ascending order (every block walks from query
    # block 0, so a head's blocks that start together wait for each other
    # in a chain) against the rotated one (rotationOf: Nb <= 64).
    print("\nno mask: order / atomic time, 132 SMs")
    for d in (128, 256):
        for n in ((4096,) if quick else (2048, 4096, 8192)):
            nb = cdiv(n, kernels[d][1])
            for hop in (0.25, 0.5):
                cells = [against_atomic(d, n, order, hop, causal=False)
                         for order in ("ascending", "rotated")]
                print(f"D={d:3} N={n:5} Nb={nb:3} hop={hop:4}: "
                      f"ascending {cells[0]:.3f}  rotated {cells[1]:.3f}")

if __name__ == "__main__":
    main()
