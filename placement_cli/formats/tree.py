"""The operator-tree file format of `placement tree` (`docs/tree.md`), version 1.

Strict, frozen, extra fields forbidden, finite numbers only, as the plan format: a typo
or a YAML 1.1 surprise is an error with a field path, never a silently different tree.
Cross-field rules (known engines, known children, one root, no cycles) are checked by
`placement_cli.ir.tree.check` (through `read.parse_tree`), which reports them with the same kind of path.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Cost = Annotated[float, Field(ge=0)]
Name = Annotated[str, Field(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        allow_inf_nan=False,
        validate_default=False,
        populate_by_name=True,
    )


class LinearTransfer(_Strict):
    """Cost of moving a child's output between two engines, `a + b*R + c*W + d*R*W`:
    `fixed + per_row * rows + per_width * row_width + per_byte * (rows * row_width)`,
    with R = rows and W = row_width (bytes) of the child."""

    fixed: Cost = 0.0
    per_row: Cost = 0.0
    per_width: Cost = 0.0
    per_byte: Cost = 0.0


class ExplicitTransfer(_Strict):
    """The cost of moving `child`'s output from engine `from` to engine `to`; overrides the
    linear model for that one edge (every copy of the child under `--expand-dag`)."""

    child: Name
    from_: Name = Field(alias="from")
    to: Name
    cost: Cost


class Transfer(_Strict):
    """The transfer model. A pair of engines with neither an explicit entry, a `linear`
    entry nor a `default` cannot be cut between: such a cut is not allowed."""

    default: LinearTransfer | None = None
    linear: dict[str, dict[str, LinearTransfer]] = {}
    explicit: list[ExplicitTransfer] = []


class TreeNode(_Strict):
    """One operator. `time[engine]` is its predicted self-time there; an engine that is
    missing or null cannot run it. `rows`/`row_width` (bytes) size its output."""

    id: Name
    op: str | None = None
    children: list[str] = []
    time: dict[str, Cost | None] = {}
    rows: Cost | None = None
    row_width: Cost | None = None


class TreeFile(_Strict):
    """An operator tree to place: engines, operators, transfers and the cut budget."""

    version: Literal[1]
    name: str | None = None
    engines: list[Name] = Field(min_length=1)
    budget: Annotated[int, Field(ge=0)] | None = None
    root: str | None = None
    nodes: list[TreeNode] = Field(min_length=1)
    transfer: Transfer = Transfer()
