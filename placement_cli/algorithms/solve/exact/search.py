"""Depth-first branch and reduce over a pairwise core, pruned by diffusion bounds.

The exact form of PBQP's heuristic rule RN (Scholz & Eckstein 2002): where RN would
decide a block of degree three or more greedily, the search conditions it on each of its
values in turn, applies the reductions R0/R1/R2 (`reductions.py`) and dead-end
elimination (`dominance.py`) again, and solves small nodes by bucket elimination
(`elimination.py`). Nodes are bounded by min-sum diffusion (Werner 2007, `bounds.py`,
`dense.py`), values are removed by reduced-cost fixing (a value whose bound with its
block fixed to it cannot beat the incumbent goes: the LP reduced-cost test, see
Nemhauser & Wolsey 1988), and the incumbent comes from the primal heuristic
(`primal.py`). This module is the root (its diffusion, rounding and fixing), the
incumbent and the bound tests; the nodes are `listsearch.py`'s on lists and
`arraysearch.py`'s on the root's arrays (the search's upper levels).

References:

* B. Scholz, E. Eckstein. Register allocation for irregular architectures. LCTES 2002.
* T. Werner. A linear programming approach to max-sum problem: a review. IEEE TPAMI
  29(7), 2007.
* G. L. Nemhauser, L. A. Wolsey. Integer and Combinatorial Optimization. Wiley, 1988.
"""

from __future__ import annotations

import math
import time
from typing import Any

from placement_cli.algorithms.solve.budget import ExactBudget
from placement_cli.algorithms.solve.exact.arraysearch import ArrayNodes
from placement_cli.algorithms.solve.exact.bounds import bound_of, diffuse
from placement_cli.algorithms.solve.exact.core import Core, Tables
from placement_cli.algorithms.solve.exact.dense import DenseCore, numpy_or_none
from placement_cli.algorithms.solve.exact.listsearch import ListNodes
from placement_cli.algorithms.solve.exact.model import INF, Factor, Timeout
from placement_cli.algorithms.solve.exact.primal import list_arcs, round_and_polish
from placement_cli.algorithms.solve.exact.reductions import undo_reductions


