"""The search's upper levels on the root's arrays: a child node is its parent's
reparametrisation with one block's other values made infinite, never a rebuilt core.

Measured on random cores of 100 to 130 blocks (200-block plans, 5 to 7 targets): a node of
the list search (`listsearch.ListNodes.node`) spent 5 to 7 ms, of which two diffusion
sweeps were 0.4 ms; the rest was building the padded arrays and the colouring again from
lists (`DenseCore.__init__`), writing them back, dead-end elimination around the
conditioned block, the reductions and the symbolic elimination cost. Here a node copies
two arrays (`U`, `M`), makes the branching block's other values `inf`, and goes on from
its parent's messages (warm start): sweeps, bound, reduced-cost fixing and rounding run
on the same `DenseCore`, whose tables, colouring and layout never change.

Conditioning by an infinite unary is exact: the reparametrisation keeps every
assignment's cost, and an assignment using a value made infinite costs `inf`, so the
bound is a bound of the assignments below the node. The nodes keep no reductions and no
dynamic programming; once the blocks still holding two or more values are few or sparse
enough for the dynamic programming (their symbolic elimination fits the leaf budget),
the node is handed to the list search (`listsearch.py`): written back to lists, it
conditions away every block left with one value, reduces, and finishes by dynamic
programming.

References: the bounds are min-sum diffusion's (Werner 2007, see `bounds.py`); `peel`
is the reductions R0/R1/R2 of Scholz & Eckstein 2002 (see `reductions.py`) on the
interaction graph alone.
"""

from __future__ import annotations

import time
from typing import Any

from placement_cli.algorithms.solve.budget import ExactBudget
from placement_cli.algorithms.solve.exact.core import Core, Tables
from placement_cli.algorithms.solve.exact.dense import DenseCore
from placement_cli.algorithms.solve.exact.elimination import elim_cost
from placement_cli.algorithms.solve.exact.model import INF, Timeout


def peel(adj: dict[int, set[int]]) -> None:
    """R0/R1/R2 on the interaction graph alone, in place: a block with at most two
    neighbours goes, its two neighbours (if two) become adjacent. Degrees never grow.

    >>> adj = {0: {1, 2}, 1: {0, 2, 3}, 2: {0, 1, 3}, 3: {1, 2, 4}, 4: {3}}
    >>> peel(adj); adj
    {}
    >>> adj = {i: {j for j in range(4) if j != i} for i in range(4)}
    >>> peel(adj); sorted(adj)
    [0, 1, 2, 3]
    """
    queue = [x for x in adj if len(adj[x]) <= 2]
    while queue:
        x = queue.pop()
        ns = adj.get(x)
        if ns is None or len(ns) > 2:
            continue
        del adj[x]
        for y in ns:
            adj[y].discard(x)
        if len(ns) == 2:
            a, b = ns
            adj[a].add(b)
            adj[b].add(a)
        queue += [y for y in ns if len(adj[y]) <= 2]


