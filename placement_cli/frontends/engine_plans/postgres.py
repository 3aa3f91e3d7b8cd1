"""`import postgres-explain`: PostgreSQL's `EXPLAIN (ANALYZE, FORMAT JSON)` (docs/import.md).

The document is `[{"Plan": node, ...}]` (or the one object); a node's inputs are in
`Plans`, sub-plans and init-plans among them (their `Parent Relationship` says which).
`Actual Total Time` is inclusive and per loop, so a node's inclusive time is `total x
loops` and its exclusive time that minus its children's inclusive times. Under a
`Gather` or `Gather Merge` the loops count the processes that ran the subtree side by
side (workers and leader), so there each inclusive time is divided by the number of
processes that ran the Gather's child: the per-process (wall-clock) time, which is
what the Gather waited for. When a node's children took longer together than the node
itself (timer noise; a CTE read by several nodes), the node's time is 0 and its
children's subtrees are scaled down to what it measured (`model.shared`), so the
exclusive times always add up to the root's `total x loops`. An init-plan or a CTE
moves under the node that uses it (`_move_init_plans`).
Rows are `Actual Rows x Actual Loops`, the width is `Plan Width` (bytes).

Without ANALYZE there are no actual times: the planner's `Total Cost` (inclusive, in
cost units, not milliseconds) and `Plan Rows` are used, and the plan is marked as
estimated.
"""

from __future__ import annotations

import re
from typing import Any

from placement_cli.frontends.engine_plans.model import (
    Node,
    Plan,
    bad,
    checked,
    load,
    mapping,
    number,
    sequence,
    shared,
    text,
)

GATHERS = ("Gather", "Gather Merge")
# What an init-plan returns: `InitPlan 1 (returns $0,$1)` up to PostgreSQL 15, used as
# `$0`; from 16 on `InitPlan 1`, used as `(InitPlan 1).col1`. A CTE is `CTE name`.
_RETURNS = re.compile(r"\$\d+")


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
    raws: list[dict[str, Any]] = []
    parents: list[int] = []
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
        raws.append(node)
        parents.append(parent)
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
    _move_init_plans(nodes, raws, parents, inclusive)
    plan = Plan(engine, "postgres-explain", nodes, estimated=not analyzed, total=inclusive[0])
    shared(plan, inclusive, "cost" if not analyzed else "time")
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
    return checked(plan, source)


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


def _move_init_plans(
    nodes: list[Node], raws: list[dict[str, Any]], parents: list[int], inclusive: list[float]
) -> None:
    """Put each init-plan under the node that uses its result.

    EXPLAIN lists an init-plan (and a CTE) under the top node of its query level, but
    PostgreSQL runs it when a node first needs its value, and charges its time to that
    node (and so to every node above it): Q11's `HAVING sum(...) > $0` puts the
    init-plan's time inside the Aggregate, not beside it. Left where EXPLAIN lists it,
    its time would be taken off its listed parent twice. So it moves under the first
    node (in pre-order, below its listed parent) whose expressions use its value, or,
    for a CTE, the CTE Scan of it that took longest (the one that drove most of the
    CTE's work; the others' share of it is scaled away by `shared`); when its listed
    parent uses it itself, or no node does, it stays.
    """
    for i, raw in enumerate(raws):
        if raw.get("Parent Relationship") != "InitPlan" or parents[i] < 0:
            continue
        name = raw.get("Subplan Name")
        if not isinstance(name, str):
            continue
        p = parents[i]
        user = _user(name, p, i, nodes, raws, inclusive)
        if user is None or user == p:
            continue
        nodes[p].children.remove(i)
        nodes[user].children.insert(0, i)  # EXPLAIN lists init-plans first
        parents[i] = user


def _user(
    name: str,
    p: int,
    skip: int,
    nodes: list[Node],
    raws: list[dict[str, Any]],
    inclusive: list[float],
) -> int | None:
    """The node at or below `p` (not in `skip`'s subtree) that uses `name`'s value."""
    if name.startswith("CTE "):
        cte = name[4:]
        scans = [
            j
            for j in _below(p, skip, nodes)
            if raws[j].get("Node Type") == "CTE Scan" and raws[j].get("CTE Name") == cte
        ]
        return max(scans, key=lambda j: inclusive[j], default=None)
    head = name.split(" (", 1)[0]
    tokens = [re.compile(re.escape(t) + r"(?!\d)") for t in _RETURNS.findall(name)]
    tokens.append(re.compile(re.escape(f"({head})")))
    for j in _below(p, skip, nodes):
        for value in raws[j].values():
            texts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
            if any(isinstance(t, str) and k.search(t) for t in texts for k in tokens):
                return j
    return None


def _below(p: int, skip: int, nodes: list[Node]) -> list[int]:
    """`p` and the nodes below it in pre-order, without `skip`'s subtree."""
    out, stack = [], [p]
    while stack:
        j = stack.pop()
        if j != skip:
            out.append(j)
            stack.extend(reversed(nodes[j].children))
    return out
