"""The live part of a plan as a pairwise min-sum model over local value indices: a cost
vector per variable, one table per neighbouring pair, single-target blocks conditioned
away. The model is a PBQP instance (Scholz & Eckstein 2002), in other words a binary
weighted CSP (the formalism of Cooper et al. 2010; their soft arc consistency
algorithms are not used here); `build_model` folds the plan's edges into it, `reductions.py`
takes it over. It is the exact method's view of the same pairwise problem as
`solve.instance.Instance` (the other searches' view); the module docstring of
`solve/instance.py` says why there are two and what they share.

References:

* B. Scholz, E. Eckstein. Register allocation for irregular architectures. LCTES 2002.
* M. C. Cooper, S. de Givry, M. Sanchez, T. Schiex, M. Zytnicki, T. Werner. Soft arc
  consistency revisited. Artificial Intelligence 174, 2010.
"""

from __future__ import annotations

import math
from itertools import compress
from operator import add as _add
from operator import itemgetter

import msgspec

from placement_cli.ir.graph import Graph, Matrix, bits

INF = math.inf

Factor = tuple[tuple[int, ...], list[float]]


class Timeout(Exception):
    pass


# --------------------------------------------------------------------------- model


class Model(msgspec.Struct):
    """The live part of the plan as a min-sum model over local value indices."""

    values: list[list[int]]  # per block: its domain's target indices, ascending (empty if dead)
    ks: dict[int, int]  # variable -> domain size (only blocks with 2+ targets)
    unary: list[list[float] | None]  # per variable its cost vector (None for others)
    pairs: dict[tuple[int, int], list[float]]  # (a, b), a < b: table with a's values as rows
    constant: float
    fixed: dict[int, int]  # block -> local value (0), for single-target blocks
    n_terms: int
    # The pairs as per-block neighbour tables (None for other blocks), when `build_model` made
    # them (the reductions take them over: None after `reduce_model`).
    nbr: list[dict[int, list[float]] | None] | None = None

    def factors(self) -> list[Factor]:
        out: list[Factor] = [(ab, tab) for ab, tab in self.pairs.items()]
        for b in self.ks:
            u = self.unary[b]
            assert u is not None
            out.append(((b,), u))
        return out


def plan_integral(g: Graph) -> bool:
    """Every block cost and transition cost is an integer, so float sums are exact.

    The costs repeat a lot: the distinct values are collected first (C-level set
    unions), then checked one by one.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> plan = {"version": 1, "targets": ["a", "b"], "transitions": {"a": {"b": 2}, "b": {"a": 1}},
    ...         "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                     "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                    {"id": "y", "cost": {"a": 2, "b": 1}, "terminator": {"kind": "return"}}]}
    >>> plan_integral(build_graph(Plan.model_validate(plan)))
    True
    >>> plan["transitions"]["a"]["b"] = 2.5
    >>> plan_integral(build_graph(Plan.model_validate(plan)))
    False
    """
    vals: set[float | None] = set().union(*g.cost, *[mat.cost for mat in g.edge_mat])
    vals.discard(None)
    vals.discard(INF)
    return all(c == int(c) for c in vals if c is not None)


def core_integral(factors: list[Factor], constant: float) -> bool:
    """Every entry of the core's tables and the constant is an integer (`inf` aside), so
    every assignment's cost in the search, and so the optimum, is an integer: the
    search may round its bounds up. True whenever the plan's costs are (`plan_integral`:
    sums and minima of integers are integers), and checks the core's values only (on
    random 1,000-block plans a third of the whole plan's check, which was 4 to 8% of
    the exact method's time).

    >>> core_integral([((0,), [1.0, INF]), ((0, 1), [0.0, 2.0, 3.0, 1.0])], 4.0)
    True
    >>> core_integral([((0,), [1.0, 0.5])], 4.0), core_integral([((0,), [1.0])], 0.25)
    (False, False)
    """
    vals: set[float] = set().union(*[t for _, t in factors])
    vals.discard(INF)
    return constant.is_integer() and all(map(float.is_integer, vals))


