"""The pairwise form of a plan that the systematic searches run on (`Instance`): the
live blocks, their domains and costs, and one folded cost table per block pair (parallel
edges and both directions merged), with costs scaled exactly by a power of two when
their sums could overflow a float. `root_bound` is its simple admissible bound.

Why the exact method has its own view (`exact.model.Model`) of the same pairwise
problem rather than reading this one:

* the views index differently: here every target index (n_targets x n_targets tables, None for a
  forbidden pair, allowed-target bitsets per pair for the heuristic's moves and the
  complete search's propagation, single-target blocks kept as blocks); there each
  block's own pruned domain (tables over local value indices, `inf` for forbidden),
  single-target blocks conditioned into their neighbours' costs, pairs keyed (a, b)
  with a < b and mirrored in neighbour dicts the reductions change in place;
* measured (structured plans of 3,000 blocks, dense loops of 1,000): building this view
  takes twice as long as `exact.model.build_model` (5 to 7 ms against 2 to 3 ms), which
  is 40 to 50% of the exact method's whole time on structured plans; deriving the
  exact method's model from it would add that to every exact solve, and deriving this
  view from the model is not possible (it keeps no single-target block, no target
  outside a pruned domain). Sharing only the folding of parallel edges (one function
  building both views' folded tables) was measured at +30 to 40% of `build_model` on
  dense loops (its memo is per edge, a shared fold's per pair), so it was not kept;
* costs are scaled in one place only, here (`shift`): the exact method sums the plan's
  costs as they are, and the driver does not run it on a plan that needs scaling.

Both views are built once per solve (the driver builds this one; `solve_exact` its own).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import chain, compress
from typing import Any

import msgspec

from placement_cli.algorithms.prune import edge_pairs
from placement_cli.ir.graph import Graph, Matrix

INF = math.inf
# Costs are scaled (by a power of two, exact) when the objective could exceed this:
# every sum a search forms then stays finite, so "cost < INF" keeps meaning "feasible".
_SAFE_TOTAL = 2.0**1000
Table = tuple[
    float | None, ...
]  # flat n_targets**2: table[t_self * n_targets + t_other], None = forbidden

_BITS: dict[int, tuple[int, ...]] = {}


def bits_of(mask: int) -> tuple[int, ...]:
    """Set bit positions in ascending order, memoised (domains repeat a lot).

    >>> bits_of(0b1011)
    (0, 1, 3)
    """
    r = _BITS.get(mask)
    if r is None:
        r = tuple(i for i in range(mask.bit_length()) if mask >> i & 1)
        if len(_BITS) < 1 << 16:
            _BITS[mask] = r
    return r


class Instance(msgspec.Struct, frozen=True, eq=False):
    """The live problem as a pairwise cost network.

    `nbr[b]` are the distinct live blocks sharing at least one edge with `b` (self-loops
    excluded: a self-loop is a unary constraint already folded into `dom`), ordered by
    the pair's first edge id. `tab[b][i][tb * n_targets + tn]` is the summed cost of every edge
    between `b` and `nbr[b][i]` when b runs on tb and the neighbour on tn (None: some
    edge forbids the pair); `allow[b][i][tb]` is the bitset of neighbour targets allowed.
    Dead blocks have domain 0 and no neighbours.
    """

    n_targets: int
    n: int
    live: tuple[int, ...]
    dom: tuple[int, ...]
    unary: tuple[tuple[float, ...], ...]
    nbr: tuple[tuple[int, ...], ...]
    tab: tuple[tuple[Table, ...], ...]
    allow: tuple[tuple[tuple[int, ...], ...], ...]
    tol: float  # strict-improvement threshold for local moves
    # Instance costs are the plan's times 2**-shift (0 on every ordinary plan). With
    # huge costs (up to 1.8e308 each) the plan's own sums overflow to inf, and a search
    # would take a feasible assignment for a forbidden one; scaled, they cannot.
    shift: int = 0

    def unscale(self, x: float) -> float:
        """A cost of this instance in the plan's units (inf when it does not fit a float)."""
        if not self.shift or x == INF:
            return x
        try:
            return math.ldexp(x, self.shift)
        except OverflowError:
            return INF

    @property
    def empty(self) -> tuple[int, ...]:
        """Live blocks without any target left."""
        return tuple(b for b in self.live if self.dom[b] == 0)

    def local_value(self, b: int, t: int, assign: Sequence[int]) -> float | None:
        """Block cost of b on t plus every edge to its (assigned) neighbours."""
        n_targets = self.n_targets
        c = self.unary[b][t]
        for tb, n in zip(self.tab[b], self.nbr[b], strict=True):
            x = tb[t * n_targets + assign[n]]
            if x is None:
                return None
            c += x
        return c

    def total(self, assign: Sequence[int]) -> float:
        """The objective grouped by pairs (for comparisons; reports use `evaluate`)."""
        n_targets = self.n_targets
        s = 0.0
        for b in self.live:
            t = assign[b]
            s += self.unary[b][t]
            for tb, n in zip(self.tab[b], self.nbr[b], strict=True):
                if n > b:
                    x = tb[t * n_targets + assign[n]]
                    s += INF if x is None else x
        return s


