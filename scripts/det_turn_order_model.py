"""Model of the rotated deterministic turn order (HopperBackwardKernel.cpp's
rotatedTurns(), the sm90a deterministic backward without a mask band or key
range): for every key-block
count Nb and walk length T with Nb <= T, block n (step s visits unit
(n + s) mod T) has rank min(t, Nb - 1) - n (+ Nb if n > t) at unit t; checks
that the ranks at each unit are a permutation of 0..Nb-1 in step order (no
wait in lockstep), that a run with every block resident is deterministic
and ends, and shows that one with half of them resident deadlocks (why the
kernel caps Nb at 64, all of a head resident on the H200).

    python3 scripts/det_turn_order_model.py
"""
import random, itertools
def rank(n, it, Nb, T):
    rotate = Nb - 1 < T
    if not rotate: return n  # ascending
    t = (it + n) % T
    r = min(t, Nb - 1) - n + (Nb if t < n else 0)
    return r
bad = 0
for Nb in range(1, 40):
    for T in range(1, 45):
        for_unit = {}
        for n in range(Nb):
            for it in range(T):
                t = (it + n) % T if Nb <= T else it
                for_unit.setdefault(t, []).append((rank(n, it, Nb, T), it, n))
        for t, lst in for_unit.items():
            ranks = sorted(r for r, _, _ in lst)
            if ranks != list(range(Nb)): bad += 1; print("perm", Nb, T, t, ranks); break
            if Nb <= T:
                # rank order equals step order (no waiting in lockstep)
                byrank = [it for r, it, n in sorted(lst)]
                if byrank != sorted(byrank): bad += 1; print("order", Nb, T, t)
print("bad", bad)

# event simulation: blocks of one head, R resident slots, in-order dispatch, random step times
def simulate(Nb, T, R, seed):
    rnd = random.Random(seed)
    done_count = {t: 0 for t in range(T)}  # semaphore per unit
    pos = [0] * Nb     # next step index per block
    resident = []
    next_block = 0
    time = 0
    order = {t: [] for t in range(T)}
    while True:
        while len(resident) < R and next_block < Nb:
            resident.append(next_block); next_block += 1
        if not resident: break
        progressed = False
        rnd.shuffle(resident)
        for n in list(resident):
            it = pos[n]
            if it == T:
                resident.remove(n); progressed = True; continue
            t = (it + n) % T if Nb <= T else it
            if done_count[t] == rank(n, it, Nb, T):
                done_count[t] += 1; order[t].append(n); pos[n] += 1; progressed = True
        if not progressed: return None  # deadlock
    return order
for Nb, T in [(8, 8), (8, 16), (5, 7), (16, 32), (32, 32), (3, 50)]:
    o1 = simulate(Nb, T, Nb, 1); o2 = simulate(Nb, T, Nb, 2)
    assert o1 is not None and o1 == o2, (Nb, T)
    o3 = simulate(Nb, T, max(1, Nb // 2), 3)
    print(Nb, T, "full residency ok, deterministic; half residency:", "deadlock" if o3 is None else "ok")
