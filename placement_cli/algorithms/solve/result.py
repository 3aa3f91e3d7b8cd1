"""The result of `solve` (`placement_cli.algorithms.solve.driver`) and its artifact section: written
(`SolveResult.to_json`) and read back and checked (`from_json`, a pipe's earlier stage)."""

from __future__ import annotations

import math
from typing import Any

import msgspec

from placement_cli.algorithms.solve.instance import INF, bits_of
from placement_cli.algorithms.solve.objective import UNASSIGNED, Cost
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import num
from placement_cli.ir.graph import Graph


class SolveResult(msgspec.Struct, frozen=True):
    assignment: tuple[int, ...]  # target per block; UNASSIGNED for dead blocks (all, unless ok)
    status: str  # "ok", "infeasible" (proven) or "unsolved" (stopped by a limit)
    diagnostics: tuple[Diagnostic, ...]
    cost: Cost | None
    optimal: bool
    lower_bound: float
    domains: tuple[int, ...]  # the pruned domains the solve ran on
    method: str
    method_used: str | None  # which solver produced the assignment
    proved_by: str | None  # what proved optimality (or infeasibility); None when unproven
    lower_bound_by: str | None  # what proved `lower_bound`: "bound", "complete" or "exact"
    stats: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        if self.cost is None or self.lower_bound == INF:
            return None
        return max(0.0, self.cost.total - self.lower_bound) / max(abs(self.cost.total), 1e-12)

    def to_json(self, g: Graph, blocks: bool = True) -> dict[str, Any]:
        """The section's data; `blocks=False` leaves out the per-block cost table (the
        stage does not write it: the plan has the costs)."""
        ids, names = g.block_ids, g.targets
        ok = self.status == "ok"
        a = self.assignment
        table: dict[str, Any] = {}
        for b in range(g.n_blocks) if blocks else ():
            if not g.live[b]:
                continue
            t = a[b]
            table[ids[b]] = {
                "target": names[t] if ok else None,
                "cost": num(g.cost[b][t]) if ok else None,
                "costs": {names[x]: num(g.cost[b][x]) for x in bits_of(self.domains[b])},
            }
        gap = self.gap
        live = g.live
        out = {
            "method": self.method,
            "method_used": self.method_used,
            "proved_by": self.proved_by,
            "lower_bound_by": self.lower_bound_by,
            "status": self.status,
            "assignment": {ids[b]: names[a[b]] for b in range(g.n_blocks) if live[b]} if ok else {},
            "unreachable": [ids[b] for b in range(g.n_blocks) if not live[b]],
            "cost": None
            if self.cost is None
            else {
                "total": num(self.cost.total),
                "blocks": num(self.cost.blocks),
                "edges": num(self.cost.edges),
            },
            "optimal": self.optimal,
            "lower_bound": None if self.lower_bound == INF else num(self.lower_bound),
            "gap": None if gap is None else num(gap),
            "blocks": table,
            "stats": {k: _stat(v) for k, v in self.stats.items()},
        }
        if not blocks:
            del out["blocks"]
        return out


def _stat(v: Any) -> Any:
    if isinstance(v, float):
        return num(v) if math.isfinite(v) else None
    return v


def clean_stats(s: dict[str, Any]) -> dict[str, Any]:
    """The exact method's counters, without anything named like a timing:
    artifacts must be byte-identical across runs."""
    return {
        k: v
        for k, v in sorted(s.items())
        if not (k.endswith(("_s", "_ms", "_sec", "_seconds")) or "time" in k or "elapsed" in k)
    }


def from_json(section: Any, g: Graph) -> tuple[int, ...]:
    """Read a solve section's `assignment` back (a pipe's earlier stage) and check it:
    every live block on a target of its domain, every edge allowed.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
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
                problems.append(
                    Problem(
                        f"solve.assignment.{g.block_ids[b]}",
                        "missing: every reachable block needs a target",
                    )
                )
        if not problems:
            for e in range(g.n_edges):
                u, v = g.edge_src[e], g.edge_dst[e]
                if g.live[u] and g.edge_mat[e].get(out[u], out[v]) is None:
                    problems.append(
                        Problem(
                            f"solve.assignment.{g.block_ids[u]}",
                            f"edge {g.block_ids[u]}[{g.edge_pos[e]}] -> {g.block_ids[v]} does not allow "
                            f"{g.targets[out[u]]} -> {g.targets[out[v]]}",
                        )
                    )
    if problems:
        raise InputError(problems)
    return tuple(out)
