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
from operator import add as _add

from placement_cli.graph import Graph, bits
from placement_cli.io import gc_paused
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
# The specialised R0/R1/R2 pass before the generic elimination (tests turn it off to
# send whole plans through the generic elimination and the search).
REDUCTIONS = True

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
    """The live part of the plan as a min-sum model over local value indices."""

    values: list[list[int]]  # per block: its domain's target indices, ascending (empty if dead)
    ks: dict[int, int]  # variable -> domain size (only blocks with 2+ targets)
    unary: list[list[float] | None]  # per variable its cost vector (None for others)
    pairs: dict[tuple[int, int], list[float]]  # (a, b), a < b: table with a's values as rows
    constant: float
    fixed: dict[int, int]  # block -> local value (0), for single-target blocks
    integral: bool  # every cost is an integer: float sums are exact
    n_terms: int

    def factors(self) -> list[Factor]:
        out: list[Factor] = [(ab, tab) for ab, tab in self.pairs.items()]
        for b in self.ks:
            u = self.unary[b]
            assert u is not None
            out.append(((b,), u))
        return out


def _integral(xs: list[float] | tuple[float, ...]) -> bool:
    for c in xs:
        if c != INF and c != int(c):
            return False
    return True


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
    integral = True
    constant = 0.0
    cost = g.cost
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
            vs = bits(dom)
            values[b] = vs
            ks[b] = len(vs)
            row = cost[b]
            unary[b] = [row[t] for t in vs]
    for b in range(n):
        u = unary[b]
        if u is not None and integral and not _integral(u):
            integral = False

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
            assert un is not None
            for i, t in enumerate(values[u]):
                c = m.cost[t * m.n + t]
                un[i] = INF if c is None else un[i] + c
            continue
        if su >= 0 and sv >= 0:
            c = m.cost[su * m.n + sv]
            if c is None:
                return None
            constant += c
            if integral and c != int(c):
                integral = False
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
            tab = [INF if c is None else c for c in raw]
            memo[key] = tab
            if integral and not _integral(tab):
                integral = False
        if mode >= 2:
            w = v if mode == 2 else u
            old = unary[w]
            assert old is not None
            unary[w] = [a + b for a, b in zip(old, tab, strict=True)]
            continue
        pk = (v, u) if mode == 1 else (u, v)
        old = pairs.get(pk)
        pairs[pk] = tab if old is None else [a + b for a, b in zip(old, tab, strict=True)]
    for b in fixed:
        u = unary[b]
        assert u is not None
        constant += u[0]
        unary[b] = None
    n_terms = len(ks) + len(pairs) + len(fixed)
    return _Model(values, ks, unary, pairs, constant, fixed, integral, n_terms)


