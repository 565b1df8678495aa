"""einops' rearrange and repeat, for FlashAttention's tests on a host
without einops: the patterns of axis names, parenthesised groups, literal
1 axes and '...' those tests use (not einops' whole grammar)."""

import math


def _groups(side):
    """'b (h g) 1 ...' -> [['b'], ['h', 'g'], [], ['...']]."""
    out, group = [], None
    for tok in side.replace("(", " ( ").replace(")", " ) ").split():
        if tok == "(":
            group = []
        elif tok == ")":
            out.append(group)
            group = None
        elif group is not None:
            group.append(tok)
        else:
            out.append([] if tok == "1" else [tok])
    return out


def _expand_ellipsis(groups, ndim):
    if ["..."] not in groups:
        return groups
    i = groups.index(["..."])
    extra = ndim - (len(groups) - 1)
    return groups[:i] + [[f"...{j}"] for j in range(extra)] + groups[i + 1:]


def _apply(x, pattern, sizes):
    left, right = (s.strip() for s in pattern.split("->"))
    lg = _expand_ellipsis(_groups(left), x.dim())
    rg = _groups(right)
    if ["..."] in rg:
        n = sum(1 for g in lg if g and g[0].startswith("..."))
        i = rg.index(["..."])
        rg = rg[:i] + [[f"...{j}"] for j in range(n)] + rg[i + 1:]
    dims = dict(sizes)
    elems = []
    for g, size in zip(lg, x.shape):
        unknown = [n for n in g if n not in dims]
        known = math.prod(dims[n] for n in g if n in dims)
        if unknown:
            dims[unknown[0]] = size // known
        elems += g
    x = x.reshape([dims[n] for n in elems])
    right = [n for g in rg for n in g]
    x = x.permute([elems.index(n) for n in right if n in elems])
    for i, n in enumerate(right):
        if n not in elems:  # repeat: a new axis
            x = x.unsqueeze(i)
    x = x.expand([dims[n] for n in right])
    return x.reshape([math.prod(dims[n] for n in g) for g in rg])


def rearrange(x, pattern, **sizes):
    return _apply(x, pattern, sizes)


def repeat(x, pattern, **sizes):
    return _apply(x, pattern, sizes)
