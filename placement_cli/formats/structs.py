"""The plan format as msgspec `Struct`s: the fast half of "fast accept, slow diagnose"
(a tree file's are `tree_structs`, a body file's `body_structs`).

`msgspec` decodes a plan's JSON straight into these frozen classes in one C pass,
checking every type and bound on the way (`decode_plan`), or converts a plan already
parsed from YAML (`convert_plan`). They accept exactly what the strict pydantic models
of `placement_cli.formats.plan` accept, with the same values; anything they refuse goes
to those models, the one source of every error message and of `schemas/`.
`tests/test_structs.py` holds the two definitions equal field by field.

>>> p = decode_plan(b'{"version": 1, "targets": ["a"], "blocks": [{"id": "x",'
...     b' "statements": [{"cost": {"a": 2}}], "terminator": {"kind": "return"}}]}')
>>> p.blocks[0].statements[0].cost, p.blocks[0].params, p.entry
({'a': 2.0}, [], None)
>>> decode_plan(b'{"version": true, "targets": ["a"], "blocks": []}') is None
True
"""

# No `from __future__ import annotations`: msgspec reads these classes' annotations
# when `_decoder` is built at import, and annotations kept as text were compiled and
# evaluated there (~0.3 ms of every command that reads a plan, measured).
import sys
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

# A cost: a finite float >= 0 (the models: `ge=0`, no inf or NaN; an integer is read as
# the equal float, as the models read it).
Cost = Annotated[float, Meta(ge=0, le=sys.float_info.max)]
TransMatrix = dict[str, dict[str, Cost]]
TermKind = Literal["goto", "switch", "return", "unreachable", "graph_read"]
NonEmpty = Annotated[str, Meta(min_length=1)]

# Free-form values (`provenance`, `lower`) nesting deeper than this are left to the
# models: pydantic's JSON parser refuses documents nested about 200 deep.
MAX_FREE_DEPTH = 64


class _Strict(Struct, frozen=True, forbid_unknown_fields=True):
    pass


class Statement(_Strict, frozen=True, forbid_unknown_fields=True):
    cost: dict[str, Cost | None]
    text: str | None = None


class Edge(_Strict, frozen=True, forbid_unknown_fields=True):
    block: str
    args: list[str] = []
    transitions: TransMatrix | str | None = None


class Terminator(_Strict, frozen=True, forbid_unknown_fields=True):
    kind: TermKind
    successors: list[Edge] = []
    cost: dict[str, Cost | None] | None = None


class Block(_Strict, frozen=True, forbid_unknown_fields=True):
    id: NonEmpty
    terminator: Terminator
    params: list[str] = []
    statements: list[Statement] = []
    domain: list[str] | None = None
    cost: dict[str, Cost] | None = None
    paths: list[str] = []
    premium: dict[str, Cost] | None = None


class Plan(_Strict, frozen=True, forbid_unknown_fields=True):
    version: Literal[1]
    targets: Annotated[list[NonEmpty], Meta(min_length=1, max_length=64)]
    blocks: Annotated[list[Block], Meta(min_length=1)]
    name: str | None = None
    entry: str | None = None
    transitions: TransMatrix | None = None
    matrices: dict[str, TransMatrix] = {}
    paths: dict[str, list[str]] = {}
    provenance: dict[str, Any] | None = None
    lower: dict[str, Any] | None = None


_decoder = msgspec.json.Decoder(Plan)


def shallow(v: Any) -> bool:
    """A free-form value nested no deeper than `MAX_FREE_DEPTH`."""
    stack: list[tuple[Any, int]] = [(v, 1)]
    while stack:
        node, d = stack.pop()
        if d > MAX_FREE_DEPTH:
            return False
        for x in node.values() if type(node) is dict else node:
            if type(x) is dict or type(x) is list:
                stack.append((x, d + 1))
    return True


def _accepted(p: Plan) -> Plan | None:
    if (p.provenance is not None and not shallow(p.provenance)) or (
        p.lower is not None and not shallow(p.lower)
    ):
        return None
    return p


def decode_plan(data: bytes | str) -> Plan | None:
    """The plan of JSON bytes, or None when the models must say what is wrong."""
    try:
        return _accepted(_decoder.decode(data))
    except (ValueError, TypeError, RecursionError):  # ValidationError, DecodeError
        return None


def convert_plan(doc: Any) -> Plan | None:
    """The plan of a parsed document (YAML, JSON, a model's dump), or None when the
    models must say what is wrong."""
    try:
        return _accepted(msgspec.convert(doc, Plan, strict=True))
    except (ValueError, TypeError, RecursionError):  # ValidationError, a surrogate in a str
        return None


def from_model(model: Any) -> Plan:
    """The plan of a validated pydantic `plan.Plan` (the models accepted it: these
    classes accept it too, `tests/test_structs.py`)."""
    return msgspec.convert(model.model_dump(), Plan, strict=True)
