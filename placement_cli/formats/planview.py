"""Read-only views of a checked plan document, shaped like the models of
`placement_cli.formats.plan` (`plan.blocks[i].terminator.successors[k].block`), without
pydantic: the classes are generated from the models
(`placement_cli.formats.generated.plan_view`; the mechanism: `placement_cli.formats.view`).

The load path checks a parsed plan with the generated checks (which accept exactly what
the strict models accept) and keeps the checked dicts; these views give code that reads
a plan field by field (normalising, fusion, `explain`) the models' attribute names and
defaults over those dicts.

>>> p = Plan({"version": 1, "targets": ["a"], "blocks": [{"id": "x", "terminator": {"kind": "return"}}]})
>>> p.blocks[0].id, p.blocks[0].params, p.blocks[0].terminator.kind, p.entry
('x', [], 'return', None)
>>> p == Plan({"version": 1, "targets": ["a"], "blocks": [{"id": "x", "params": [], "terminator": {"kind": "return"}}]})
True
"""

from __future__ import annotations

from typing import Any

from placement_cli.formats.generated.plan_view import Block, Edge, Plan, Statement, Terminator
from placement_cli.formats.view import View

__all__ = ["Block", "Edge", "Plan", "Statement", "Terminator", "plan_document"]


def plan_document(plan: Any) -> dict[str, Any]:
    """The plan as checked data: a checked document as it is, a `planview.Plan` its
    document, a pydantic `plan.Plan` dumped (library callers)."""
    if isinstance(plan, dict):
        return plan
    if isinstance(plan, View):
        return plan._d
    return plan.model_dump()  # type: ignore[no-any-return]
