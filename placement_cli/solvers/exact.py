"""Exact placement: PBQP reductions, dynamic programming over a tree decomposition, and a
branch-and-reduce search, with lower bounds that hold whether or not the optimum is proven.

The placement objective is a min-sum problem over pairwise cost functions (PBQP, weighted
CSP). Over the live blocks and their pruned domains it becomes:

* a cost vector per block, self-loop diagonals folded in (a forbidden diagonal forbids
  that target);
* one table per pair of neighbouring blocks: every parallel edge in both directions
  summed, infinite where any of them forbids the pair;
* blocks with a single target conditioned away into their neighbours' vectors.

Then, each step exact under min-sum algebra and logged for back-substitution:

1. the PBQP reductions R0, R1, R2 (a block with 0, 1 or 2 neighbours is decided alone,
   folded into its neighbour, or turned into a table between its two neighbours);
2. on what is left (the core), dead-end elimination of dominated values, and the
   reductions again, unless the core is already cheap for step 3;
3. variable elimination, cheapest joint table first (ties by block order): dynamic
   programming over the tree decomposition that order induces, when all its tables fit
   the cell budgets (checked symbolically first);
4. otherwise a depth-first branch and reduce over the core (condition one block, reduce
   again, solve small nodes by step 3), pruned by min-sum diffusion bounds.

A finished run is a proof. Cut short by the time limit or a budget, it returns the best
assignment known with the best proven bound. docs/exact.md has the details and numbers.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from heapq import heappop, heappush
from operator import add as _add
from typing import Any

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
# The core goes to dynamic programming when its whole elimination builds at most this
# many cells (a second or two of pure Python); wider cores go to the search.
DP_BUDGET = 1 << 18
# Below this many cells the core goes straight to dynamic programming, without first
# looking for dominated values.
CHEAP_DP = 1 << 14
# A search node whose remaining elimination builds at most this many cells is solved by
# dynamic programming on the spot instead of branching further.
LEAF_DP = 1 << 12
# Min-sum diffusion sweeps: at most this many at the root of the search (fewer once the
# bound stalls), and this many at every node.
ROOT_SWEEPS = 200
NODE_SWEEPS = 2
# The search keeps one copy of the core per level of its path: at most this many blocks
# and pair entries in all (a few hundred MiB), beyond which it stops as if out of time.
SEARCH_MEMORY = 4_000_000
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
    n_terms: int

    def factors(self) -> list[Factor]:
        out: list[Factor] = [(ab, tab) for ab, tab in self.pairs.items()]
        for b in self.ks:
            u = self.unary[b]
            assert u is not None
            out.append(((b,), u))
        return out


def _integral(g: Graph) -> bool:
    """Every block cost and transition cost is an integer, so float sums are exact."""
    for row in g.cost:
        for c in row:
            if c != INF and c != int(c):
                return False
    seen: set[int] = set()
    for mat in g.edge_mat:
        if id(mat) not in seen:
            seen.add(id(mat))
            for e in mat.cost:
                if e is not None and e != int(e):
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
Reduction = tuple[int, int, int, list[float], list[float] | None, list[float] | None]


def _reduce(model: _Model, n: int) -> tuple[float, list[Reduction], list[Factor], list[int]]:
    """PBQP reductions R0, R1, R2 on the pairwise model until every block left has three
    or more neighbours: exact under min-sum algebra, and far cheaper than the generic
    elimination for the bulk of a structured plan (trees and series-parallel parts).

    Returns the constant, the reduction log, the factors over the blocks left (the core)
    and the counts (R0, R1, R2).
    """
    ks = model.ks
    unary = model.unary
    nbr: list[dict[int, list[float]] | None] = [None] * n
    for b in ks:
        nbr[b] = {}
    for (a, b), tab in model.pairs.items():
        nbr[a][b] = tab  # type: ignore[index]
        nbr[b][a] = tab  # type: ignore[index]
    counts = [0, 0, 0]
    const, log = _reduce_core(ks, unary, nbr, list(ks), n, model.constant, counts)
    rest = [b for b in ks if nbr[b] is not None]
    factors: list[Factor] = []
    for a in rest:
        for b, tab in nbr[a].items():  # type: ignore[union-attr]
            if a < b:
                factors.append(((a, b), tab))
    for a in rest:
        factors.append(((a,), unary[a]))  # type: ignore[arg-type]
    return const, log, factors, counts


def _reduce_core(
    ks: dict[int, int] | list[int],
    unary: list[list[float] | None],
    nbr: list[dict[int, list[float]] | None],
    cand: list[int],
    n: int,
    const: float,
    counts: list[int],
) -> tuple[float, list[Reduction]]:
    """R0/R1/R2 in place on per-block unaries and neighbour tables (a pair's table has
    the lower block's values as rows and is shared by both ends); eliminated blocks get
    None. Degrees never grow under these three rules, so a block enters the queue once.
    The log keeps the eliminated block's unary and tables rather than argmin tables:
    back-substitution recomputes the one argmin it needs, with the same sums in the same
    order, so the forward pass only takes minima. Stops early at an infinite constant.
    """
    queued = bytearray(n)
    queue = [b for b in cand if len(nbr[b]) <= 2]  # type: ignore[arg-type]
    for b in queue:
        queued[b] = 1
    log: list[Reduction] = []
    add = _add
    for x in queue:
        nx = nbr[x]
        ux = unary[x]
        kx = len(ux)  # type: ignore[arg-type]
        d = len(nx)  # type: ignore[arg-type]
        nbr[x] = None
        unary[x] = None
        if d == 0:
            m = min(ux)  # type: ignore[arg-type]
            const += m
            log.append((x, -1, -1, ux, None, None))  # type: ignore[arg-type]
            counts[0] += 1
            if m == INF:
                break
            continue
        if d == 1:
            ((y, t),) = nx.items()  # type: ignore[union-attr]
            ky = ks[y]
            uy = unary[y]
            if x < y:
                for j in range(ky):
                    uy[j] += min(map(add, ux, t[j::ky]))  # type: ignore[index, arg-type]
            else:
                for j in range(ky):
                    uy[j] += min(map(add, ux, t[j * kx : j * kx + kx]))  # type: ignore[index, arg-type]
            ny = nbr[y]
            del ny[x]  # type: ignore[union-attr]
            log.append((x, y, -1, ux, t, None))  # type: ignore[arg-type]
            counts[1] += 1
            if len(ny) <= 2 and not queued[y]:  # type: ignore[arg-type]
                queued[y] = 1
                queue.append(y)
            continue
        (y, ty), (z, tz) = sorted(nx.items())  # type: ignore[union-attr]
        ky, kz = ks[y], ks[z]
        if x < y:
            a_rows = [list(map(add, ux, ty[j::ky])) for j in range(ky)]  # type: ignore[arg-type]
        else:
            a_rows = [list(map(add, ux, ty[j * kx : j * kx + kx])) for j in range(ky)]  # type: ignore[arg-type]
        if x < z:
            cols = [tz[c::kz] for c in range(kz)]
        else:
            cols = [tz[c * kx : c * kx + kx] for c in range(kz)]
        tab = [min(map(add, a, c)) for a in a_rows for c in cols]
        ny, nz = nbr[y], nbr[z]
        del ny[x]  # type: ignore[union-attr]
        del nz[x]  # type: ignore[union-attr]
        old = ny.get(z)  # type: ignore[union-attr]
        if old is not None:
            tab = list(map(add, old, tab))
        ny[z] = tab  # type: ignore[index]
        nz[y] = tab  # type: ignore[index]
        log.append((x, y, z, ux, ty, tz))  # type: ignore[arg-type]
        counts[2] += 1
        if len(ny) <= 2 and not queued[y]:  # type: ignore[arg-type]
            queued[y] = 1
            queue.append(y)
        if len(nz) <= 2 and not queued[z]:  # type: ignore[arg-type]
            queued[z] = 1
            queue.append(z)
    return const, log


def _undo_reductions(log: list[Reduction], ks: dict[int, int] | list[int], val: dict[int, int]) -> None:
    """Back-substitute the reductions in reverse, each block taking the lowest value
    that reaches the minimum given its (already decided) neighbours."""
    add = _add
    for x, y, z, ux, ty, tz in reversed(log):
        kx = len(ux)
        if y < 0:
            s = ux
        else:
            j = val[y]
            col = ty[j :: ks[y]] if x < y else ty[j * kx : j * kx + kx]  # type: ignore[index]
            s = list(map(add, ux, col))
            if z >= 0:
                c = val[z]
                col = tz[c :: ks[z]] if x < z else tz[c * kx : c * kx + kx]  # type: ignore[index]
                s = list(map(add, s, col))
        val[x] = s.index(min(s))


def _dominated(ua: float, ub: float, rows: list[tuple[list[float], list[float]]]) -> bool:
    """Value a can go: value b costs no more in every context of the neighbours (and is
    feasible wherever a is). rows: per neighbour, a's and b's costs over its live values."""
    if ua == INF:
        return True
    if ub == INF:
        return False
    total = ua - ub
    for ra, rb in rows:
        m = INF
        for x, y in zip(ra, rb, strict=True):
            if x == INF:
                continue  # a is infeasible there: nothing to compare
            if y == INF:
                return False  # b is infeasible where a is not
            if x - y < m:
                m = x - y
        if m == INF:
            return True  # a is infeasible with every value of this neighbour
        total += m
    return total >= 0


def _dominance(
    ks: dict[int, int], factors: list[Factor], n: int, deadline: float = INF
) -> tuple[_Model, dict[int, list[int]], list[int], int] | None:
    """Dead-end elimination on a pairwise core: drop every value that another value of
    the same block matches or beats in every context (soft neighbourhood substitution).
    Each removal keeps at least one optimal assignment, so the optimum is unchanged; of
    two interchangeable values the higher target goes. Blocks left with one value are
    conditioned into their neighbours.

    Returns the new model (constant: what the single-value blocks contribute), the kept
    old values per block, the blocks fixed to their only value, and how many values went;
    None when nothing can go.
    """
    unary: dict[int, list[float]] = {}
    pair: list[tuple[int, int, list[float]]] = []
    ks = {v: ks[v] for v in sorted({v for sc, _ in factors for v in sc})}
    nb: dict[int, list[tuple[int, list[float], bool]]] = {v: [] for v in ks}
    for sc, tab in factors:
        if len(sc) == 1:
            unary[sc[0]] = tab
        else:
            a, b = sc
            pair.append((a, b, tab))
            nb[a].append((b, tab, True))
            nb[b].append((a, tab, False))
    alive = {v: list(range(k)) for v, k in ks.items()}
    removed = 0
    for _ in range(4):
        if time.monotonic() > deadline:
            break
        changed = False
        for x in ks:
            ax = alive[x]
            if len(ax) < 2:
                continue
            kx = ks[x]
            ux = unary[x]

            def row(i: int, x: int = x, kx: int = kx) -> list[list[float]]:
                out = []
                for y, tab, x_rows in nb[x]:
                    ky = ks[y]
                    if x_rows:
                        out.append([tab[i * ky + j] for j in alive[y]])
                    else:
                        out.append([tab[j * kx + i] for j in alive[y]])
                return out

            rows = {i: row(i) for i in ax}
            for a in reversed(list(ax)):
                for b in ax:
                    if b != a and _dominated(ux[a], ux[b], list(zip(rows[a], rows[b], strict=True))):
                        ax.remove(a)
                        removed += 1
                        changed = True
                        break
        if not changed:
            break
    if not removed:
        return None
    new_ks: dict[int, int] = {}
    new_unary: list[list[float] | None] = [None] * n
    fixed: list[int] = []
    constant = 0.0
    for v in ks:
        av = alive[v]
        u = unary[v]
        if len(av) == 1:
            fixed.append(v)
        else:
            new_ks[v] = len(av)
        new_unary[v] = [u[i] for i in av]
    pairs: dict[tuple[int, int], list[float]] = {}
    for a, b, tab in pair:
        kb = ks[b]
        t = [tab[i * kb + j] for i in alive[a] for j in alive[b]]
        if a in new_ks and b in new_ks:
            pairs[(a, b)] = t
        elif a in new_ks:  # b has one value: a column
            new_unary[a] = list(map(_add, new_unary[a], t))  # type: ignore[arg-type]
        elif b in new_ks:
            new_unary[b] = list(map(_add, new_unary[b], t))  # type: ignore[arg-type]
        else:
            constant += t[0]
    for v in fixed:
        constant += new_unary[v][0]  # type: ignore[index]
        new_unary[v] = None
    model = _Model([], new_ks, new_unary, pairs, constant, {}, 0)
    return model, alive, fixed, removed


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


def _combine(x: int, facs: list[Factor], ks: dict[int, int] | list[int]) -> tuple[tuple[int, ...], list[float]]:
    """min over x of the sum of `facs` (all contain x): the new scope and its table.
    Back-substitution (`_decode`) recomputes the argmin of the one cell it needs."""
    kx = ks[x]
    if len(facs) == 1 and len(facs[0][0]) == 1:
        return (), [min(facs[0][1])]
    vs: set[int] = set()
    for sc, _ in facs:
        vs.update(sc)
    vs.discard(x)
    scope = tuple(sorted(vs))
    order = scope + (x,)
    total: list[float] | None = None
    for sc, tab in facs:
        if sc == order:
            total = list(tab) if total is None else list(map(_add, total, tab))
            continue
        idx = _expand(sc, order, ks)  # type: ignore[arg-type]
        if total is None:
            total = [tab[i] for i in idx]
        else:
            total = [a + tab[i] for a, i in zip(total, idx, strict=True)]
    assert total is not None
    if kx == 2:
        return scope, [a if a <= b else b for a, b in zip(total[0::2], total[1::2], strict=True)]
    mins = total[0::kx]
    for a in range(1, kx):
        mins = [c if c < m else m for c, m in zip(total[a::kx], mins, strict=True)]
    return scope, mins


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
        self.log: list[tuple[int, list[Factor]]] = []
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

    def take_factors(self, x: int) -> list[Any]:
        """Remove every factor that mentions x and return them as (scope, table)."""
        facs = []
        for f in list(self.var_facs.pop(x)):
            sc = self.scope.pop(f)
            facs.append((sc, self.tab.pop(f)))
            del self.by_scope[sc]
            for v in sc:
                if v != x:
                    del self.var_facs[v][f]
        return facs

    def eliminate(self, x: int) -> None:
        facs = self.take_factors(x)
        if not facs:
            # A block whose factors all vanished (cannot happen for model blocks, which
            # always carry a unary): any value will do, take the first.
            self.log.append((x, [((x,), [0.0] * self.ks[x])]))
            self.adj.pop(x)
            return
        scope, mins = _combine(x, facs, self.ks)
        kx = self.ks[x]
        cells = len(mins) * kx
        self.cells += cells
        if len(scope) > self.width:
            self.width = len(scope)
        self.counts[min(len(scope), 3)] += 1
        self.log.append((x, facs))
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


def _decode(log: list[tuple[int, list[Factor]]], ks: dict[int, int] | list[int], val: dict[int, int]) -> None:
    """Back-substitute in reverse elimination order (every other block of a bucket is
    decided by then): each block takes the lowest value minimising its bucket's sum,
    summed in the order the elimination summed it, so the minimum is the same float."""
    for x, facs in reversed(log):
        kx = ks[x]
        s: list[float] | None = None
        for sc, tab in facs:
            base = 0
            step = 0
            stride = 1
            for v in reversed(sc):
                if v == x:
                    step = stride
                else:
                    base += val[v] * stride
                stride *= ks[v]
            col = tab[base : base + step * kx : step] if step else [tab[base]] * kx
            s = col if s is None else list(map(_add, s, col))
        assert s is not None
        val[x] = s.index(min(s))


# ------------------------------------------------------------------ bounds


def mini_bucket_bound(
    ks: dict[int, int],
    factors: list[Factor],
    constant: float,
    table_cap: int = MINI_BUCKET_TABLE,
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
            sc, mins = _combine(x, members, ks)
            el.add(sc, mins)
        if el.constant == INF:
            return INF
    return el.constant


# ------------------------------------------------------------------ search


def _adjacency(factors: list[Factor]) -> dict[int, set[int]]:
    adj: dict[int, set[int]] = {}
    for sc, _ in factors:
        for v in sc:
            adj.setdefault(v, set()).update(w for w in sc if w != v)
    return adj


def _elim_cost(ks: dict[int, int] | list[int], adj: dict[int, set[int]], table_cap: int, total_cap: int) -> int:
    """Cells the generic elimination would build on this interaction graph (the same
    order `_Eliminator.run` takes), or -1 when a table or the total exceeds its cap."""
    adj = {v: set(a) for v, a in adj.items()}

    def key(x: int) -> int:
        c = ks[x]
        for y in adj[x]:
            c *= ks[y]
            if c > table_cap:
                return table_cap + 1
        return c

    cur = {v: key(v) for v in sorted(adj)}
    heap = [(k, v) for v, k in cur.items()]
    heap.sort()
    total = 0
    while heap:
        k, x = heappop(heap)
        if cur.get(x) != k:
            continue
        total += k
        if k > table_cap or total > total_cap:
            return -1
        del cur[x]
        nbx = adj.pop(x)
        for y in nbx:
            ay = adj[y]
            ay.discard(x)
            ay.update(nbx)
            ay.discard(y)
        for y in sorted(nbx):
            ky = key(y)
            if cur[y] != ky:
                cur[y] = ky
                heappush(heap, (ky, y))
    return total


def _mask_dominated(
    K: list[int], un: list[list[float] | None], nb: list[dict[int, list[float]] | None], xs: list[int]
) -> list[tuple[int, int]] | None:
    """Dead-end elimination in place (a dominated value's unary becomes infinite) for the
    blocks `xs`; returns the blocks left with one live value, or None if one has none."""
    forced = []
    for x in xs:
        ux = un[x]
        if ux is None:
            continue
        kx = K[x]
        vals = [i for i in range(kx) if ux[i] < INF]
        if not vals:
            return None
        if len(vals) > 1:
            ctx = []
            for y, t in nb[x].items():  # type: ignore[union-attr]
                ky = K[y]
                uy = un[y]
                live_y = [j for j in range(ky) if uy[j] < INF]  # type: ignore[index]
                ctx.append((t, ky, live_y, x < y))
            rows = {}
            for i in vals:
                r = []
                for t, ky, live_y, x_rows in ctx:
                    if x_rows:
                        r.append([t[i * ky + j] for j in live_y])
                    else:
                        r.append([t[j * kx + i] for j in live_y])
                rows[i] = r
            for a in reversed(list(vals)):
                for b in vals:
                    if b != a and _dominated(ux[a], ux[b], list(zip(rows[a], rows[b], strict=True))):
                        ux[a] = INF
                        vals.remove(a)
                        break
        if len(vals) == 1:
            forced.append((x, vals[0]))
    return forced


def _project(
    K: list[int], un: list[list[float] | None], nb: list[dict[int, list[float]] | None], xs: list[int], const: float
) -> float:
    """Soft arc consistency in place (an equivalence-preserving reparametrisation): move
    each pair table's row minima into the unary of the row's block, then each unary's
    minimum into the constant. Every assignment keeps its cost; the constant, a lower
    bound, only grows. Integer costs stay integers, so nothing is rounded."""
    add = _add
    for x in xs:
        nx = nb[x]
        ux = un[x]
        if nx is None or ux is None:
            continue
        kx = K[x]
        for y, t in list(nx.items()):
            ky = K[y]
            if x < y:
                mins = [min(t[i * ky : i * ky + ky]) for i in range(kx)]
            else:
                mins = [min(t[i::kx]) for i in range(kx)]
            if not any(0 < c < INF for c in mins):
                continue
            ux = [a + c for a, c in zip(ux, mins, strict=True)]
            sub = [c if c < INF else 0.0 for c in mins]
            if x < y:
                t2 = [t[i * ky + j] - sub[i] for i in range(kx) for j in range(ky)]
            else:
                t2 = [t[j * kx + i] - sub[i] for j in range(ky) for i in range(kx)]
            nx[y] = t2
            nb[y][x] = t2  # type: ignore[index]
        c = min(ux)
        if 0 < c < INF:
            const += c
            ux = [a - c for a in ux]
        un[x] = ux
    del add
    return const


def _diffuse(K: list[int], un: list[list[float] | None], nb: list[dict[int, list[float]] | None], xs: list[int]) -> None:
    """One sweep of min-sum diffusion (block-coordinate ascent on the dual of the LP
    relaxation), in place: at each block, its unary and the projections of its pair
    tables onto it are averaged. Equivalence-preserving, and it never lowers the bound
    `_harvest` reads off; a few dozen sweeps get close to the LP bound."""
    add = _add
    for x in xs:
        nx = nb[x]
        if not nx:
            continue
        kx = K[x]
        share_n = len(nx) + 1
        phis = []
        tot = un[x]
        for y, t in nx.items():
            ky = K[y]
            if x < y:
                ph = [min(t[i * ky : i * ky + ky]) for i in range(kx)]
            else:
                ph = [min(t[i::kx]) for i in range(kx)]
            phis.append(ph)
            tot = list(map(add, tot, ph))  # type: ignore[arg-type]
        share = [a / share_n for a in tot]  # type: ignore[union-attr]
        un[x] = share
        for (y, t), ph in zip(list(nx.items()), phis, strict=True):
            ky = K[y]
            delta = [sh - p if p < INF else 0.0 for sh, p in zip(share, ph, strict=True)]
            if x < y:
                t2 = [t[i * ky + j] + delta[i] for i in range(kx) for j in range(ky)]
            else:
                t2 = [t[j * kx + i] + delta[i] for j in range(ky) for i in range(kx)]
            nx[y] = t2
            nb[y][x] = t2  # type: ignore[index]


def _bound(K: list[int], un: list[list[float] | None], nb: list[dict[int, list[float]] | None], xs: list[int], const: float) -> float:
    """constant + each block's minimum over its values of its unary plus, for each pair
    it is the lower block of, the pair's row minimum (live partner values only)."""
    lb = const
    for x in xs:
        h = un[x]
        for y, t in nb[x].items():  # type: ignore[union-attr]
            if y > x:
                ky = K[y]
                uy = un[y]
                live_y = [j for j in range(ky) if uy[j] < INF]  # type: ignore[index]
                if len(live_y) == ky:
                    h = [a + min(t[i * ky : i * ky + ky]) for i, a in enumerate(h)]  # type: ignore[arg-type]
                else:
                    h = [a + min(t[i * ky + j] for j in live_y) for i, a in enumerate(h)]  # type: ignore[arg-type]
        lb += min(h)  # type: ignore[arg-type]
    return lb


class _PairSearch:
    """Depth-first branch and reduce over a pairwise core (PBQP's RN rule, made exact by
    backtracking).

    The root is reparametrised by min-sum diffusion until its bound stalls (close to the
    LP relaxation, which is tight or nearly so on most placement cores). A node conditions
    the block with the most neighbours on each live value (the incumbent's value first,
    then by reparametrised cost), applies R0/R1/R2 again, drops newly dominated values
    around the conditioned block, diffuses a few sweeps, and is solved by dynamic
    programming once its remaining elimination fits `leaf_cells`. With integer costs a
    node is pruned once its bound exceeds the incumbent minus one.
    """

    def __init__(
        self,
        ks: dict[int, int],
        factors: list[Factor],
        constant: float,
        best: float,
        hint: dict[int, int],
        deadline: float,
        leaf_cells: int,
        integral: bool,
    ) -> None:
        self.vars = sorted({v for sc, _ in factors for v in sc})
        loc = {v: i for i, v in enumerate(self.vars)}
        m = len(self.vars)
        self.m = m
        self.K = [ks[v] for v in self.vars]
        self.integral = integral
        un: list[list[float] | None] = [None] * m
        nb: list[dict[int, list[float]] | None] = [{} for _ in range(m)]
        for sc, tab in factors:
            if len(sc) == 1:
                un[loc[sc[0]]] = list(tab)
            else:
                a, b = loc[sc[0]], loc[sc[1]]
                nb[a][b] = tab  # type: ignore[index]
                nb[b][a] = tab  # type: ignore[index]
        self.best = best
        self.best_val: dict[int, int] | None = None
        self.hint = {loc[v]: a for v, a in hint.items() if v in loc}
        self.deadline = deadline
        self.leaf_cells = leaf_cells
        self.nodes = 0
        self.open_lb = INF
        self.aborted = False
        self.counts = [0, 0, 0]
        self.sweeps = 0
        self.held = 0  # table entries held by the states on the current path
        self.out_of_memory = False
        xs = list(range(m))
        lb = _bound(self.K, un, nb, xs, constant)
        for _ in range(ROOT_SWEEPS // 8):
            if self.prune(lb) or time.monotonic() > deadline:
                break
            for _ in range(8):
                _diffuse(self.K, un, nb, xs)
                self.sweeps += 1
                if time.monotonic() > deadline:
                    break
            new = _bound(self.K, un, nb, xs, constant)
            if new - lb <= 1e-4 * max(1.0, abs(new)):
                lb = max(lb, new)
                break
            lb = max(lb, new)
        self.root_lb = lb
        self.root = (un, nb, xs, constant)

    def prune(self, lb: float) -> bool:
        """No completion of this node can beat the incumbent."""
        if lb == math.inf:
            return True  # an infeasible node: nothing below it completes
        if self.integral:
            return math.ceil(lb - 1e-6) >= self.best
        return lb >= self.best

    def run(self) -> None:
        un, nb, alive, const = self.root
        try:
            self._node(un, nb, alive, const, [], self.root_lb, [])
        except _Timeout:
            self.aborted = True

    def _leaf(self, const: float, val: dict[int, int], ops: list, path: list) -> None:
        # Reparametrised sums of an integer objective carry rounding noise: round it off.
        value = float(round(const)) if self.integral else const
        if value >= self.best:
            return
        self.best = value
        K = self.K
        for op in reversed(ops):
            if op[0] == "r":
                _undo_reductions(op[1], K, val)
            else:
                val[op[1]] = op[2]
        for pops, v, a in reversed(path):
            val[v] = a
            for op in reversed(pops):
                if op[0] == "r":
                    _undo_reductions(op[1], K, val)
                else:
                    val[op[1]] = op[2]
        self.best_val = {self.vars[i]: x for i, x in val.items()}

    def _node(
        self,
        un: list[list[float] | None],
        nb: list[dict[int, list[float]] | None],
        alive: list[int],
        const: float,
        path: list,
        lb_hint: float,
        dirty: list[int],
    ) -> None:
        if time.monotonic() > self.deadline:
            self.open_lb = min(self.open_lb, lb_hint)
            raise _Timeout
        self.nodes += 1
        # Every node on the path holds its own copy of the state: bound their total.
        size = len(alive) + sum(len(nb[x] or ()) for x in alive)
        if self.held + size > SEARCH_MEMORY:
            self.out_of_memory = True
            self.open_lb = min(self.open_lb, lb_hint)
            raise _Timeout
        self.held += size
        try:
            self._expand(un, nb, alive, const, path, dirty)
        finally:
            self.held -= size

    def _expand(
        self,
        un: list[list[float] | None],
        nb: list[dict[int, list[float]] | None],
        alive: list[int],
        const: float,
        path: list,
        dirty: list[int],
    ) -> None:
        K = self.K
        m = self.m
        add = _add
        ops: list = []
        while True:
            const, rlog = _reduce_core(K, un, nb, alive, m, const, self.counts)
            if rlog:
                ops.append(("r", rlog))
            if self.prune(const):
                return
            alive = [x for x in alive if nb[x] is not None]
            if not alive or not dirty:
                break
            forced = _mask_dominated(K, un, nb, [x for x in dirty if nb[x] is not None])
            if forced is None:
                return
            dirty = []
            for x, a in forced:
                nx = nb[x]
                if nx is None:
                    continue
                ux = un[x]
                const += ux[a]  # type: ignore[index]
                kx = K[x]
                for y, t in nx.items():
                    ky = K[y]
                    row = t[a * ky : a * ky + ky] if x < y else t[a::kx]
                    un[y] = list(map(add, un[y], row))  # type: ignore[arg-type]
                    del nb[y][x]  # type: ignore[union-attr]
                    dirty.append(y)
                nb[x] = None
                un[x] = None
                ops.append(("f", x, a))
            alive = [x for x in alive if nb[x] is not None]
            if self.prune(const):
                return
            if not dirty:
                break
        if not alive:
            self._leaf(const, {}, ops, path)
            return
        adj = {x: set(nb[x]) for x in alive}  # type: ignore[arg-type]
        if _elim_cost(K, adj, self.leaf_cells, self.leaf_cells) >= 0:
            factors: list[Factor] = [((x,), un[x]) for x in alive]  # type: ignore[misc]
            for x in alive:
                for y, t in nb[x].items():  # type: ignore[union-attr]
                    if x < y:
                        factors.append(((x, y), t))
            el = _Eliminator(K, factors, const)  # type: ignore[arg-type]
            el.run(self.leaf_cells, self.leaf_cells, None)
            val: dict[int, int] = {}
            _decode(el.log, K, val)  # type: ignore[arg-type]
            self._leaf(el.constant, val, ops, path)
            return
        for _ in range(NODE_SWEEPS):
            _diffuse(K, un, nb, alive)
        self.sweeps += NODE_SWEEPS
        lb = _bound(K, un, nb, alive, const)
        if self.prune(lb):
            return
        v = max(alive, key=lambda y: (len(nb[y]), -y))  # type: ignore[arg-type]
        uv = un[v]
        kv = K[v]
        est = list(uv)  # type: ignore[arg-type]
        for y, t in nb[v].items():  # type: ignore[union-attr]
            ky = K[y]
            if v < y:
                est = [a + min(t[i * ky : i * ky + ky]) for i, a in enumerate(est)]
            else:
                est = [a + min(t[i::kv]) for i, a in enumerate(est)]
        first = self.hint.get(v)
        order = sorted((a for a in range(kv) if est[a] < INF), key=lambda a: (a != first, est[a], a))
        rest = [x for x in alive if x != v]
        for idx, a in enumerate(order):
            if self.prune(lb):
                return
            un2 = [u if u is None else u[:] for u in un]
            nb2 = [d if d is None else dict(d) for d in nb]
            c2 = const + uv[a]  # type: ignore[index]
            dirty2 = []
            for y, t in nb[v].items():  # type: ignore[union-attr]
                ky = K[y]
                row = t[a * ky : a * ky + ky] if v < y else t[a::kv]
                un2[y] = list(map(add, un2[y], row))  # type: ignore[arg-type]
                del nb2[y][v]  # type: ignore[union-attr]
                dirty2.append(y)
            nb2[v] = None
            un2[v] = None
            try:
                self._node(un2, nb2, rest, c2, path + [(ops, v, a)], lb, dirty2)
            except _Timeout:
                if idx + 1 < len(order) and not self.prune(lb):
                    self.open_lb = min(self.open_lb, lb)
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


def lower_bound(g: Graph, domains: tuple[int, ...], time_limit: float) -> float:
    """A proven lower bound on the optimum, without the search: the reductions and the
    dynamic programming when the core fits (then it is the optimum itself), else the
    best of the mini-bucket and min-sum diffusion bounds on the core. For a heuristic
    answer's certified gap; `inf` when the plan is infeasible.

    >>> from placement_cli.model import Plan
    >>> from placement_cli.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0, "a": 1}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]}))
    >>> lower_bound(g, g.domain, time_limit=1.0)
    5.0
    """
    with gc_paused():
        return _solve(g, domains, time_limit, None, search=False).lower_bound


def _solve(
    g: Graph, domains: tuple[int, ...], time_limit: float, incumbent: tuple[int, ...] | None, search: bool = True
) -> ExactOutcome:
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

    # Stages of exact simplification, each in its own value numbering: the reductions,
    # then (while it removes anything) dead-end elimination on the core followed by the
    # reductions again. stages: (reduction log, domain sizes, kept values, fixed blocks).
    n = g.n_blocks
    stages: list[tuple[list[Reduction], dict[int, int], dict[int, list[int]] | None, list[int]]] = []
    counts = [0, 0, 0]
    if REDUCTIONS:
        const, rlog, core_factors, counts = _reduce(model, n)
    else:
        const, rlog, core_factors = model.constant, [], model.factors()
    stages.append((rlog, ks, None, []))
    cur_ks = ks
    removed = 0
    dp_cost = -1
    while REDUCTIONS and core_factors and const < INF:
        dp_cost = _elim_cost(cur_ks, _adjacency(core_factors), TABLE_BUDGET, DP_BUDGET)
        if 0 <= dp_cost <= CHEAP_DP:
            break  # dynamic programming is cheap already: dominance would cost more
        dp_cost = -1
        d = _dominance(cur_ks, core_factors, n, deadline)
        if d is None:
            break
        m2, keep, fixed2, r = d
        removed += r
        m2.constant += const
        const, rlog, core_factors, c2 = _reduce(m2, n)
        counts = [a + b for a, b in zip(counts, c2, strict=True)]
        stages.append((rlog, m2.ks, keep, fixed2))
        cur_ks = m2.ks
        for b in list(inc_val):
            if b in keep:
                old = inc_val.pop(b)
                if old in keep[b] and b in cur_ks:
                    inc_val[b] = keep[b].index(old)
            else:
                inc_val.pop(b)
    stats["dominated_values"] = removed
    stats["r0"], stats["r1"], stats["r2"] = counts
    stats["treewidth"] = 2 if counts[2] else 1 if counts[1] else 0

    def finish(val: dict[int, int]) -> tuple[int, ...]:
        for rlog, ks_s, keep, fixed_s in reversed(stages):
            _undo_reductions(rlog, ks_s, val)
            for b in fixed_s:
                val[b] = 0
            if keep is not None:
                for b, kept in keep.items():
                    val[b] = kept[val[b]]
        for b, a in model.fixed.items():
            val[b] = a
        out = [UNASSIGNED] * n
        for b in range(n):
            if g.live[b]:
                out[b] = model.values[b][val[b]]
        return tuple(out)

    if const == INF:
        return ExactOutcome(None, True, True, INF, stats)
    if not core_factors:
        a = finish({})
        return ExactOutcome(a, True, False, _total(g, a), stats)

    # The core: every block has three or more neighbours. Dynamic programming over the
    # tree decomposition its elimination order induces, when that fits the budget.
    adj = _adjacency(core_factors)
    stats["core_blocks"] = len(adj)
    timed_out = False
    lb = const + math.fsum(min(t) for _, t in core_factors)
    if dp_cost < 0:
        dp_cost = _elim_cost(cur_ks, adj, TABLE_BUDGET, DP_BUDGET)
    if dp_cost >= 0:
        el = _Eliminator(cur_ks, core_factors, const)
        try:
            el.run(TABLE_BUDGET, TOTAL_BUDGET, deadline)
        except _Timeout:
            timed_out = True
        stats["rn"] = el.counts[3]
        stats["treewidth"] = max(stats["treewidth"], el.width)
        stats["dp_cells"] = el.cells
        if el.constant == INF:
            return ExactOutcome(None, True, True, INF, stats)
        if not timed_out:
            val: dict[int, int] = {}
            _decode(el.log, cur_ks, val)
            a = finish(val)
            return ExactOutcome(a, True, False, _total(g, a), stats)
        lb = max(lb, el.bound())

    # Too wide (or out of time): bounds, then branch and reduce while time remains.
    best_a: tuple[int, ...] | None = None
    best_cost = inc_cost
    if inc_cost < INF and incumbent is not None:
        best_a = tuple(incumbent)
    proven = False
    if lb == INF:
        return ExactOutcome(None, True, True, INF, stats)
    if not timed_out and lb < best_cost:
        ps = _PairSearch(cur_ks, core_factors, const, best_cost, inc_val, deadline, LEAF_DP, _integral(g))
        lb = max(lb, ps.root_lb)
        stats["diffusion_sweeps"] = ps.sweeps
        if search:
            ps.run()
            stats["search_nodes"] = ps.nodes
            stats["diffusion_sweeps"] = ps.sweeps
            if ps.out_of_memory:
                stats["search_out_of_memory"] = 1
            if ps.best_val is not None:
                a = finish(dict(ps.best_val))
                total = _total(g, a)
                if total < best_cost or best_a is None:
                    best_a, best_cost = a, total
            if not ps.aborted:
                proven = True
            else:
                lb = max(lb, min(ps.best, ps.open_lb))
        elif time.monotonic() < deadline:
            # Bound only: the diffusion stalled early, the mini-bucket bound may add.
            lb = max(lb, mini_bucket_bound(cur_ks, core_factors, const, MINI_BUCKET_TABLE, deadline))
            stats["mini_bucket"] = 1
    elif lb >= best_cost:
        proven = True
    if proven:
        if best_a is None:
            return ExactOutcome(None, True, True, INF, stats)
        return ExactOutcome(best_a, True, False, best_cost, stats)
    lb = _safe(lb, model, g)
    if best_a is not None and lb >= best_cost:
        return ExactOutcome(best_a, True, False, best_cost, stats)
    return ExactOutcome(best_a, False, False, lb, stats)


def _total(g: Graph, a: tuple[int, ...]) -> float:
    c = evaluate(g, a)
    assert c is not None, "exact solver produced an infeasible assignment"
    return c.total


def _safe(lb: float, model: _Model, g: Graph) -> float:
    """A bound safe against float rounding: the diffusion's averages and the different
    summation orders of the bound and the objective may be off in the last bits."""
    if lb in (INF, -INF):
        return lb
    if _integral(g):
        # The optimum is an integer: round the bound up (past any float noise).
        return float(math.ceil(lb - 1e-6))
    return lb - abs(lb) * 1e-12 * (model.n_terms + 1)