def _reduce(model: _Model, n: int) -> tuple[float, list[tuple[int, int, int, list[int]]], list[Factor], list[int]]:
    """PBQP reductions R0, R1, R2 on the pairwise model until every block left has three
    or more neighbours: exact under min-sum algebra, and far cheaper than the generic
    elimination for the bulk of a structured plan (trees and series-parallel parts).

    Returns the constant, the reduction log ((x, y, z, argmin table); y, z = -1 when
    absent), the factors over the blocks left (the core) and the counts (R0, R1, R2).
    Degrees never grow under these three rules, so a block enters the queue once.
    """
    ks = model.ks
    unary = model.unary
    nbr: list[dict[int, list[float]] | None] = [None] * n
    for b in ks:
        nbr[b] = {}
    for (a, b), tab in model.pairs.items():
        nbr[a][b] = tab  # type: ignore[index]
        nbr[b][a] = tab  # type: ignore[index]
    queued = bytearray(n)
    queue = [b for b in ks if len(nbr[b]) <= 2]  # type: ignore[arg-type]
    for b in queue:
        queued[b] = 1
    log: list[tuple[int, int, int, list[int]]] = []
    const = model.constant
    counts = [0, 0, 0]
    add = _add
    for x in queue:
        nx = nbr[x]
        assert nx is not None
        ux = unary[x]
        assert ux is not None
        kx = len(ux)
        d = len(nx)
        nbr[x] = None
        unary[x] = None
        if d == 0:
            m = min(ux)
            const += m
            log.append((x, -1, -1, [ux.index(m)]))
            counts[0] += 1
            if m == INF:
                break
            continue
        if d == 1:
            ((y, t),) = nx.items()
            ky = ks[y]
            uy = unary[y]
            assert uy is not None
            arg = []
            for j in range(ky):
                s = list(map(add, ux, t[j::ky] if x < y else t[j * kx : j * kx + kx]))
                m = min(s)
                uy[j] += m
                arg.append(s.index(m))
            ny = nbr[y]
            assert ny is not None
            del ny[x]
            log.append((x, y, -1, arg))
            counts[1] += 1
            if len(ny) <= 2 and not queued[y]:
                queued[y] = 1
                queue.append(y)
            continue
        (y, ty), (z, tz) = sorted(nx.items())
        ky, kz = ks[y], ks[z]
        a_rows = [list(map(add, ux, ty[j::ky] if x < y else ty[j * kx : j * kx + kx])) for j in range(ky)]
        cols = [tz[c::kz] if x < z else tz[c * kx : c * kx + kx] for c in range(kz)]
        tab: list[float] = []
        arg = []
        for a in a_rows:
            for c in cols:
                s = list(map(add, a, c))
                m = min(s)
                tab.append(m)
                arg.append(s.index(m))
        ny, nz = nbr[y], nbr[z]
        assert ny is not None and nz is not None
        del ny[x]
        del nz[x]
        old = ny.get(z)
        if old is None:
            ny[z] = tab
            nz[y] = tab
        else:
            new = list(map(add, old, tab))
            ny[z] = new
            nz[y] = new
        log.append((x, y, z, arg))
        counts[2] += 1
        for w, nw in ((y, ny), (z, nz)):
            if len(nw) <= 2 and not queued[w]:
                queued[w] = 1
                queue.append(w)
    rest = [b for b in ks if nbr[b] is not None]
    factors: list[Factor] = []
    for a in rest:
        na = nbr[a]
        assert na is not None
        for b, tab in na.items():
            if a < b:
                factors.append(((a, b), tab))
    for a in rest:
        u = unary[a]
        assert u is not None
        factors.append(((a,), u))
    return const, log, factors, counts


def _undo_reductions(log: list[tuple[int, int, int, list[int]]], ks: dict[int, int], val: dict[int, int]) -> None:
    for x, y, z, arg in reversed(log):
        if y < 0:
            val[x] = arg[0]
        elif z < 0:
            val[x] = arg[val[y]]
        else:
            val[x] = arg[val[y] * ks[z] + val[z]]


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
    # Elimination allocates many small acyclic lists: the cyclic GC only costs time here.
    with gc_paused():
        return _solve(g, domains, time_limit, incumbent)


def _solve(g: Graph, domains: tuple[int, ...], time_limit: float, incumbent: tuple[int, ...] | None) -> ExactOutcome:
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
    stats["pair_factors"] = len(model.pairs)

    inc_cost = INF
    inc_val: dict[int, int] = {}
    if incumbent is not None and len(incumbent) == g.n_blocks and feasible_for(g, domains, incumbent):
        c = evaluate(g, incumbent)
        if c is not None:
            inc_cost = c.total
            for b in ks:
                inc_val[b] = model.values[b].index(incumbent[b])

    if REDUCTIONS:
        const, rlog, core_factors, counts = _reduce(model, g.n_blocks)
    else:
        const, rlog, core_factors, counts = model.constant, [], model.factors(), [0, 0, 0]
    el = _Eliminator(ks, core_factors, const)
    timed_out = False
    if const < INF:
        try:
            el.run(TABLE_BUDGET, TOTAL_BUDGET, deadline)
        except _Timeout:
            timed_out = True
    stats["r0"] = counts[0] + el.counts[0]
    stats["r1"] = counts[1] + el.counts[1]
    stats["r2"] = counts[2] + el.counts[2]
    stats["rn"] = el.counts[3]
    stats["treewidth"] = max(el.width, 2 if counts[2] else 1 if counts[1] else 0)
    stats["dp_cells"] = el.cells

    def finish(val: dict[int, int]) -> tuple[int, ...]:
        _undo_reductions(rlog, ks, val)
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
