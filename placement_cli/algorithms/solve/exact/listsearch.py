"""The search's nodes on lists: condition a block on each of its values, reduce, bound,
branch, and solve a small node by dynamic programming.

A node applies the reductions R0/R1/R2 (`reductions.py`) and dead-end elimination
(`dominance.py`) around the blocks whose degree fell, then either solves what is left by
bucket elimination (`elimination.py`) once it fits `leaf_cells`, or diffuses a few
sweeps (`bounds.py`, or `dense.py` on large nodes), removes values by reduced-cost fixing
while that removes any, rounds it (`primal.py`) and branches on the block with the most
neighbours, the incumbent's value first. The root, the incumbent and the bound tests
are `search.PairSearch`'s; the upper levels on the root's arrays are `arraysearch.py`'s.
"""

from __future__ import annotations

import time
from operator import add as _add

from placement_cli.algorithms.solve.budget import ExactBudget
from placement_cli.algorithms.solve.exact.bounds import bound_of, diffuse
from placement_cli.algorithms.solve.exact.core import Core
from placement_cli.algorithms.solve.exact.dense import DenseCore, numpy_or_none
from placement_cli.algorithms.solve.exact.dominance import mask_dominated
from placement_cli.algorithms.solve.exact.elimination import OrderedEliminator, decode, elim_cost
from placement_cli.algorithms.solve.exact.model import INF, Factor, Timeout
from placement_cli.algorithms.solve.exact.primal import list_arcs, round_and_polish
from placement_cli.algorithms.solve.exact.reductions import reduce_core


def condition(core: Core, x: int, a: int, dirty: list[int]) -> float:
    """Fix block `x` of the core to its value `a`, in place: each neighbour's table row
    (or column) at `a` is added to that neighbour's unary costs, the tables go, the
    neighbours are appended to `dirty` (their degree fell); returns `x`'s own cost at
    `a`, which leaves the core as a constant.

    >>> t = [0.0, 5.0, 7.0, 0.0]
    >>> core = Core([2, 2], [[1.0, 2.0], [0.0, 0.0]], [{1: t}, {0: t}])
    >>> dirty = []; condition(core, 0, 1, dirty), core.un, core.nb, dirty
    (2.0, [None, [7.0, 0.0]], [None, {}], [1])
    """
    sizes, un, nb = core.sizes, core.un, core.nb
    kx = sizes[x]
    for y, t in core.tables(x).items():
        ky = sizes[y]
        row = t[a * ky : a * ky + ky] if x < y else t[a::kx]
        uy, ny = un[y], nb[y]
        assert uy is not None and ny is not None
        un[y] = list(map(_add, uy, row))
        del ny[x]
        dirty.append(y)
    cost = core.unary(x)[a]
    nb[x] = None
    un[x] = None
    return cost


