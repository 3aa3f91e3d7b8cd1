"""`import datafusion-metrics`: an executed DataFusion plan's metrics (docs/import.md).

DataFusion gives its executed plan as a Python object, not a file; the file this reads
is the JSON that `placement_cli.engines.datafusion_dump` writes from it after the query
ran:

    {"format": "datafusion-metrics", "version": 1, "plan": NODE}
    NODE = {"name": "HashJoinExec", "detail": "HashJoinExec: mode=...",
            "metrics": {"elapsed_compute": 1080000, "output_rows": 1660, ...},
            "children": [NODE, ...]}

Each metric is summed over the partitions; times are nanoseconds. A node's time is its
`elapsed_compute` (CPU time summed over partitions, as DuckDB's). A scan reports its time
as `time_elapsed_processing` or `time_elapsed_scanning_total` (file scans) rather than
`elapsed_compute`, and an in-memory table reports no metrics at all: then the time its
parent spent fetching from it (`fetch_time`, which a `RepartitionExec` records) is its
time, and the rows of a parent that passes every row on (a repartition or coalesce) are
its rows, with an info saying so. Rows are `output_rows`, the width `output_bytes /
output_rows` (bytes, as DataFusion counts its batches' buffers).
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

FORMAT = "datafusion-metrics"
# The time a scan reports instead of elapsed_compute, in order of preference.
SCAN_TIMES = ("time_elapsed_processing", "time_elapsed_scanning_total", "time_elapsed_opening")
# Operators that pass every input row on unchanged: their rows are their input's.
ROW_KEEPING = ("RepartitionExec", "CoalescePartitionsExec", "CoalesceBatchesExec")


def read(path: str, data: bytes, source: str, engine: str, options: Any = None) -> Plan:
    """The operators of a `datafusion-metrics` file, times in milliseconds."""
    top = mapping(load(path, data, source), "", source)
    if top.get("format") != FORMAT:
        raise bad(
            "format", f"expected {FORMAT!r} (a file engines/datafusion_dump.py writes)", source
        )
    if top.get("version") != 1:
        raise bad("version", "expected version 1", source)
    nodes: list[Node] = []
    metrics: list[dict[str, Any]] = []
    parents: list[int] = []
    stack: list[tuple[Any, str, int]] = [(top.get("plan"), "plan", -1)]
    while stack:
        raw, p, parent = stack.pop()
        node = mapping(raw, p, source)
        name = text(node, "name", p, source)
        m = mapping(node.get("metrics", {}), f"{p}.metrics", source)
        mp = f"{p}.metrics"
        for key in m:  # every number is checked, used or not: a NaN is a broken file
            number(m, key, mp, source)
        metrics.append(m)
        parents.append(parent)
        rows = number(m, "output_rows", mp, source, None)
        size = number(m, "output_bytes", mp, source, None)
        ms = number(m, "elapsed_compute", mp, source, 0.0) / 1e6
        nodes.append(Node(name, p, time=ms, rows=rows, row_width=width(size, rows)))
        me = len(nodes) - 1
        if parent >= 0:
            nodes[parent].children.append(me)
        kids = sequence(node.get("children", []), f"{p}.children", source)
        for k in range(len(kids) - 1, -1, -1):
            stack.append((kids[k], f"{p}.children[{k}]", me))
    plan = Plan(engine, FORMAT, nodes)
    _scans(plan, metrics, parents)
    plan.total = sum(n.time for n in nodes)
    return plan


def _scans(plan: Plan, metrics: list[dict[str, Any]], parents: list[int]) -> None:
    """Give each leaf the time it really took: its scan time, else its parent's time
    fetching from it; and rows from a parent that keeps every row, when it has none."""
    borrowed: list[str] = []
    for i, node in enumerate(plan.nodes):
        if node.children:
            continue
        m = metrics[i]
        scan = max((float(m[k]) for k in SCAN_TIMES if k in m), default=0.0) / 1e6
        node.time = max(node.time, scan)
        parent = parents[i]
        if parent < 0 or len(plan.nodes[parent].children) != 1:
            continue
        up = plan.nodes[parent]
        took = False
        if node.time == 0 and "fetch_time" in metrics[parent]:
            node.time = float(metrics[parent]["fetch_time"]) / 1e6
            took = True
        if node.rows is None and up.op in ROW_KEEPING and up.rows is not None:
            node.rows, node.row_width = up.rows, up.row_width
            took = True
        if took:
            borrowed.append(node.path)
    if borrowed:
        plan.diagnostics.append(
            {
                "severity": "info",
                "code": "scan-metrics-from-parent",
                "message": f"{len(borrowed)} scan(s) of the {plan.engine} plan report no "
                "metrics of their own (in-memory tables): their time is their parent's "
                f"fetch_time and their rows their parent's; the first at {borrowed[0]}",
                "blocks": [],
            }
        )
