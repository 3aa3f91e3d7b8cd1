"""`solve`: choose a target for every live block, minimising the objective of
`spec/plan-format.md` (see `placement_cli.solvers.objective`).

Methods:
- `heuristic`: the seed algorithm (`solvers.heuristic`); if it gives up, the complete
  search (`solvers.complete`) takes over, so "infeasible" is always a proof. On small
  plans an exhaustive branch and bound checks the answer and supplies `lower_bound`
  (and `optimal` when the answer is proven optimal); the answer itself stays the seed's.
- `exact`: `solvers.exact` alone; the heuristic only when it found nothing in time.
- `auto`: the heuristic first (fast, an incumbent), then the exact method with the time
  left; the better assignment wins. Without the exact module, small plans get the
  complete branch and bound instead, and its answer is taken when it is proven better.

`optimal` is true only when a proof exists; `lower_bound` is the best proven bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from placement_cli.diagnostics import Diagnostic
from placement_cli.errors import InputError, PlacementError, Problem
from placement_cli.graph import Graph
from placement_cli.io import gc_paused, num
from placement_cli.passes.scc import SccResult
from placement_cli.solvers.complete import (
    INF,
    Instance,
    bits_of,
    branch_and_bound,
    build_instance,
    find_feasible,
    root_bound,
    slack,
)
from placement_cli.solvers.heuristic import refine, solve_heuristic
from placement_cli.solvers.objective import UNASSIGNED, Cost, evaluate, feasible_for


class SolveOptions(BaseModel):
    """Options of `solve`. Only `time_limit` is wall-clock; every budget that can change
    the assignment is counted in steps, so results do not depend on machine speed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: Literal["auto", "exact", "heuristic"] = "auto"
    time_limit: float = Field(default=5.0, ge=0)
    max_rounds: int = Field(default=100, ge=0, description="forward/backward rounds of the fixpoint (0: forward pass only)")
    max_backtracks: int = Field(default=10_000, ge=0, description="backtracks before the seed gives up")
    csp_node_limit: int = Field(default=5_000, ge=1, description="B&B nodes per CSP solve of a loop")
    prove_max_blocks: int = Field(default=200, ge=0, description="live blocks up to which B&B tries to prove optimality")
    prove_node_limit: int = Field(default=200_000, ge=0, description="nodes of that proof attempt")


@dataclass(frozen=True, slots=True)
class SolveResult:
    assignment: tuple[int, ...]  # target per block; UNASSIGNED for dead blocks (all, when infeasible)
    status: str  # "ok" or "infeasible"
    diagnostics: tuple[Diagnostic, ...]
    cost: Cost | None
    optimal: bool
    lower_bound: float
    domains: tuple[int, ...]  # the pruned domains the solve ran on
    method: str
    method_used: str | None  # which solver produced the assignment
    proved_by: str | None  # what proved optimality (or infeasibility); None when unproven
    lower_bound_by: str | None  # what proved `lower_bound`: "bound", "complete" or "exact"
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        if self.cost is None or self.lower_bound == INF:
            return None
        return max(0.0, self.cost.total - self.lower_bound) / max(abs(self.cost.total), 1e-12)

    def to_json(self, g: Graph) -> dict[str, Any]:
        ids, names = g.block_ids, g.targets
        ok = self.status == "ok"
        a = self.assignment
        blocks: dict[str, Any] = {}
        for b in range(g.n_blocks):
            if not g.live[b]:
                continue
            t = a[b]
            blocks[ids[b]] = {
                "target": names[t] if ok else None,
                "cost": num(g.cost[b][t]) if ok else None,
                "costs": {names[x]: num(g.cost[b][x]) for x in bits_of(self.domains[b])},
            }
        gap = self.gap
        return {
            "method": self.method,
            "method_used": self.method_used,
            "proved_by": self.proved_by,
            "lower_bound_by": self.lower_bound_by,
            "status": self.status,
            "assignment": {ids[b]: names[a[b]] for b in range(g.n_blocks) if g.live[b]} if ok else {},
            "unreachable": [ids[b] for b in range(g.n_blocks) if not g.live[b]],
            "cost": None
            if self.cost is None
            else {"total": num(self.cost.total), "blocks": num(self.cost.blocks), "edges": num(self.cost.edges)},
            "optimal": self.optimal,
            "lower_bound": None if self.lower_bound == INF else num(self.lower_bound),
            "gap": None if gap is None else num(gap),
            "blocks": blocks,
            "stats": {k: num(v) if isinstance(v, float) else v for k, v in self.stats.items()},
        }


