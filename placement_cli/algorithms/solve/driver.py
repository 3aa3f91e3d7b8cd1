"""`solve`: choose a target for every live block, minimising the objective of
`docs/format.md` (see `placement_cli.algorithms.solve.objective`).

Methods:
- `heuristic`: the seed algorithm (`solve.heuristic`); if it gives up, the complete
  search (`solve.complete`) takes over, so "infeasible" is always a proof. On small
  plans an exhaustive branch and bound checks the answer and supplies `lower_bound`
  (and `optimal` when the answer is proven optimal); the answer itself stays the seed's.
- `exact`: `solve.exact` alone; the heuristic only when it found nothing in time.
- `auto`: the exact method first; when it does not prove the optimum in time, the
  heuristic too, and the better assignment wins.

Every search runs under one `Budget` (the `time_limit` and a memory bound). When it runs
out, the answer is the best feasible assignment found (`optimal` false, with a proven
`lower_bound`) or, with none, status "unsolved" and a `time-limit` / `memory-limit`
diagnostic: "infeasible" is only ever said with a proof.

Pins and forbids (`SolveOptions.pins`, `.forbids`) narrow the domains before any method
runs; a warm start (`SolveOptions.warm_start`) gives the methods a first incumbent.
Plans whose costs are so large that sums overflow a float are solved on costs scaled by
a power of two (`Instance.shift`); a chosen assignment whose own total overflows is
reported as invalid input rather than as a `null` total.

`optimal` is true only when a proof exists; `lower_bound` is the best proven bound.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from placement_cli.algorithms.scc import SccResult
from placement_cli.algorithms.solve.budget import Budget, slack
from placement_cli.algorithms.solve.context import Ctx
from placement_cli.algorithms.solve.instance import INF, build_instance, root_bound
from placement_cli.algorithms.solve.objective import UNASSIGNED, Cost, evaluate, feasible_for

# The options and the section are modules of their own (`options`, `result`);
# their names stay importable from here.
from placement_cli.algorithms.solve.options import Pair, SolveOptions
from placement_cli.algorithms.solve.pins import check_pins, pin_domains, pin_text, warm_incumbent
from placement_cli.algorithms.solve.result import SolveResult, clean_stats, from_json
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.errors import InputError, PlacementError, Problem
from placement_cli.core.io import gc_paused
from placement_cli.ir.graph import Graph

__all__ = ["Pair", "SolveOptions", "SolveResult", "from_json", "solve"]

# The seed heuristic (`heuristic`, `loops`), the complete search (`complete`, `search`)
# and the results without an assignment (`outcomes`) are imported where they run: a
# `solve` that the exact method proves (the usual case: the 7-block example, the
# 150-block benchmark plan) runs none of them, and they were ~1 ms of its start-up
# (`python -X importtime`, medians of 15 processes).


def _exact_module() -> Any:
    """`solve.exact` when this build has the exact method, else None."""
    try:
        # Lazy: optional in a build (None without it); its import (~10 ms, measured) only when used.
        import placement_cli.algorithms.solve.exact as exact
    except ModuleNotFoundError as exc:
        if exc.name == "placement_cli.algorithms.solve.exact":
            return None
        raise
    return exact


# ------------------------------------------------------------------ results
# (`infeasible` and `failed` are in `outcomes`; `_unsolved` stays here: the scan of
# tests/test_codes.py follows its `reason` only to the calls in this module.)


def _unsolved(c: Ctx, reason: str, lb: float, lb_by: str, used: str | None) -> SolveResult:
    """Stopped by a limit with no feasible assignment and no proof that none exists."""
    what = (
        f"time limit ({c.opts.time_limit:g} s)"
        if reason == "time-limit"
        else (f"memory limit ({c.opts.memory_limit_mb} MB)")
    )
    msg = (
        f"stopped by the {what} before finding a feasible placement or proving that none exists; "
        "raise the limit or try another --method"
    )
    return SolveResult(
        assignment=(UNASSIGNED,) * c.g.n_blocks,
        status="unsolved",
        diagnostics=(*c.warnings, Diagnostic("error", reason, msg)),
        cost=None,
        optimal=False,
        lower_bound=lb,
        domains=c.report_domains,
        method=c.opts.method,
        method_used=used,
        proved_by=None,
        lower_bound_by=lb_by if lb != INF else None,
        stats=c.stats,
    )


# ----------------------------------------------------------------- methods


def _heuristic(c: Ctx) -> tuple[tuple[int, ...] | None, tuple[int, ...], str, str | None]:
    """The seed, then the complete search if it gave up. (assignment, or None when none
    was found; where the seed failed; which solver answered; the limit that stopped the
    search when it ended without an answer or a proof, else None)."""
    # Lazy: the seed heuristic and the complete search (~1 ms, measured), only when the
    # heuristic runs.
    from placement_cli.algorithms.solve.complete import find_feasible
    from placement_cli.algorithms.solve.heuristic import refine, solve_heuristic

    o = c.opts
    if c.incumbent is not None:
        # A warm start replaces the forward pass: the sweeps improve the old answer.
        a, st = refine(
            c.inst,
            c.comps,
            c.incumbent,
            max_rounds=o.max_rounds,
            csp_node_limit=o.csp_node_limit,
            budget=c.budget,
        )
        c.stats.update(st)
        c.stats["fallback_used"] = False
        return a, (), "warm-start", None
    h = solve_heuristic(
        c.inst,
        c.comps,
        max_rounds=o.max_rounds,
        max_backtracks=o.max_backtracks,
        csp_node_limit=o.csp_node_limit,
        budget=c.budget,
    )
    c.stats.update(h.stats)
    c.stats["fallback_used"] = h.assignment is None
    if h.assignment is not None:
        assert h.forward is not None  # (the forward pass ran: it seeded the assignment)
        fwd = evaluate(c.g, h.forward)
        c.stats["forward_cost"] = fwd.total if fwd is not None else None
        return h.assignment, (), "heuristic", None
    found = find_feasible(c.inst, c.budget)
    c.stats["fallback_nodes"] = found.nodes
    if found.assignment is None:
        if found.exhausted:
            return None, h.failed or found.failed, "complete", None
        return None, (), "complete", c.budget.reason or "time-limit"
    a, st = refine(
        c.inst,
        c.comps,
        found.assignment,
        max_rounds=o.max_rounds,
        csp_node_limit=o.csp_node_limit,
        budget=c.budget,
    )
    for k in ("passes", "csp_solves", "csp_nodes", "csp_proven", "cache_hits", "switches"):
        c.stats[k] += st[k]
    c.stats["rounds"] += st["rounds"]
    return a, h.failed, "complete", None


def _prove(c: Ctx, a: tuple[int, ...]) -> tuple[float | None, tuple[int, ...] | None]:
    """Exhaustive B&B on small plans: (proven optimum or None, a better assignment)."""
    o = c.opts
    if len(c.inst.live) > o.prove_max_blocks or o.prove_node_limit == 0:
        return None, None
    # Lazy: the complete search (~0.6 ms, measured), only for the proof on small plans.
    from placement_cli.algorithms.solve.complete import branch_and_bound

    bb = branch_and_bound(c.inst, c.inst.total(a), o.prove_node_limit, c.budget)
    c.stats["proof_nodes"] = bb.nodes
    if not bb.exhausted:
        return None, None
    best = a if bb.assignment is None else bb.assignment
    if c.inst.shift:
        return c.inst.unscale(c.inst.total(best)), bb.assignment
    return _plan_total(c.g, best), bb.assignment


def _value(c: Ctx, a: tuple[int, ...]) -> float:
    """An assignment's objective for comparisons: the plan's own sum, or the scaled one
    when the plan's sums could overflow."""
    if c.inst.shift:
        return c.inst.total(a)
    return _plan_total(c.g, a)


