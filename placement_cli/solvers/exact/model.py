"""The live part of a plan as a pairwise min-sum model (PBQP, weighted CSP) over local
value indices: a cost vector per variable, one table per neighbouring pair, single-target
blocks conditioned away."""

from __future__ import annotations

import math
from dataclasses import dataclass
from operator import add as _add

from placement_cli.graph import Graph, bits

INF = math.inf

Factor = tuple[tuple[int, ...], list[float]]


class _Timeout(Exception):
    pass


# --------------------------------------------------------------------------- model


@dataclass
class _Model:
    """The live part of the plan as a min-sum model over local value indices."""

    values: list[list[int]]  # per block: its domain's target indices, ascending (empty if dead)
    ks: dict[int, int]  # variable -> domain size (only blocks with 2+ targets)
    unary: list[list[float] | None]  # per variable its cost vector (None for others)
    pairs: dict[tuple[int, int], list[float]]  # (a, b), a < b: table with a's values as rows
    constant: float
    fixed: dict[int, int]  # block -> local value (0), for single-target blocks
    n_terms: int

    def factors(self) -> list[Factor]:
        out: list[Factor] = [(ab, tab) for ab, tab in self.pairs.items()]
        for b in self.ks:
            u = self.unary[b]
            assert u is not None
            out.append(((b,), u))
        return out


def _integral(g: Graph) -> bool:
    """Every block cost and transition cost is an integer, so float sums are exact.

    The costs repeat a lot: the distinct values are collected first (C-level set
    unions), then checked one by one.

    >>> from placement_cli.model import Plan
    >>> from placement_cli.graph import build_graph
    >>> plan = {"version": 1, "targets": ["a", "b"], "transitions": {"a": {"b": 2}, "b": {"a": 1}},
    ...         "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                     "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                    {"id": "y", "cost": {"a": 2, "b": 1}, "terminator": {"kind": "return"}}]}
    >>> _integral(build_graph(Plan.model_validate(plan)))
    True
    >>> plan["transitions"]["a"]["b"] = 2.5
    >>> _integral(build_graph(Plan.model_validate(plan)))
    False
    """
    vals: set[float | None] = set().union(*g.cost, *[mat.cost for mat in g.edge_mat])
    vals.discard(None)
    vals.discard(INF)
    return all(c == int(c) for c in vals)  # type: ignore[arg-type]


def _core_integral(factors: list[Factor], constant: float) -> bool:
    """Every entry of the core's tables and the constant is an integer (`inf` aside), so
    every assignment's cost in the search, and so the optimum, is an integer: the
    search may round its bounds up. True whenever the plan's costs are (`_integral`:
    sums and minima of integers are integers), and checks the core's values only (on
    random 1,000-block plans a third of the whole plan's check, which was 4 to 8% of
    the exact method's time).

    >>> _core_integral([((0,), [1.0, INF]), ((0, 1), [0.0, 2.0, 3.0, 1.0])], 4.0)
    True
    >>> _core_integral([((0,), [1.0, 0.5])], 4.0), _core_integral([((0,), [1.0])], 0.25)
    (False, False)
    """
    vals: set[float] = set().union(*[t for _, t in factors])
    vals.discard(INF)
    return constant.is_integer() and all(map(float.is_integer, vals))


def _build(g: Graph, domains: tuple[int, ...]) -> _Model | None:
    """The model, or None when some live block has an empty domain or two single-target
    blocks are joined by a forbidden transition."""
    n = g.n_blocks
    live = g.live
    values: list[list[int]] = [[] for _ in range(n)]
    unary: list[list[float] | None] = [None] * n
    single = [-1] * n  # the target of a live single-target block
    ks: dict[int, int] = {}
    fixed: dict[int, int] = {}
    constant = 0.0
    cost = g.cost
    dom_memo: dict[int, list[int]] = {}
    for b in range(n):
        if not live[b]:
            continue
        dom = domains[b]
        if dom & (dom - 1) == 0:
            if dom == 0:
                return None
            t = dom.bit_length() - 1
            values[b] = [t]
            single[b] = t
            fixed[b] = 0
            unary[b] = [cost[b][t]]
        else:
            vs = dom_memo.get(dom)
            if vs is None:
                vs = dom_memo[dom] = bits(dom)
            values[b] = vs
            ks[b] = len(vs)
            row = cost[b]
            unary[b] = [row[t] for t in vs]

    # Tables depend only on (matrix, source domain, destination domain, orientation), and
    # matrices are interned by the graph, so most edges hit this memo. Single-target
    # blocks are conditioned away at once: their edges become unary terms of the other
    # side (or constants), in edge order so that the sums are reproducible.
    memo: dict[tuple[int, int, int, int], list[float]] = {}
    pairs: dict[tuple[int, int], list[float]] = {}
    edge_src, edge_dst, edge_mat = g.edge_src, g.edge_dst, g.edge_mat
    for e in range(g.n_edges):
        u = edge_src[e]
        if not live[u]:
            continue
        v = edge_dst[e]
        m = edge_mat[e]
        su, sv = single[u], single[v]
        if u == v:
            un = unary[u]
            for i, t in enumerate(values[u]):
                c = m.cost[t * m.n + t]
                un[i] = INF if c is None else un[i] + c  # type: ignore[index]
            continue
        if su >= 0 and sv >= 0:
            c = m.cost[su * m.n + sv]
            if c is None:
                return None
            constant += c
            continue
        # mode: 0 pair u-rows, 1 pair v-rows, 2 unary on v (u fixed), 3 unary on u (v fixed)
        mode = 2 if su >= 0 else 3 if sv >= 0 else (1 if u > v else 0)
        key = (id(m), domains[u], domains[v], mode)
        tab = memo.get(key)
        if tab is None:
            nm = m.n
            mc = m.cost
            if mode == 0:
                raw = [mc[s * nm + d] for s in values[u] for d in values[v]]
            elif mode == 1:
                raw = [mc[s * nm + d] for d in values[v] for s in values[u]]
            elif mode == 2:
                raw = [mc[su * nm + d] for d in values[v]]
            else:
                raw = [mc[s * nm + sv] for s in values[u]]
            tab = memo[key] = [INF if c is None else c for c in raw]
        if mode >= 2:
            w = v if mode == 2 else u
            unary[w] = list(map(_add, unary[w], tab))  # type: ignore[arg-type]
            continue
        pk = (v, u) if mode == 1 else (u, v)
        old = pairs.get(pk)
        pairs[pk] = tab if old is None else list(map(_add, old, tab))
    for b in fixed:
        constant += unary[b][0]  # type: ignore[index]
        unary[b] = None
    n_terms = len(ks) + len(pairs) + len(fixed)
    return _Model(values, ks, unary, pairs, constant, fixed, n_terms)


# A reduction log entry: (x, y, z, x's unary, table x-y, table x-z); y, z = -1 if absent.
