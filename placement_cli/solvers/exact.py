"""Exact placement: PBQP reductions, variable elimination and a branch-and-eliminate search,
with lower bounds that hold whether or not the optimum is proven.

The placement objective is a min-sum problem over pairwise cost functions (PBQP, weighted
CSP). Over the live blocks it is rewritten as a factor model:

* a unary factor per block: its cost vector over its pruned domain, self-loop diagonals
  folded in (a forbidden diagonal forbids that target);
* one pairwise factor per pair of neighbouring blocks: every parallel edge in both
  directions summed into one table, infinite where any of them forbids the pair;
* blocks left with a single target are conditioned away into their neighbours' unaries.

Blocks are then eliminated one at a time, cheapest joint table first (ties: block input
order). Eliminating a block with 0, 1 or 2 neighbours is exactly the PBQP reduction R0, R1
or R2; a block with more neighbours produces a higher-order factor over them (dynamic
programming over the tree decomposition the order induces). Every elimination is exact
under min-sum algebra and keeps an argmin table for back-substitution, so a finished
elimination is a proven optimum. Only tables within a cell budget are built; what the
budget or the time limit leaves over (the core) goes to a depth-first branch and bound that
conditions on one block at a time and eliminates again, with a mini-bucket lower bound.
"""

from __future__ import annotations

import math
import time
from array import array
from dataclasses import dataclass
from heapq import heappop, heappush

from placement_cli.graph import Graph, bits
from placement_cli.passes.scc import SccResult
from placement_cli.solvers.objective import UNASSIGNED, evaluate, feasible_for

INF = math.inf

# One elimination step may build a joint table of at most this many cells (K^(w+1)):
# 2^21 cells are ~64 MiB of Python floats while they exist, and a few seconds of work.
TABLE_BUDGET = 1 << 21
# All elimination steps together: beyond this the work alone exceeds any sensible
# time limit, and the argmin tables (one byte per cell) stay bounded.
TOTAL_BUDGET = 1 << 26
# Inside the search each node eliminates only what is cheap: nodes stay fast, and
# branching does the rest.
SEARCH_TABLE = 1 << 12
# Mini-bucket lower bound: the largest table one mini-bucket may build.
MINI_BUCKET_TABLE = 1 << 14

Factor = tuple[tuple[int, ...], list[float]]


@dataclass(frozen=True)
class ExactOutcome:
    """What the exact method proved (see `solve_exact`)."""

    assignment: tuple[int, ...] | None  # best feasible assignment found; -1 for dead blocks
    optimal: bool  # proven optimal (or proven infeasible when assignment is None)
    infeasible: bool  # proven: no feasible assignment exists
    lower_bound: float  # proven lower bound on the optimum (inf when infeasible)
    stats: dict[str, int | float]  # deterministic counters only


class _Timeout(Exception):
    pass


# --------------------------------------------------------------------------- model


@dataclass
class _Model:
    """The live part of the plan as a min-sum factor model over local value indices."""

    values: list[list[int]]  # per block: its domain's target indices, ascending (empty if dead)
    ks: dict[int, int]  # variable -> domain size (only blocks with 2+ targets)
    factors: list[Factor]  # scopes ascending by block index, tables row-major
    constant: float
    fixed: dict[int, int]  # block -> local value, for single-target blocks
    integral: bool  # every cost is an integer: float sums are exact
    n_terms: int


