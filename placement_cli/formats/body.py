"""The body file format (MIR input of `placement lower`): strict, frozen models.

A body file is a plan whose analyses are not done yet: blocks with params, statements
and terminators as in a plan, but statements say *what they compute* (an
assignment of an rvalue) instead of what they cost, and terminators name their
operands. Everything the plan needs (costs, domains, matrices, premiums) is derived.
Types are parsed by `types.Types` (they are recursive, so they are plain data here).
These models give every message and `schemas/body.schema.json`; a file they accept is
read as the `Struct`s of `body_structs` (the fast path, held equal to them).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from placement_cli.formats.body_structs import statement_problem

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
        problem = statement_problem(self)
        if problem is not None:
            raise ValueError(problem)
        return self


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
