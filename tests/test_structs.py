"""The msgspec Structs of the formats (`placement_cli.formats.structs`: the plan;
`placement_cli.formats.tree_structs`: the tree file; `placement_cli.formats.body_structs`: the body file;
`placement_cli.formats.sectioncheck`: the artifact and its sections), the fast path,
and their pydantic models (`plan.py`, `tree.py`, `body.py`, `sections.py`: every message
and `schemas/`) are one definition: the same classes,
fields (by their names in the file), types, constraints and defaults. A field added to a
model and not to its Struct (or the other way round) fails here, as does any type or
bound that differs, or a model validator the Structs' checks do not apply.

Differences by design, all where the Structs refuse more (the models then accept, more
slowly): an integer's 64 bits are the signed range in a Struct (msgspec's bounds stop
there), the unsigned one in the models; a Struct's float is finite by an upper bound
(the largest float, or for an artifact's `int | float` 2**64: orjson reads a wider
integer literal as a float, which the models, reading the bytes, see as an integer and
refuse). And one of form: a body's operand, `str | Const | FnRef` in the models, is
`str | ConstOrFn` in the Structs (msgspec cannot tell two mappings apart in a union):
one Struct with the fields of both, exactly one given."""

from __future__ import annotations

import sys
import types
import typing
from typing import Any, Literal, get_args, get_origin

import annotated_types as at
import msgspec
import msgspec.inspect as mi
from pydantic import BaseModel, BeforeValidator
from pydantic.fields import FieldInfo
from pydantic.types import AllowInfNan

from placement_cli.formats import (
    body,
    body_structs,
    plan,
    sectioncheck,
    sections,
    structs,
    tree,
    tree_structs,
)
from placement_cli.pipeline import registry

_BOUNDS = {at.Ge: "ge", at.Gt: "gt", at.Le: "le", at.Lt: "lt", at.MinLen: "min_length"}
_BOUNDS[at.MaxLen] = "max_length"
INT64 = (-(2**63), 2**63 - 1)  # what a Struct's "64 bits" is


def _constraints(metadata: list[Any]) -> dict[str, Any]:
    got: dict[str, Any] = {}
    for m in metadata:
        if isinstance(m, FieldInfo):
            got.update(_constraints(m.metadata))
        elif isinstance(m, AllowInfNan) and not m.allow_inf_nan:
            got["finite"] = True
        elif isinstance(m, BeforeValidator):
            assert m.func is sections._writable_number, m.func  # the one the Structs know
            got["int64"] = True
        for cls, name in _BOUNDS.items():
            if isinstance(m, cls):
                got[name] = getattr(m, name)
        pattern = getattr(m, "pattern", None)
        if isinstance(pattern, str):
            # pydantic's (Rust) `$` is the end of the text: Python's `\Z`
            got["pattern"] = pattern[:-1] + "\\Z" if pattern.endswith("$") else pattern
    return got


def _scalar(name: str, c: dict[str, Any]) -> Any:
    if name != "str":
        c.pop("pattern", None)
    if name != "float":
        c.pop("finite", None)
    if name != "int":
        c.pop("int64", None)
    elif c.get("le") == INT64[1]:  # a count bounded to what orjson writes (`COUNT_MAX`)
        del c["le"]
        c["int64"] = True
    return (name, tuple(sorted(c.items())))


def _model_type(ann: Any, metadata: list[Any], finite: bool) -> Any:
    """A pydantic annotation (and its field's constraints) in a canonical form."""
    if get_origin(ann) is typing.Annotated:
        base, *meta = get_args(ann)
        return _model_type(base, [*meta, *metadata], finite)
    c = _constraints(metadata)
    origin = get_origin(ann)
    if origin in (typing.Union, types.UnionType):
        # constraints of the whole apply to each member; nested unions are flat
        members: set[Any] = set()
        for a in get_args(ann):
            got = _model_type(a, metadata, finite)
            members |= got[1] if got[0] == "union" else {got}
        return ("union", frozenset(members))
    if origin is Literal:
        return ("literal", frozenset(get_args(ann)))
    if origin is list:
        c.pop("finite", None), c.pop("int64", None)
        return ("list", _model_type(get_args(ann)[0], [], finite), tuple(sorted(c.items())))
    if origin is dict:
        k, v = get_args(ann)
        return ("dict", _model_type(k, [], finite), _model_type(v, [], finite))
    if ann is type(None):
        return ("none",)
    if ann is Any:
        return ("any",)
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ("struct", ann.__name__)
    if ann is float and finite:
        c["finite"] = True
    return _scalar(ann.__name__, c)