def build_model(g: Graph, domains: tuple[int, ...]) -> Model | None:
    """The model, or None when some live block has an empty domain or two single-target
    blocks are joined by a forbidden transition.

    Tables depend only on (matrix, source domain, destination domain, orientation), and
    matrices are interned by the graph, so most edges hit a memo (keyed by the matrix
    itself: it hashes by identity). Single-target blocks
    are conditioned away at once: their edges become unary terms of the other side (or
    constants), in edge order so that the sums are reproducible. Per-block lists come
    from comprehensions (domains' value lists are shared: nothing writes them), and a
    unary term is added in place (a 2-value one written out), which halved that part.
    """
    live = g.live
    cost = g.cost
    if all(live):
        if 0 in domains:
            return None
        doms = domains
    else:
        doms = tuple(d if lv else 0 for d, lv in zip(domains, live, strict=True))
        if 0 in compress(domains, live):
            return None
    # single[b]: the target of a live single-target block, else -1 (also for dead ones).
    single = [d.bit_length() - 1 if not d & (d - 1) else -1 for d in doms]
    vmemo = {d: bits(d) for d in dict.fromkeys(doms)}
    values = list(map(vmemo.__getitem__, doms))
    ks = {b: len(vs) for b, vs in enumerate(values) if len(vs) > 1}
    fixed = dict.fromkeys([b for b, t in enumerate(single) if t >= 0], 0)
    # Each block's own unary list (the reductions add into it): one C-level gather per
    # block with two or more values.
    gm = {d: itemgetter(*vs) if len(vs) > 1 else None for d, vs in vmemo.items()}
    unary: list[list[float] | None] = [
        list(ig(row)) if ig is not None else [row[vs[0]]] if vs else None
        for row, ig, vs in zip(cost, map(gm.__getitem__, doms), values, strict=True)
    ]

    # The tables depend only on the matrix, the domains and which ends are fixed: one
    # cache per kind of table (keyed by the matrix itself: it hashes by identity).
    loops: dict[tuple[Matrix, int], list[float]] = {}  # a self-loop's diagonal
    src_fixed: dict[tuple[Matrix, int, int], list[float]] = {}  # single-target source
    dst_fixed: dict[tuple[Matrix, int, int], list[float]] = {}  # single-target destination
    forward: dict[tuple[Matrix, int, int], list[float]] = {}  # a pair, source the lower
    backward: dict[tuple[Matrix, int, int], list[float]] = {}  # a pair, source the higher
    pairs: dict[tuple[int, int], list[float]] = {}
    # Each pair is also entered in both blocks' neighbour tables (in the order
    # `reduce_model` would enter them from `pairs`: first occurrence): it saves the
    # reductions a pass over the pairs.
    nbr: list[dict[int, list[float]] | None] = [None] * g.n_blocks
    for b in ks:
        nbr[b] = {}
    constant = 0.0
    add = _add
    edge_src, edge_dst, edge_mat = g.edge_src, g.edge_dst, g.edge_mat
    if doms is not domains:  # (some block is dead: only live blocks' edges count)
        keep = [live[u] for u in edge_src]
        edge_src = tuple(compress(edge_src, keep))
        edge_dst = tuple(compress(edge_dst, keep))
        edge_mat = tuple(compress(edge_mat, keep))
    tab: list[float] | None
    for u, v, m in zip(edge_src, edge_dst, edge_mat, strict=True):
        # A self-loop, or an edge with a single-target end, adds a vector to one block's
        # unary `w` (or a number to the constant); any other edge is a pair.
        su = single[u]
        sv = single[v]
        if u == v:
            w = u
            lkey = (m, doms[u])
            tab = loops.get(lkey)
            if tab is None:
                nm = m.n
                mc = m.cost
                tab = loops[lkey] = [
                    INF if c is None else c for c in [mc[t * nm + t] for t in values[u]]
                ]
        elif su >= 0:
            if sv >= 0:
                c = m.cost[su * m.n + sv]
                if c is None:
                    return None
                constant += c
                continue
            w = v
            key = (m, su, doms[v])
            tab = src_fixed.get(key)
            if tab is None:
                nm = m.n
                mc = m.cost
                tab = src_fixed[key] = [
                    INF if c is None else c for c in [mc[su * nm + d] for d in values[v]]
                ]
        elif sv >= 0:
            w = u
            key = (m, doms[u], sv)
            tab = dst_fixed.get(key)
            if tab is None:
                nm = m.n
                mc = m.cost
                tab = dst_fixed[key] = [
                    INF if c is None else c for c in [mc[s * nm + sv] for s in values[u]]
                ]
        else:
            key = (m, doms[u], doms[v])
            if u < v:
                a, b = u, v
                tab = forward.get(key)
                if tab is None:
                    nm = m.n
                    mc = m.cost
                    raw = [mc[s * nm + d] for s in values[u] for d in values[v]]
                    tab = forward[key] = [INF if c is None else c for c in raw]
            else:
                a, b = v, u
                tab = backward.get(key)
                if tab is None:
                    nm = m.n
                    mc = m.cost
                    raw = [mc[s * nm + d] for d in values[v] for s in values[u]]
                    tab = backward[key] = [INF if c is None else c for c in raw]
            na, nb_ = nbr[a], nbr[b]
            assert na is not None and nb_ is not None
            old = na.get(b)
            if old is not None:
                tab = list(map(add, old, tab))
            pairs[a, b] = na[b] = nb_[a] = tab
            continue
        uw = unary[w]
        assert uw is not None
        if len(tab) == 2:
            c0, c1 = tab
            uw[0] += c0
            uw[1] += c1
        else:
            uw[:] = map(add, uw, tab)
    for b in fixed:
        ub = unary[b]
        assert ub is not None
        constant += ub[0]
        unary[b] = None
    n_terms = len(ks) + len(pairs) + len(fixed)
    return Model(values, ks, unary, pairs, constant, fixed, n_terms, nbr)


# A reduction log entry: (x, y, z, x's unary, table x-y, table x-z); y, z = -1 if absent.
