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
    exclusive times add up to before any clamping (the root's inclusive time);
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
    """The document in `data`: JSON (whatever the file is called), else YAML, else the
    reader's own syntax error.

    >>> load("x", b' [{"Plan": {}}]', "x")
    [{'Plan': {}}]
    """
    if data.lstrip()[:1] in (b"{", b"["):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # parse_document says what is wrong, with the same message as elsewhere
    return parse_document(path if path.endswith(".json") else path + ".json", data)


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
    here = f"{path}.{key}" if path else key
    if key not in obj:
        if default is not ...:
            return default  # type: ignore[no-any-return]
        raise bad(here, "missing", source)
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad(here, f"expected a number, got {type(value).__name__}", source)
    x = float(value)
    if not math.isfinite(x):
        raise bad(here, f"not a finite number: {value!r}", source)
    if x < 0:
        raise bad(here, f"negative: {value!r}", source)
    return x


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


def clamped(plan: Plan, exclusive: list[float], what: str) -> None:
    """Set each node's time to its exclusive time, negative ones (timing noise: a child
    measured as slower than its parent) clamped to 0, with one warning that counts
    them and says how much time was dropped."""
    negative = [i for i, t in enumerate(exclusive) if t < 0]
    why = (
        "a node that stops early, such as a Limit, costs less than its input"
        if plan.estimated
        else "children measured as slower than their parent: timing noise"
    )
    for node, t in zip(plan.nodes, exclusive, strict=True):
        node.time = max(t, 0.0)
    if negative:
        lost = -sum(exclusive[i] for i in negative)
        first = plan.nodes[negative[0]].path
        plan.diagnostics.append(
            {
                "severity": "warning",
                "code": "negative-self-time",
                "message": f"{len(negative)} node(s) of the {plan.engine} plan had a negative "
                f"exclusive {what} ({why}), set to 0; {lost:.6g} in all, the first at {first}",
                "blocks": [],
            }
        )