def build_instance(g: Graph, domains: Sequence[int]) -> Instance:
    """Fold the live edges of `g` into pair tables over the pruned `domains`.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 2}, "b": {"b": 0, "a": 1}},
    ...     "blocks": [{"id": "x", "terminator": {"kind": "switch",
    ...                 "successors": [{"block": "y"}, {"block": "y"}]}},
    ...                {"id": "y", "terminator": {"kind": "goto", "successors": [{"block": "x"}]}}]}))
    >>> inst = build_instance(g, g.domain)
    >>> inst.nbr[0], inst.tab[0][0]  # x->y twice plus y->x, seen from x
    ((1,), (0.0, 5.0, 4.0, 0.0))
    """
    n_targets = g.n_targets
    n = g.n_blocks
    live = g.live
    src, dst, mats = g.edge_src, g.edge_dst, g.edge_mat
    unary: tuple[tuple[float, ...], ...] = g.cost
    shift = _shift_for(g)
    if shift:
        mats = _scaled_matrices(mats, -shift)
        unary = tuple(tuple(c if c == INF else math.ldexp(c, -shift) for c in row) for row in unary)
    dom = [domains[b] if live[b] else 0 for b in range(n)]
    for e, (u, v) in enumerate(zip(src, dst, strict=True)):
        if u == v and live[u]:
            m = mats[e]
            keep = 0
            for t in range(n_targets):
                if m.out[t] >> t & 1:
                    keep |= 1 << t
            dom[u] &= keep
    # The edges of each block pair, in first-edge order (shared with `prune`). A pair
    # with an edge leaving a live block joins two live blocks; any other pair has only
    # edges leaving dead blocks, which the objective does not count.
    pairs = edge_pairs(g)

    # Per matrix (shared between edges): its table and allowed sets in both directions.
    oriented: dict[int, tuple[tuple[Table, tuple[int, ...]], tuple[Table, tuple[int, ...]]]] = {}

    def both(m: Any) -> tuple[tuple[Table, tuple[int, ...]], tuple[Table, tuple[int, ...]]]:
        r = oriented.get(id(m))
        if r is None:
            cost = m.cost
            tr = tuple(cost[d * n_targets + s] for s in range(n_targets) for d in range(n_targets))
            r = oriented[id(m)] = ((cost, m.out), (tr, m.inc))
        return r

    nbr: list[list[int]] = [[] for _ in range(n)]
    tab: list[list[Table]] = [[] for _ in range(n)]
    allow: list[list[tuple[int, ...]]] = [[] for _ in range(n)]
    folded: list[Table] = []  # tables summed over parallel edges (not shared)
    for key, es in pairs.items():
        a, b = divmod(key, n)
        if not (live[a] and live[b]):
            continue
        if len(es) == 1:
            m = mats[es[0]]
            r = oriented.get(id(m))
            fwd, bwd = r if r is not None else both(m)
            ab, ba = (fwd, bwd) if src[es[0]] == a else (bwd, fwd)
        else:
            acc: list[float | None] = [0.0] * (n_targets * n_targets)
            for e in es:
                c = mats[e].cost
                forward = src[e] == a
                for s in range(n_targets):
                    for d in range(n_targets):
                        i = s * n_targets + d
                        x = acc[i]
                        if x is None:
                            continue
                        y = c[i] if forward else c[d * n_targets + s]
                        acc[i] = None if y is None else x + y
            t_ab = tuple(acc)
            t_ba = tuple(
                t_ab[d * n_targets + s] for s in range(n_targets) for d in range(n_targets)
            )
            ab = (t_ab, _allowed(t_ab, n_targets))
            ba = (t_ba, _allowed(t_ba, n_targets))
            folded.append(t_ab)
        nbr[a].append(b)
        tab[a].append(ab[0])
        allow[a].append(ab[1])
        nbr[b].append(a)
        tab[b].append(ba[0])
        allow[b].append(ba[1])

    # The largest finite cost of the live problem (a max: any order gives the same).
    # Every table is a shared matrix's (either direction: same entries) or a folded one.
    live_blocks = tuple(compress(range(n), live))
    values: set[float | None] = set(chain.from_iterable(map(unary.__getitem__, live_blocks)))
    for fwd, _ in oriented.values():
        values.update(fwd[0])
    for t_ab in folded:
        values.update(t_ab)
    values.discard(None)
    values.discard(INF)
    cmax = max(0.0, max((c for c in values if c is not None), default=0.0))
    return Instance(
        n_targets=n_targets,
        n=n,
        live=live_blocks,
        dom=tuple(dom),
        unary=unary,
        nbr=tuple(map(tuple, nbr)),
        tab=tuple(map(tuple, tab)),
        allow=tuple(map(tuple, allow)),
        tol=1e-9 * (1.0 + cmax),
        shift=shift,
    )


