"""The tree file format (`placement_cli.formats.tree`) as msgspec `Struct`s: the fast half
of "fast accept, slow diagnose", as `structs` is for plans and `body_structs` for bodies.

`convert_tree` converts a parsed tree file (orjson's or the YAML reader's objects) into
these frozen classes in one C call, checking every type and bound on the way. They
accept exactly what the strict pydantic models accept, with the same values, or refuse
(None): the models then give every message, and a file they accept is taken from them
(`from_model`). The tree reader (`ir/tree`) and everything after it read these classes
only; `dump` is the models' `model_dump(mode="json", by_alias=True, ...)` of them.
`tests/test_structs.py` holds the two definitions equal field by field.

Fields are keyword-only so they keep the models' order (a required field after an
optional one), which is the order `dump` writes them in.

>>> f = convert_tree({"version": 1, "engines": ["pg"], "nodes": [{"id": "s", "time": {"pg": 2}}]})
>>> f.nodes[0].time, f.transfer.default, f.budget
({'pg': 2.0}, None, None)
>>> dump(f, exclude_none=True)["transfer"]
{'linear': {}, 'explicit': []}
>>> convert_tree({"version": 1, "engines": ["pg"], "nodes": [{"id": "s", "rows": True}]}) is None
True
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

from placement_cli.core.cache_modes import Caches
from placement_cli.core.limits import COUNT_MAX
from placement_cli.formats.structs import shallow

# A cost: a finite float >= 0 (the models: `ge=0`, no inf or NaN; an integer is read as
# the equal float, as the models read it).
Cost = Annotated[float, Meta(ge=0, le=sys.float_info.max)]
Name = Annotated[str, Meta(min_length=1)]
# The model's pattern ends in `$`, which pydantic's (Rust) regex reads as the end of the
# text; Python's `$` would also match before a final newline.
SHA256 = Annotated[str, Meta(pattern=r"^[0-9a-f]{64}\Z")]


class _Strict(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    pass


class LinearTransfer(_Strict, frozen=True, forbid_unknown_fields=True, kw_only=True):
    fixed: Cost = 0.0
    per_row: Cost = 0.0
    per_width: Cost = 0.0
    per_byte: Cost = 0.0


class ExplicitTransfer(_Strict, frozen=True, forbid_unknown_fields=True, kw_only=True):
    child: Name
    from_: Name = msgspec.field(name="from")
    to: Name
    cost: Cost


class ProfileRef(_Strict, frozen=True, forbid_unknown_fields=True, kw_only=True):
    name: Name
    sha256: SHA256


class Transfer(_Strict, frozen=True, forbid_unknown_fields=True, kw_only=True):
    default: LinearTransfer | None = None
    linear: dict[str, dict[str, LinearTransfer]] = {}
    explicit: list[ExplicitTransfer] = []
    profile: ProfileRef | None = None


class Measured(_Strict, frozen=True, forbid_unknown_fields=True, kw_only=True):
    median: Cost
    min: Cost
    max: Cost
    runs: Annotated[int, Meta(ge=1, le=COUNT_MAX)]


class TreeNode(_Strict, frozen=True, forbid_unknown_fields=True, kw_only=True):
    id: Name
    op: str | None = None
    children: list[str] = []
    time: dict[str, Cost | None] = {}
    rows: Cost | None = None
    row_width: Cost | None = None
    plan_node: Annotated[int, Meta(ge=0, le=COUNT_MAX)] | None = None
    subtree: dict[str, Measured] = {}
    no_cut: Name | None = None
    above: dict[str, Measured] = {}


class Query(_Strict, frozen=True, forbid_unknown_fields=True, kw_only=True):
    sql: str
    substrait: dict[str, Any] | None = None
    native: bool = False
    replanned: list[Name] = []
    repeat: Annotated[int, Meta(ge=1, le=COUNT_MAX)] | None = None
    warmup: Annotated[int, Meta(ge=0, le=COUNT_MAX)] | None = None
    threads: dict[Name, Annotated[int, Meta(ge=1, le=COUNT_MAX)] | None] | None = None
    forks: Annotated[int, Meta(ge=2, le=COUNT_MAX)] | None = None
    caches: Caches | None = None
    as_written: dict[Name, Measured] = {}


class TreeFile(_Strict, frozen=True, forbid_unknown_fields=True, kw_only=True):
    version: Literal[1]
    name: str | None = None
    engines: Annotated[list[Name], Meta(min_length=1)]
    estimated: list[Name] = []
    budget: Annotated[int, Meta(ge=0)] | None = None
    root: str | None = None
    nodes: Annotated[list[TreeNode], Meta(min_length=1)]
    transfer: Transfer = Transfer()
    query: Query | None = None


def convert_tree(doc: Any) -> TreeFile | None:
    """The tree file of a parsed document, or None when the models must say what is
    wrong (also when the query's Substrait plan nests deeper than `structs.shallow`
    reads: the models have no such limit, and the reader's nesting check is on the
    whole document)."""
    try:
        f = msgspec.convert(doc, TreeFile, strict=True)
    except (ValueError, TypeError, RecursionError):  # ValidationError, a surrogate in a str
        return None
    if f.query is not None and f.query.substrait is not None and not shallow(f.query.substrait):
        return None
    return f


def convert_explicit(items: Any) -> list[ExplicitTransfer] | None:
    """A list of explicit transfers on its own (the reader's slow path takes well-formed
    ones out of the document before the model sees it), or None."""
    try:
        return msgspec.convert(items, list[ExplicitTransfer], strict=True)
    except (ValueError, TypeError, RecursionError):
        return None


_CLASSES: dict[str, type[Struct]] = {
    c.__name__: c
    for c in (LinearTransfer, ExplicitTransfer, ProfileRef, Transfer, Measured, TreeNode, Query)
}
_CLASSES["TreeFile"] = TreeFile


def from_model(model: Any) -> TreeFile:
    """The tree file of a validated pydantic `tree.TreeFile`, value for value (built
    without checking again: the models accepted it, and they accept a little more, such
    as `version: true` or a budget past 64 bits)."""
    return _from(model)  # type: ignore[no-any-return]


def _from(v: Any) -> Any:
    fields = getattr(type(v), "model_fields", None)
    if fields is not None:
        cls = _CLASSES[type(v).__name__]
        return cls(**{k: _from(getattr(v, k)) for k in fields})
    if type(v) is dict:
        return {k: _from(x) for k, x in v.items()}
    if type(v) is list:
        return [_from(x) for x in v]
    return v


def dump(obj: Any, *, exclude_none: bool = False, exclude_defaults: bool = False) -> Any:
    """What the models' `model_dump(mode="json", by_alias=True, exclude_none=...,
    exclude_defaults=...)` gives for the same file: fields in the models' order under
    their names in a file, a field left out when None or equal to its default as asked
    (fields only: a None inside a mapping stays)."""
    if isinstance(obj, Struct):
        out = {}
        for name, key, default in _fields(type(obj)):
            v = getattr(obj, name)
            if exclude_none and v is None:
                continue
            if exclude_defaults and default is not _REQUIRED and v == default:
                continue
            out[key] = dump(v, exclude_none=exclude_none, exclude_defaults=exclude_defaults)
        return out
    if type(obj) is dict:
        return {
            k: dump(x, exclude_none=exclude_none, exclude_defaults=exclude_defaults)
            for k, x in obj.items()
        }
    if type(obj) is list:
        return [dump(x, exclude_none=exclude_none, exclude_defaults=exclude_defaults) for x in obj]
    return obj


_REQUIRED = object()


def _fields(cls: type[Struct]) -> list[tuple[str, str, Any]]:
    """(attribute, name in a file, default or `_REQUIRED`) of each field, in order."""
    out = []
    for f in msgspec.structs.fields(cls):
        if f.default_factory is not msgspec.NODEFAULT:
            default = f.default_factory()
        else:
            default = _REQUIRED if f.required else f.default
        out.append((f.name, f.encode_name, default))
    return out
