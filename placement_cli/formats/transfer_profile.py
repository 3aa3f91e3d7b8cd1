"""The transfer profile (`docs/calibrate.md`), version 1: a fitted transfer model per
direction between engines, written by `placement calibrate fit` and read by
`placement tree --transfer`.

Strict like the tree file: extra fields, negative coefficients and non-finite numbers
are errors. A direction's `model` has the fields of a tree file's `transfer.linear`
entry (`LinearTransfer`), so applying a profile is copying it there.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from placement_cli.formats.tree import LinearTransfer

Name = Annotated[str, Field(min_length=1)]
Identified = Literal["yes", "at-zero", "uncertain"]


class _Strict(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", strict=True, allow_inf_nan=False, populate_by_name=True
    )


class Direction(_Strict):
    """The model of moving a result from engine `src` to engine `dst` (ms), and how well
    it fits what was measured. Quality fields are null where unknown (a published
    profile that gives no point count or held-out error)."""

    src: Name
    dst: Name
    model: LinearTransfer
    n: Annotated[int, Field(ge=0)] | None = None
    r2: float | None = None
    rmse_ms: Annotated[float, Field(ge=0)] | None = None
    held_out: Annotated[int, Field(ge=0)] | None = None
    held_out_median_error: Annotated[float, Field(ge=0)] | None = None
    # Per coefficient (fixed, per_row, per_width, per_byte): "yes", "at-zero" (the
    # non-negativity constraint pinned it at 0) or "uncertain" (its 95% interval
    # reaches 0); absent when not judged.
    identified: dict[str, Identified] = {}
    interval95: dict[str, Annotated[list[float], Field(min_length=2, max_length=2)]] = {}


class TransferProfile(_Strict):
    """A set of fitted directions, in ms; `measured` says where the numbers come from."""

    version: Literal[1]
    kind: Literal["transfer-profile"]
    unit: Literal["ms"] = "ms"
    name: str | None = None
    measured: str | None = None
    weights: Literal["relative", "none"] | None = None
    reduce: Literal["median", "min", "none"] | None = None
    directions: list[Direction] = Field(min_length=1)
