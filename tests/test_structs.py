"""The msgspec Structs of the plan format (`placement_cli.formats.structs`, the fast
path) and its pydantic models (`placement_cli.formats.plan`, every message and
`schemas/`) are one definition: the same classes, fields, types, constraints and
defaults. A field added to a model and not to its Struct (or the other way round)
fails here, as does any type or bound that differs."""

from __future__ import annotations

import sys
import types
import typing
from typing import Any, Literal, get_args, get_origin

import annotated_types as at
import msgspec
import msgspec.inspect as mi
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from placement_cli.formats import plan, structs

_BOUNDS = {at.Ge: "ge", at.Gt: "gt", at.Le: "le", at.Lt: "lt"}
_LENGTHS = {at.MinLen: "min_length", at.MaxLen: "max_length"}


def _constraints(metadata: list[Any]) -> dict[str, Any]:
    got: dict[str, Any] = {}
    for m in metadata:
        if isinstance(m, FieldInfo):
            got.update(_constraints(m.metadata))
            continue
        for cls, name in {**_BOUNDS, **_LENGTHS}.items():
            if isinstance(m, cls):
                got[name] = getattr(m, name if cls in _LENGTHS else name)
    return got


def _model_type(ann: Any, metadata: list[Any], finite: bool) -> Any:
    """A pydantic annotation (and its field's constraints) in a canonical form."""
    if get_origin(ann) is typing.Annotated:
        base, *meta = get_args(ann)
        return _model_type(base, [*meta, *metadata], finite)
    c = _constraints(metadata)
    origin = get_origin(ann)
    if origin in (typing.Union, types.UnionType):
        return ("union", frozenset(_model_type(a, [], finite) for a in get_args(ann)))
    if origin is Literal:
        return ("literal", frozenset(get_args(ann)))
    if origin is list:
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
    return (ann.__name__, tuple(sorted(c.items())))


def _struct_type(t: Any) -> Any:
    """A msgspec type (`msgspec.inspect`) in the same canonical form."""
    if isinstance(t, mi.UnionType):
        return ("union", frozenset(_struct_type(a) for a in t.types))
    if isinstance(t, mi.LiteralType):
        return ("literal", frozenset(t.values))
    if isinstance(t, mi.ListType):
        c = {k: getattr(t, k) for k in ("min_length", "max_length") if getattr(t, k) is not None}
        return ("list", _struct_type(t.item_type), tuple(sorted(c.items())))
    if isinstance(t, mi.DictType):
        return ("dict", _struct_type(t.key_type), _struct_type(t.value_type))
    if isinstance(t, mi.NoneType):
        return ("none",)
    if isinstance(t, mi.AnyType):
        return ("any",)
    if isinstance(t, mi.StructType):
        return ("struct", t.cls.__name__)
    if isinstance(t, mi.FloatType):
        c = {k: getattr(t, k) for k in ("ge", "gt", "le", "lt") if getattr(t, k) is not None}
        if c.get("le") == sys.float_info.max:  # how a Struct says "finite"
            del c["le"]
            c["finite"] = True
        return ("float", tuple(sorted(c.items())))
    if isinstance(t, mi.StrType):
        c = {k: getattr(t, k) for k in ("min_length", "max_length") if getattr(t, k) is not None}
        return ("str", tuple(sorted(c.items())))
    raise TypeError(f"no canonical form for {t!r}")


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
        out[name] = (_model_type(f.annotation, f.metadata, finite), default)
    return out


def _struct_fields(cls: type) -> dict[str, Any]:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    out = {}
    for f in info.fields:
        default: Any = "required" if f.required else f.default
        if f.default_factory is not mi.NODEFAULT:
            default = f.default_factory()
        out[f.name] = (_struct_type(f.type), default)
    return out


def _pairs() -> list[tuple[type[BaseModel], type]]:
    models = [m for m in vars(plan).values() if isinstance(m, type) and issubclass(m, BaseModel)]
    models = [m for m in models if m.__module__ == plan.__name__ and not m.__name__.startswith("_")]
    return [(m, getattr(structs, m.__name__)) for m in models]


def test_every_model_has_its_struct():
    names = {m.__name__ for m, _ in _pairs()}
    assert names == {"Plan", "Block", "Statement", "Terminator", "Edge"}
    have = {
        n
        for n, v in vars(structs).items()
        if isinstance(v, type)
        and issubclass(v, msgspec.Struct)
        and v.__module__ == structs.__name__
        and not n.startswith("_")
    }
    assert have == names


def test_structs_and_models_have_the_same_fields():
    for model, struct in _pairs():
        want, got = _model_fields(model), _struct_fields(struct)
        assert set(got) == set(want), (model.__name__, set(want) ^ set(got))
        for name in want:
            assert got[name] == want[name], (model.__name__, name, want[name], got[name])


def test_structs_are_strict_like_the_models():
    for model, struct in _pairs():
        cfg = model.model_config
        assert cfg.get("extra") == "forbid" and cfg.get("frozen") and cfg.get("strict")
        assert struct.__struct_config__.forbid_unknown_fields, struct
        assert struct.__struct_config__.frozen, struct
