"""The exact method's entry points: `solve_exact` and `lower_bound`.

They run the stages the package docstring lists, in order: `model.build_model`, the PBQP
reductions (`reductions.py`), dead-end elimination (`dominance.py`), bucket elimination
when the core's symbolic cost fits the budget (`elimination.py`), else the branch and
reduce search (`search.py`) or, for `lower_bound`, the diffusion and mini-bucket bounds
(`bounds.py`). References are in the modules that implement each method.
"""

from __future__ import annotations

import math
import time

import msgspec

from placement_cli.algorithms.scc import SccResult
from placement_cli.algorithms.solve.budget import DEFAULT_BUDGET, Budget, ExactBudget
from placement_cli.algorithms.solve.exact.elimination import (
    OrderedEliminator,
    adjacency,
    decode,
    elim_cost,
)
from placement_cli.algorithms.solve.exact.model import (
    INF,
    Model,
    Timeout,
    build_model,
    core_integral,
    plan_integral,
)
from placement_cli.algorithms.solve.exact.reductions import Reduction, reduce_model, undo_reductions
from placement_cli.algorithms.solve.objective import UNASSIGNED, evaluate, feasible_for
from placement_cli.core.io import gc_paused
from placement_cli.ir.graph import Graph

# The branch and reduce search (`search` with `arraysearch`, `listsearch`, `dense`,
# `primal`), the bounds and dead-end elimination are imported where they run: most plans
# reduce to nothing or to a core the dynamic programming solves, and these modules were
# ~1 ms of such a `solve`'s start-up (`python -X importtime`, medians of 15 processes).


class ExactOutcome(msgspec.Struct, frozen=True):
    """What the exact method proved (see `solve_exact`)."""

    assignment: tuple[int, ...] | None  # best feasible assignment found; -1 for dead blocks
    optimal: bool  # proven optimal (or proven infeasible when assignment is None)
    infeasible: bool  # proven: no feasible assignment exists
    lower_bound: float  # proven lower bound on the optimum (inf when infeasible)
    stats: dict[str, int | float]  # deterministic counters only


def solve_exact(
    g: Graph,
    domains: tuple[int, ...],
    comps: SccResult,
    limits: Budget,
    incumbent: tuple[int, ...] | None = None,
    *,
    budget: ExactBudget = DEFAULT_BUDGET,
) -> ExactOutcome:
    """The cheapest feasible placement of the live blocks within `domains`, with a proof.

    Returns a proven optimum (`optimal=True`) when the elimination and, if needed, the
    search over the remaining core finish before the deadline of `limits` (the run's
    `Budget`, or the share of it its caller gives) and within the table budget; otherwise the best assignment known (the `incumbent` if nothing better was
    found) with `optimal=False` and a proven `lower_bound`. Ties between equal-cost
    assignments go to the lowest target index, decided block by block in the reverse of
    the (deterministic) elimination order. `comps` is accepted for the pass contract; the
    elimination order does not need it.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> from placement_cli.algorithms.prune import prune
    >>> from placement_cli.algorithms.scc import scc
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0, "a": 1}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]}))
    >>> out = solve_exact(g, prune(g).domains, scc(g), Budget.within(5.0))
    >>> out.assignment, out.optimal, out.lower_bound
    ((0, 1), True, 5.0)
    """
    del comps
    # Elimination allocates many small acyclic lists: the cyclic GC only costs time here.
    with gc_paused():
        return _solve(g, domains, limits, incumbent, budget)


def lower_bound(
    g: Graph, domains: tuple[int, ...], limits: Budget, *, budget: ExactBudget = DEFAULT_BUDGET
) -> float:
    """A proven lower bound on the optimum, without the search: the reductions and the
    dynamic programming when the core fits (then it is the optimum itself), else the
    best of the mini-bucket and min-sum diffusion bounds on the core. For a heuristic
    answer's certified gap; `inf` when the plan is infeasible.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0, "a": 1}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]}))
    >>> lower_bound(g, g.domain, Budget.within(1.0))
    5.0
    """
    with gc_paused():
        return _solve(g, domains, limits, None, budget, search=False).lower_bound


