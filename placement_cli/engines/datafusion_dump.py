"""An executed DataFusion plan's metrics as the file `placement import
datafusion-metrics` reads (its shape: `frontends/engine_plans/datafusion.py`,
docs/import.md).

DataFusion hands its executed plan over as a Python object (`df.execution_plan()`),
whose metrics are filled in only after the query ran, so the file is written from the
same DataFrame after `collect()`:

    import datafusion
    from placement_cli.engines.datafusion_dump import dump_metrics

    ctx = datafusion.SessionContext()
    ...  # register the tables
    df = ctx.sql(QUERY)
    df.collect()
    with open("q3.datafusion.json", "wb") as fh:
        fh.write(dump_metrics(df))

    placement import datafusion-metrics q3.datafusion.json -o q3.tree.json
"""

from __future__ import annotations

from typing import Any

import orjson

FORMAT = "datafusion-metrics"


def plan_metrics(plan: Any) -> dict[str, Any]:
    """The `{"format", "version", "plan"}` document of an executed plan (an
    `ExecutionPlan`): each node's name, its one-line description, its numeric metrics
    summed over partitions (times in nanoseconds), and its children."""
    root: dict[str, Any] = {}
    stack: list[tuple[Any, dict[str, Any]]] = [(plan, root)]
    while stack:  # iterative: a plan of thousands of operators nests that deep
        node, out = stack.pop()
        detail = node.display().strip().splitlines()[0] if node.display() else ""
        out["name"] = detail.split(":", 1)[0].strip() or type(node).__name__
        out["detail"] = detail
        out["metrics"] = _metrics(node.metrics())
        kids = list(node.children())
        out["children"] = [{} for _ in kids]
        stack.extend(zip(kids, out["children"], strict=True))
    return {"format": FORMAT, "version": 1, "plan": root}


def _metrics(metrics: Any) -> dict[str, int | float]:
    """Every numeric metric summed by name over partitions and labels (timestamps,
    which are not numbers, left out), in the order DataFusion lists them."""
    out: dict[str, int | float] = {}
    if metrics is None:
        return out
    for m in metrics.metrics():
        value = m.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        out[m.name] = out.get(m.name, 0) + value
    return out


def dump_metrics(df: Any) -> bytes:
    """The metrics file (JSON bytes) of a DataFusion DataFrame that has been collected."""
    return orjson.dumps(plan_metrics(df.execution_plan()), option=orjson.OPT_INDENT_2)
