"""JSON Schemas of the plan file, the tree file and every artifact's stable core.

The artifact models describe what scripts may rely on (spec: "Artifacts"); they allow
extra fields because artifacts may carry more. Tests validate every golden artifact
against them and fail when the committed `schemas/` drift from these models.
"""

from __future__ import annotations

from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from placement_cli.model import Plan

Number = float


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class DiagnosticModel(_Open):
    severity: Literal["error", "warning", "info"]
    code: str
    message: str
    blocks: list[str]


class EdgeRef(_Open):
    from_: str = Field(alias="from")
    index: int
    to: str


class Removal(_Open):
    block: str
    target: str
    edge: EdgeRef


class PruneSection(_Open):
    domains: dict[str, list[str]]
    removed: list[Removal]


class BoundaryEdge(_Open):
    block: str
    source: str
    target: str
    index: int
    direction: Literal["incoming", "outgoing"]


class ComponentModel(_Open):
    id: str
    blocks: list[str]
    kind: Literal["trivial", "cyclic"]
    self_loop: bool | None = None
    entries: list[str]
    exits: list[str]
    boundary: list[BoundaryEdge]
    reachable: bool


class CondensationEdge(_Open):
    from_: str = Field(alias="from")
    to: str


class SccSection(_Open):
    components: list[ComponentModel]
    edges: list[CondensationEdge]


class CostModel(_Open):
    total: Number
    blocks: Number
    edges: Number


class SolveSection(_Open):
    assignment: dict[str, str]
    cost: CostModel | None
    optimal: bool
    lower_bound: Number | None


class FusedBlock(_Open):
    id: str
    target: str
    members: list[str]


class FuseSection(_Open):
    blocks: list[FusedBlock]


class Island(_Open):
    id: str
    target: str
    blocks: list[str]
    requires: list[str]
    provides: list[str]


class IslandNode(_Open):
    id: str
    kind: Literal["exec", "data"]
    target: str


class IslandEdge(_Open):
    from_: str = Field(alias="from")
    to: str
    kind: Literal["control_flow", "inherits", "data_flow"]
    paths: list[str] | None = None


class IslandGraph(_Open):
    nodes: list[IslandNode]
    edges: list[IslandEdge]


class IslandsSection(_Open):
    islands: list[Island]
    graph: IslandGraph


class _Artifact(_Open):
    format_version: Literal[1]
    status: Literal["ok", "infeasible"]
    plan: dict[str, Any] = Field(description="the input plan, normalised; a valid plan file (see plan.schema.json)")
    diagnostics: list[DiagnosticModel]


class PruneArtifact(_Artifact):
    kind: Literal["prune"]
    prune: PruneSection


class SccArtifact(PruneArtifact):
    kind: Literal["scc"]  # type: ignore[assignment]
    scc: SccSection


class SolveArtifact(SccArtifact):
    kind: Literal["solve"]  # type: ignore[assignment]
    solve: SolveSection


class FuseArtifact(SolveArtifact):
    kind: Literal["fuse"]  # type: ignore[assignment]
    fuse: FuseSection


class IslandsArtifact(FuseArtifact):
    kind: Literal["islands"]  # type: ignore[assignment]
    islands: IslandsSection


ARTIFACT_MODELS: dict[str, type[BaseModel]] = {
    "prune": PruneArtifact,
    "scc": SccArtifact,
    "solve": SolveArtifact,
    "fuse": FuseArtifact,
    "islands": IslandsArtifact,
}


def all_schemas() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, in a fixed order."""
    out: dict[str, dict[str, Any]] = {"plan.schema.json": _schema(Plan, "placement plan file, version 1")}
    from placement_cli.passes.tree import TreeFile

    out["tree.schema.json"] = _schema(TreeFile, "placement operator-tree file")
    from placement_cli.lower.body import BodyFile
    from placement_cli.lower.profile import Profile

    out["body.schema.json"] = _schema(BodyFile, "placement body file (MIR input of `placement lower`)")
    out["profile.schema.json"] = _schema(Profile, "placement target profile (`placement lower --targets`)")
    for kind, model in ARTIFACT_MODELS.items():
        out[f"{kind}.artifact.schema.json"] = _schema(model, f"placement `{kind}` artifact (stable core)")
    return out


def _schema(model: type[BaseModel], title: str) -> dict[str, Any]:
    sch = model.model_json_schema(by_alias=True)
    sch["title"] = title
    sch["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return sch


def schema_bytes(schema: dict[str, Any]) -> bytes:
    return orjson.dumps(schema, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