def _solve(
    g: Graph,
    domains: tuple[int, ...],
    limits: Budget,
    incumbent: tuple[int, ...] | None,
    budget: ExactBudget,
    search: bool = True,
) -> ExactOutcome:
    # The one deadline every step observes (their checks compare `time.monotonic()` to
    # it directly: a `Budget.exceeded` call per check costs time in the inner loops).
    deadline = INF if limits.deadline is None else limits.deadline
    stats: dict[str, int | float] = {}
    live_n = sum(g.live)
    stats["live_blocks"] = live_n
    model = build_model(g, domains)
    if model is None:
        stats["empty_domain"] = 1
        return ExactOutcome(None, True, True, INF, stats)
    ks = model.ks
    stats["variables"] = len(ks)
    stats["fixed_blocks"] = len(model.fixed)
    stats["pair_factors"] = len(model.pairs)

    inc_cost = INF
    inc_val: dict[int, int] = {}
    if (
        incumbent is not None
        and len(incumbent) == g.n_blocks
        and feasible_for(g, domains, incumbent)
    ):
        c = evaluate(g, incumbent)
        if c is not None:
            inc_cost = c.total
            for b in ks:
                inc_val[b] = model.values[b].index(incumbent[b])

    # Stages of exact simplification, each in its own value numbering: the reductions,
    # then (while it removes anything) dead-end elimination on the core followed by the
    # reductions again. stages: (reduction log, domain sizes, kept values, fixed blocks).
    n = g.n_blocks
    stages: list[
        tuple[list[Reduction], dict[int, int], dict[int, list[int]] | None, list[int]]
    ] = []
    counts = [0, 0, 0]
    # The core's interaction graph as the reductions leave it (None: derive it).
    known_adj: dict[int, set[int]] | None = None
    if budget.reductions:
        known_adj = {}
        const, rlog, core_factors, counts = reduce_model(model, n, known_adj)
    else:
        const, rlog, core_factors = model.constant, [], model.factors()
    stages.append((rlog, ks, None, []))
    cur_ks = ks
    removed = 0
    dp_cost: int | None = None  # cells of this core's elimination (-1: too wide); None: not known
    stages_done = 0
    core_n = -1  # the core's block count while dp_cost is known
    order: list[int] = []  # the elimination order of the core while dp_cost is known
    scopes: list[tuple[int, ...]] = []  # and each step's new scope
    while budget.reductions and core_factors and const < INF:
        core_adj = known_adj if known_adj is not None else adjacency(core_factors)
        known_adj = None
        core_n = len(core_adj)
        order = []
        # (The symbolic elimination may consume this graph: nothing else reads it.)
        scopes = []
        dp_cost = elim_cost(
            cur_ks, core_adj, budget.cells.table, budget.cells.dp, order, copy=False, scopes=scopes
        )
        if 0 <= dp_cost <= budget.cells.cheap_dp:
            break  # dynamic programming is cheap already: dominance would cost more
        if dp_cost < 0 and not budget.dominance.search_cores:
            # Too wide for the dynamic programming: the search's root does better with
            # the time (its reduced-cost fixing removes values too; measured on random
            # cores of 200 and 500 blocks, 5 to 8 targets).
            break
        if stages_done >= budget.dominance.stages:
            break  # (dp_cost still describes this core)
        stages_done += 1
        dp_cost = None
        # Lazy: dead-end elimination (~0.1 ms, measured), only for a core left.
        from placement_cli.algorithms.solve.exact.dominance import remove_dominated

        d = remove_dominated(cur_ks, core_factors, n, deadline, budget.dominance.rounds)
        if d is None:
            break
        m2, keep, fixed2, r = d
        removed += r
        m2.constant += const
        known_adj = {}
        const, rlog, core_factors, c2 = reduce_model(m2, n, known_adj)
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
            undo_reductions(rlog, ks_s, val)
            for b in fixed_s:
                val[b] = 0
            if keep is not None:
                for b, kept in keep.items():
                    val[b] = kept[val[b]]
        val.update(model.fixed)
        # (A live block's value list is never empty, a dead block's always is.)
        return tuple([vs[val[b]] if vs else UNASSIGNED for b, vs in enumerate(model.values)])

    if const == INF:
        return ExactOutcome(None, True, True, INF, stats)
    if not core_factors:
        a = finish({})
        return ExactOutcome(a, True, False, _total(g, a), stats)

    # The core: every block has three or more neighbours. Dynamic programming over the
    # tree decomposition its elimination order induces, when that fits the budget.
    timed_out = False
    lb = -INF
    if dp_cost is None:
        adj = known_adj if known_adj is not None else adjacency(core_factors)
        core_n = len(adj)
        order = []
        scopes = []
        dp_cost = elim_cost(
            cur_ks, adj, budget.cells.table, budget.cells.dp, order, copy=False, scopes=scopes
        )
    stats["core_blocks"] = core_n
    if dp_cost >= 0:
        # The symbolic pass chose the order already: the elimination follows it.
        el = OrderedEliminator(cur_ks, core_factors, const, order, scopes)
        try:
            el.run(deadline)
        except Timeout:
            timed_out = True
        stats["rn"] = el.counts[3]
        stats["treewidth"] = max(stats["treewidth"], el.width)
        stats["dp_cells"] = el.cells
        if el.constant == INF:
            return ExactOutcome(None, True, True, INF, stats)
        if not timed_out:
            val: dict[int, int] = {}
            decode(el.log, cur_ks, val)
            a = finish(val)
            return ExactOutcome(a, True, False, _total(g, a), stats)
        lb = el.bound()
    # (Only now: a core the dynamic programming solves never needs this bound.)
    lb = max(lb, const + math.fsum(min(t) for _, t in core_factors))

    # Too wide (or out of time): bounds, then branch and reduce while time remains.
    best_a: tuple[int, ...] | None = None
    best_cost = inc_cost
    if inc_cost < INF and incumbent is not None:
        best_a = tuple(incumbent)
    proven = False
    if lb == INF:
        return ExactOutcome(None, True, True, INF, stats)
    if not timed_out and lb < best_cost:
        # Integral core tables: every cost the search compares is an integer.
        integral = core_integral(core_factors, const)
        # Lazy: the branch and reduce search (~0.9 ms with its bounds, measured), only
        # for a core the dynamic programming does not solve.
        from placement_cli.algorithms.solve.exact.search import PairSearch

        ps = PairSearch(cur_ks, core_factors, const, best_cost, inc_val, deadline, budget, integral)
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
            # Lazy: the bounds (~0.2 ms, measured), only here. Bound only: the diffusion
            # stalled early, the mini-bucket bound may add.
            from placement_cli.algorithms.solve.exact.bounds import mini_bucket_bound

            lb = max(
                lb,
                mini_bucket_bound(cur_ks, core_factors, const, budget.cells.mini_bucket, deadline),
            )
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


def _safe(lb: float, model: Model, g: Graph) -> float:
    """A bound safe against float rounding: the diffusion's averages and the different
    summation orders of the bound and the objective may be off in the last bits."""
    if lb in (INF, -INF):
        return lb
    if plan_integral(g):
        # The optimum is an integer: round the bound up (past any float noise).
        return float(math.ceil(lb - 1e-6 - abs(lb) * 1e-9))
    return lb - abs(lb) * 1e-12 * (model.n_terms + 1)
