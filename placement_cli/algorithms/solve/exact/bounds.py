"""Lower bounds on a pairwise core.

* `mini_bucket_bound`: mini-bucket elimination (Dechter & Rish 2003): bucket
  elimination whose buckets are split into mini-buckets that fit a table budget, each
  minimised on its own, which can only under-estimate.
* `diffuse`: one sweep of min-sum diffusion (Kovalevsky & Koval, 1975; described in
  Werner 2007): block-coordinate ascent on the dual of the LP relaxation of the min-sum
  problem, an equivalence-preserving reparametrisation (every assignment keeps its cost).
* `bound_of`: the dual bound read off a reparametrisation (the constant plus each
  block's least unary plus its pair tables' row minima); with `hs`, the per-value terms
  that reduced-cost fixing reads.

References:

* R. Dechter, I. Rish. Mini-buckets: a general scheme for bounded inference. Journal
  of the ACM 50(2), 2003.
* T. Werner. A linear programming approach to max-sum problem: a review. IEEE TPAMI
  29(7), 2007 (min-sum diffusion, after V. A. Kovalevsky and V. K. Koval, 1975).
"""

from __future__ import annotations

import time
from heapq import heappop, heappush
from operator import add as _add

from placement_cli.algorithms.solve.budget import DEFAULT_BUDGET
from placement_cli.algorithms.solve.exact.core import Core
from placement_cli.algorithms.solve.exact.elimination import Eliminator, combine
from placement_cli.algorithms.solve.exact.model import INF, Factor

# ------------------------------------------------------------------ bounds


def mini_bucket_bound(
    ks: dict[int, int],
    factors: list[Factor],
    constant: float,
    table_cap: int = DEFAULT_BUDGET.cells.mini_bucket,
    deadline: float = INF,
) -> float:
    """A lower bound on min over all assignments of `constant` + sum of `factors`.

    Mini-bucket elimination: a bucket whose joint table would exceed `table_cap` is split
    into mini-buckets that each fit, and each is minimised over the block on its own.
    Since min(f + g) >= min f + min g this can only under-estimate; with a cap large
    enough for every bucket it is exact. Past `deadline` the remaining factors count at
    their minima.

    >>> ks = {0: 2, 1: 2}
    >>> mini_bucket_bound(ks, [((0,), [1.0, 2.0]), ((0, 1), [5.0, 0.0, 0.0, 5.0])], 0.0)
    1.0
    """
    el = Eliminator(ks, factors, constant)
    order = []
    # Min-degree order over the interaction graph (ties by block order).
    heap = [(len(el.adj[v]), v) for v in sorted(el.var_facs)]
    heap.sort()
    done: set[int] = set()
    adj = {v: set(a) for v, a in el.adj.items()}
    cur = {v: len(adj[v]) for v in adj}
    while heap:
        d, x = heappop(heap)
        if x in done or cur[x] != d:
            continue
        done.add(x)
        order.append(x)
        nb = adj.pop(x)
        for y in sorted(nb):
            adj[y].discard(x)
            # Mini-buckets add less fill than full elimination; the full fill keeps the
            # order sensible without tracking the partition here.
            adj[y].update(w for w in nb if w != y)
            if cur[y] != len(adj[y]):
                cur[y] = len(adj[y])
                heappush(heap, (cur[y], y))
    for step, x in enumerate(order):
        if step & 63 == 0 and time.monotonic() > deadline:
            return el.bound()  # what is left, at its minima: still a bound
        facs = el.take_factors(x)
        # First-fit of the bucket's factors, largest first, into mini-buckets that fit.
        facs.sort(key=lambda f: (-len(f[0]), f[0]))
        minis: list[tuple[set[int], list[Factor]]] = []
        for fac in facs:
            placed = False
            for vs, members in minis:
                u = vs | set(fac[0])
                size = 1
                for v in u:
                    size *= ks[v]
                if size <= table_cap:
                    vs.update(fac[0])
                    members.append(fac)
                    placed = True
                    break
            if not placed:
                minis.append((set(fac[0]), [fac]))
        for _, members in minis:
            sc, mins = combine(x, members, ks)
            el.add(sc, mins)
        if el.constant == INF:
            return INF
    return el.constant


def diffuse(core: Core, xs: list[int]) -> None:
    """One sweep of min-sum diffusion (block-coordinate ascent on the dual of the LP
    relaxation; Kovalevsky & Koval, see Werner 2007), in place over the blocks `xs`: at
    each block, its unary and the projections of its pair tables onto it are averaged.
    Equivalence-preserving, and it never lowers the bound `bound_of` reads off; a few
    dozen sweeps get close to the LP bound."""
    sizes, un, nb = core.sizes, core.un, core.nb
    add = _add
    for x in xs:
        nx = nb[x]
        if not nx:
            continue
        kx = sizes[x]
        share_n = len(nx) + 1
        phis = []
        tot = un[x]
        assert tot is not None
        for y, t in nx.items():
            ky = sizes[y]
            if x < y:
                ph = [min(t[i * ky : i * ky + ky]) for i in range(kx)]
            else:
                ph = [min(t[i::kx]) for i in range(kx)]
            phis.append(ph)
            tot = list(map(add, tot, ph))
        share = [a / share_n for a in tot]
        un[x] = share
        for (y, t), ph in zip(list(nx.items()), phis, strict=True):
            ky = sizes[y]
            delta = [sh - p if p < INF else 0.0 for sh, p in zip(share, ph, strict=True)]
            # The same sums as adding delta[i] cell by cell, done by map in C: x's values
            # are the rows (each delta repeated ky times) or the columns (delta tiled).
            if x < y:
                t2 = list(map(add, t, [d for d in delta for _ in range(ky)]))
            else:
                t2 = list(map(add, t, delta * ky))
            nx[y] = t2
            ny = nb[y]
            assert ny is not None
            ny[x] = t2


def bound_of(
    core: Core,
    xs: list[int],
    const: float,
    hs: dict[int, list[float]] | None = None,
) -> float:
    """constant + each block's minimum over its values of its unary plus, for each pair
    it is the lower block of, the pair's row minimum (live partner values only): the
    dual bound of the current reparametrisation, over the blocks `xs`.

    A block with no live value left (the reductions or the diffusion can fold infinite
    costs onto every value of a block the masking did not look at) makes the node
    infeasible: the bound is then `inf`, which is exact. `hs`, when given, receives each
    block's terms by value (the bound with the block fixed to a value exceeds the bound
    by that value's term minus the least one: reduced-cost fixing reads it).

    >>> INF = float("inf")
    >>> core = Core([2, 2], [[0.0, 1.0], [INF, INF]], [{1: [0.0] * 4}, {0: [0.0] * 4}])
    >>> bound_of(core, [0, 1], 0.0)
    inf
    """
    sizes, un = core.sizes, core.un
    lb = const
    for x in xs:
        h = core.unary(x)
        for y, t in core.tables(x).items():
            if y > x:
                ky = sizes[y]
                uy = un[y]
                assert uy is not None
                live_y = [j for j in range(ky) if uy[j] < INF]
                if not live_y:
                    return INF
                if len(live_y) == ky:
                    h = [a + min(t[i * ky : i * ky + ky]) for i, a in enumerate(h)]
                else:
                    h = [a + min(t[i * ky + j] for j in live_y) for i, a in enumerate(h)]
        lb += min(h)
        if hs is not None:
            hs[x] = h
    return lb
