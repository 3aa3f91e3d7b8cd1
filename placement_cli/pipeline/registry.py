"""The stage registry: which stages exist, in pipeline order, and where each lives.

This module is deliberately light (no pydantic, no passes): the command line reads it
to register one command per stage, and `placement --help` must not pay for importing
the algorithms. `get(name)` imports a stage's module on first use.

Adding a stage: write `placement_cli/pipeline/stages/<name>.py` defining `STAGE` (a `Stage`, see
`placement_cli.pipeline.stage`) and add one `StageInfo` line here. Nothing else.

>>> [s.name for s in REGISTRY]
['prune', 'scc', 'solve', 'fuse', 'islands']
>>> get("scc").requires
('prune',)
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from placement_cli.pipeline.stage import Stage


@dataclass(frozen=True, slots=True)
class StageInfo:
    """What the command line needs to know about a stage without importing it."""

    name: str
    summary: str  # one line, for `--help`
    module: str
    solver_options: bool  # the command takes --method/--time-limit (it may run `solve`)


REGISTRY: tuple[StageInfo, ...] = (
    StageInfo(
        "prune",
        "AC-3 arc consistency: the domains left and why each target went.",
        "placement_cli.pipeline.stages.prune",
        False,
    ),
    StageInfo(
        "scc",
        "Strongly connected components in topological order.",
        "placement_cli.pipeline.stages.scc",
        False,
    ),
    StageInfo(
        "solve",
        "The cheapest feasible assignment of a target to every block.",
        "placement_cli.pipeline.stages.solve",
        True,
    ),
    StageInfo(
        "fuse",
        "Merge same-target blocks joined by argument-free gotos.",
        "placement_cli.pipeline.stages.fuse",
        True,
    ),
    StageInfo(
        "islands",
        "Execution islands, their dependency graph and a schedule.",
        "placement_cli.pipeline.stages.islands",
        True,
    ),
)
STAGES: tuple[str, ...] = tuple(s.name for s in REGISTRY)
_INFO = {s.name: s for s in REGISTRY}


def info(name: str) -> StageInfo:
    return _INFO[name]


def get(name: str) -> Stage:
    """The stage object (imports its module once)."""
    return importlib.import_module(_INFO[name].module).STAGE  # type: ignore[no-any-return]


def upto(kind: str) -> tuple[str, ...]:
    """The stages an artifact of `kind` carries, in order.

    >>> upto("solve")
    ('prune', 'scc', 'solve')
    """
    return STAGES[: STAGES.index(kind) + 1]
