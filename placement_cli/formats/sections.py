"""The artifact format (version 2) as strict pydantic models: one definition that reads
artifacts when the fast check (`placement_cli.formats.sectioncheck`) does not accept them, gives
every type error's message, and publishes the JSON Schemas.

Reading is strict on purpose: an artifact is this tool's own output, so a field of the
wrong type (`cost: {"total": -1}`, `scc: 5`, `format_version: true`) is tampering or
corruption and must be exit 3 with its path, never an internal error later on. The
semantic checks (does the section hold for the plan?) live with each stage in
`placement_cli.pipeline.registry`. The load path accepts artifacts without importing these models
(`placement_cli.formats.sectioncheck`'s msgspec Structs accept exactly what they accept, and
`tests/test_structs.py` holds the two together); they still give every error message, the
JSON Schemas and library callers.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from placement_cli import ARTIFACT_FORMAT_VERSION as FORMAT_VERSION  # noqa: F401 - re-exported
from placement_cli.formats.checking import writable
from placement_cli.formats.plan import Plan

STATUSES = ("ok", "infeasible", "unsolved")
Status = Literal["ok", "infeasible", "unsolved"]


def _writable_number(x: Any) -> Any:
    """An int the artifact writer cannot write back is refused where it is read.

    orjson writes integers of at most 64 bits (an artifact with a larger one made the next
    stage fail at writing, exit 1), and pydantic checks `allow_inf_nan` on an
    `int | float` field with `math.isfinite`, which raises OverflowError on an int beyond
    float's range. A large value written with a decimal point or an exponent is a float
    and stays accepted.

    >>> _writable_number(2**63 - 1), _writable_number(1e300)
    (9223372036854775807, 1e+300)
    >>> _writable_number(10**20)
    Traceback (most recent call last):
    pydantic_core._pydantic_core.PydanticCustomError: integer too large (at most 64 bits; write a larger value as a float, e.g. 1e20)
    """
    if type(x) is int and not -(1 << 63) <= x < (1 << 64):
        raise PydanticCustomError(
            "int_too_large",
            "integer too large (at most 64 bits; write a larger value as a float, e.g. 1e20)",
        )
    return x


Num = Annotated[int | float, Field(allow_inf_nan=False), BeforeValidator(_writable_number)]
NonNeg = Annotated[int | float, Field(ge=0, allow_inf_nan=False), BeforeValidator(_writable_number)]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, populate_by_name=True)


# What the artifact writer can write back (`writable`) is defined with the fast checks
# that accept exactly what these models accept (`placement_cli.formats.checking`; the
# Structs of `placement_cli.formats.sectioncheck` apply each validator here too).


class _Open(BaseModel):
    """Sections another engineer's code writes: extra fields are carried, not refused
    (but must be writable again)."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _extras_writable(self) -> Any:
        if self.model_extra:
            writable(self.model_extra)
        return self


class DiagnosticModel(_Open):
    severity: Literal["error", "warning", "info"]
    code: str
    message: str
    blocks: list[str]
    stage: str


class EdgeRef(_Strict):
    from_: str = Field(alias="from")
    index: Annotated[int, Field(ge=0), BeforeValidator(_writable_number)]
    to: str


class Removal(_Strict):
    block: str
    target: str
    edge: EdgeRef


class PruneSection(_Strict):
    domains: dict[str, list[str]] = Field(description="block id -> targets left, in target order")
    removed: list[Removal]


class ComponentModel(_Strict):
    id: str
    blocks: list[str]
    kind: Literal["trivial", "cyclic"]
    self_loop: bool | None = None
    header: str | None = None
    entries: list[str]
    exits: list[str]
    reachable: bool


class CondensationEdge(_Strict):
    from_: str = Field(alias="from")
    to: str


class SccSection(_Strict):
    components: list[ComponentModel] = Field(description="topological order of the condensation")
    edges: list[CondensationEdge]


class CostModel(_Strict):
    total: NonNeg
    blocks: NonNeg
    edges: NonNeg


class Forbid(_Strict):
    """`--forbid BLOCK=TARGET`: the block must not run on the target."""

    block: str
    target: str


class SolveConstraints(_Strict):
    """What a solve was constrained by (`--pin`, `--forbid`, `--pins`, `--warm-start`):
    `optimal` in its section means optimal under these."""

    pins: dict[str, str] = Field(default_factory=dict)
    forbids: list[Forbid] = Field(default_factory=list)
    warm_start: str | None = None