def _build(g: Graph, domains: tuple[int, ...]) -> _Model | None:
    """The factor model, or None when some live block has an empty domain."""
    n = g.n_blocks
    live = g.live
    values: list[list[int]] = [[] for _ in range(n)]
    unary: list[list[float]] = [[] for _ in range(n)]
    integral = True
    for b in range(n):
        if not live[b]:
            continue
        vs = bits(domains[b])
        if not vs:
            return None
        values[b] = vs
        row = g.cost[b]
        u = [row[t] for t in vs]
        unary[b] = u
        if integral:
            for c in u:
                if c != INF and c != int(c):
                    integral = False
                    break

    # Tables depend only on (matrix, source domain, destination domain, orientation), and
    # matrices are interned by the graph, so most edges hit this memo.
    memo: dict[tuple[int, int, int, bool], tuple[float, ...]] = {}
    pair: dict[tuple[int, int], list[float]] = {}
    order: list[tuple[int, int]] = []
    edge_src, edge_dst, edge_mat = g.edge_src, g.edge_dst, g.edge_mat
    for e in range(g.n_edges):
        u = edge_src[e]
        if not live[u]:
            continue
        v = edge_dst[e]
        m = edge_mat[e]
        if u == v:
            vs = values[u]
            un = unary[u]
            for i, t in enumerate(vs):
                c = m.get(t, t)
                un[i] = INF if c is None else un[i] + c
            continue
        flip = u > v
        key = (id(m), domains[u], domains[v], flip)
        tab = memo.get(key)
        if tab is None:
            nm = m.n
            cost = m.cost
            if flip:
                tab = tuple(
                    INF if (c := cost[s * nm + d]) is None else c for d in values[v] for s in values[u]
                )
            else:
                tab = tuple(
                    INF if (c := cost[s * nm + d]) is None else c for s in values[u] for d in values[v]
                )
            memo[key] = tab
            if integral:
                for c in tab:
                    if c != INF and c != int(c):
                        integral = False
                        break
        pk = (v, u) if flip else (u, v)
        old = pair.get(pk)
        if old is None:
            pair[pk] = list(tab)
            order.append(pk)
        else:
            pair[pk] = [a + b for a, b in zip(old, tab, strict=True)]

    ks: dict[int, int] = {}
    fixed: dict[int, int] = {}
    constant = 0.0
    for b in range(n):
        if live[b]:
            if len(values[b]) == 1:
                fixed[b] = 0
            else:
                ks[b] = len(values[b])
    factors: list[Factor] = []
    n_terms = len(ks) + len(order)
    # Single-target blocks are conditioned away: their pairs become unary terms of the
    # other side, added in edge-pair order so the sums are reproducible.
    for a, b in order:
        tab = pair[(a, b)]
        fa, fb = a in fixed, b in fixed
        if fa and fb:
            constant += tab[0]
        elif fa:
            ub = unary[b]
            unary[b] = [x + y for x, y in zip(ub, tab, strict=True)]
        elif fb:
            ua = unary[a]
            unary[a] = [x + y for x, y in zip(ua, tab, strict=True)]
        else:
            factors.append(((a, b), tab))
    for b in fixed:
        constant += unary[b][0]
    for b in ks:
        factors.append(((b,), unary[b]))
    return _Model(values, ks, factors, constant, fixed, integral, n_terms)


# ------------------------------------------------------------------ table algebra

_EXPAND_MEMO: dict[tuple[tuple[int, ...], tuple[int, ...]], list[int]] = {}


def _expand(scope: tuple[int, ...], order: tuple[int, ...], ks: dict[int, int]) -> list[int]:
    """For each cell of the row-major table over `order`, the cell of the table over
    `scope` (a subset of `order`) it projects to."""
    pos = tuple(order.index(v) for v in scope)
    shape = tuple(ks[v] for v in order)
    key = (pos, shape)
    idx = _EXPAND_MEMO.get(key)
    if idx is not None:
        return idx
    stride = [0] * len(order)
    s = 1
    for p in reversed(pos):
        stride[p] = s
        s *= shape[p]
    idx = [0]
    for p, k in enumerate(shape):
        d = stride[p]
        if d == 0:
            idx = [i for i in idx for _ in range(k)]
        else:
            offs = range(0, k * d, d)
            idx = [i + o for i in idx for o in offs]
    if len(_EXPAND_MEMO) > 4096:
        _EXPAND_MEMO.clear()
    _EXPAND_MEMO[key] = idx
    return idx


