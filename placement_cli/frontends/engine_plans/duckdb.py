"""`import duckdb-profile`: DuckDB's JSON profile (docs/import.md).

Written by `PRAGMA enable_profiling='json'` (with `PRAGMA profiling_output='FILE'`) or
returned by `EXPLAIN (ANALYZE, FORMAT JSON)`: the top object is the query, its
`children` the root operator. Each operator's `operator_timing` (seconds) is already its
own, exclusive time, but it is CPU time summed over the threads that ran it, not wall
clock: on several cores the times add up to more than the query's latency. Rows are
`operator_cardinality`, the width `result_set_size / operator_cardinality` (bytes).
`EXPLAIN ANALYZE`'s own `EXPLAIN_ANALYZE` operator on top is not an operator of the
query: it is left out and its (tiny) time added to the root's, so the total of the
timings is kept.
"""

from __future__ import annotations

from typing import Any

from placement_cli.frontends.engine_plans.model import (
    Node,
    Plan,
    bad,
    load,
    mapping,
    number,
    sequence,
    text,
    width,
)

WRAPPER = "EXPLAIN_ANALYZE"


def read(path: str, data: bytes, source: str, engine: str, options: Any = None) -> Plan:
    """The operators of a DuckDB JSON profile, times in milliseconds."""
    top = mapping(load(path, data, source), "", source)
    obj, where, extra = _root(top, source)
    nodes: list[Node] = []
    total = 0.0
    stack: list[tuple[Any, str, int]] = [(obj, where, -1)]
    while stack:
        raw, p, parent = stack.pop()
        node = mapping(raw, p, source)
        op = text(node, "operator_name", p, source, None) or text(node, "operator_type", p, source)
        if "operator_timing" not in node:
            raise bad(p, "no `operator_timing`: not a profile of a query that ran", source)
        ms = number(node, "operator_timing", p, source) * 1000.0
        total += ms
        rows = number(node, "operator_cardinality", p, source)
        size = number(node, "result_set_size", p, source, None)
        nodes.append(Node(op.strip(), p, time=ms, rows=rows, row_width=width(size, rows)))
        me = len(nodes) - 1
        if parent >= 0:
            nodes[parent].children.append(me)
        kids = sequence(node.get("children", []), f"{p}.children", source)
        for k in range(len(kids) - 1, -1, -1):
            stack.append((kids[k], f"{p}.children[{k}]", me))
    nodes[0].time += extra
    return Plan(engine, "duckdb-profile", nodes, total=total + extra)


def _root(top: dict[str, Any], source: str) -> tuple[Any, str, float]:
    """The root operator, its path, and the time of a left-out EXPLAIN_ANALYZE wrapper."""
    obj: Any = top
    where = ""
    extra = 0.0
    while isinstance(obj, dict) and (
        "operator_type" not in obj or obj.get("operator_type") == WRAPPER
    ):
        if obj.get("operator_type") == WRAPPER:
            extra += number(obj, "operator_timing", where, source, 0.0) * 1000.0
        kids = sequence(obj.get("children"), f"{where}.children" if where else "children", source)
        if len(kids) != 1:
            raise bad(
                f"{where}.children" if where else "children",
                f"expected the query's one root operator, got {len(kids)}",
                source,
            )
        where = f"{where}.children[0]" if where else "children[0]"
        obj = kids[0]
    return obj, where, extra