def _exact_module() -> Any:
    """`solvers.exact` when this build has it (issue 4 adds it), else None."""
    try:
        from placement_cli.solvers import exact  # type: ignore[attr-defined]
    except ModuleNotFoundError as exc:
        if exc.name == "placement_cli.solvers.exact":
            return None
        raise
    return exact


def _infeasible(g: Graph, domains: tuple[int, ...], blocks: tuple[int, ...], why: str, method: str,
                used: str | None, stats: dict[str, Any]) -> SolveResult:
    ids = [g.block_ids[b] for b in blocks]
    if why == "empty":
        msg = f"no feasible placement: block '{ids[0]}' has no target left after pruning"
    elif len(ids) == 1:
        msg = f"no feasible placement: block '{ids[0]}' has no target that fits its neighbours (exhaustive search)"
    else:
        msg = (f"no feasible placement: no assignment of the cycle {', '.join(ids)} fits its neighbours "
               f"(exhaustive search)")
    diag = Diagnostic("error", "infeasible", msg, tuple(ids))
    return SolveResult(
        assignment=(UNASSIGNED,) * g.n_blocks,
        status="infeasible",
        diagnostics=(diag,),
        cost=None,
        optimal=True,
        lower_bound=INF,
        domains=domains,
        method=method,
        method_used=used,
        proved_by="prune" if why == "empty" else used,
        lower_bound_by=None,
        stats=stats,
    )


@dataclass
class _Ctx:
    g: Graph
    domains: tuple[int, ...]
    comps: SccResult
    opts: SolveOptions
    inst: Instance
    deadline: float
    stats: dict[str, Any]


def _heuristic(c: _Ctx) -> tuple[tuple[int, ...] | None, tuple[int, ...], str]:
    """The seed, then the complete search if it gave up. (assignment or None when
    proven infeasible, where the seed failed, which solver produced the answer)."""
    o = c.opts
    h = solve_heuristic(c.inst, c.comps, max_rounds=o.max_rounds, max_backtracks=o.max_backtracks,
                        csp_node_limit=o.csp_node_limit)
    c.stats.update(h.stats)
    c.stats["fallback_used"] = h.assignment is None
    if h.assignment is not None:
        fwd = evaluate(c.g, h.forward)  # type: ignore[arg-type]
        c.stats["forward_cost"] = fwd.total if fwd is not None else None
        return h.assignment, (), "heuristic"
    found = find_feasible(c.inst)
    c.stats["fallback_nodes"] = found.nodes
    if found.assignment is None:
        return None, h.failed or found.failed, "complete"
    a, st = refine(c.inst, c.comps, found.assignment, max_rounds=o.max_rounds, csp_node_limit=o.csp_node_limit)
    for k in ("passes", "csp_solves", "csp_nodes", "csp_proven", "cache_hits", "switches"):
        c.stats[k] += st[k]
    c.stats["rounds"] += st["rounds"]
    return a, h.failed, "complete"


def _prove(c: _Ctx, a: tuple[int, ...]) -> tuple[float | None, tuple[int, ...] | None]:
    """Exhaustive B&B on small plans: (proven optimum or None, a better assignment)."""
    o = c.opts
    if len(c.inst.live) > o.prove_max_blocks or o.prove_node_limit == 0:
        return None, None
    bb = branch_and_bound(c.inst, c.inst.total(a), o.prove_node_limit, c.deadline)
    c.stats["proof_nodes"] = bb.nodes
    if not bb.exhausted:
        return None, None
    if bb.assignment is None:
        return evaluate(c.g, a).total, None  # type: ignore[union-attr]
    return evaluate(c.g, bb.assignment).total, bb.assignment  # type: ignore[union-attr]


