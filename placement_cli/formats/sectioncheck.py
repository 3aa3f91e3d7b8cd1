"""The artifact format (version 2) as msgspec `Struct`s: the fast half of "fast accept,
slow diagnose" for artifacts and their sections (the plan inside: `structs`).

They accept exactly what the strict pydantic models of `placement_cli.formats.sections`
accept (`tests/test_structs.py` holds the two definitions equal field by field); the
models still give every error message and `schemas/`. Used to check parsed data only
(`check_section`, `check_artifact`): the sections travel on as the data they were
parsed as, extra fields of the open models (diagnostics, `solve`) included, so those
models' extra fields are checked here for being writable, as their validator does.
Like the models, they hold no stage list: the registry (`placement_cli.pipeline.registry`:
`section_struct`, `artifact_struct`) names each stage's Struct and builds the artifact's
from its list (`artifact_struct` here).

>>> check_section(FuseSection, {"blocks": [], "merged": 0, "dropped": [], "cost_preserved": True,
...                             "cost_before": None, "cost_after": None}, "fuse")
>>> check_section(FuseSection, {"blocks": [], "merged": True, "dropped": [], "cost_preserved": True,
...                             "cost_before": None, "cost_after": None}, "fuse")
Traceback (most recent call last):
...
placement_cli.formats.checking.Reject: fuse
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct, field

from placement_cli.formats.checking import INT_MIN, Reject, writable
from placement_cli.formats.structs import convert_plan

Status = Literal["ok", "infeasible", "unsolved"]
# An integer the artifact writer can write back (64 bits; msgspec's bounds stop at the
# signed range, so an unsigned one beyond it goes to the models). A number is an integer
# or a finite float below 2**64: orjson reads a wider integer literal as a float, where
# the models, reading the bytes themselves, see an integer they refuse.
_INT_MAX = 2**63 - 1
_BIG = float(2**64)
Int = Annotated[int, Meta(ge=INT_MIN, le=_INT_MAX)]
NonNegInt = Annotated[int, Meta(ge=0, le=_INT_MAX)]
Num = Int | Annotated[float, Meta(gt=-_BIG, lt=_BIG)]
NonNeg = NonNegInt | Annotated[float, Meta(ge=0, lt=_BIG)]


class _Strict(Struct, frozen=True, forbid_unknown_fields=True):
    pass


class _Open(Struct, frozen=True):
    """Sections another engineer's code writes: extra fields are carried (checked
    writable by `_extras`), not refused."""


class DiagnosticModel(_Open, frozen=True):
    severity: Literal["error", "warning", "info"]
    code: str
    message: str
    blocks: list[str]
    stage: str


class EdgeRef(_Strict, frozen=True, forbid_unknown_fields=True):
    from_: str = field(name="from")
    index: NonNegInt
    to: str


class Removal(_Strict, frozen=True, forbid_unknown_fields=True):
    block: str
    target: str
    edge: EdgeRef


class PruneSection(_Strict, frozen=True, forbid_unknown_fields=True):
    domains: dict[str, list[str]]
    removed: list[Removal]


class ComponentModel(_Strict, frozen=True, forbid_unknown_fields=True):
    id: str
    blocks: list[str]
    kind: Literal["trivial", "cyclic"]
    entries: list[str]
    exits: list[str]
    reachable: bool
    self_loop: bool | None = None
    header: str | None = None


class CondensationEdge(_Strict, frozen=True, forbid_unknown_fields=True):
    from_: str = field(name="from")
    to: str


class SccSection(_Strict, frozen=True, forbid_unknown_fields=True):
    components: list[ComponentModel]
    edges: list[CondensationEdge]


class CostModel(_Strict, frozen=True, forbid_unknown_fields=True):
    total: NonNeg
    blocks: NonNeg
    edges: NonNeg


class Forbid(_Strict, frozen=True, forbid_unknown_fields=True):
    block: str
    target: str


class SolveConstraints(_Strict, frozen=True, forbid_unknown_fields=True):
    pins: dict[str, str] = {}
    forbids: list[Forbid] = []
    warm_start: str | None = None


class SolveSection(_Open, frozen=True):
    status: Status
    assignment: dict[str, str]
    cost: CostModel | None
    optimal: bool
    lower_bound: Num | None
    unreachable: list[str]
    gap: NonNeg | None = None
    method: str | None = None
    method_used: str | None = None
    proved_by: str | None = None
    lower_bound_by: str | None = None
    constraints: SolveConstraints | None = None
    stats: dict[str, Any] = {}


class FusedBlock(_Strict, frozen=True, forbid_unknown_fields=True):
    id: str
    target: str
    members: list[str]


class FuseSection(_Strict, frozen=True, forbid_unknown_fields=True):
    blocks: list[FusedBlock]
    merged: NonNegInt
    dropped: list[str]
    cost_preserved: bool
    cost_before: CostModel | None
    cost_after: CostModel | None


class Island(_Strict, frozen=True, forbid_unknown_fields=True):
    id: str
    target: str
    blocks: list[str]
    members: list[str]
    requires: list[str]
    provides: list[str]
    inherited: list[str]


class IslandNode(_Strict, frozen=True, forbid_unknown_fields=True):
    id: str
    kind: Literal["exec", "data"]
    target: str
    provides: list[str] | None = None


class IslandEdge(_Strict, frozen=True, forbid_unknown_fields=True):
    from_: str = field(name="from")
    to: str
    kind: Literal["control_flow", "inherits", "data_flow"]
    paths: list[str] | None = None


class IslandGraph(_Strict, frozen=True, forbid_unknown_fields=True):
    entry: str | None
    nodes: list[IslandNode]
    edges: list[IslandEdge]


class ScheduleGroup(_Strict, frozen=True, forbid_unknown_fields=True):
    id: str
    nodes: list[str]
    level: NonNegInt


class Schedule(_Strict, frozen=True, forbid_unknown_fields=True):
    levels: list[list[str]]
    groups: list[ScheduleGroup]
    cyclic: bool


class IslandsSection(_Strict, frozen=True, forbid_unknown_fields=True):
    islands: list[Island]
    graph: IslandGraph
    schedule: Schedule


class ConfigRecord(_Strict, frozen=True, forbid_unknown_fields=True):
    file: str
    settings: dict[str, Any]


class ArtifactBase(_Strict, frozen=True, forbid_unknown_fields=True):
    """What every artifact carries besides its sections, its plan left to `structs.Plan`
    (`check_artifact`). The Struct of a whole artifact is `artifact_struct`'s."""

    format_version: Literal[2]
    kind: str
    status: Status
    plan: Any
    diagnostics: list[DiagnosticModel]
    lower: dict[str, Any] | None = None
    config: ConfigRecord | None = None