class SolveSection(_Open):
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
    stats: dict[str, Any] = Field(default_factory=dict)

    @field_validator("stats")
    @classmethod
    def _stats_writable(cls, v: dict[str, Any]) -> dict[str, Any]:
        return writable(v)  # type: ignore[no-any-return]


class FusedBlock(_Strict):
    id: str
    target: str
    members: list[str]


class FuseSection(_Strict):
    blocks: list[FusedBlock]
    merged: Annotated[int, Field(ge=0), BeforeValidator(_writable_number)]
    dropped: list[str]
    cost_preserved: bool
    cost_before: CostModel | None
    cost_after: CostModel | None


class Island(_Strict):
    id: str
    target: str
    blocks: list[str]
    members: list[str]
    requires: list[str]
    provides: list[str]
    inherited: list[str]


class IslandNode(_Strict):
    id: str
    kind: Literal["exec", "data"]
    target: str
    provides: list[str] | None = None


class IslandEdge(_Strict):
    from_: str = Field(alias="from")
    to: str
    kind: Literal["control_flow", "inherits", "data_flow"]
    paths: list[str] | None = None


class IslandGraph(_Strict):
    entry: str | None
    nodes: list[IslandNode]
    edges: list[IslandEdge]


class ScheduleGroup(_Strict):
    id: str
    nodes: list[str]
    level: Annotated[int, Field(ge=0), BeforeValidator(_writable_number)]


class Schedule(_Strict):
    levels: list[list[str]]
    groups: list[ScheduleGroup]
    cyclic: bool


class IslandsSection(_Strict):
    islands: list[Island]
    graph: IslandGraph
    schedule: Schedule


class ConfigRecord(_Strict):
    """The project configuration a command applied (`placement.toml` or
    `[tool.placement]`): its file's name (never a path) and the settings it gave that the
    command line did not, as the file wrote them."""

    file: str
    settings: dict[str, Any]  # option key -> value, as `app/config.py` checked it

    @field_validator("settings")
    @classmethod
    def _settings_writable(cls, v: dict[str, Any]) -> dict[str, Any]:
        return writable(v)  # type: ignore[no-any-return]


class ArtifactBase(_Strict):
    """What every artifact carries besides its sections: the compact normalised plan,
    the diagnostics so far, the front end's section and the configuration applied. The
    model of a whole artifact is `artifact_model`'s, built from the stage list."""

    format_version: Literal[2]
    kind: str
    status: Status
    plan: Plan = Field(
        description="the input plan, normalised (compact: named matrices); a valid plan file"
    )
    diagnostics: list[DiagnosticModel]
    lower: dict[str, Any] | None = Field(
        default=None, description="the `lower` front end's section, when the input was a body file"
    )

    @field_validator("lower")
    @classmethod
    def _lower_writable(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        return writable(v)  # type: ignore[no-any-return]

    config: ConfigRecord | None = Field(
        default=None, description="the project configuration the command applied, if any"
    )


def artifact_model(
    stages: tuple[tuple[str, type[BaseModel]], ...], kind: str | None = None
) -> type[ArtifactBase]:
    """The model of an artifact whose stages are `stages` ((name, section model) in
    pipeline order: `placement_cli.pipeline.registry` holds the list): any kind, each
    section optional (each checked against the plan on reading); or the artifact of
    `kind`, the sections up to it required and the later ones absent (`schemas/`).

    >>> m = artifact_model((("prune", PruneSection), ("scc", SccSection)), "prune")
    >>> m.__name__, m.model_fields["scc"].annotation
    ('PruneArtifact', <class 'NoneType'>)
    """
    names = tuple(name for name, _ in stages)
    fields: dict[str, Any] = {"kind": (Literal[names if kind is None else (kind,)], ...)}  # type: ignore[valid-type]
    upto = len(names) if kind is None else names.index(kind) + 1
    for i, (name, model) in enumerate(stages):
        if kind is None:
            fields[name] = (model | None, None)
        else:
            fields[name] = (model, ...) if i < upto else (type(None), None)
    title = "Artifact" if kind is None else f"{kind.capitalize()}Artifact"
    return create_model(title, __base__=ArtifactBase, __module__=__name__, **fields)  # type: ignore[no-any-return, call-overload]
