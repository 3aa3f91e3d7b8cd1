"""`import postgres-explain`: PostgreSQL's `EXPLAIN (ANALYZE, FORMAT JSON)` (docs/import.md).

The document is `[{"Plan": node, ...}]` (or the one object); a node's inputs are in
`Plans`, sub-plans and init-plans among them (their `Parent Relationship` says which).
`Actual Total Time` is inclusive and per loop, so a node's inclusive time is `total x
loops` and its exclusive time that minus its children's inclusive times. Under a
`Gather` or `Gather Merge` the loops count the processes that ran the subtree side by
side (workers and leader), so there each inclusive time is divided by the number of
processes that ran the Gather's child: the per-process (wall-clock) time, which is
what the Gather waited for. The exclusive times then add up to the root's `total x
loops` exactly, before noise (a child measured slower than its parent) is clamped to 0.
Rows are `Actual Rows x Actual Loops`, the width is `Plan Width` (bytes).

Without ANALYZE there are no actual times: the planner's `Total Cost` (inclusive, in
cost units, not milliseconds) and `Plan Rows` are used, and the plan is marked as
estimated.
"""

from __future__ import annotations

from typing import Any

from placement_cli.frontends.engine_plans.model import (
    Node,
    Plan,
    bad,
    clamped,
    load,
    mapping,
    number,
    sequence,
    text,
)

GATHERS = ("Gather", "Gather Merge")


def read(path: str, data: bytes, source: str, engine: str, options: Any = None) -> Plan:
    """The plan in an `EXPLAIN (FORMAT JSON)` document, with or without ANALYZE."""
    doc = load(path, data, source)
    where = ""
    if isinstance(doc, list):
        if len(doc) != 1:
            raise bad(
                "", f"expected the EXPLAIN of one query (a list of 1), got {len(doc)}", source
            )
        doc, where = doc[0], "[0]"
    top = mapping(doc, where, source)
    if "Plan" not in top:
        raise bad(where, "no `Plan`: not the output of EXPLAIN (FORMAT JSON)", source)
    root_path = f"{where}.Plan" if where else "Plan"
    root = mapping(top["Plan"], root_path, source)
    analyzed = "Actual Total Time" in root
    return _walk(root, root_path, source, engine, analyzed)


def _walk(root: dict[str, Any], root_path: str, source: str, engine: str, analyzed: bool) -> Plan:
    nodes: list[Node] = []
    inclusive: list[float] = []
    # (node, its path, parent index, processes sharing its subtree's loops)
    stack: list[tuple[Any, str, int, float]] = [(root, root_path, -1, 1.0)]
    while stack:
        obj, path, parent, share = stack.pop()
        node = mapping(obj, path, source)
        kind = text(node, "Node Type", path, source)
        if analyzed:
            loops = number(node, "Actual Loops", path, source)
            total = number(node, "Actual Total Time", path, source)
            rows = number(node, "Actual Rows", path, source) * loops
            inclusive.append(total * loops / share)
        else:
            loops = 1.0
            inclusive.append(number(node, "Total Cost", path, source))
            rows = number(node, "Plan Rows", path, source)
        nodes.append(
            Node(
                _label(node, kind, path, source),
                path,
                rows=rows,
                row_width=number(node, "Plan Width", path, source, None),
            )
        )
        me = len(nodes) - 1
        if parent >= 0:
            nodes[parent].children.append(me)
        kids = sequence(node.get("Plans", []), f"{path}.Plans", source)
        gather = kind in GATHERS
        for k in range(len(kids) - 1, -1, -1):
            kid_path = f"{path}.Plans[{k}]"
            kid_share = share
            if gather and analyzed:
                # Every process that ran the child ran it side by side: the Gather
                # waited for one of them, not for the sum.
                kid = mapping(kids[k], kid_path, source)
                kid_share = max(number(kid, "Actual Loops", kid_path, source), 1.0)
            stack.append((kids[k], kid_path, me, kid_share))
    exclusive = list(inclusive)
    for i, node in enumerate(nodes):
        for c in node.children:
            exclusive[i] -= inclusive[c]
    plan = Plan(engine, "postgres-explain", nodes, estimated=not analyzed, total=inclusive[0])
    clamped(plan, exclusive, "cost" if not analyzed else "time")
    if not analyzed:
        plan.diagnostics.append(
            {
                "severity": "warning",
                "code": "estimated-times",
                "message": f"the {engine} plan has no actual times (EXPLAIN without ANALYZE): "
                "its times are the planner's Total Cost (cost units, not milliseconds) and "
                "its rows the planner's estimates",
                "blocks": [],
            }
        )
    return plan


def _label(node: dict[str, Any], kind: str, path: str, source: str) -> str:
    """`Seq Scan on lineitem`, `Hash Join`, `Aggregate (SubPlan 1)`: what EXPLAIN's text
    form would print first on the node's line."""
    label = kind
    rel = text(node, "Relation Name", path, source, None)
    if rel is not None:
        label += f" on {rel}"
    sub = text(node, "Subplan Name", path, source, None)
    if sub is not None:
        label += f" ({sub})"
    return label