class ListNodes:
    """The list search's node steps, mixed into `search.PairSearch` (which provides
    `prune`, `leaf`, `_fix`, the counters and the budget)."""

    sizes: list[int]
    m: int
    nodes: int
    sweeps: int
    held: int
    open_lb: float
    out_of_memory: bool
    best: float
    deadline: float
    integral: bool
    hint: dict[int, int]
    budget: ExactBudget
    leaf_cells: int
    counts: list[int]

    def node(
        self,
        core: Core,
        alive: list[int],
        const: float,
        path: list,
        lb_hint: float,
        dirty: list[int],
    ) -> None:
        if time.monotonic() > self.deadline:
            self.open_lb = min(self.open_lb, lb_hint)
            raise Timeout
        self.nodes += 1
        # Every node on the path holds its own copy of the state: bound their total.
        nb = core.nb
        size = len(alive) + sum(len(nb[x] or ()) for x in alive)
        if self.held + size > self.budget.search.memory:
            self.out_of_memory = True
            self.open_lb = min(self.open_lb, lb_hint)
            raise Timeout
        self.held += size
        try:
            self._expand(core, alive, const, path, dirty)
        finally:
            self.held -= size

    def _expand(
        self,
        core: Core,
        alive: list[int],
        const: float,
        path: list,
        dirty: list[int],
    ) -> None:
        m = self.m
        nb = core.nb
        ops: list = []
        first = True
        lb = INF
        while True:
            changed = False
            while True:
                const, rlog = reduce_core(core, alive, m, const, self.counts)
                if rlog:
                    ops.append(("r", rlog))
                    changed = True
                if self.prune(const):
                    return
                alive = [x for x in alive if nb[x] is not None]
                if not alive or not dirty:
                    break
                forced = mask_dominated(core, [x for x in dirty if nb[x] is not None])
                if forced is None:
                    return
                dirty = []
                for x, a in forced:
                    if nb[x] is None:
                        continue
                    const += condition(core, x, a, dirty)
                    ops.append(("f", x, a))
                    changed = True
                alive = [x for x in alive if nb[x] is not None]
                if self.prune(const):
                    return
                if not dirty:
                    break
            if not first and not changed:
                break  # the fixing removed values, but nothing to reduce: branch
            got = self._bound_node(core, alive, const, ops, path, first)
            if got is None:
                return  # solved or pruned
            lb, dirty = got
            first = False
            if not dirty:
                break
            # Reduced-cost fixing removed values: the blocks that lost one are masked
            # and reduced again (a block left with one value is conditioned away), and
            # if that changed the core, it is bounded again.
        self._branch(core, alive, const, ops, path, lb)

    def _bound_node(
        self,
        core: Core,
        alive: list[int],
        const: float,
        ops: list,
        path: list,
        primal: bool,
    ) -> tuple[float, list[int]] | None:
        """Solve the node by dynamic programming when it is small, else diffuse and bound
        it (and round it when `primal`), with reduced-cost fixing between rounds of
        sweeps while it removes values; None when the node is solved or pruned, else
        the bound and the blocks that lost values."""
        sizes = self.sizes
        if not alive:
            self.leaf(const, {}, ops, path)
            return None
        tables = [core.tables(x) for x in alive]
        adj = {x: set(nx) for x, nx in zip(alive, tables, strict=True)}
        order: list[int] = []
        if elim_cost(sizes, adj, self.leaf_cells, self.leaf_cells, order, copy=False) >= 0:
            factors: list[Factor] = [((x,), core.unary(x)) for x in alive]
            for x, nx in zip(alive, tables, strict=True):
                for y, t in nx.items():
                    if x < y:
                        factors.append(((x, y), t))
            el = OrderedEliminator(sizes, factors, const, order)
            el.run(None)
            val: dict[int, int] = {}
            decode(el.log, sizes, val)
            self.leaf(el.constant, val, ops, path)
            return None
        np = numpy_or_none() if len(alive) >= self.budget.diffusion.dense_min_blocks else None
        fixing = self.budget.search.fixing
        dirty: list[int] = []
        if np is not None:
            dense = DenseCore(
                np,
                core,
                alive,
                self.budget.diffusion.relax,
                len(alive) <= self.budget.diffusion.dsatur_max_blocks,
            )
            while True:
                for _ in range(self.budget.diffusion.node_sweeps):
                    dense.sweep()
                self.sweeps += self.budget.diffusion.node_sweeps
                lb = dense.bound(const)
                if self.prune(lb) or not fixing or self.best == INF:
                    break
                # Values the bound rules out go; the sweeps then carry that further.
                got = dense.fix(lb, self.best, self.integral)
                if not got:
                    break
                dirty += got
            if primal and self.budget.search.primal and not self.prune(lb):
                # The node's own rounding (see below), on the arrays.
                self.leaf(const, dict(zip(alive, dense.round_icm(), strict=True)), ops, path)
                primal = False
            dense.write_back(core)
        else:
            hs: dict[int, list[float]] = {}
            for _ in range(self.budget.diffusion.node_sweeps):
                diffuse(core, alive)
            self.sweeps += self.budget.diffusion.node_sweeps
            lb = bound_of(core, alive, const, hs)
            if fixing and not self.prune(lb):
                dirty = self._fix(lb, hs, core, alive)
        if self.prune(lb):
            return None
        # The node's own rounding: once it reaches the optimum, every open node whose
        # bound certifies it is pruned, instead of diving on to a leaf for it.
        if primal and self.budget.search.primal:
            la = list_arcs(core, alive)
            pv = round_and_polish(sorted(alive, key=lambda x: (-len(la[x] or ()), x)), core.un, la)
            self.leaf(const, pv, ops, path)
            if self.prune(lb):
                return None
        return lb, sorted(set(dirty))

    def _branch(
        self,
        core: Core,
        alive: list[int],
        const: float,
        ops: list,
        path: list,
        lb: float,
    ) -> None:
        """Condition the block with the most neighbours on each of its live values."""
        sizes = self.sizes
        nb = core.nb
        v = max(alive, key=lambda y: (len(nb[y] or ()), -y))
        kv = sizes[v]
        est = list(core.unary(v))
        for y, t in core.tables(v).items():
            ky = sizes[y]
            if v < y:
                est = [a + min(t[i * ky : i * ky + ky]) for i, a in enumerate(est)]
            else:
                est = [a + min(t[i::kv]) for i, a in enumerate(est)]
        first = self.hint.get(v)
        order = sorted(
            (a for a in range(kv) if est[a] < INF), key=lambda a: (a != first, est[a], a)
        )
        rest = [x for x in alive if x != v]
        for idx, a in enumerate(order):
            if self.prune(lb):
                return
            core2 = core.copy()
            dirty2: list[int] = []
            c2 = const + condition(core2, v, a, dirty2)
            try:
                self.node(core2, rest, c2, path + [(ops, v, a)], lb, dirty2)
            except Timeout:
                if idx + 1 < len(order) and not self.prune(lb):
                    self.open_lb = min(self.open_lb, lb)
                raise

    # Provided by `PairSearch`.
    def prune(self, lb: float) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def leaf(
        self, const: float, val: dict[int, int], ops: list, path: list
    ) -> None:  # pragma: no cover
        raise NotImplementedError

    def _fix(
        self, lb: float, hs: dict[int, list[float]], core: Core, xs: list[int]
    ) -> list[int]:  # pragma: no cover
        raise NotImplementedError