def _combine(
    x: int, facs: list[Factor], ks: dict[int, int]
) -> tuple[tuple[int, ...], list[float], array | list[int]]:
    """min over x of the sum of `facs` (all contain x): the new scope, its table, and for
    each of its cells the smallest local value of x reaching the minimum."""
    kx = ks[x]
    if len(facs) == 1 and len(facs[0][0]) == 1:
        tab = facs[0][1]
        m = min(tab)
        return (), [m], [tab.index(m)]
    vs: set[int] = set()
    for sc, _ in facs:
        vs.update(sc)
    vs.discard(x)
    scope = tuple(sorted(vs))
    order = scope + (x,)
    total: list[float] | None = None
    for sc, tab in facs:
        if sc == order:
            total = list(tab) if total is None else [a + b for a, b in zip(total, tab, strict=True)]
            continue
        idx = _expand(sc, order, ks)
        if total is None:
            total = [tab[i] for i in idx]
        else:
            total = [a + tab[i] for a, i in zip(total, idx, strict=True)]
    assert total is not None
    mins = total[0::kx]
    arg: list[int] = [0] * len(mins)
    for a in range(1, kx):
        col = total[a::kx]
        arg = [a if c < m else p for c, m, p in zip(col, mins, arg, strict=True)]
        mins = [c if c < m else m for c, m in zip(col, mins, strict=True)]
    return scope, mins, arg


def _condition(f: Factor, v: int, a: int, ks: dict[int, int]) -> Factor:
    """The factor with block v fixed to local value a."""
    sc, tab = f
    p = sc.index(v)
    inner = 1
    for w in sc[p + 1 :]:
        inner *= ks[w]
    kv = ks[v]
    block = kv * inner
    off = a * inner
    out: list[float] = []
    for start in range(off, len(tab), block):
        out.extend(tab[start : start + inner])
    return sc[:p] + sc[p + 1 :], out


# ------------------------------------------------------------------ elimination


class _Eliminator:
    """Bucket elimination over a factor set, cheapest joint table first.

    Factors with the same scope are summed into one, so a block's degree is its number
    of neighbours in the interaction graph. The elimination log keeps (block, scope,
    argmin table) for back-substitution in reverse order.
    """

    def __init__(self, ks: dict[int, int], factors: list[Factor], constant: float) -> None:
        self.ks = ks
        self.constant = constant
        self.scope: dict[int, tuple[int, ...]] = {}
        self.tab: dict[int, list[float]] = {}
        self.by_scope: dict[tuple[int, ...], int] = {}
        self.var_facs: dict[int, dict[int, None]] = {}
        self.adj: dict[int, set[int]] = {}
        self.log: list[tuple[int, tuple[int, ...], array | list[int]]] = []
        self.next_id = 0
        self.width = 0
        self.cells = 0
        self.counts = [0, 0, 0, 0]  # R0, R1, R2, RN
        for sc, _ in factors:
            for v in sc:
                if v not in self.var_facs:
                    self.var_facs[v] = {}
                    self.adj[v] = set()
        for sc, tab in factors:
            self.add(sc, tab)

    def add(self, sc: tuple[int, ...], tab: list[float]) -> None:
        if not sc:
            self.constant += tab[0]
            return
        fid = self.by_scope.get(sc)
        if fid is not None:
            self.tab[fid] = [a + b for a, b in zip(self.tab[fid], tab, strict=True)]
            return
        fid = self.next_id
        self.next_id += 1
        self.scope[fid] = sc
        self.tab[fid] = tab
        self.by_scope[sc] = fid
        for v in sc:
            self.var_facs[v][fid] = None
        if len(sc) > 1:
            adj = self.adj
            for v in sc:
                av = adj[v]
                for w in sc:
                    if w != v:
                        av.add(w)

    def key(self, x: int, cap: int) -> int:
        """Cells of the joint table eliminating x would build (capped just above `cap`)."""
        ks = self.ks
        c = ks[x]
        for y in self.adj[x]:
            c *= ks[y]
            if c > cap:
                return cap + 1 + len(self.adj[x])
        return c

    def eliminate(self, x: int) -> None:
        fids = list(self.var_facs.pop(x))
        facs = []
        for f in fids:
            sc = self.scope.pop(f)
            facs.append((sc, self.tab.pop(f)))
            del self.by_scope[sc]
            for v in sc:
                if v != x:
                    del self.var_facs[v][f]
        if not facs:
            # A block whose factors all vanished (cannot happen for model blocks, which
            # always carry a unary): any value will do, take the first.
            self.log.append((x, (), [0]))
            self.adj.pop(x)
            return
        scope, mins, arg = _combine(x, facs, self.ks)
        kx = self.ks[x]
        cells = len(mins) * kx
        self.cells += cells
        if len(scope) > self.width:
            self.width = len(scope)
        self.counts[min(len(scope), 3)] += 1
        self.log.append((x, scope, array("B", arg) if kx <= 256 else arg))
        nb = self.adj.pop(x)
        adj = self.adj
        for y in nb:
            ay = adj[y]
            ay.discard(x)
        self.add(scope, mins)

    def run(self, table_cap: int, total_cap: int, deadline: float | None) -> None:
        """Eliminate while the cheapest next table fits `table_cap` (and the running total
        `total_cap`); stops at the deadline with what is left as the core."""
        heap: list[tuple[int, int]] = []
        cur: dict[int, int] = {}
        for v in sorted(self.var_facs):
            k = self.key(v, table_cap)
            cur[v] = k
            heap.append((k, v))
        heap.sort()
        steps = 0
        while heap:
            k, x = heappop(heap)
            if cur.get(x) != k:
                continue
            if k > table_cap or self.cells + k > total_cap:
                heappush(heap, (k, x))
                break
            steps += 1
            if deadline is not None and (steps & 255 == 0 or k > 4096) and time.monotonic() > deadline:
                heappush(heap, (k, x))
                raise _Timeout
            nb = sorted(self.adj[x])
            del cur[x]
            self.eliminate(x)
            if self.constant == INF:
                return
            for y in nb:
                ky = self.key(y, table_cap)
                if cur[y] != ky:
                    cur[y] = ky
                    heappush(heap, (ky, y))

    def remaining(self) -> list[int]:
        return sorted(self.var_facs)

    def factors(self) -> list[Factor]:
        return [(self.scope[f], self.tab[f]) for f in sorted(self.scope)]

    def bound(self) -> float:
        """Constant plus the minimum of every remaining factor: a lower bound on the rest."""
        return self.constant + math.fsum(min(t) for t in self.tab.values())