def solve(g: Graph, domains: tuple[int, ...], comps: SccResult, options: SolveOptions | None = None) -> SolveResult:
    """Solve the placement problem on the pruned `domains` and condensation `comps`.

    >>> from placement_cli.model import Plan
    >>> from placement_cli.graph import build_graph
    >>> from placement_cli.passes.prune import prune
    >>> from placement_cli.passes.scc import scc
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]}))
    >>> r = solve(g, prune(g).domains, scc(g), SolveOptions(method="heuristic"))
    >>> r.to_json(g)["assignment"], r.cost.total, r.optimal
    ({'x': 'a', 'y': 'b'}, 5.0, True)
    """
    # The search allocates many small short-lived tuples and lists and no cycles worth
    # collecting; with 100k blocks the cyclic GC's scans cost more than the search.
    with gc_paused():
        return _solve(g, domains, comps, options or SolveOptions())


def _solve(g: Graph, domains: tuple[int, ...], comps: SccResult, opts: SolveOptions) -> SolveResult:
    start = time.monotonic()
    inst = build_instance(g, domains)
    stats: dict[str, Any] = {}
    c = _Ctx(g, domains, comps, opts, inst, start + opts.time_limit, stats)
    method = opts.method
    empty = inst.empty
    if empty:
        return _infeasible(g, domains, empty, "empty", method, None, stats)
    exact = _exact_module() if method != "heuristic" else None
    if method == "exact" and exact is None:
        raise PlacementError(
            "--method exact needs the exact solver (placement_cli.solvers.exact), which this build "
            "does not include; use --method heuristic or auto"
        )

    lb = root_bound(inst)
    lb_by = "bound"
    warnings: list[Diagnostic] = []
    a: tuple[int, ...] | None
    if exact is not None:
        # exact and auto: the exact method first. Where it proves the optimum (the usual
        # case on structured plans, and faster than the heuristic) that is the answer;
        # otherwise `auto` also runs the heuristic and keeps the cheaper assignment.
        out = exact.solve_exact(g, domains, comps, opts.time_limit, None)
        stats["exact"] = _clean_stats(out.stats)
        a = _checked(g, domains, out.assignment, warnings)
        used = "exact"
        if a is None and out.infeasible:
            # The diagnostic names where the seed's search fails; if the seed finds an
            # assignment after all, that verified assignment outranks the claim.
            h = solve_heuristic(inst, comps, max_rounds=opts.max_rounds, max_backtracks=opts.max_backtracks,
                                csp_node_limit=opts.csp_node_limit)
            if h.assignment is None:
                return _infeasible(g, domains, h.failed, "search", method, "exact", stats)
            warnings.append(Diagnostic("warning", "solver-disagreement",
                                       "the exact method reported no feasible placement, but the heuristic found one"))
            a, used = h.assignment, "heuristic"
        elif a is None:
            a, failed, used = _heuristic(c)
            if a is None:
                return _infeasible(g, domains, failed, "search", method, used, stats)
        elif out.optimal:
            lb, lb_by = max(lb, evaluate(g, a).total), "exact"  # type: ignore[union-attr]
        elif method == "auto":
            h_a, _failed, h_used = _heuristic(c)
            if h_a is not None and evaluate(g, h_a).total < evaluate(g, a).total:  # type: ignore[union-attr]
                a, used = h_a, h_used
        if not out.infeasible and out.lower_bound > lb:
            lb, lb_by = out.lower_bound, "exact"
    else:
        a, failed, used = _heuristic(c)
        if a is None:
            return _infeasible(g, domains, failed, "search", method, used, stats)
        bound_module = _exact_module()
        if bound_module is not None:
            # The seed's own answer stays as it is; the exact machinery only certifies how
            # far from optimal it can be (far tighter than the root bound on large plans).
            remaining = max(0.0, opts.time_limit - (time.monotonic() - start))
            proven_lb = bound_module.lower_bound(g, domains, remaining)
            if proven_lb != INF and proven_lb > lb:
                lb, lb_by = proven_lb, "exact"
        proven, _better = _prove(c, a)
        if proven is not None and proven > lb:
            lb, lb_by = proven, "complete"

    cost = evaluate(g, a)
    if cost is None or not feasible_for(g, domains, a):
        raise PlacementError(f"internal error: the {used} solver produced an infeasible assignment")
    # A bound within rounding slack of the total proves the total; it is then reported
    # as the total itself (the spec: lower_bound equals total when optimal).
    optimal = lb >= cost.total - slack(cost.total)
    if optimal:
        lb = cost.total
    return SolveResult(
        assignment=a,
        status="ok",
        diagnostics=tuple(warnings),
        cost=cost,
        optimal=optimal,
        lower_bound=lb,
        domains=domains,
        method=method,
        method_used=used,
        proved_by=lb_by if optimal else None,
        lower_bound_by=lb_by,
        stats=stats,
    )