def _plan_total(g: Graph, a: tuple[int, ...]) -> float:
    """The plan's objective of a feasible assignment."""
    cost = evaluate(g, a)
    assert cost is not None, "a search returned an infeasible assignment"
    return cost.total


def solve(
    g: Graph, domains: tuple[int, ...], comps: SccResult, options: SolveOptions | None = None
) -> SolveResult:
    """Solve the placement problem on the pruned `domains` and condensation `comps`.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> from placement_cli.algorithms.prune import prune
    >>> from placement_cli.algorithms.scc import scc
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]}))
    >>> r = solve(g, prune(g).domains, scc(g), SolveOptions(method="heuristic"))
    >>> r.to_json(g)["assignment"], r.cost.total, r.optimal
    ({'x': 'a', 'y': 'b'}, 5.0, True)
    >>> r = solve(g, prune(g).domains, scc(g), SolveOptions(pins=(("y", "a"),)))
    >>> r.to_json(g)["assignment"], r.cost.total
    ({'x': 'a', 'y': 'a'}, 10.0)
    """
    # The search allocates many small short-lived tuples and lists and no cycles worth
    # collecting; with 100k blocks the cyclic GC's scans cost more than the search.
    with gc_paused():
        return _solve(g, domains, comps, options or SolveOptions())