def _decode(log: list[tuple[int, tuple[int, ...], array | list[int]]], ks: dict[int, int], val: dict[int, int]) -> None:
    """Back-substitute in reverse elimination order (every scope is decided by then)."""
    for x, sc, arg in reversed(log):
        i = 0
        for v in sc:
            i = i * ks[v] + val[v]
        val[x] = arg[i]


# ------------------------------------------------------------------ bounds


def mini_bucket_bound(
    ks: dict[int, int], factors: list[Factor], constant: float, table_cap: int = MINI_BUCKET_TABLE
) -> float:
    """A lower bound on min over all assignments of `constant` + sum of `factors`.

    Mini-bucket elimination: a bucket whose joint table would exceed `table_cap` is split
    into mini-buckets that each fit, and each is minimised over the block on its own.
    Since min(f + g) >= min f + min g this can only under-estimate; with a cap large
    enough for every bucket it is exact.

    >>> ks = {0: 2, 1: 2}
    >>> mini_bucket_bound(ks, [((0,), [1.0, 2.0]), ((0, 1), [5.0, 0.0, 0.0, 5.0])], 0.0)
    1.0
    """
    el = _Eliminator(ks, factors, constant)
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
    for x in order:
        fids = list(el.var_facs.pop(x))
        facs = []
        for f in fids:
            sc = el.scope.pop(f)
            facs.append((sc, el.tab.pop(f)))
            del el.by_scope[sc]
            for v in sc:
                if v != x:
                    del el.var_facs[v][f]
        # First-fit of the bucket's factors, largest first, into mini-buckets that fit.
        facs.sort(key=lambda f: (-len(f[0]), f[0]))
        minis: list[tuple[set[int], list[Factor]]] = []
        for f in facs:
            placed = False
            for vs, members in minis:
                u = vs | set(f[0])
                size = 1
                for v in u:
                    size *= ks[v]
                if size <= table_cap:
                    vs.update(f[0])
                    members.append(f)
                    placed = True
                    break
            if not placed:
                minis.append((set(f[0]), [f]))
        for _, members in minis:
            sc, mins, _ = _combine(x, members, ks)
            el.add(sc, mins)
        if el.constant == INF:
            return INF
    return el.constant


