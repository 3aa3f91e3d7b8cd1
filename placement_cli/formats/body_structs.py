"""The body file format (`placement_cli.formats.body`) as msgspec `Struct`s: the fast half
of "fast accept, slow diagnose", as `structs` is for plans.

`decode_body` decodes a body file's JSON straight into these frozen classes in one C
pass, checking every type and bound on the way; `convert_body` converts a body already
parsed (YAML, the MIR reader's dict). They accept exactly what the strict pydantic
models accept, with the same values, or refuse (None): the models then give every
message, and a file they accept is converted from them (`from_model`). The front end
(`frontends/lower`) reads these classes only. `tests/test_structs.py` holds the two
definitions equal field by field.

One difference of form: msgspec cannot tell two mappings apart in a union, so the
models' operand `str | Const | FnRef` is `str | ConstOrFn` here, one Struct with both
fields, exactly one of them given (`is_const`, `is_fn` tell which).

>>> f = decode_body(b'{"version": 1, "bodies": [{"name": "f", "blocks": [{"id": "bb0",'
...     b' "statements": [{"assign": "a", "load": {"const": 1}}],'
...     b' "terminator": {"kind": "return", "operand": "a"}}]}]}')
>>> st = f.bodies[0].blocks[0].statements[0]
>>> st.rvalue_kind, is_const(st.load), st.load.const, f.profile
('load', True, 1, 'hashql')
>>> decode_body(b'{"version": 1, "bodies": [{"name": "f", "blocks": [{"id": "bb0",'
...     b' "statements": [{"assign": "a"}], "terminator": {"kind": "return"}}]}]}') is None
True
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, Literal, TypeGuard

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from placement_cli.formats.structs import shallow

NonEmpty = Annotated[str, Meta(min_length=1)]
# The models' floats are finite (`allow_inf_nan=False`): an upper and a lower bound say
# so (NaN fails both).
Finite = Annotated[float, Meta(ge=-sys.float_info.max, le=sys.float_info.max)]
Scalar = bool | int | Finite | str | None

RVALUE_KINDS = ("load", "unary", "binary", "aggregate", "apply", "input")


class _Strict(Struct, frozen=True, forbid_unknown_fields=True):
    pass


class ConstOrFn(_Strict, frozen=True, forbid_unknown_fields=True):
    """The models' `Const` (`const`: a primitive value, `null` is unit) or `FnRef` (`fn`:
    a body of this file or an external function): exactly one field given."""

    const: Scalar | UnsetType = UNSET
    fn: NonEmpty | UnsetType = UNSET

    def __post_init__(self) -> None:
        if (self.const is UNSET) is (self.fn is UNSET):
            raise ValueError("a constant or a function, not both nor neither")


Operand = NonEmpty | ConstOrFn


def is_const(raw: object) -> TypeGuard[ConstOrFn]:
    """The operand is a constant (the models' `Const`)."""
    return type(raw) is ConstOrFn and raw.fn is UNSET


def is_fn(raw: object) -> TypeGuard[ConstOrFn]:
    """The operand is a function pointer (the models' `FnRef`)."""
    return type(raw) is ConstOrFn and raw.fn is not UNSET


class Unary(_Strict, frozen=True, forbid_unknown_fields=True):
    op: Literal["!", "-", "~"]
    operand: Operand


class Binary(_Strict, frozen=True, forbid_unknown_fields=True):
    op: Literal[
        "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "&", "|", "^"
    ]
    left: Operand
    right: Operand


class Aggregate(_Strict, frozen=True, forbid_unknown_fields=True):
    kind: Literal["tuple", "struct", "list", "dict", "closure"]
    operands: list[Operand] = []
    fields: list[str] | None = None


class Apply(_Strict, frozen=True, forbid_unknown_fields=True):
    func: Operand
    args: list[Operand] = []


def statement_problem(st: Any) -> str | None:
    """What is wrong with a statement's kinds (`assign` plus exactly one rvalue, or
    exactly one of `storage_live`, `storage_dead`, `nop`), None when nothing is: the
    one rule of both the model (`body.Statement`, its message) and the Struct."""
    n_rv = (
        (st.load is not None)
        + (st.unary is not None)
        + (st.binary is not None)
        + (st.aggregate is not None)
        + (st.apply is not None)
        + (st.input is not None)
    )
    if (
        st.assign is not None
        and n_rv == 1
        and st.storage_live is None
        and st.storage_dead is None
        and st.nop is None
    ):
        return None  # the common case, checked without building lists
    rv = [k for k in RVALUE_KINDS if getattr(st, k) is not None]
    other = [k for k in ("storage_live", "storage_dead", "nop") if getattr(st, k) is not None]
    if st.assign is not None:
        return f"an assignment needs exactly one rvalue ({', '.join(RVALUE_KINDS)}), got {', '.join(rv + other) or 'none'}"
    if rv or len(other) != 1:
        if rv:
            return f"'{rv[0]}' needs 'assign' (the local it defines)"
        return "a statement is an assignment (assign + rvalue) or one of storage_live, storage_dead, nop"
    return None


class Statement(_Strict, frozen=True, forbid_unknown_fields=True):
    """`assign` plus exactly one rvalue, or exactly one of `storage_live`,
    `storage_dead`, `nop` (`statement_problem`)."""

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

    def __post_init__(self) -> None:
        problem = statement_problem(self)
        if problem is not None:
            raise ValueError(problem)

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


class Successor(_Strict, frozen=True, forbid_unknown_fields=True):
    block: NonEmpty
    args: list[Operand] = []
    value: int | None = None


class Terminator(_Strict, frozen=True, forbid_unknown_fields=True):
    kind: Literal["goto", "switch", "return", "unreachable", "graph_read"]
    successors: list[Successor] = []
    operand: Operand | None = None
    text: str | None = None


class Block(_Strict, frozen=True, forbid_unknown_fields=True):
    id: NonEmpty
    terminator: Terminator
    params: list[str] = []
    statements: list[Statement] = []


class Body(_Strict, frozen=True, forbid_unknown_fields=True):
    name: NonEmpty
    blocks: Annotated[list[Block], Meta(min_length=1)]
    args: list[str] | None = None
    env: str | None = None
    vertex: str | None = None
    locals: dict[str, Any] = {}
    entry: str | None = None


class BodyFile(_Strict, frozen=True, forbid_unknown_fields=True):
    version: Literal[1]
    bodies: Annotated[list[Body], Meta(min_length=1)]
    name: str | None = None
    profile: str | dict[str, Any] = "hashql"
    types: dict[str, Any] = {}
    size_cap: Annotated[float, Meta(ge=0, le=sys.float_info.max)] | None = None
    place: str | None = None
    split: Literal["runs", "intersection", "per-statement"] | None = None
    names: Literal["hashql-mir"] | None = None


_decoder = msgspec.json.Decoder(BodyFile)


def _accepted(f: BodyFile) -> BodyFile | None:
    """The body file, or None when a free-form value (types, locals, a profile) nests
    deeper than the models' JSON parser reads (`structs.shallow`)."""
    if not shallow(f.types) or (type(f.profile) is dict and not shallow(f.profile)):
        return None
    for b in f.bodies:
        if not shallow(b.locals):
            return None
    return f


def decode_body(data: bytes | str) -> BodyFile | None:
    """The body file of JSON bytes, or None when the models must say what is wrong."""
    try:
        return _accepted(_decoder.decode(data))
    except (ValueError, TypeError, RecursionError):  # ValidationError, DecodeError
        return None


def convert_body(doc: Any) -> BodyFile | None:
    """The body file of a parsed document, or None when the models must say what is
    wrong."""
    try:
        return _accepted(msgspec.convert(doc, BodyFile, strict=True))
    except (ValueError, TypeError, RecursionError):  # ValidationError, a surrogate in a str
        return None


def from_model(model: Any) -> BodyFile:
    """The body file of a validated pydantic `body.BodyFile` (what the models accept,
    these classes read: only nesting and the form of operands differ, neither checked
    on conversion)."""
    return msgspec.convert(model.model_dump(), BodyFile, strict=True)
