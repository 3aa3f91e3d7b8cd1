"""Public input models: the plan file format of `docs/format.md`, version 1.

Strict, frozen, extra fields forbidden. YAML is read as YAML 1.2 core (`placement_cli.core.yaml_core`:
`no` and `1:30` stay strings, `012` is 12), so a value of the wrong kind
and typos surface as errors with a field path instead of silently changing meaning.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Cost = Annotated[float, Field(ge=0)]
TransMatrix = dict[str, dict[str, Cost]]
TermKind = Literal["goto", "switch", "return", "unreachable", "graph_read"]


class _Strict(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", strict=True, allow_inf_nan=False, validate_default=False
    )


class Statement(_Strict):
    text: str | None = None
    cost: dict[str, Cost | None]


class Edge(_Strict):
    block: str
    args: list[str] = Field(default_factory=list)
    # A matrix, or the name of one in the plan's top-level `matrices` (the normalised
    # form of artifacts names each distinct matrix once instead of repeating it per edge).
    transitions: TransMatrix | str | None = None


class Terminator(_Strict):
    kind: TermKind
    successors: list[Edge] = Field(default_factory=list)
    cost: dict[str, Cost | None] | None = None


class Block(_Strict):
    id: str = Field(min_length=1)
    params: list[str] = Field(default_factory=list)
    statements: list[Statement] = Field(default_factory=list)
    domain: list[str] | None = None
    cost: dict[str, Cost] | None = None
    paths: list[str] = Field(default_factory=list)
    premium: dict[str, Cost] | None = None
    terminator: Terminator


class Plan(_Strict):
    version: Literal[1]
    name: str | None = None
    targets: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1, max_length=64)
    entry: str | None = None
    transitions: TransMatrix | None = None
    matrices: dict[str, TransMatrix] = Field(default_factory=dict)
    paths: dict[str, list[str]] = Field(default_factory=dict)
    blocks: list[Block] = Field(min_length=1)
    # Written by `placement lower`: new block -> original block and statement range, and
    # the analyses behind the plan. Informative; no stage reads them.
    provenance: dict[str, Any] | None = None
    lower: dict[str, Any] | None = None