# ------------------------------------------------------------------ search


class _Search:
    """Depth-first branch and eliminate over the core: condition the block with the most
    neighbours on each of its values (cheapest child bound first, the incumbent's value
    before all), eliminate whatever became cheap, and prune on constant + the sum of the
    remaining factors' minima."""

    def __init__(self, ks: dict[int, int], deadline: float, best: float, hint: dict[int, int]) -> None:
        self.ks = ks
        self.deadline = deadline
        self.best = best
        self.best_val: dict[int, int] | None = None
        self.hint = hint
        self.nodes = 0
        self.open_lb = INF
        self.aborted = False

    def run(self, factors: list[Factor], constant: float) -> None:
        try:
            self._node(factors, constant, [], -INF)
        except _Timeout:
            self.aborted = True

    def _node(
        self,
        factors: list[Factor],
        constant: float,
        path: list[tuple[list, int, int]],
        lb_hint: float,
    ) -> None:
        if time.monotonic() > self.deadline:
            self.open_lb = min(self.open_lb, lb_hint)
            raise _Timeout
        self.nodes += 1
        ks = self.ks
        el = _Eliminator(ks, factors, constant)
        el.run(SEARCH_TABLE, TOTAL_BUDGET, None)
        if el.constant >= self.best:
            return
        rest = el.remaining()
        if not rest:
            self.best = el.constant
            val: dict[int, int] = {}
            _decode(el.log, ks, val)
            for log, v, a in reversed(path):
                val[v] = a
                _decode(log, ks, val)
            self.best_val = val
            return
        mins = {f: min(t) for f, t in el.tab.items()}
        # Branch on the block with the most neighbours: it shrinks the width fastest.
        v = max(rest, key=lambda y: (len(el.adj[y]), -y))
        facs = el.factors()
        with_v = [f for f in facs if v in f[0]]
        base = el.constant + math.fsum(m for f, m in mins.items() if v not in el.scope[f])
        kv = ks[v]
        child_lb = []
        for a in range(kv):
            s = base
            for f in with_v:
                s += min(_condition(f, v, a, ks)[1]) if len(f[0]) > 1 else f[1][a]
            child_lb.append(s)
        first = self.hint.get(v)
        order = sorted(range(kv), key=lambda a: (a != first, child_lb[a], a))
        for i, a in enumerate(order):
            if child_lb[a] >= self.best:
                continue
            sub: list[Factor] = []
            extra = 0.0
            for f in facs:
                if v in f[0]:
                    c = _condition(f, v, a, ks)
                    if c[0]:
                        sub.append(c)
                    else:
                        extra += c[1][0]
                else:
                    sub.append(f)
            try:
                self._node(sub, el.constant + extra, path + [(el.log, v, a)], child_lb[a])
            except _Timeout:
                for b in order[i + 1 :]:
                    if child_lb[b] < self.best:
                        self.open_lb = min(self.open_lb, child_lb[b])
                raise


# ------------------------------------------------------------------ entry point


