"""The plans of one query, one per engine, lined up into one tree file (docs/tree.md).

Plans line up node by node only when they have the same shape: the same number of
inputs at every node, in pre-order (and, between two files of one format, the same
operator). Engines plan the same query differently more often than not; when the
shapes differ the first difference is reported (exit 3) with its path in both files,
and nothing is guessed.
"""

from __future__ import annotations

from typing import Any

from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import num
from placement_cli.frontends.engine_plans.model import Plan


def node_id(i: int) -> str:
    """The id of the `i`-th operator in pre-order (the root is `n0`)."""
    return f"n{i}"


def check_same_shape(plans: list[Plan], sources: list[str]) -> None:
    """Exit 3 at the first node where a plan's shape differs from the first plan's."""
    first = plans[0]
    for plan, source in zip(plans[1:], sources[1:], strict=True):
        same_format = plan.format == first.format
        for i in range(min(len(first.nodes), len(plan.nodes))):
            a, b = first.nodes[i], plan.nodes[i]
            if len(a.children) != len(b.children) or (same_format and a.op != b.op):
                raise InputError(
                    [
                        Problem(
                            b.path,
                            f"the plans differ here: {b.op!r} with {len(b.children)} "
                            f"input(s), where {sources[0]} has {a.op!r} with "
                            f"{len(a.children)} input(s) at {a.path}; plans of different "
                            "shapes cannot be lined up",
                        )
                    ],
                    source,
                )
        if len(first.nodes) != len(plan.nodes):  # unreachable with equal child counts
            raise InputError(
                [
                    Problem(
                        "", f"{len(plan.nodes)} operators where {sources[0]} has {len(first.nodes)}"
                    )
                ],
                source,
            )


def tree_document(plans: list[Plan], name: str | None, budget: int | None) -> dict[str, Any]:
    """A tree file (version 1) with one node per operator and a time per engine;
    rows and widths are the first plan's that has them."""
    first = plans[0]
    nodes: list[dict[str, Any]] = []
    for i, node in enumerate(first.nodes):
        out: dict[str, Any] = {"id": node_id(i), "op": node.op}
        if node.children:
            out["children"] = [node_id(c) for c in node.children]
        out["time"] = {p.engine: _round(p.nodes[i].time) for p in plans}
        rows = next((p.nodes[i].rows for p in plans if p.nodes[i].rows is not None), None)
        w = next((p.nodes[i].row_width for p in plans if p.nodes[i].row_width is not None), None)
        if rows is not None:
            out["rows"] = _round(rows)
        if w is not None:
            out["row_width"] = _round(w)
        nodes.append(out)
    doc: dict[str, Any] = {"version": 1}
    if name is not None:
        doc["name"] = name
    doc["engines"] = [p.engine for p in plans]
    estimated = [p.engine for p in plans if p.estimated]
    if estimated:
        doc["estimated"] = estimated
    if budget is not None:
        doc["budget"] = budget
    doc["root"] = node_id(0)
    doc["nodes"] = nodes
    return doc


def _round(x: float) -> float | int:
    """To the nanosecond (of a millisecond time; engines print microseconds at best):
    a difference of two printed times keeps no float noise. Integral values as integers.

    >>> _round(0.002999999999985903), _round(48.0)
    (0.003, 48)
    """
    return num(round(x, 6))