class PairSearch(ListNodes, ArrayNodes):
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
        budget: ExactBudget,
        integral: bool,
    ) -> None:
        self.vars = sorted({v for sc, _ in factors for v in sc})
        loc = {v: i for i, v in enumerate(self.vars)}
        m = len(self.vars)
        self.m = m
        self.sizes = [ks[v] for v in self.vars]
        self.integral = integral
        un: list[list[float] | None] = [None] * m
        nbs: list[Tables] = [{} for _ in range(m)]
        nb: list[Tables | None] = list(nbs)
        core = Core(self.sizes, un, nb)
        self.constant0 = constant
        self.unary0: list[tuple[int, list[float]]] = []
        self.pairs0: list[tuple[int, int, list[float]]] = []
        for sc, tab in factors:
            if len(sc) == 1:
                un[loc[sc[0]]] = list(tab)
                self.unary0.append((loc[sc[0]], tab))
            else:
                a, b = loc[sc[0]], loc[sc[1]]
                nbs[a][b] = tab
                nbs[b][a] = tab
                self.pairs0.append((a, b, tab))
        # The original tables laid end to end for `_cost`'s one gather (numpy, on cores
        # where the sweeps use it too: a small core does not import numpy for this).
        # A unary term is entry `v[x]` of its table (its column is the extra zero
        # value at position m); a pair's is `v[a] * sizes[b] + v[b]`.
        self._flat: tuple[Any, Any, Any, Any, Any, Any] | None = None
        npc = numpy_or_none() if m >= budget.diffusion.dense_min_blocks else None
        if npc is not None:
            parts: list[float] = []
            base, row, stride, col = [], [], [], []
            for x, tab in self.unary0:
                base.append(len(parts))
                row.append(x)
                stride.append(1)
                col.append(m)
                parts += tab
            for a, b, tab in self.pairs0:
                base.append(len(parts))
                row.append(a)
                stride.append(self.sizes[b])
                col.append(b)
                parts += tab
            ip = npc.intp
            self._flat = (
                npc,
                npc.array(parts, dtype=float),
                npc.array(base, dtype=ip),
                npc.array(row, dtype=ip),
                npc.array(stride, dtype=ip),
                npc.array(col, dtype=ip),
            )
        self.best = best
        self.best_val: dict[int, int] | None = None
        self.hint = {loc[v]: a for v, a in hint.items() if v in loc}
        self.deadline = deadline
        self.budget = budget
        self.leaf_cells = budget.cells.leaf_dp
        self.nodes = 0
        self.open_lb = INF
        self.aborted = False
        self.counts = [0, 0, 0]
        self.sweeps = 0
        self.held = 0  # table entries held by the states on the current path
        self.out_of_memory = False
        xs = list(range(m))
        cur: float | None = None  # the bound of the current reparametrisation
        root_fixed: list[int] = []
        self.root_order: list[int] | None = None
        # The root's many sweeps over the whole core run on arrays when numpy is there
        # and the core is large enough to pay for the conversion (see dense.py).
        np = numpy_or_none() if m >= budget.diffusion.dense_min_blocks else None
        relax = (
            budget.diffusion.root_relax
            if m <= budget.diffusion.root_relax_max_blocks
            else budget.diffusion.relax
        )
        dense = (
            DenseCore(np, core, xs, relax, m <= budget.diffusion.dsatur_max_blocks)
            if np is not None and m
            else None
        )
        lb = dense.bound(constant) if dense is not None else bound_of(core, xs, constant)
        # Rounding that found nothing new is tried again after twice as many sweeps
        # (budget `primal_backoff`; measured 10 to 25% off the root's time on random
        # 200- to 1,000-block cores); one that improved the incumbent, after 8.
        check = next_round = 0
        interval = 1
        for _ in range(self.budget.diffusion.root_sweeps // 8):
            if self.prune(lb) or time.monotonic() > deadline:
                break
            for _ in range(8):
                if dense is not None:
                    dense.sweep()
                else:
                    diffuse(core, xs)
                self.sweeps += 1
                if time.monotonic() > deadline:
                    break
            new = dense.bound(constant) if dense is not None else bound_of(core, xs, constant)
            cur = new
            # An assignment read off the reparametrisation: when it is optimal, the
            # bound certifies it and the core closes here, without a search.
            if budget.search.primal and check >= next_round:
                before = self.best
                self._primal(dense, core, xs)
                interval = (
                    1 if self.best < before or not budget.search.primal_backoff else 2 * interval
                )
                next_round = check + interval
            check += 1
            if (
                dense is not None
                and budget.search.fixing
                and self.best < INF
                and not self.prune(new)
            ):
                # Values ruled out already go: the next sweeps no longer average them in.
                root_fixed += dense.fix(new, self.best, self.integral)
            if new - lb <= budget.diffusion.root_stall * max(1.0, abs(new)):
                lb = max(lb, new)
                break
            lb = max(lb, new)
        if dense is not None and budget.search.primal and cur is not None and not self.prune(lb):
            # The root did not close: round once more, most neighbours first, on its
            # best reparametrisation before the search starts.
            self._primal(dense, core, xs, by_degree=True)
        if dense is not None:
            dense.relax = budget.diffusion.relax
        hs: dict[int, list[float]] = {}
        # The search's upper levels stay on these arrays (arraysearch.py).
        self.dense = dense if budget.search.array_search else None
        if self.dense is not None:
            if cur is not None and budget.search.fixing and self.best < INF and not self.prune(cur):
                # The last rounding may have improved the incumbent: fix against it.
                self.dense.fix(cur, self.best, self.integral)
            cur = None
        elif dense is not None:
            dense.write_back(core)
            if cur is not None:
                hs = dense.margins()
        elif cur is not None:
            cur = bound_of(core, xs, constant, hs)
        # Values the root's bound already rules out go before the search starts.
        if cur is not None and budget.search.fixing:
            root_fixed += self._fix(cur, hs, core, xs)
        self.root_dirty = sorted(set(root_fixed))
        self.root_lb = lb
        self.root = (core, xs, constant)

    def _primal(
        self,
        dense: DenseCore | None,
        core: Core,
        xs: list[int],
        by_degree: bool = False,
    ) -> None:
        """Round the root's reparametrisation to an assignment, polish it, and keep it if
        its cost on the original tables beats the incumbent. On the arrays the rounding
        goes colour class by colour class (`DenseCore.round_icm`, vectorised: about a
        fifth of the list form's time), or with `by_degree` most neighbours first (the
        list form, which finds the optimum more often: once, when the root's sweeps end
        without closing the core); on lists always most neighbours first."""
        if dense is not None and not by_degree:
            self.leaf(0.0, dict(zip(xs, dense.round_icm(), strict=True)), [], [])
            return
        if dense is not None:
            # Blocks with the most neighbours first: measured to find the optimum more
            # often than the colour-class order of `round_icm` (worth it at the root).
            uns, arcs = dense.arcs()
            if self.root_order is None:
                self.root_order = sorted(range(len(xs)), key=lambda i: (-len(arcs[i]), i))
            pv = round_and_polish(self.root_order, uns, arcs)
            val = {xs[i]: a for i, a in pv.items()}
        else:
            la = list_arcs(core, xs)
            order = sorted(xs, key=lambda x: (-len(la[x] or ()), x))
            val = round_and_polish(order, core.un, la)
        self.leaf(0.0, val, [], [])

    def _fix(self, lb: float, hs: dict[int, list[float]], core: Core, xs: list[int]) -> list[int]:
        """Reduced-cost fixing, in place: fixing block x to value i, the bound `lb` of
        this reparametrisation becomes lb - min(hs[x]) + hs[x][i] (only x's own term
        changes), so a value where that cannot beat the incumbent goes (its unary becomes
        `inf`). Exact: no assignment better than the incumbent uses it. Returns the
        blocks that lost a value."""
        if lb == INF or self.best == INF:
            return []
        changed = []
        for x in xs:
            h = hs.get(x)
            ux = core.un[x]
            if h is None or ux is None:
                continue
            mh = min(h)
            keep = h.index(mh)
            base = lb - mh
            hit = False
            for i, hi in enumerate(h):
                if i != keep and ux[i] < INF and self.prune(base + hi):
                    ux[i] = INF
                    hit = True
            if hit:
                changed.append(x)
        return changed

    def prune(self, lb: float) -> bool:
        """No completion of this node can beat the incumbent."""
        if lb == math.inf:
            return True  # an infeasible node: nothing below it completes
        if self.integral:
            # The optimum is an integer; the slack covers the diffusion's rounding noise,
            # which grows with the magnitude of the costs.
            return math.ceil(lb - 1e-6 - abs(lb) * 1e-9) >= self.best
        return lb >= self.best

    def run(self) -> None:
        core, alive, const = self.root
        if self.prune(self.root_lb):
            return  # the root's bound already certifies the incumbent
        try:
            if self.dense is not None:
                self.array_node(self.dense.U.copy(), self.dense.M.copy(), self.root_lb, first=True)
            else:
                self.node(core, alive, const, [], self.root_lb, self.root_dirty)
        except Timeout:
            self.aborted = True

    def leaf(self, const: float, val: dict[int, int], ops: list, path: list) -> None:
        if const == INF:
            return  # the leaf's elimination proved this node infeasible
        sizes = self.sizes
        for op in reversed(ops):
            if op[0] == "r":
                undo_reductions(op[1], sizes, val)
            else:
                val[op[1]] = op[2]
        for pops, v, a in reversed(path):
            val[v] = a
            for op in reversed(pops):
                if op[0] == "r":
                    undo_reductions(op[1], sizes, val)
                else:
                    val[op[1]] = op[2]
        # The leaf's value is read off the original tables, not the reparametrised ones
        # (whose sums carry the diffusion's rounding noise, which grows with the costs):
        # the incumbent the search prunes against is then an exact cost.
        value = self._cost(val)
        if value >= self.best:
            return
        self.best = value
        self.best_val = {self.vars[i]: x for i, x in val.items()}

    def _cost(self, val: dict[int, int]) -> float:
        """The core's cost of a complete assignment in local value indices: the exact
        sum (`math.fsum`) of its terms in the original tables, `inf` if one is.

        With numpy the terms are one gather from the tables laid end to end (`_flat`):
        on cores of 120 to 300 blocks a tenth of the per-term Python indexing, which
        was 4 to 5% of a random core's solve (a leaf is priced at every rounding). The
        same terms, and `fsum` is exact whatever their order: the same value.
        """
        flat = self._flat
        if flat is None:
            sizes = self.sizes
            terms = [self.constant0]
            terms += [u[val[x]] for x, u in self.unary0]
            terms += [t[val[a] * sizes[b] + val[b]] for a, b, t in self.pairs0]
            return math.fsum(terms) if INF not in terms else INF
        np, table, base, row, stride, col = flat
        v = np.array([val[i] for i in range(self.m)] + [0], dtype=np.intp)
        terms = table[base + v[row] * stride + v[col]].tolist()
        if INF in terms:
            return INF
        terms.append(self.constant0)
        return math.fsum(terms)
