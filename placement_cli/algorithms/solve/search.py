"""The branch-and-bound engine of `solve`: one depth-first search over the pairwise form
of a plan (`solve.instance`), restricted to a set of blocks (`Sub`), observing a
`Budget`. The seed heuristic runs it inside each cyclic super block (forward checking,
a node limit); the complete fallback (`solve.complete`) over every live block
(maintained arc consistency, no limit on feasibility).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import msgspec

from placement_cli.algorithms.solve.budget import Budget, slack
from placement_cli.algorithms.solve.instance import INF, Instance, Table, bits_of


class Sub:
    """A search problem over local variables 0..m-1 (a cyclic super block, or every live
    block): the static structure. Domains and unary costs are given per search, because
    the seed re-solves a super block under many boundary contexts."""

    __slots__ = ("n_targets", "blocks", "nbr", "tab", "allow", "deg", "prio", "pid", "pairs")

    def __init__(
        self, inst: Instance, blocks: Sequence[int], prio: Sequence[int] | None = None
    ) -> None:
        n_targets = inst.n_targets
        local = {b: i for i, b in enumerate(blocks)}
        self.n_targets = n_targets
        self.blocks = tuple(blocks)
        self.nbr: list[tuple[int, ...]] = []
        self.tab: list[tuple[Table, ...]] = []
        self.allow: list[tuple[tuple[int, ...], ...]] = []
        self.deg: list[int] = []
        for b in blocks:
            ns, ts, als = [], [], []
            for n, t, al in zip(inst.nbr[b], inst.tab[b], inst.allow[b], strict=True):
                j = local.get(n)
                if j is not None:
                    ns.append(j)
                    ts.append(t)
                    als.append(al)
            self.nbr.append(tuple(ns))
            self.tab.append(tuple(ts))
            self.allow.append(tuple(als))
            # Constraint degree counts boundary neighbours too: they are constraints on
            # this variable even when their side is fixed.
            self.deg.append(len(inst.nbr[b]))
        self.prio = list(prio) if prio is not None else [0] * len(self.blocks)
        self.pairs: list[tuple[int, int]] = []  # (a, slot in a's nbr) with a < neighbour
        self.pid: list[list[int]] = []
        for a, others in enumerate(self.nbr):
            row = []
            for i, o in enumerate(others):
                if a < o:
                    row.append(len(self.pairs))
                    self.pairs.append((a, i))
                else:
                    row.append(-1)
            self.pid.append(row)
        for a, others in enumerate(self.nbr):
            for i, o in enumerate(others):
                if a > o:
                    self.pid[a][i] = self.pid[o][self.nbr[o].index(a)]


class Found(msgspec.Struct, frozen=True):
    values: tuple[int, ...] | None  # local targets of the best solution found
    cost: float
    exhausted: bool  # the whole tree was explored: `values` is optimal (or none exists)
    nodes: int
    failed: int  # infeasible at the root: the variable that ran out first (else -1)


def search(
    sub: Sub,
    dom0: Sequence[int],
    unary: Sequence[Sequence[float]],
    *,
    mac: bool,
    bound: bool,
    node_limit: int | None = None,
    budget: Budget | None = None,
    upper: float = INF,
    first_only: bool = False,
) -> Found:
    """Depth-first search with dynamic MRV (smallest domain, then highest degree, then
    `sub.prio`, then index), cheapest-first values, forward checking or maintained arc
    consistency, and optionally branch and bound.

    The bound adds, for each unassigned variable, its cheapest value counting its unary
    cost and the edges to assigned neighbours, and for each pair of unassigned
    neighbours the cheapest allowed transition between their current domains. Each
    objective term appears in exactly one of those parts, so the bound is admissible.
    Only solutions cheaper than `upper` (by more than rounding `slack`) are returned.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> from placement_cli.algorithms.solve.instance import build_instance
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]}))
    >>> inst = build_instance(g, g.domain)
    >>> f = search(Sub(inst, [0, 1]), inst.dom, inst.unary, mac=True, bound=True)
    >>> f.values, f.cost, f.exhausted
    ((0, 1), 5.0, True)
    """
    n_targets = sub.n_targets
    m = len(sub.blocks)
    nbr, tab, allow, pid = sub.nbr, sub.tab, sub.allow, sub.pid
    deg, prio = sub.deg, sub.prio
    dom = list(dom0)
    val = [-1] * m
    trail: list[tuple[int, int, Any]] = []  # (kind 0 dom / 1 h / 2 pair, index, old value)
    heap: list[tuple[int, int, int, int]] = []
    push = heapq.heappush

    for v in range(m):
        if dom[v] == 0:
            return Found(None, INF, True, 0, v)
        heap.append((dom[v].bit_count(), -deg[v], prio[v], v))
    heapq.heapify(heap)

    def revise_from(queue: list[int], inq: list[bool]) -> int:
        """AC-3 from the variables in `queue`; -1, or the variable that emptied."""
        while queue:
            z = queue.pop()
            inq[z] = False
            dz = bits_of(dom[z])
            for y, al in zip(nbr[z], allow[z], strict=True):
                if val[y] >= 0:
                    continue
                sup = 0
                for tz in dz:
                    sup |= al[tz]
                dy = dom[y]
                nd = dy & sup
                if nd != dy:
                    if nd == 0:
                        for q in queue:
                            inq[q] = False
                        return y
                    trail.append((0, y, dy))
                    dom[y] = nd
                    push(heap, (nd.bit_count(), -deg[y], prio[y], y))
                    if not inq[y]:
                        inq[y] = True
                        queue.append(y)
        return -1

    inq = [False] * m
    if mac:
        w = revise_from(list(range(m - 1, -1, -1)), [True] * m)
        if w >= 0:
            return Found(None, INF, True, 0, w)
        trail.clear()

    def h_of(v: int) -> float:
        best = INF
        fixed = [(tb, val[w]) for w, tb in zip(nbr[v], tab[v], strict=True) if val[w] >= 0]
        u = unary[v]
        for t in bits_of(dom[v]):
            c = u[t]
            base = t * n_targets
            for tb, tw in fixed:
                c += tb[base + tw]  # type: ignore[operator]
            if c < best:
                best = c
        return best

    def pair_of(a: int, i: int) -> float:
        tb = tab[a][i]
        al = allow[a][i]
        db = dom[nbr[a][i]]
        best = INF
        for ta in bits_of(dom[a]):
            base = ta * n_targets
            for tn in bits_of(al[ta] & db):
                c = tb[base + tn]
                if c < best:  # type: ignore[operator]
                    best = c  # type: ignore[assignment]
        return best

    hv = [0.0] * m
    pv = [0.0] * len(sub.pairs)
    lb = 0.0
    if bound:
        for v in range(m):
            hv[v] = h_of(v)
        for p, (a, i) in enumerate(sub.pairs):
            pv[p] = pair_of(a, i)
        lb = sum(hv) + sum(pv)

    best = upper
    thr = best - slack(best) if best < INF else INF
    best_val: list[int] | None = None
    g = 0.0
    n_assigned = 0
    nodes = 0
    exhausted = True
    frames: list[list] = []  # [v, candidates, next index, trail mark, g before, lb before]
    wipes = [0] * m

    def undo_to(mark: int) -> None:
        while len(trail) > mark:
            kind, x, old = trail.pop()
            if kind == 0:
                dom[x] = old
                if val[x] < 0:
                    push(heap, (old.bit_count(), -deg[x], prio[x], x))
            elif kind == 1:
                hv[x] = old
            else:
                pv[x] = old

    while True:
        if n_assigned == m:
            if g < thr:
                best = g
                best_val = val[:]
                thr = best - slack(best)
                if first_only:
                    exhausted = False
                    break
        else:
            while True:
                k, _, _, v = heapq.heappop(heap)
                if val[v] < 0 and dom[v].bit_count() == k:
                    break
            u = unary[v]
            fixed = [(tb, val[w]) for w, tb in zip(nbr[v], tab[v], strict=True) if val[w] >= 0]
            cands = []
            for t in bits_of(dom[v]):
                c = u[t]
                base = t * n_targets
                for tb, tw in fixed:
                    c += tb[base + tw]  # type: ignore[operator]
                cands.append((c, t))
            cands.sort()
            frames.append([v, cands, 0, len(trail), g, lb])

        descended = False
        while frames:
            f = frames[-1]
            v, cands, idx, mark, g0, lb0 = f
            if val[v] >= 0:
                undo_to(mark)
                val[v] = -1
                n_assigned -= 1
                g = g0
                lb = lb0
            while idx < len(cands):
                inc, t = cands[idx]
                idx += 1
                if bound and g0 + inc + lb0 - hv[v] >= thr:
                    idx = len(cands)  # candidates are sorted: the rest cost more
                    break
                nodes += 1
                if node_limit is not None and nodes > node_limit:
                    exhausted = False
                    break
                if budget is not None and nodes & 15 == 0 and budget.exceeded():
                    exhausted = False
                    break
                trail.append((0, v, dom[v]))
                dom[v] = 1 << t
                val[v] = t
                n_assigned += 1
                ok = True
                if mac:
                    inq[v] = True
                    w = revise_from([v], inq)
                    if w >= 0:
                        ok = False
                        wipes[w] += 1
                else:
                    for y, al in zip(nbr[v], allow[v], strict=True):
                        if val[y] < 0:
                            dy = dom[y]
                            nd = dy & al[t]
                            if nd != dy:
                                if nd == 0:
                                    ok = False
                                    wipes[y] += 1
                                    break
                                trail.append((0, y, dy))
                                dom[y] = nd
                                push(heap, (nd.bit_count(), -deg[y], prio[y], y))
                if ok and bound:
                    lb = lb0
                    # v leaves the bound: its h and its pairs are now part of g.
                    trail.append((1, v, hv[v]))
                    lb -= hv[v]
                    hv[v] = 0.0
                    for p in pid[v]:
                        if pv[p]:
                            trail.append((2, p, pv[p]))
                            lb -= pv[p]
                            pv[p] = 0.0
                    touched = set(nbr[v])
                    narrowed = [x for kind, x, _ in trail[mark + 1 :] if kind == 0]
                    touched.update(narrowed)
                    for y in sorted(touched):
                        if val[y] < 0:
                            nh = h_of(y)
                            if nh != hv[y]:
                                trail.append((1, y, hv[y]))
                                lb += nh - hv[y]
                                hv[y] = nh
                    for y in sorted(set(narrowed)):
                        if val[y] >= 0:
                            continue
                        for i, z in enumerate(nbr[y]):
                            if val[z] < 0:
                                p = pid[y][i]
                                a, j = sub.pairs[p]
                                npv = pair_of(a, j)
                                if npv != pv[p]:
                                    trail.append((2, p, pv[p]))
                                    lb += npv - pv[p]
                                    pv[p] = npv
                    ok = g0 + inc + lb < thr
                if ok:
                    g = g0 + inc
                    f[2] = idx
                    descended = True
                    break
                undo_to(mark)
                val[v] = -1
                n_assigned -= 1
                lb = lb0
            if not exhausted or descended:
                break
            frames.pop()
            push(heap, (dom[v].bit_count(), -deg[v], prio[v], v))
        if not exhausted or not descended:
            break

    failed = -1
    if best_val is None and exhausted and m:
        # The variable whose domain ran out most often is where the conflict lives.
        failed = max(range(m), key=lambda x: (wipes[x], -x))
    return Found(None if best_val is None else tuple(best_val), best, exhausted, nodes, failed)
