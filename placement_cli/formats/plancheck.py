"""Fast acceptance of plans, without pydantic: "fast accept, slow diagnose" (artifacts
and their sections: `placement_cli.formats.sectioncheck`).

The strict pydantic models (`placement_cli.formats.plan`) are the one definition of the
plan format and the source of every error message. The checks of its parts are
generated from them (`placement_cli.formats.codegen` writes
`placement_cli.formats.generated.plan_check`, `make schemas`): each accepts a parsed
value only when the models certainly would, with the same values, and raises `Reject`
otherwise; the caller then asks the models, which accept it or say exactly what is
wrong. This module only composes those parts into `check_plan`, reading a part that
repeats (a statement list, a matrix) once per distinct serialisation;
`graph.build_graph(doc, check=True)` composes the same parts while it builds the graph.
`tests/test_plancheck_fuzz.py` holds the fast path and the models to agreeing.

Nothing is changed or copied: a cost the models would read as a float may stay an `int`
here (only integers a float holds exactly are accepted), and the readers of a checked
document (`graph.build_graph`, `planview`) treat the two alike.

>>> check_plan({"version": 1, "targets": ["a"], "blocks": [{"id": "x",
...     "statements": [{"cost": {"a": 2}}], "terminator": {"kind": "return"}}]})
>>> check_plan({"version": True, "targets": ["a"], "blocks": []})
Traceback (most recent call last):
...
placement_cli.formats.checking.Reject: Plan.version
"""

from __future__ import annotations

from typing import Any

from placement_cli.formats.checking import (
    BIG_FLOAT,
    INT_MAX,
    INT_MIN,
    MAX_FREE_DEPTH,
    Reject,
    serialised,
    writable,
)
from placement_cli.formats.generated.plan_check import (
    check_block,
    check_block_head,
    check_costs,
    check_edge,
    check_head,
    check_matrix,
    check_statements,
)

__all__ = [
    "BIG_FLOAT",
    "INT_MAX",
    "INT_MIN",
    "MAX_FREE_DEPTH",
    "Reject",
    "check_block",
    "check_block_head",
    "check_costs",
    "check_edge",
    "check_head",
    "check_matrix",
    "check_plan",
    "check_statements",
    "serialised",
    "writable",
]


def check_plan(doc: Any) -> None:
    """Accept `doc` as a plan exactly when `plan.Plan` certainly would; raise `Reject`
    otherwise. `graph.build_graph(doc, check=True)` makes the same checks while it
    builds the graph (one traversal)."""
    check_head(doc)
    # Repeated statement lists and matrices (a few dozen and a handful of distinct ones
    # on 100k blocks) are checked once per serialisation; a statement list whose bytes
    # hold `null` every time (a None cost and a NaN one are written alike).
    accepted: set[bytes] = set()
    accepted_stmts: set[bytes] = set()
    for b in doc["blocks"]:
        check_block_head(b)
        check_block(b)
        check_costs(b)
        stmts = b.get("statements")
        if stmts:
            key = serialised(stmts)
            if key is None or key not in accepted_stmts:
                check_statements(stmts)
                if key is not None and b"null" not in key:
                    accepted_stmts.add(key)
        for e in b["terminator"].get("successors") or ():
            check_edge(e)
            v = e.get("transitions")
            if type(v) is dict:
                # An accepted matrix has no `null` (its costs are never None).
                key = serialised(v)
                if key is None or key not in accepted:
                    check_matrix(v)
                    if key is not None:
                        accepted.add(key)
