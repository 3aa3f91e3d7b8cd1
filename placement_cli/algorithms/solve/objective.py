"""The objective of `docs/format.md` ("The objective"), evaluated one way for every
solver and test.

The placement problem covers the blocks reachable from the entry (dead blocks never run,
so they can neither cost anything nor make a plan infeasible). Its objective is

    sum over live blocks b of cost(b, target(b))
  + sum over edges u -> v with u live of M(u,k)[target(u), target(v)]

each edge once, self-loops included. Assignments are tuples of target indices, one per
block, with UNASSIGNED (-1) for dead blocks.
"""

from __future__ import annotations

import msgspec

from placement_cli.ir.graph import Graph

UNASSIGNED = -1


class Cost(msgspec.Struct, frozen=True):
    total: float
    blocks: float
    edges: float


def evaluate(g: Graph, assignment: tuple[int, ...] | list[int]) -> Cost | None:
    """The objective of an assignment, or None when it is infeasible for the plan's
    own domains (use `feasible_for` to check against pruned domains as well).

    Sums run in block order, then edge order, so the same assignment always gives the
    bit-identical float.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]}))
    >>> evaluate(g, (0, 1))
    Cost(total=5.0, blocks=2.0, edges=3.0)
    """
    # `solve` evaluates its answer up to three times (its result, the exact solver's
    # total, the feasibility check): the last answer per graph is kept.
    key = assignment if type(assignment) is tuple else tuple(assignment)
    last = g._memo.get("evaluated")
    if last is not None and last[0] == key:
        cached: Cost | None = last[1]
        return cached
    got = _evaluate(g, key)
    g._memo["evaluated"] = (key, got)
    return got


def _evaluate(g: Graph, assignment: tuple[int, ...]) -> Cost | None:
    blocks = 0.0
    live = g.live
    for b, (is_live, dom, row) in enumerate(zip(live, g.domain, g.cost, strict=True)):
        if not is_live:
            continue
        t = assignment[b]
        if t < 0 or not dom >> t & 1:
            return None
        blocks += row[t]
    edges = 0.0
    K = g.n_targets
    for u, v, m in zip(g.edge_src, g.edge_dst, g.edge_mat, strict=True):
        if not live[u]:
            continue
        c = m.cost[assignment[u] * K + assignment[v]]  # Matrix.get, inlined
        if c is None:
            return None
        edges += c
    return Cost(blocks + edges, blocks, edges)


def feasible_for(
    g: Graph, domains: tuple[int, ...], assignment: tuple[int, ...] | list[int]
) -> bool:
    """Every live block on a target of `domains` and every live edge allowed."""
    for b in range(g.n_blocks):
        if g.live[b]:
            t = assignment[b]
            if t < 0 or not domains[b] >> t & 1:
                return False
    return evaluate(g, assignment) is not None
