"""The plan an engine printed, as `import` reads it: operators in pre-order, each with
its own (exclusive) time, its output rows and bytes per row, and the checks every
reader shares (a number must be a finite number, a field must be there), each failure
an exit-3 problem with the JSON path of the value."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import orjson

from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import parse_document


@dataclass(slots=True)
class Node:
    """One operator: `op` names it (the engine's own words), `path` is where it was in
    the input (`[0].Plan.Plans[1]`), `children` are indexes into `Plan.nodes`."""

    op: str
    path: str
    children: list[int] = field(default_factory=list)
    time: float = 0.0  # exclusive milliseconds (or planner cost units when estimated)
    rows: float | None = None
    row_width: float | None = None


@dataclass(slots=True)
class Plan:
    """One engine's plan of one query. `nodes[0]` is the root; `estimated` when the
    times are the planner's cost estimates, not measurements; `total` what the
    exclusive times add up to (the root's inclusive time; DuckDB, DataFusion: their sum);
    `diagnostics` the warnings reading it raised."""

    engine: str
    format: str
    nodes: list[Node]
    estimated: bool = False
    total: float | None = None
    diagnostics: list[dict[str, Any]] = field(default_factory=list)


def bad(path: str, message: str, source: str) -> InputError:
    """The exit-3 error for one problem at `path`."""
    return InputError([Problem(path, message)], source)


def load(path: str, data: bytes, source: str) -> Any:
    """The document in `data`: JSON (whatever the file is called, unless it is named
    `.yaml`), else YAML; a syntax error is exit 3.

    >>> load("x", b' [{"Plan": {}}]', "x")
    [{'Plan': {}}]
    """
    if data.lstrip()[:1] in (b"{", b"[") and not path.endswith((".yaml", ".yml")):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise bad("", f"invalid JSON: {exc}", source) from None
    try:
        return parse_document(path, data)
    except InputError as exc:
        raise exc.with_source(source) from None


_MISSING = object()


def _float(value: float) -> float:
    """`value` as a float; an integer past the largest float is infinite (not an error)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def number(obj: dict[str, Any], key: str, path: str, source: str, default: Any = ...) -> float:
    """`obj[key]` as a finite float >= 0; missing (without a default), not a number,
    a bool, infinite or negative: exit 3 naming `path.key`.

    >>> number({"a": 2}, "a", "x", "f")
    2.0
    >>> number({"a": "2"}, "a", "x", "f")
    Traceback (most recent call last):
    ...
    placement_cli.core.errors.InputError: f: x.a: expected a number, got str
    """
    value = obj.get(key, _MISSING)
    if type(value) is float or type(value) is int:  # the common case, checked first
        x = _float(value)
        if 0 <= x < math.inf:
            return x
    here = f"{path}.{key}" if path else key
    if value is _MISSING:
        if default is not ...:
            return default  # type: ignore[no-any-return]
        raise bad(here, "missing", source)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad(here, f"expected a number, got {type(value).__name__}", source)
    if not math.isfinite(_float(value)):
        raise bad(here, f"not a finite number: {str(value)[:40]}", source)
    raise bad(here, f"negative: {value!r}", source)


def mapping(value: Any, path: str, source: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise bad(path, f"expected a mapping, got {type(value).__name__}", source)
    return value


def sequence(value: Any, path: str, source: str) -> list[Any]:
    if not isinstance(value, list):
        raise bad(path, f"expected a list, got {type(value).__name__}", source)
    return value


def text(obj: dict[str, Any], key: str, path: str, source: str, default: Any = ...) -> str:
    here = f"{path}.{key}" if path else key
    if key not in obj:
        if default is not ...:
            return default  # type: ignore[no-any-return]
        raise bad(here, "missing", source)
    value = obj[key]
    if not isinstance(value, str):
        raise bad(here, f"expected a string, got {type(value).__name__}", source)
    return value


def width(size: float | None, rows: float | None) -> float | None:
    """Bytes per row from a result's bytes and rows (None when either is unknown or
    there are no rows to divide by).

    >>> width(320, 10), width(0, 0), width(None, 3)
    (32.0, None, None)
    """
    if size is None or rows is None or rows <= 0:
        return None
    return size / rows


def shared(plan: Plan, inclusive: list[float], what: str) -> None:
    """Set each node's exclusive time from the inclusive ones, top down: a node keeps
    what its children's inclusive times leave of its own, and when they add up to
    more than it (timer noise, or time a node spent on behalf of another, as a CTE
    read by two nodes) it keeps 0 and its children's subtrees are scaled down to its
    time: a subtree never takes longer than its root measured, and the exclusive times
    add up to the root's inclusive time exactly. One warning counts such nodes and
    says how much was scaled away."""
    nodes = plan.nodes
    budget = list(inclusive)
    over: list[int] = []
    lost = 0.0
    stack = [0]
    while stack:
        i = stack.pop()
        kids = nodes[i].children
        claimed = sum(inclusive[c] for c in kids)
        scale = 1.0
        if claimed > budget[i]:
            over.append(i)
            lost += claimed - budget[i]
            scale = budget[i] / claimed
        nodes[i].time = max(budget[i] - claimed * scale, 0.0)
        for c in kids:
            budget[c] = inclusive[c] * scale
            stack.append(c)
    if over:
        why = (
            "a node that stops early, such as a Limit, costs less than its input"
            if plan.estimated
            else "timer noise, or a CTE or sub-plan timed inside another node too"
        )
        plan.diagnostics.append(
            {
                "severity": "warning",
                "code": "negative-self-time",
                "message": f"{len(over)} node(s) of the {plan.engine} plan measured less "
                f"{what} than their children ({why}): each got 0 and its children's "
                f"subtrees were scaled down to its {what}; {lost:.6g} in all, the first at "
                f"{nodes[over[0]].path}",
                "blocks": [],
            }
        )


def checked(plan: Plan, source: str) -> Plan:
    """`plan`, once every time, row count and width is known finite: a product or a
    difference of finite numbers (rows x loops, 1e308 x 10) can overflow, and a tree
    file never holds an infinite number."""
    for node in plan.nodes:
        for what, x in (("time", node.time), ("rows", node.rows), ("width", node.row_width)):
            if x is not None and not math.isfinite(x):
                raise bad(
                    node.path, f"the node's {what} overflows a float: numbers too large", source
                )
    if plan.total is not None and not math.isfinite(plan.total):
        raise bad("", "the plan's total time overflows a float: numbers too large", source)
    return plan


def looks_like(doc: Any) -> str | None:
    """Which import format a parsed document looks like, by its top level (None: none).

    >>> looks_like([{"Plan": {}}]), looks_like({"query_name": "q", "children": []})
    ('postgres-explain', 'duckdb-profile')
    """
    top = doc[0] if isinstance(doc, list) and len(doc) == 1 else doc
    if not isinstance(top, dict):
        return None
    if "Plan" in top:
        return "postgres-explain"
    if top.get("format") == "datafusion-metrics":
        return "datafusion-metrics"
    if "children" in top and ("operator_type" in top or "query_name" in top):
        return "duckdb-profile"
    return None