class ArrayNodes:
    """The array search's node steps, mixed into `search.PairSearch` (which provides
    `prune`, `leaf`, `node`, the counters and the budget)."""

    dense: DenseCore | None
    sizes: list[int]
    m: int
    nodes: int
    sweeps: int
    held: int
    open_lb: float
    out_of_memory: bool
    best: float
    deadline: float
    constant0: float
    integral: bool
    hint: dict[int, int]
    budget: ExactBudget
    undecided: int

    def array_node(self, U: Any, M: Any, lb_hint: float, first: bool = False) -> None:
        """One node on the arrays `U`, `M` (the node's own copies); `first`: the root."""
        if time.monotonic() > self.deadline:
            self.open_lb = min(self.open_lb, lb_hint)
            raise Timeout
        self.nodes += 1
        # Every node on the path holds its own copy of the state: bound their total (in
        # the list search's units: one per block and one per arc).
        size = U.shape[0] + M.shape[0]
        if self.held + size > self.budget.search.memory:
            self.out_of_memory = True
            self.open_lb = min(self.open_lb, lb_hint)
            raise Timeout
        self.held += size
        try:
            self._aexpand(U, M, lb_hint, first)
        finally:
            self.held -= size

    def _aexpand(self, U: Any, M: Any, lb_hint: float, first: bool) -> None:
        d = self.dense
        assert d is not None
        d.U, d.M = U, M
        budget = self.budget
        if first:
            # The root's own fixing is done: the list search may take it as it is.
            adj0 = self._undecided(U)
            if adj0 is not None and self._to_lists(adj0):
                self._hand_to_lists(lb_hint)
                return
        const = self.constant0
        while True:
            for _ in range(budget.diffusion.node_sweeps):
                d.sweep()
            self.sweeps += budget.diffusion.node_sweeps
            lb = d.bound(const)
            if self.prune(lb) or not budget.search.fixing or self.best == INF:
                break
            # Values the bound rules out go; the sweeps then carry that further.
            if not d.fix(lb, self.best, self.integral):
                break
        if self.prune(lb):
            return
        ixs = d.ixs
        if budget.search.primal:
            self.leaf(0.0, dict(zip(d.xs, d.round_icm(), strict=True)), [], [])
            if self.prune(lb):
                return
        adj = self._undecided(U)
        if adj is None:
            # Every block has one value left: that assignment is the node's only one.
            self.leaf(0.0, dict(zip(ixs, U.argmin(axis=1).tolist(), strict=True)), [], [])
            return
        if self._to_lists(adj):
            self._hand_to_lists(lb)
            return
        # Branch on the undecided block with the most undecided neighbours per unit of
        # its margin gap (the two least of its bound terms `h`: a small gap, a block the
        # bound cannot yet tell between two values), ties the lowest block. Measured on
        # random cores (200 to 1,000 blocks, 5 to 8 targets, 63 plans): 104 nodes and
        # 3,140 sweeps where the most undecided neighbours alone took 139 and 3,444
        # (a 500-block core 24 nodes down to 7; the worst plan 6 up to 8).
        # (A block without two live values is not undecided: `inf - inf` is never read.)
        np = d.np
        two = np.partition(d.h, 1, axis=1)
        with np.errstate(invalid="ignore"):
            gap = (two[:, 1] - two[:, 0]).tolist()
        inv = d.inv.tolist()
        v = max(adj, key=lambda y: (len(adj[y]) / (1.0 + gap[inv[y]]), -y))
        # Its values go the incumbent's first, then by their bound terms.
        r = int(d.inv[v])
        h = d.h[r].tolist()
        uv = U[r].tolist()
        hinted = self.hint.get(v)
        order = sorted(
            (a for a in range(self.sizes[v]) if uv[a] < INF), key=lambda a: (a != hinted, h[a], a)
        )
        for idx, a in enumerate(order):
            if self.prune(lb):
                return
            U2 = U.copy()
            U2[r, :a] = INF
            U2[r, a + 1 :] = INF
            try:
                self.array_node(U2, M.copy(), lb)
            except Timeout:
                if idx + 1 < len(order) and not self.prune(lb):
                    self.open_lb = min(self.open_lb, lb)
                raise

    def _undecided(self, U: Any) -> dict[int, set[int]] | None:
        """The interaction graph of the blocks with two or more live values, after the
        reductions would remove those of degree two or less (`peel`); their number
        before that goes to `self.undecided`. None when no block is undecided."""
        d = self.dense
        assert d is not None
        multi = (U < INF).sum(axis=1) > 1
        if not multi.any():
            return None
        ixs = d.ixs
        both = multi[d.ea] & multi[d.eb]
        rows = d.np.flatnonzero(multi).tolist()
        adj: dict[int, set[int]] = {ixs[r]: set() for r in rows}
        for a, b in zip(d.ea[both].tolist(), d.eb[both].tolist(), strict=True):
            adj[ixs[a]].add(ixs[b])
            adj[ixs[b]].add(ixs[a])
        # The list search's reductions remove blocks of degree two or less for free
        # before it weighs the dynamic programming: so does this test.
        peel(adj)
        self.undecided = len(rows)
        return adj

    def _to_lists(self, adj: dict[int, set[int]]) -> bool:
        """Whether the list search should take the node (see `_undecided`): its dynamic
        programming fits, or its reductions would remove a good part of the undecided
        blocks (folding them exactly tightens the bound; measured: such nodes close in
        one list node where the arrays branch on)."""
        leaf = self.budget.cells.leaf_dp
        if len(adj) <= self.budget.search.array_handoff * self.undecided:
            return True
        return elim_cost(self.sizes, adj, leaf, leaf) >= 0

    def _hand_to_lists(self, lb: float) -> None:
        """Finish the node in the list search: its reparametrised tables as lists, every
        block that lost a value marked for masking (a block left with one value is then
        conditioned away), reductions and dynamic programming."""
        d = self.dense
        assert d is not None
        m = self.m
        un: list[list[float] | None] = [None] * m
        nb: list[Tables | None] = [{} for _ in range(m)]
        core = Core(self.sizes, un, nb)
        d.write_back(core)
        xs = sorted(d.ixs)
        # (`write_back` gave every block of `xs` its unary.)
        uns = [core.unary(x) for x in xs]
        if self.budget.search.handoff_dominance:
            dirty = [x for x, u in zip(xs, uns, strict=True) if INF in u]
        else:
            # Only the blocks the fixing left with one value (or none): they are
            # conditioned away (and their neighbours masked then). Dead-end elimination over every block
            # that lost a value found next to nothing here (the same nodes and sweeps
            # on random cores of 120 to 300 blocks) and was a third of the node.
            dirty = [x for x, u in zip(xs, uns, strict=True) if u.count(INF) >= len(u) - 1]
        self.node(core, xs, self.constant0, [], lb, dirty)

    # Provided by `PairSearch`.
    def prune(self, lb: float) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def leaf(
        self, const: float, val: dict[int, int], ops: list, path: list
    ) -> None:  # pragma: no cover
        raise NotImplementedError

    def node(
        self,
        core: Core,
        alive: list[int],
        const: float,
        path: list,
        lb_hint: float,
        dirty: list[int],
    ) -> None:  # pragma: no cover
        raise NotImplementedError
