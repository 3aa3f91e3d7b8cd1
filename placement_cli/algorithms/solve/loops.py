"""The cyclic super blocks of the seed heuristic (`solve.heuristic`): each loop is a
CSP solved under its boundary context (the targets of its assigned outside neighbours)
by the branch-and-bound engine with a node limit, polished by one-member moves when the
limit cut it short, and cached per context.
"""

from __future__ import annotations

from placement_cli.algorithms.solve.budget import Budget
from placement_cli.algorithms.solve.instance import INF, Instance, bits_of
from placement_cli.algorithms.solve.search import Sub, search

_MISSING = object()
# Loop CSP results cached per boundary context, over all loops of a solve: the memory
# bound of the cache (each entry is a few small tuples). Past it, results are recomputed.
CACHE_ENTRIES = 200_000


class Cyclic:
    """A cyclic super block: its CSP structure, boundary and cache."""

    __slots__ = ("members", "sub", "boundary", "cache")

    def __init__(
        self, inst: Instance, members: tuple[int, ...], header: int | None, sb_of: list[int], s: int
    ) -> None:
        n_targets = inst.n_targets
        self.members = members
        self.sub = Sub(inst, members, [0 if b == header else 1 for b in members])
        # (member slot, outside block, table member->outside, member targets allowed per outside target)
        self.boundary: list[tuple[int, int, tuple[float | None, ...], tuple[int, ...]]] = []
        for v, b in enumerate(members):
            for n, tb in zip(inst.nbr[b], inst.tab[b], strict=True):
                if sb_of[n] != s:
                    inc = tuple(
                        sum(1 << t for t in range(n_targets) if tb[t * n_targets + te] is not None)
                        for te in range(n_targets)
                    )
                    self.boundary.append((v, n, tb, inc))
        self.cache: dict[
            tuple[tuple[int, ...], tuple[tuple[int, int], ...]], tuple[int, ...] | None
        ] = {}


class LoopState:
    """Retry state of a cyclic super block on the assignment stack: per-member target
    heaps (by block cost plus boundary cost), what has been consumed, what is forced."""

    __slots__ = ("ctx", "heaps", "ptr", "forced", "values", "est")

    def __init__(
        self,
        ctx: tuple[int, ...],
        dom: list[int],
        unary: list[list[float]],
        values: tuple[int, ...],
    ) -> None:
        self.ctx = ctx
        self.heaps = [sorted((unary[v][t], t) for t in bits_of(d)) for v, d in enumerate(dom)]
        self.est = unary
        self.ptr = [0] * len(dom)
        self.forced: dict[int, int] = {}
        self.values = values


class LoopCsp:
    """The loop CSP part of `heuristic.Seed` (a mixin: the state is the seed's)."""

    inst: Instance
    cyc: list[Cyclic | None]
    stats: dict[str, int]
    csp_node_limit: int
    budget: Budget | None
    cached: int

    def _context(self, s: int, ctx: tuple[int, ...]) -> tuple[list[int], list[list[float]]]:
        """Member domains narrowed by the assigned outside neighbours, and member costs
        including the edges to them (the boundary context of the seed)."""
        inst = self.inst
        n_targets = inst.n_targets
        cyc = self.cyc[s]
        assert cyc is not None
        dom = [inst.dom[b] for b in cyc.members]
        unary = [list(inst.unary[b]) for b in cyc.members]
        for (v, _, _, inc), te in zip(cyc.boundary, ctx, strict=True):
            if te >= 0:
                dom[v] &= inc[te]
        for (v, _, tb, _), te in zip(cyc.boundary, ctx, strict=True):
            if te >= 0:
                row = unary[v]
                for t in bits_of(dom[v]):
                    row[t] += tb[t * n_targets + te]  # type: ignore[operator]
        return dom, unary

    def _csp(self, s: int, ctx: tuple[int, ...], forced: dict[int, int]) -> tuple[int, ...] | None:
        """Best member targets for this boundary context (B&B, cached by context)."""
        cyc = self.cyc[s]
        assert cyc is not None
        key = (ctx, tuple(sorted(forced.items())))
        hit = cyc.cache.get(key, _MISSING)
        if hit is not _MISSING:
            self.stats["cache_hits"] += 1
            return hit  # type: ignore[return-value]
        dom, unary = self._context(s, ctx)
        for v, t in forced.items():
            dom[v] &= 1 << t
        f = search(
            cyc.sub,
            dom,
            unary,
            mac=False,
            bound=True,
            node_limit=self.csp_node_limit,
            budget=self.budget,
        )
        self.stats["csp_solves"] += 1
        self.stats["csp_nodes"] += f.nodes
        values = f.values
        if f.exhausted:
            self.stats["csp_proven"] += 1
        elif values is not None:
            values = self._polish(cyc.sub, dom, unary, values)
        elif self.budget is not None and self.budget.reason is not None:
            return None  # cut short by the budget: not an answer for this context
        if self.cached < CACHE_ENTRIES:
            cyc.cache[key] = values
            self.cached += 1
        return values

    def _polish(
        self, sub: Sub, dom: list[int], unary: list[list[float]], values: tuple[int, ...]
    ) -> tuple[int, ...]:
        """One-member moves inside a loop whose B&B hit its node limit: the search is
        depth first, so its early choices are the ones it never got back to."""
        n_targets = sub.n_targets
        tol = self.inst.tol
        val = list(values)
        for _ in range(50):
            changed = False
            for v in range(len(val)):
                d = dom[v]
                if d & (d - 1) == 0:
                    continue
                ns = sub.nbr[v]
                tbs = sub.tab[v]
                best_t = -1
                best_c = INF
                cur_c = INF
                for t in bits_of(d):
                    c = unary[v][t]
                    for n, tb in zip(ns, tbs, strict=True):
                        x = tb[t * n_targets + val[n]]
                        if x is None:
                            c = INF
                            break
                        c += x
                    if t == val[v]:
                        cur_c = c
                    if c < best_c:
                        best_c, best_t = c, t
                if best_t != val[v] and best_c < cur_c - tol:
                    val[v] = best_t
                    changed = True
            if not changed:
                break
        return tuple(val)

    def _local(
        self, s: int, unary: list[list[float]], values: tuple[int, ...] | list[int]
    ) -> float:
        """Members' costs with boundary edges (via `unary`) plus internal edges."""
        cyc = self.cyc[s]
        assert cyc is not None
        sub = cyc.sub
        n_targets = sub.n_targets
        c = 0.0
        for v, t in enumerate(values):
            c += unary[v][t]
        for a, i in sub.pairs:
            x = sub.tab[a][i][values[a] * n_targets + values[sub.nbr[a][i]]]
            c += INF if x is None else x
        return c