def section_struct(model: str) -> type[Struct] | None:
    """The Struct of the section model named `model` in `placement_cli.formats.sections`,
    or None (a section model of its own, such as a stage added from outside: the fast
    check refuses what it has no Struct for, and that model reads it)."""
    got = globals().get(model)
    return got if isinstance(got, type) and issubclass(got, Struct) else None


def artifact_struct(stages: tuple[tuple[str, type[Struct] | None], ...]) -> type[ArtifactBase]:
    """The Struct of an artifact of any kind whose stages are `stages` ((name, section
    Struct or None) in pipeline order, as `sections.artifact_model(stages)` builds its
    model): each section optional; a section without a Struct only absent or null.

    >>> a = artifact_struct((("prune", PruneSection), ("audit", None)))
    >>> a.__name__, [f for f in a.__struct_fields__ if f not in ArtifactBase.__struct_fields__]
    ('Artifact', ['prune', 'audit'])
    """
    names = tuple(name for name, _ in stages)
    fields: list[Any] = [("kind", Literal[names])]
    fields += [(name, (s | None) if s is not None else None, None) for name, s in stages]
    return msgspec.defstruct(  # type: ignore[return-value]
        "Artifact",
        fields,
        bases=(ArtifactBase,),
        module=__name__,
        frozen=True,
        forbid_unknown_fields=True,
        kw_only=True,
    )


def _writable(value: Any, where: str) -> None:
    try:
        writable(value)
    except ValueError:
        raise Reject(where) from None


def _extras(value: Any, cls: type[Struct], where: str) -> None:
    """The extra fields of an open model's mapping, writable again (its validator)."""
    fields = cls.__struct_fields__
    if len(value) > len(fields) or not value.keys() <= set(fields):
        _writable({k: v for k, v in value.items() if k not in fields}, where)


def _convert(value: Any, cls: type[Struct], where: str) -> Any:
    try:
        return msgspec.convert(value, cls, strict=True)
    except (ValueError, TypeError, RecursionError):  # ValidationError, a surrogate in a str
        raise Reject(where) from None


@cache
def _sections(struct: type[Struct]) -> tuple[str, ...]:
    """The section fields of an artifact's Struct (`artifact_struct`)."""
    base = ArtifactBase.__struct_fields__
    return tuple(f for f in struct.__struct_fields__ if f not in base)


def check_section(struct: type[Struct] | None, value: Any, name: str) -> None:
    """Accept the section `name` exactly when its model certainly would (`struct`: its
    Struct, `section_struct`; `Reject` otherwise, and always without a Struct)."""
    if struct is None:
        raise Reject(name)
    got = _convert(value, struct, name)
    if struct is SolveSection:
        _extras(value, SolveSection, name)
        _writable(got.stats, name)


def check_artifact(doc: Any, struct: type[ArtifactBase], *, plan: bool = True) -> None:
    """Accept an artifact document exactly when the artifact model (the registry's
    `artifact_model()`) certainly would (`struct`: the registry's `artifact_struct()`;
    its plan as msgspec's `structs.Plan`; without `plan`, everything but the plan, which
    the caller then converts while it builds the graph: `graph.build_graph(..., check=True)`)."""
    got = _convert(doc, struct, "artifact")
    for d in doc["diagnostics"]:
        _extras(d, DiagnosticModel, "diagnostics")
    if got.lower is not None:
        _writable(got.lower, "lower")
    if got.config is not None:
        _writable(got.config.settings, "config")
    for name in _sections(struct):
        sec = getattr(got, name)
        if isinstance(sec, SolveSection):  # the one open section
            _extras(doc[name], SolveSection, name)
            _writable(sec.stats, name)
    if plan:
        if convert_plan(doc["plan"]) is None:
            raise Reject("plan")