def _shift_for(g: Graph) -> int:
    """0, or the power of two to divide every cost by so that no assignment's objective
    (nor any partial sum of it) can exceed `_SAFE_TOTAL`. The worst case is summed at
    2**-64 so that the check itself cannot overflow."""
    # Quick answer first: every term is at most the largest finite cost, and there are
    # at most one term per block and per edge. With that product far below the limit
    # (every ordinary plan), the exact sum below cannot reach it either.
    finite: set[float | None] = set()
    for row in g.cost:
        finite.update(row)
    for m in {id(m): m for m in g.edge_mat}.values():
        finite.update(m.cost)
    finite.discard(None)
    finite.discard(INF)
    top = max((c for c in finite if c is not None), default=0.0)
    if top * (g.n_blocks + g.n_edges + 1) <= _SAFE_TOTAL / 4:
        return 0
    worst = 0.0
    ld = math.ldexp
    for b in range(g.n_blocks):
        if not g.live[b]:
            continue
        worst += ld(max((c for c in g.cost[b] if c != INF), default=0.0), -64)
        for e in g.succ[b]:
            worst += ld(g.edge_mat[e].top, -64)
    if worst <= ld(_SAFE_TOTAL, -64):
        return 0
    return max(1, math.frexp(worst)[1] + 64 - 1000)


def _scaled_matrices(mats: Sequence[Matrix], exp: int) -> tuple[Matrix, ...]:
    """Every edge matrix with its costs times 2**exp (exact unless they become subnormal)."""
    ld = math.ldexp
    memo: dict[int, Matrix] = {}
    out = []
    for m in mats:
        r = memo.get(id(m))
        if r is None:
            r = memo[id(m)] = Matrix(
                m.n,
                tuple(None if c is None else ld(c, exp) for c in m.cost),
                m.out,
                m.inc,
                ld(m.top, exp),  # scaling by a power of two keeps the order
            )
        out.append(r)
    return tuple(out)


def _allowed(t: Table, n_targets: int) -> tuple[int, ...]:
    out = []
    for s in range(n_targets):
        m = 0
        for d in range(n_targets):
            if t[s * n_targets + d] is not None:
                m |= 1 << d
        out.append(m)
    return tuple(out)


def root_bound(inst: Instance) -> float:
    """A proven lower bound on the optimum: each pair is charged to its lower-numbered
    block, and each block takes its cheapest target counting its own cost plus, per
    charged pair, the cheapest allowed partner. Every term of the objective is counted
    at most once and never above its value, so no feasible assignment costs less.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]}))
    >>> root_bound(build_instance(g, g.domain))
    2.0
    """
    n_targets = inst.n_targets
    total = 0.0
    dom, unary, tab, allow, nbr = inst.dom, inst.unary, inst.tab, inst.allow, inst.nbr
    for b in inst.live:
        d = dom[b]
        if not d:
            return INF
        best = INF
        owned = [
            (tb, al, dom[n]) for tb, al, n in zip(tab[b], allow[b], nbr[b], strict=True) if n > b
        ]
        row = unary[b]
        for t in bits_of(d):
            c = row[t]
            tK = t * n_targets
            for tb, al, dn in owned:
                m = INF
                for tn in bits_of(al[t] & dn):
                    x = tb[tK + tn]  # (an allowed pair: never None)
                    if x is not None and x < m:
                        m = x
                c += m
                if c >= best:
                    break
            if c < best:
                best = c
        total += best
    return total