def solve_exact(
    g: Graph,
    domains: tuple[int, ...],
    comps: SccResult,
    time_limit: float,
    incumbent: tuple[int, ...] | None = None,
) -> ExactOutcome:
    """The cheapest feasible placement of the live blocks within `domains`, with a proof.

    Returns a proven optimum (`optimal=True`) when the elimination and, if needed, the
    search over the remaining core finish within `time_limit` seconds and the table
    budget; otherwise the best assignment known (the `incumbent` if nothing better was
    found) with `optimal=False` and a proven `lower_bound`. Ties between equal-cost
    assignments go to the lowest target index, decided block by block in the reverse of
    the (deterministic) elimination order. `comps` is accepted for the pass contract; the
    elimination order does not need it.

    >>> from placement_cli.model import Plan
    >>> from placement_cli.graph import build_graph
    >>> from placement_cli.passes.prune import prune
    >>> from placement_cli.passes.scc import scc
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0, "a": 1}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]}))
    >>> out = solve_exact(g, prune(g).domains, scc(g), time_limit=5.0)
    >>> out.assignment, out.optimal, out.lower_bound
    ((0, 1), True, 5.0)
    """
    del comps
    t0 = time.monotonic()
    deadline = t0 + max(0.0, time_limit)
    stats: dict[str, int | float] = {}
    live_n = sum(1 for b in range(g.n_blocks) if g.live[b])
    stats["live_blocks"] = live_n
    model = _build(g, domains)
    if model is None:
        stats["empty_domain"] = 1
        return ExactOutcome(None, True, True, INF, stats)
    ks = model.ks
    stats["variables"] = len(ks)
    stats["fixed_blocks"] = len(model.fixed)
    stats["pair_factors"] = sum(1 for sc, _ in model.factors if len(sc) == 2)

    inc_cost = INF
    inc_val: dict[int, int] = {}
    if incumbent is not None and len(incumbent) == g.n_blocks and feasible_for(g, domains, incumbent):
        c = evaluate(g, incumbent)
        if c is not None:
            inc_cost = c.total
            for b in ks:
                inc_val[b] = model.values[b].index(incumbent[b])

    el = _Eliminator(ks, model.factors, model.constant)
    timed_out = False
    try:
        el.run(TABLE_BUDGET, TOTAL_BUDGET, deadline)
    except _Timeout:
        timed_out = True
    stats["r0"], stats["r1"], stats["r2"], stats["rn"] = el.counts
    stats["treewidth"] = el.width
    stats["dp_cells"] = el.cells

    def finish(val: dict[int, int]) -> tuple[int, ...]:
        for b, a in model.fixed.items():
            val[b] = a
        out = [UNASSIGNED] * g.n_blocks
        for b in range(g.n_blocks):
            if g.live[b]:
                out[b] = model.values[b][val[b]]
        return tuple(out)

    if el.constant == INF:
        return ExactOutcome(None, True, True, INF, stats)

    core = el.remaining()
    stats["core_blocks"] = len(core)
    if not core:
        val: dict[int, int] = {}
        _decode(el.log, ks, val)
        a = finish(val)
        return ExactOutcome(a, True, False, _total(g, a), stats)

    # The core: an exact prefix was eliminated; what remains is too wide (or too late).
    core_factors = el.factors()
    lb = el.bound()
    if not timed_out and time.monotonic() < deadline:
        mb = mini_bucket_bound(ks, core_factors, el.constant)
        stats["mini_bucket"] = 1
        lb = max(lb, mb)
    best_a: tuple[int, ...] | None = None
    best_cost = inc_cost
    if inc_cost < INF:
        best_a = tuple(incumbent) if incumbent is not None else None
    proven = False
    if lb == INF:
        return ExactOutcome(None, True, True, INF, stats)
    if not timed_out and lb < best_cost:
        # Relative slack so that float rounding in the model cannot make the search
        # discard the incumbent's own cost as "not better".
        search = _Search(ks, deadline, best_cost, inc_val)
        search.run(core_factors, el.constant)
        stats["search_nodes"] = search.nodes
        if search.best_val is not None:
            val = dict(search.best_val)
            _decode(el.log, ks, val)
            a = finish(val)
            c = _total(g, a)
            if c < best_cost or best_a is None:
                best_a, best_cost = a, c
        if not search.aborted:
            proven = True
        else:
            lb = max(lb, min(search.best, search.open_lb))
    elif lb >= best_cost:
        proven = True
    if proven:
        if best_a is None:
            return ExactOutcome(None, True, True, INF, stats)
        return ExactOutcome(best_a, True, False, best_cost, stats)
    lb = _safe(lb, model)
    if best_a is not None and lb >= best_cost:
        return ExactOutcome(best_a, True, False, best_cost, stats)
    return ExactOutcome(best_a, False, False, lb, stats)


def _total(g: Graph, a: tuple[int, ...]) -> float:
    c = evaluate(g, a)
    assert c is not None, "exact solver produced an infeasible assignment"
    return c.total


def _safe(lb: float, model: _Model) -> float:
    """Integer costs sum exactly in floats; otherwise step below any rounding the
    different summation orders of the bound and the objective could introduce."""
    if model.integral or lb in (INF, -INF):
        return lb
    return lb - abs(lb) * 1e-12 * (model.n_terms + 1)
