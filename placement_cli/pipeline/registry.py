"""The stage registry: which stages exist, in pipeline order, and where each lives.

This module is deliberately light (no pydantic, no passes): the command line reads it
to register one command per stage, and `placement --help` must not pay for importing
the algorithms. `get(name)` imports a stage's module on first use.

This is the one list of stages: the command line, the artifact's kinds and sections
(`artifact_model`, `section_models`: the reading models and `schemas/`; `artifact_struct`,
`section_struct`: the fast checks' msgspec Structs), the human
summaries and the golden files all derive from it. Adding a stage: write
`placement_cli/pipeline/stages/<name>.py` defining `STAGE` (a `Stage`, see
`placement_cli.pipeline.stage`), its algorithm, and add one `StageInfo` line here (or
`register` it, for a stage that lives outside this package). Nothing else.

>>> [s.name for s in REGISTRY]
['prune', 'scc', 'solve', 'fuse', 'islands']
>>> get("scc").requires
('prune',)
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from placement_cli.pipeline.stage import Stage


class StageInfo(msgspec.Struct, frozen=True):
    """What the command line needs to know about a stage without importing it."""

    name: str
    summary: str  # one line, for `--help`
    module: str
    solver_options: bool  # the command takes --method/--time-limit (it may run `solve`)
    # The section's pydantic model: a class of `placement_cli.formats.sections` by name (its
    # Struct, the fast check, is the class of `placement_cli.formats.sectioncheck` of that
    # name), or "module:Class" (imported on use: pydantic costs start-up time; no Struct:
    # the model reads every such section).
    section: str


REGISTRY: tuple[StageInfo, ...] = (
    StageInfo(
        "prune",
        "AC-3 arc consistency: the domains left and why each target went.",
        "placement_cli.pipeline.stages.prune",
        False,
        "PruneSection",
    ),
    StageInfo(
        "scc",
        "Strongly connected components in topological order.",
        "placement_cli.pipeline.stages.scc",
        False,
        "SccSection",
    ),
    StageInfo(
        "solve",
        "The cheapest feasible assignment of a target to every block.",
        "placement_cli.pipeline.stages.solve",
        True,
        "SolveSection",
    ),
    StageInfo(
        "fuse",
        "Merge same-target blocks joined by argument-free gotos.",
        "placement_cli.pipeline.stages.fuse",
        True,
        "FuseSection",
    ),
    StageInfo(
        "islands",
        "Execution islands, their dependency graph and a schedule.",
        "placement_cli.pipeline.stages.islands",
        True,
        "IslandsSection",
    ),
)
STAGES: tuple[str, ...] = tuple(s.name for s in REGISTRY)
_INFO = {s.name: s for s in REGISTRY}


def register(stage: StageInfo) -> None:
    """Add a stage after the last one (its requirements must come before it).

    Call it before anything reads the list (before importing the command line or
    `placement_cli.pipeline.run`): modules that run every stage take the list when they
    are imported.
    """
    global REGISTRY, STAGES
    if stage.name in _INFO:
        raise ValueError(f"stage {stage.name!r} is registered already")
    REGISTRY = (*REGISTRY, stage)
    STAGES = (*STAGES, stage.name)
    _INFO[stage.name] = stage
    _artifact_models.cache_clear()
    _artifact_structs.cache_clear()


def info(name: str) -> StageInfo:
    return _INFO[name]


def get(name: str) -> Stage:
    """The stage object (imports its module once)."""
    return importlib.import_module(_INFO[name].module).STAGE  # type: ignore[no-any-return]


def section_model(name: str) -> Any:
    """The pydantic model of stage `name`'s section (imports pydantic)."""
    module, _, cls = _INFO[name].section.rpartition(":")
    return getattr(importlib.import_module(module or "placement_cli.formats.sections"), cls)


def section_models() -> dict[str, Any]:
    """Stage name -> its section's model, in pipeline order."""
    return {s: section_model(s) for s in STAGES}


def artifact_model(kind: str | None = None) -> Any:
    """The artifact's strict reading model: of any kind (every section optional), or of
    `kind` (the sections up to it required, the later ones absent: `schemas/`)."""
    return _artifact_models(STAGES, kind)


@cache
def _artifact_models(stages: tuple[str, ...], kind: str | None) -> Any:
    # Lazy: the models are pydantic (0.2 s, measured), only when a model reads.
    from placement_cli.formats.sections import artifact_model as build

    return build(tuple((s, section_model(s)) for s in stages), kind)


def section_struct(name: str) -> Any:
    """The msgspec Struct that checks stage `name`'s section fast, or None (a section
    model outside `placement_cli.formats.sections`: its model reads the section)."""
    module, _, cls = _INFO[name].section.rpartition(":")
    if module:
        return None
    # Lazy: the section Structs (~6 ms, measured), only when an artifact is checked.
    from placement_cli.formats.sectioncheck import section_struct as struct

    return struct(cls)


def artifact_struct() -> Any:
    """The Struct that checks an artifact of any kind fast (`sectioncheck.check_artifact`),
    built from the stage list as `artifact_model()` is."""
    return _artifact_structs(STAGES)


@cache
def _artifact_structs(stages: tuple[str, ...]) -> Any:
    # Lazy: the section Structs (~6 ms, measured), only when an artifact is checked.
    from placement_cli.formats.sectioncheck import artifact_struct as build

    return build(tuple((s, section_struct(s)) for s in stages))


def upto(kind: str) -> tuple[str, ...]:
    """The stages an artifact of `kind` carries, in order.

    >>> upto("solve")
    ('prune', 'scc', 'solve')
    """
    return STAGES[: STAGES.index(kind) + 1]