def _solve(g: Graph, domains: tuple[int, ...], comps: SccResult, opts: SolveOptions) -> SolveResult:
    mem = opts.memory_limit_mb * 2**20 if opts.memory_limit_mb is not None else None
    budget = Budget.within(opts.time_limit, mem)
    check_pins(g, opts)
    inst = build_instance(g, domains)
    stats: dict[str, Any] = {}
    method = opts.method
    if inst.empty:
        # Lazy: the results without an assignment (~0.1 ms, measured), only for one.
        from placement_cli.algorithms.solve import outcomes

        return outcomes.infeasible(g, domains, inst.empty, "empty", method, None, stats)
    report_domains = domains
    pins = pin_text(opts)
    if pins:
        # Lazy: the complete search's arc consistency and the results without an
        # assignment (~0.7 ms, measured), only with pins.
        from placement_cli.algorithms.solve import outcomes
        from placement_cli.algorithms.solve.complete import arc_consistent

        narrowed, diag = pin_domains(g, domains, opts)
        if diag is not None:
            return outcomes.failed(g, domains, diag, method, None, "pins", stats)
        dom, emptied = arc_consistent(
            inst, [narrowed[b] if g.live[b] else 0 for b in range(g.n_blocks)]
        )
        if emptied >= 0:
            bid = g.block_ids[emptied]
            diag = Diagnostic(
                "error",
                "pin-infeasible",
                f"no feasible placement respects {pins}: block '{bid}' has no target left that "
                "fits its neighbours (arc consistency)",
                (bid,),
            )
            return outcomes.failed(g, domains, diag, method, None, "pins", stats)
        domains = tuple(dom[b] if g.live[b] else domains[b] for b in range(g.n_blocks))
        inst = msgspec.structs.replace(inst, dom=dom)
    c = Ctx(g, domains, report_domains, comps, opts, inst, budget, stats, [], pins=pins)
    if opts.warm_start is not None:
        c.incumbent = warm_incumbent(c, opts.warm_start)
    exact = _exact_module() if method != "heuristic" else None
    if method == "exact" and exact is None:
        raise PlacementError(
            "--method exact needs the exact solver (placement_cli.algorithms.solve.exact), which this build "
            "does not include; use --method heuristic or auto"
        )
    if exact is not None and inst.shift:
        # The exact method sums the plan's costs as they are; they overflow here.
        c.warnings.append(
            Diagnostic(
                "warning",
                "huge-costs",
                "costs this large overflow the exact method's sums: solved with the "
                "heuristic and the complete search on scaled costs instead",
            )
        )
        exact = None

    # The root bound is computed where it can matter: not when the exact method proves
    # the optimum (the bound is then the assignment's own cost), which on large plans
    # saves a pass over every block and pair.
    lb = -INF
    lb_by = "bound"
    known: tuple[tuple[int, ...] | None, Cost | None] = (
        None,
        None,
    )  # an assignment's evaluated cost
    a: tuple[int, ...] | None
    if exact is not None:
        # exact and auto: the exact method first. Where it proves the optimum (the usual
        # case on structured plans, and faster than the heuristic) that is the answer;
        # otherwise `auto` also runs the heuristic and keeps the cheaper assignment. The
        # exact method gets most of the time; the rest is for the heuristic's answer.
        out = exact.solve_exact(g, domains, comps, budget.share(0.8), c.incumbent)
        stats["exact"] = clean_stats(out.stats)
        a = _checked(g, domains, out.assignment, c.warnings)
        used = "exact"
        if a is None and out.infeasible:
            # Lazy: the seed heuristic and the results without an assignment (~0.5 ms,
            # measured), only when the exact method found no placement.
            from placement_cli.algorithms.solve import outcomes
            from placement_cli.algorithms.solve.heuristic import solve_heuristic

            # The diagnostic names where the seed's search fails; if the seed finds an
            # assignment after all, that verified assignment outranks the claim.
            h = solve_heuristic(
                inst,
                comps,
                max_rounds=opts.max_rounds,
                max_backtracks=opts.max_backtracks,
                csp_node_limit=opts.csp_node_limit,
                budget=budget,
            )
            if h.assignment is None:
                return outcomes.infeasible(
                    g, domains, h.failed, "search", method, "exact", stats, pins
                )
            c.warnings.append(
                Diagnostic(
                    "warning",
                    "solver-disagreement",
                    "the exact method reported no feasible placement, but the heuristic found one",
                )
            )
            a, used = h.assignment, "heuristic"
        elif a is None:
            lb = inst.unscale(root_bound(inst))
            a, failed, used, stopped = _heuristic(c)
            if a is None:
                if stopped:
                    if math.isfinite(out.lower_bound) and out.lower_bound > lb:
                        lb, lb_by = out.lower_bound, "exact"
                    return _unsolved(c, stopped, lb, lb_by, used)
                # Lazy: the results without an assignment (~0.1 ms, measured), only for one.
                from placement_cli.algorithms.solve import outcomes

                return outcomes.infeasible(g, domains, failed, "search", method, used, stats, pins)
        elif out.optimal:
            exact_cost = evaluate(g, a)
            assert exact_cost is not None  # (`_checked` let only a feasible answer through)
            known = (a, exact_cost)
            lb, lb_by = exact_cost.total, "exact"
        elif method == "auto":
            h_a, _failed_at, h_used, _stopped = _heuristic(c)
            if h_a is not None and _value(c, h_a) < _value(c, a):
                a, used = h_a, h_used
        if lb == -INF:
            lb = inst.unscale(root_bound(inst))
        if not out.infeasible and math.isfinite(out.lower_bound) and out.lower_bound > lb:
            lb, lb_by = out.lower_bound, "exact"
    else:
        lb = inst.unscale(root_bound(inst))
        a, failed, used, stopped = _heuristic(c)
        if a is None:
            if stopped:
                return _unsolved(c, stopped, lb, lb_by, used)
            # Lazy: the results without an assignment (~0.1 ms, measured), only for one.
            from placement_cli.algorithms.solve import outcomes

            return outcomes.infeasible(g, domains, failed, "search", method, used, stats, pins)
        bound_module = _exact_module() if not inst.shift else None
        if bound_module is not None and not budget.exceeded():
            # The seed's own answer stays as it is; the exact machinery only certifies how
            # far from optimal it can be (far tighter than the root bound on large plans).
            proven_lb = bound_module.lower_bound(g, domains, budget)
            if math.isfinite(proven_lb) and proven_lb > lb:
                lb, lb_by = proven_lb, "exact"
        proven, better = _prove(c, a)
        if proven is not None:
            if method != "heuristic" and better is not None:
                a, used = better, "complete"  # no exact method: the complete search answers
            if proven > lb:
                lb, lb_by = proven, "complete"

    cost = known[1] if known[0] is a else evaluate(g, a)
    if cost is None or not _within(g, domains, a):
        raise PlacementError(f"internal error: the {used} solver produced an infeasible assignment")
    if not (math.isfinite(cost.total) and math.isfinite(cost.blocks) and math.isfinite(cost.edges)):
        raise InputError(
            [
                Problem(
                    "",
                    "the objective overflows: the cheapest placement found costs more than "
                    "the largest float (1.8e308); scale the plan's costs down",
                )
            ]
        )
    # A bound within rounding slack of the total proves the total; it is then reported
    # as the total itself (the spec: lower_bound equals total when optimal). A bound
    # clearly above the total of a feasible assignment is not a proof but a bug, in the
    # bound or in the cost: report it, never paper over it.
    total = cost.total
    if lb > total + slack(total):
        raise PlacementError(
            f"internal error: the proven lower bound {lb!r} (by {lb_by}) exceeds the cost {total!r} "
            f"of the assignment the {used} solver returned"
        )
    optimal = lb >= total - slack(total)
    if optimal:
        lb = total
    elif budget.reason is not None:
        c.warnings.append(
            Diagnostic(
                "warning",
                budget.reason,
                f"the search was stopped by its {budget.reason.replace('-', ' ')}: the "
                "assignment is the best found, not proven optimal",
            )
        )
    return SolveResult(
        assignment=a,
        status="ok",
        diagnostics=tuple(c.warnings),
        cost=cost,
        optimal=optimal,
        lower_bound=lb,
        domains=report_domains,
        method=method,
        method_used=used,
        proved_by=lb_by if optimal else None,
        lower_bound_by=lb_by,
        stats=stats,
    )


def _within(g: Graph, domains: tuple[int, ...], a: tuple[int, ...]) -> bool:
    """Every live block on a target of `domains` (with `evaluate` not None: `feasible_for`)."""
    for is_live, dom, t in zip(g.live, domains, a, strict=True):
        if is_live and (t < 0 or not dom >> t & 1):
            return False
    return True


def _checked(
    g: Graph, domains: tuple[int, ...], a: Any, warnings: list[Diagnostic]
) -> tuple[int, ...] | None:
    """An assignment from another solver, used only once verified."""
    if a is None:
        return None
    a = tuple(a)
    if len(a) == g.n_blocks and feasible_for(g, domains, a):
        return tuple(t if g.live[b] else UNASSIGNED for b, t in enumerate(a))
    warnings.append(
        Diagnostic(
            "warning",
            "solver-disagreement",
            "the exact method returned an infeasible assignment; it was ignored",
        )
    )
    return None
