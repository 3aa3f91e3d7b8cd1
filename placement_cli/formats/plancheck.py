"""Fast acceptance of plans, without pydantic: "fast accept, slow diagnose" (artifacts
and their sections: `placement_cli.formats.sectioncheck`).

The strict pydantic models (`placement_cli.formats.plan`) are the one definition of the
plan format and the source of every error message. The checks of its parts are
generated from them (`placement_cli.formats.codegen` writes
`placement_cli.formats.generated.plan_check`, `make schemas`): each accepts a parsed
value only when the models certainly would, with the same values, and raises `Reject`
otherwise; the caller then asks the models, which accept it or say exactly what is
wrong. This module names them: `check_plan`, the whole plan in one generated function
(library callers, an artifact's plan in `sectioncheck.check_artifact`), and the parts
that `graph.build_graph(doc, check=True)` applies while it builds the graph, where it
reads each part (a part that repeats, once per distinct serialisation).
`tests/test_plancheck_fuzz.py` holds the fast path and the models to agreeing, and the
parts' composition to refusing what `check_plan` refuses.

Nothing is changed or copied: a cost the models would read as a float may stay an `int`
here (only integers a float holds exactly are accepted), and the readers of a checked
document (`graph.build_graph`, `planview`) treat the two alike.

>>> check_plan({"version": 1, "targets": ["a"], "blocks": [{"id": "x",
...     "statements": [{"cost": {"a": 2}}], "terminator": {"kind": "return"}}]})
>>> check_plan({"version": True, "targets": ["a"], "blocks": []})
Traceback (most recent call last):
...
placement_cli.formats.checking.Reject: plan.version
"""

from __future__ import annotations

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
    check_plan,
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
