"""Fast acceptance of artifacts and their sections, without pydantic (the plan inside
an artifact is decoded by msgspec, `placement_cli.formats.structs`): each section
exactly when its model in `placement_cli.formats.sections` certainly would, else
`Reject`, and the models diagnose.

The checks are generated from the models (`placement_cli.formats.codegen` writes
`placement_cli.formats.generated.section_check`, `make schemas`) as tables of column
checks (`placement_cli.formats.columns`: a list of 100k objects is checked a field at a
time, in C). This module only applies them.
"""

from __future__ import annotations

from typing import Any

from placement_cli.formats.checking import Reject
from placement_cli.formats.generated.section_check import ARTIFACT, SECTIONS
from placement_cli.formats.structs import convert_plan

__all__ = ["SECTIONS", "check_artifact", "check_section"]


def check_section(name: str, value: Any) -> None:
    """Accept a section exactly when its model in `placement_cli.formats.sections` certainly would.

    >>> check_section("fuse", {"blocks": [], "merged": 0, "dropped": [], "cost_preserved": True,
    ...                        "cost_before": None, "cost_after": None})
    >>> check_section("fuse", {"blocks": [], "merged": True, "dropped": [], "cost_preserved": True,
    ...                        "cost_before": None, "cost_after": None})
    Traceback (most recent call last):
    ...
    placement_cli.formats.checking.Reject: int
    """
    SECTIONS[name](value)


def check_artifact(doc: Any, *, plan: bool = True) -> None:
    """Accept an artifact document exactly when `sections.Artifact` certainly would
    (its plan as msgspec's `structs.Plan`; without `plan`, everything but the plan, which
    the caller then converts while it builds the graph: `graph.build_graph(..., check=True)`)."""
    ARTIFACT(doc)
    if plan and convert_plan(doc["plan"]) is None:
        raise Reject("plan")