def _checked(g: Graph, domains: tuple[int, ...], a: Any, warnings: list[Diagnostic]) -> tuple[int, ...] | None:
    """An assignment from another solver, used only once verified."""
    if a is None:
        return None
    a = tuple(a)
    if len(a) == g.n_blocks and feasible_for(g, domains, a):
        return tuple(t if g.live[b] else UNASSIGNED for b, t in enumerate(a))
    warnings.append(Diagnostic("warning", "solver-disagreement",
                               "the exact method returned an infeasible assignment; it was ignored"))
    return None


def _clean_stats(s: dict[str, Any]) -> dict[str, Any]:
    """The exact method's counters, without anything named like a timing:
    artifacts must be byte-identical across runs."""
    return {k: v for k, v in sorted(s.items())
            if not (k.endswith(("_s", "_ms", "_sec", "_seconds")) or "time" in k or "elapsed" in k)}


def from_json(section: Any, g: Graph) -> tuple[int, ...]:
    """Read a solve section's `assignment` back (a pipe's earlier stage) and check it:
    every live block on a target of its domain, every edge allowed.

    >>> from placement_cli.model import Plan
    >>> from placement_cli.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "blocks": [{"id": "x", "terminator": {"kind": "return"}}]}))
    >>> from_json({"assignment": {"x": "b"}}, g)
    (1,)
    """
    if not isinstance(section, dict) or not isinstance(section.get("assignment"), dict):
        raise InputError([Problem("solve.assignment", "expected a map block -> target")])
    amap = section["assignment"]
    infeasible = section.get("status") == "infeasible"
    out = [UNASSIGNED] * g.n_blocks
    problems: list[Problem] = []
    for k, v in amap.items():
        where = f"solve.assignment.{k}"
        b = g.index.get(k)
        if b is None:
            problems.append(Problem(where, f"unknown block '{k}'"))
        elif not g.live[b]:
            problems.append(Problem(where, f"block '{k}' is unreachable and takes no target"))
        elif not isinstance(v, str) or v not in g.targets:
            problems.append(Problem(where, f"unknown target {v!r}"))
        elif not g.domain[b] >> g.targets.index(v) & 1:
            problems.append(Problem(where, f"target '{v}' cannot run block '{k}'"))
        else:
            out[b] = g.targets.index(v)
    if not infeasible:
        for b in range(g.n_blocks):
            if g.live[b] and out[b] == UNASSIGNED and g.block_ids[b] not in amap:
                problems.append(Problem(f"solve.assignment.{g.block_ids[b]}", "missing: every reachable block needs a target"))
        if not problems:
            for e in range(g.n_edges):
                u, v = g.edge_src[e], g.edge_dst[e]
                if g.live[u] and g.edge_mat[e].get(out[u], out[v]) is None:
                    problems.append(Problem(
                        f"solve.assignment.{g.block_ids[u]}",
                        f"edge {g.block_ids[u]}[{g.edge_pos[e]}] -> {g.block_ids[v]} does not allow "
                        f"{g.targets[out[u]]} -> {g.targets[out[v]]}",
                    ))
    if problems:
        raise InputError(problems)
    return tuple(out)