def _bounds(t: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {k: getattr(t, k) for k in names if getattr(t, k) is not None}


def _struct_type(t: Any) -> Any:
    """A msgspec type (`msgspec.inspect`) in the same canonical form."""
    if isinstance(t, mi.UnionType):
        members: set[Any] = set()
        for a in t.types:
            got = _struct_type(a)
            members |= MERGED.get(got, {got})
        return ("union", frozenset(members))
    if isinstance(t, mi.LiteralType):
        return ("literal", frozenset(t.values))
    if isinstance(t, mi.ListType):
        return ("list", _struct_type(t.item_type), tuple(sorted(_bounds(t, _LEN).items())))
    if isinstance(t, mi.DictType):
        return ("dict", _struct_type(t.key_type), _struct_type(t.value_type))
    if isinstance(t, mi.NoneType):
        return ("none",)
    if isinstance(t, mi.AnyType):
        return ("any",)
    if isinstance(t, mi.StructType):
        return ("struct", t.cls.__name__)
    if isinstance(t, mi.FloatType):
        c = _bounds(t, ("ge", "gt", "le", "lt"))
        if c.get("le") == sys.float_info.max:  # how a Struct says "finite"
            del c["le"]
            if c.get("ge") == -sys.float_info.max:  # of any sign
                del c["ge"]
            c["finite"] = True
        elif c.get("lt") == 2**64:  # finite, and not an integer orjson read as a float
            del c["lt"]
            if c.get("gt") == -(2**64):
                del c["gt"]
            c["finite"] = True
        return ("float", tuple(sorted(c.items())))
    if isinstance(t, mi.IntType):
        c = _bounds(t, ("ge", "gt", "le", "lt"))
        if c.get("le") == INT64[1]:  # how a Struct says "64 bits"
            del c["le"]
            if c.get("ge") == INT64[0]:
                del c["ge"]
            c["int64"] = True
        return ("int", tuple(sorted(c.items())))
    if isinstance(t, mi.StrType):
        return ("str", tuple(sorted(_bounds(t, (*_LEN, "pattern")).items())))
    if isinstance(t, mi.BoolType):
        return ("bool", ())
    raise TypeError(f"no canonical form for {t!r}")


_LEN = ("min_length", "max_length")
# The models' union members a Struct holds as one (module docstring).
MERGED = {("struct", "ConstOrFn"): {("struct", "Const"), ("struct", "FnRef")}}


def _model_fields(model: type[BaseModel]) -> dict[str, Any]:
    finite = model.model_config.get("allow_inf_nan") is False
    out = {}
    for name, f in model.model_fields.items():
        if f.is_required():
            default: Any = "required"
        elif f.default_factory is not None:
            default = f.default_factory()  # type: ignore[call-arg]
        else:
            default = f.default
            if isinstance(default, BaseModel):
                default = default.model_dump()
        out[f.alias or name] = (_model_type(f.annotation, f.metadata, finite), default)
    return out


def _struct_fields(cls: type) -> dict[str, Any]:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    out = {}
    for f in info.fields:
        default: Any = "required" if f.required else f.default
        if f.default_factory is not mi.NODEFAULT:
            default = f.default_factory()
        if isinstance(default, msgspec.Struct):
            default = msgspec.to_builtins(default)
        out[f.encode_name] = (_struct_type(f.type), default)
    return out


def _models(module: Any) -> dict[str, type[BaseModel]]:
    return {
        n: m
        for n, m in vars(module).items()
        if isinstance(m, type)
        and issubclass(m, BaseModel)
        and m.__module__ == module.__name__
        and not n.startswith("_")
    }


def _structs(module: Any) -> dict[str, type]:
    return {
        n: v
        for n, v in vars(module).items()
        if isinstance(v, type)
        and issubclass(v, msgspec.Struct)
        and v.__module__ == module.__name__
        and not n.startswith("_")
    }


def _pairs() -> list[tuple[type[BaseModel], type]]:
    got = [(m, getattr(structs, n)) for n, m in _models(plan).items()]
    got += [(m, getattr(tree_structs, n)) for n, m in _models(tree).items()]
    got += [(m, getattr(sectioncheck, n)) for n, m in _models(sections).items()]
    # The whole artifact's, both built from the stage list (`registry`).
    got += [(registry.artifact_model(), registry.artifact_struct())]
    got += [
        (m, getattr(body_structs, n)) for n, m in _models(body).items() if n not in _MERGED_MODELS
    ]
    return got


_MERGED_MODELS = ("Const", "FnRef")  # as `body_structs.ConstOrFn`


def test_every_model_has_its_struct():
    assert set(_structs(structs)) == set(_models(plan))
    assert set(_structs(tree_structs)) == set(_models(tree))
    assert set(_structs(sectioncheck)) == set(_models(sections))
    assert set(_structs(body_structs)) == {*_models(body), "ConstOrFn"} - set(_MERGED_MODELS)


def test_the_merged_operand_has_the_fields_of_both_and_takes_one():
    got = _struct_fields(body_structs.ConstOrFn)
    want = {**_model_fields(body.Const), **_model_fields(body.FnRef)}
    assert set(got) == set(want)
    for name, (ty, default) in want.items():
        # UNSET: a field that may be left out (msgspec shows no default)
        assert default == "required" and got[name] == (ty, mi.NODEFAULT), name
    dec = msgspec.json.Decoder(body_structs.ConstOrFn)
    assert dec.decode(b'{"const": null}').const is None
    assert dec.decode(b'{"fn": "f"}').fn == "f"
    for bad in (b"{}", b'{"const": 1, "fn": "f"}'):
        try:
            dec.decode(bad)
        except msgspec.ValidationError:
            continue
        raise AssertionError(bad)


# An artifact's plan is checked apart (`structs.Plan`, while its graph is built), so the
# artifact's Struct leaves it to that.
CHECKED_APART = {
    (m, "plan"): (("struct", "Plan"), "required") for m in ("ArtifactBase", "Artifact")
}


def test_structs_and_models_have_the_same_fields():
    for model, struct in _pairs():
        want, got = _model_fields(model), _struct_fields(struct)
        for (m, name), value in CHECKED_APART.items():
            if m == model.__name__:
                assert got[name] == (("any",), "required")
                got[name] = value
        assert set(got) == set(want), (model.__name__, set(want) ^ set(got))
        for name in want:
            assert got[name] == want[name], (model.__name__, name, want[name], got[name])


def test_structs_are_strict_like_the_models():
    for model, struct in _pairs():
        cfg = model.model_config
        assert cfg.get("frozen") and cfg.get("strict"), model
        assert struct.__struct_config__.frozen, struct
        # A model that allows extra fields (carried, checked writable) has an open Struct.
        open_ = cfg.get("extra") == "allow"
        assert cfg.get("extra") in ("forbid", "allow"), model
        assert struct.__struct_config__.forbid_unknown_fields is not open_, struct


def test_every_model_validator_is_applied_by_the_fast_checks():
    """The models' own validators are what `sectioncheck` applies beside the Structs:
    extra fields writable, and `writable` on `solve.stats`, `lower`, `config.settings`."""
    got = set()
    for model, _ in _pairs():
        dec = model.__pydantic_decorators__
        got |= {(model.__name__, v) for v in dec.field_validators}
        got |= {(model.__name__, v) for v in dec.model_validators}
    assert got == {
        ("DiagnosticModel", "_extras_writable"),
        ("SolveSection", "_extras_writable"),
        ("SolveSection", "_stats_writable"),
        ("ArtifactBase", "_lower_writable"),
        ("Artifact", "_lower_writable"),
        ("ConfigRecord", "_settings_writable"),
        ("Statement", "_one_kind"),  # body_structs.statement_problem, both
    }
    assert body_structs.Statement.__post_init__ is not None
