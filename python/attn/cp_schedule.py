"""Which attention blocks a rank computes at each ring step (no torch).

The sequence of length N is cut into chunks. Plain layout: W chunks, rank r
holds chunk r. Zig-zag layout (load_balance=True): 2W chunks, rank r holds
chunks r and 2W-1-r (in that order), so under a causal mask every rank has
the same amount of work at every step. At ring step t rank r holds the K/V
shard of rank src = (r - t) mod W.

A block is (q_lo, q_hi, k_lo, k_hi, causal) in *local chunk* units: queries
local chunks [q_lo, q_hi) against keys local chunks [k_lo, k_hi) of the
shard held, with attn's causal mask (bottom-right aligned; here always with
equal lengths, the plain diagonal) or none. Chunks not covered are fully
masked for that step (contributing nothing: O = 0, LSE = -inf).
"""

from typing import List, Tuple

Block = Tuple[int, int, int, int, bool]


def chunks_per_rank(load_balance: bool) -> int:
    return 2 if load_balance else 1


def rank_chunks(rank: int, world: int, load_balance: bool) -> List[int]:
    """Global chunk indices held by `rank`, in local order."""
    return [rank, 2 * world - 1 - rank] if load_balance else [rank]


def source_rank(rank: int, step: int, world: int) -> int:
    """Whose K/V shard `rank` holds at ring step `step`."""
    return (rank - step) % world


def blocks(rank: int, src: int, world: int, causal: bool,
           load_balance: bool) -> List[Block]:
    """The attention calls of `rank` against the K/V shard of `src`."""
    m = chunks_per_rank(load_balance)
    if not causal:
        return [(0, m, 0, m, False)]
    if not load_balance:
        if src < rank:
            return [(0, 1, 0, 1, False)]
        return [(0, 1, 0, 1, True)] if src == rank else []
    # Zig-zag: own shard is one causal call (local chunk order = global
    # order, so the local diagonal is the global one). An earlier rank's
    # shard: its first chunk precedes both of ours, its second follows both,
    # so all our queries see its first half. A later rank's shard: both its
    # chunks lie between ours, so only our second chunk sees it, fully.
    # Each case is half a shard-pair of work: no rank idles.
    if src == rank:
        return [(0, 2, 0, 2, True)]
    if src < rank:
        return [(0, 2, 0, 1, False)]
    return [(1, 2, 0, 2, False)]


def work(rank: int, src: int, world: int, causal: bool,
         load_balance: bool) -> float:
    """Score entries computed, in units of chunk x chunk (causal diagonal
    counted as 1/2): for load-balance checks."""
    total = 0.0
    for q_lo, q_hi, k_lo, k_hi, c in blocks(rank, src, world, causal,
                                            load_balance):
        total += (q_hi - q_lo) * (k_hi - k_lo) * (0.5 if c else 1.0)
    return total
