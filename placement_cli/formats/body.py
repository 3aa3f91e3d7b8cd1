"""The body file format (MIR input of `placement lower`): strict, frozen models.

A body file is a plan whose analyses are not done yet: blocks with params, statements
and terminators as in a plan, but statements say *what they compute* (an
assignment of an rvalue) instead of what they cost, and terminators name their
operands. Everything the plan needs (costs, domains, matrices, premiums) is derived.
Types are parsed by `types.Types` (they are recursive, so they are plain data here).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Scalar = bool | int | float | str | None


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)


class Const(_Strict):
    """A constant operand: a primitive value (`null` is unit)."""

    const: Scalar


class FnRef(_Strict):
    """A function-pointer constant: names a body of this file (or an external function)."""

    fn: str = Field(min_length=1)


# A place is a string: a local, optionally projected (`env.0`, `vertex.properties.name`).
Operand = Annotated[str, Field(min_length=1)] | Const | FnRef

UNARY_OPS = ("!", "-", "~")
BINARY_OPS = ("+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "&", "|", "^")
RVALUE_KINDS = ("load", "unary", "binary", "aggregate", "apply", "input")


class Unary(_Strict):
    op: Literal["!", "-", "~"]
    operand: Operand


class Binary(_Strict):
    op: Literal[
        "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "&", "|", "^"
    ]
    left: Operand
    right: Operand


class Aggregate(_Strict):
    kind: Literal["tuple", "struct", "list", "dict", "closure"]
    operands: list[Operand] = Field(default_factory=list)
    fields: list[str] | None = None  # struct field names, parallel to operands


class Apply(_Strict):
    func: Operand
    args: list[Operand] = Field(default_factory=list)


class Statement(_Strict):
    """`assign` plus exactly one rvalue (`load`, `unary`, `binary`, `aggregate`, `apply`,
    `input`), or exactly one of `storage_live`, `storage_dead`, `nop`."""

    text: str | None = None
    assign: str | None = None
    load: Operand | None = None
    unary: Unary | None = None
    binary: Binary | None = None
    aggregate: Aggregate | None = None
    apply: Apply | None = None
    input: str | None = None
    storage_live: str | None = None
    storage_dead: str | None = None
    nop: Literal[True] | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Statement:
        n_rv = (
            (self.load is not None)
            + (self.unary is not None)
            + (self.binary is not None)
            + (self.aggregate is not None)
            + (self.apply is not None)
            + (self.input is not None)
        )
        if (
            self.assign is not None
            and n_rv == 1
            and self.storage_live is None
            and self.storage_dead is None
            and self.nop is None
        ):
            return self  # the common case, checked without building lists
        rv = [k for k in RVALUE_KINDS if getattr(self, k) is not None]
        other = [k for k in ("storage_live", "storage_dead", "nop") if getattr(self, k) is not None]
        if self.assign is not None:
            raise ValueError(
                f"an assignment needs exactly one rvalue ({', '.join(RVALUE_KINDS)}), got {', '.join(rv + other) or 'none'}"
            )
        if rv or len(other) != 1:
            if rv:
                raise ValueError(f"'{rv[0]}' needs 'assign' (the local it defines)")
            raise ValueError(
                "a statement is an assignment (assign + rvalue) or one of storage_live, storage_dead, nop"
            )
        return self

    @property
    def rvalue_kind(self) -> str:
        if self.load is not None:
            return "load"
        if self.binary is not None:
            return "binary"
        for k in RVALUE_KINDS:
            if getattr(self, k) is not None:
                return k
        return "storage" if self.nop is None else "nop"


class Successor(_Strict):
    block: str = Field(min_length=1)
    args: list[Operand] = Field(default_factory=list)
    value: int | None = None  # the switch arm's value (informative; `otherwise` has none)


class Terminator(_Strict):
    kind: Literal["goto", "switch", "return", "unreachable", "graph_read"]
    successors: list[Successor] = Field(default_factory=list)
    operand: Operand | None = None  # switch discriminant, returned value
    text: str | None = None


class Block(_Strict):
    id: str = Field(min_length=1)
    params: list[str] = Field(default_factory=list)
    statements: list[Statement] = Field(default_factory=list)
    terminator: Terminator


class Body(_Strict):
    name: str = Field(min_length=1)
    args: list[str] | None = None  # argument locals in order; default [env, vertex] as given
    env: str | None = None  # the captured-environment tuple (checked per field)
    vertex: str | None = None  # the vertex (read through paths)
    locals: dict[str, Any] = Field(default_factory=dict)  # local -> type, in order
    entry: str | None = None
    blocks: list[Block] = Field(min_length=1)


class BodyFile(_Strict):
    version: Literal[1]
    name: str | None = None
    profile: str | dict[str, Any] = "hashql"  # a built-in profile name or a profile mapping
    types: dict[str, Any] = Field(default_factory=dict)  # named (possibly recursive) types
    size_cap: Annotated[float, Field(ge=0)] | None = None  # cap for unbounded sizes
    place: str | None = None  # the body to place; default: the first
    split: Literal["runs", "intersection", "per-statement"] | None = None  # default: runs
    # `hashql-mir`: read from the compiler's MIR text (the reader sets it), so the locals
    # `_N` are its `%N` and the arguments `%0`, `%1`, ...; `explain` then quotes
    # statements in MIR terms
    names: Literal["hashql-mir"] | None = None
    bodies: list[Body] = Field(min_length=1)
