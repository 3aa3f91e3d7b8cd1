"""Systematic search for `solve`: the complete fallback, built on the one branch-and-bound
engine (`solve.search`) over the pairwise form of a plan (`solve.instance`) and its
time and memory `Budget` (`solve.budget`); every name of those stays importable here.

The engine serves two callers. The seed heuristic runs it inside each cyclic super block
(forward checking, a node limit); the complete fallback runs it over every live block
(maintained arc consistency, no limit on feasibility), so that `solve` says "infeasible"
only when no feasible assignment exists, and so that small plans can be proven optimal.

Everything works on `Instance`: the live part of the plan with parallel edges and both
directions of a block pair folded into one cost table per pair. The objective is the same
as `objective.evaluate` (each edge once), just grouped by block pair.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from placement_cli.algorithms.solve.budget import Budget, slack
from placement_cli.algorithms.solve.instance import (
    INF,
    Instance,
    Table,
    bits_of,
    build_instance,
    root_bound,
)
from placement_cli.algorithms.solve.search import Found, Sub, search

# The pairwise form lives in `solve.instance`, the budget in `solve.budget`, the
# engine in `solve.search`; these names stay importable from here.
__all__ = [
    "INF",
    "Budget",
    "Found",
    "Instance",
    "Sub",
    "Table",
    "bits_of",
    "build_instance",
    "root_bound",
    "search",
    "slack",
]


def whole(inst: Instance) -> Sub:
    """The search problem over every live block."""
    return Sub(inst, inst.live)


class Complete(msgspec.Struct, frozen=True):
    assignment: tuple[int, ...] | None  # global, UNASSIGNED (-1) for dead blocks
    cost: float
    exhausted: bool  # True: `assignment` is optimal, or (None) no feasible one exists
    nodes: int
    failed: tuple[int, ...]  # when proven infeasible at the root: the block that emptied


def _globalise(inst: Instance, sub: Sub, values: tuple[int, ...]) -> tuple[int, ...]:
    out = [-1] * inst.n
    for i, b in enumerate(sub.blocks):
        out[b] = values[i]
    return tuple(out)


def find_feasible(inst: Instance, budget: Budget | None = None) -> Complete:
    """The completeness guarantee: depth-first search with maintained arc consistency
    over every live block until it finds a feasible assignment or proves there is none.
    Values are tried cheapest first (against assigned neighbours), so the answer is a
    reasonable start for local improvement. No node limit: this is the search that may
    not give up on its own; `budget` stops it (`exhausted` False, no assignment: unknown).

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"b": 1}, "b": {"a": 1}},
    ...     "blocks": [{"id": "x", "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "terminator": {"kind": "goto", "successors": [{"block": "x"}]}}]}))
    >>> find_feasible(build_instance(g, g.domain)).assignment
    (0, 1)
    """
    sub = whole(inst)
    f = search(
        sub,
        [inst.dom[b] for b in sub.blocks],
        [inst.unary[b] for b in sub.blocks],
        mac=True,
        bound=False,
        budget=budget,
        first_only=True,
    )
    if f.values is None:
        failed = (sub.blocks[f.failed],) if f.failed >= 0 else ()
        return Complete(None, INF, f.exhausted, f.nodes, failed)
    return Complete(_globalise(inst, sub, f.values), f.cost, False, f.nodes, ())


def branch_and_bound(
    inst: Instance, upper: float = INF, node_limit: int | None = None, budget: Budget | None = None
) -> Complete:
    """Exhaustive branch and bound with maintained arc consistency over every live
    block. `exhausted` means proven: the returned assignment is optimal, or when it is
    None no assignment beats `upper` (none at all if `upper` is infinite).

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]}))
    >>> r = branch_and_bound(build_instance(g, g.domain))
    >>> r.assignment, r.cost, r.exhausted
    ((0, 1), 5.0, True)
    """
    sub = whole(inst)
    f = search(
        sub,
        [inst.dom[b] for b in sub.blocks],
        [inst.unary[b] for b in sub.blocks],
        mac=True,
        bound=True,
        node_limit=node_limit,
        budget=budget,
        upper=upper,
    )
    if f.values is None:
        failed = (sub.blocks[f.failed],) if f.failed >= 0 else ()
        return Complete(None, INF, f.exhausted, f.nodes, failed)
    return Complete(_globalise(inst, sub, f.values), f.cost, f.exhausted, f.nodes, ())


def arc_consistent(inst: Instance, dom: Sequence[int]) -> tuple[tuple[int, ...], int]:
    """AC-3 over the pair tables of the live blocks, from domains `dom` (narrowed by
    pins, say): (the largest arc-consistent domains, -1), or (partial domains, the block
    whose domain emptied) when there are none.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0}, "b": {"b": 0}},
    ...     "blocks": [{"id": "x", "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "terminator": {"kind": "return"}}]}))
    >>> inst = build_instance(g, g.domain)
    >>> arc_consistent(inst, (0b01, 0b11))
    ((1, 1), -1)
    >>> arc_consistent(inst, (0b01, 0b10))[1]
    1
    """
    cur = list(dom)
    queue = list(reversed(inst.live))
    inq = [False] * inst.n
    for b in queue:
        inq[b] = True
    while queue:
        z = queue.pop()
        inq[z] = False
        dz = bits_of(cur[z])
        for y, al in zip(inst.nbr[z], inst.allow[z], strict=True):
            sup = 0
            for tz in dz:
                sup |= al[tz]
            dy = cur[y]
            nd = dy & sup
            if nd != dy:
                cur[y] = nd
                if nd == 0:
                    return tuple(cur), y
                if not inq[y]:
                    inq[y] = True
                    queue.append(y)
    return tuple(cur), -1
