"""The type IR the generator reads from the models: a field's annotation and its
constraints as a `T` (`to_t`, `field_t`), its key in a document (`key_of`), what a model
must be for its checks to be generated (`_check_model`), and literals as the generated
code writes them (`q`, `_tuple`)."""

from __future__ import annotations

import json
import types
import typing
from dataclasses import dataclass, replace
from typing import Any, Literal, Union

import annotated_types as at
from pydantic import BaseModel, BeforeValidator
from pydantic.types import AllowInfNan

from placement_cli.formats.codegen.spec import VALIDATORS


@dataclass(frozen=True)
class T:
    """A type: `kind` in str, float, int, bool, none, lit, list, dict, model, any, union."""

    kind: str
    args: tuple[Any, ...] = ()
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    min_len: int | None = None
    max_len: int | None = None

    def nullable(self) -> bool:
        return self.kind == "none" or (
            self.kind == "union" and any(a.kind == "none" for a in self.args)
        )

    def without_none(self) -> T:
        if self.kind != "union":
            return self
        rest = tuple(a for a in self.args if a.kind != "none")
        return rest[0] if len(rest) == 1 else T("union", rest)


def to_t(ann: Any, metadata: list[Any] = ()) -> T:  # type: ignore[assignment]
    """The type IR of an annotation and its constraints."""
    cons: dict[str, Any] = {}
    for m in metadata:
        for name in ("ge", "gt", "le", "lt"):
            if isinstance(m, getattr(at, name.capitalize())):
                cons[name] = getattr(m, name)
        if isinstance(m, at.MinLen):
            cons["min_len"] = m.min_length
        elif isinstance(m, at.MaxLen):
            cons["max_len"] = m.max_length
        elif isinstance(m, AllowInfNan):
            pass  # the fast checks refuse NaN and infinities everywhere
        elif isinstance(m, BeforeValidator):
            if VALIDATORS.get(m.func.__name__) != "int64":  # type: ignore[union-attr]
                raise TypeError(f"validator {m.func!r} not known to the generator")
        elif type(m).__name__ not in ("Ge", "Gt", "Le", "Lt"):
            raise TypeError(f"constraint {m!r} not supported by the generator")
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        base, *extra = typing.get_args(ann)
        more = [x for fi in extra for x in getattr(fi, "metadata", [fi])]
        return to_t(base, [*metadata, *more])
    if ann is str:
        return T("str", **cons)
    if ann is float:
        return T("float", **cons)
    if ann is int:
        return T("int", **cons)
    if ann is bool:
        return T("bool")
    if ann is type(None) or ann is None:
        return T("none")
    if ann is Any:
        return T("any")
    if origin is Literal:
        return T("lit", typing.get_args(ann))
    if origin is list:
        (item,) = typing.get_args(ann)
        return T("list", (to_t(item),), **cons)
    if origin is dict:
        key, value = typing.get_args(ann)
        if key is not str:
            raise TypeError(f"dict keys must be str: {ann!r}")
        return T("dict", (to_t(value),), **cons)
    if origin in (Union, types.UnionType):
        alts: list[T] = []
        for a in typing.get_args(ann):
            got = to_t(a)
            alts.extend(got.args if got.kind == "union" else (got,))
        if {a.kind for a in alts} == {"int", "float"} and len(alts) == 2:
            return T("num", **cons)  # `int | float`: a number, either kept as it is
        rest = [a for a in alts if a.kind != "none"]
        if cons and len(rest) == 1:  # `X | None`: the constraints are X's
            alts = [replace(a, **cons) if a is rest[0] else a for a in alts]
        elif cons:
            raise TypeError(f"constraints on a union {ann!r} not supported by the generator")
        return T("union", tuple(alts))
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return T("model", (ann,))
    raise TypeError(f"annotation {ann!r} not supported by the generator")


def field_t(model: type[BaseModel], name: str) -> T:
    f = model.model_fields[name]
    return to_t(f.annotation, list(f.metadata))


def key_of(model: type[BaseModel], name: str) -> str:
    """The field's key in a document (its alias; by name too with `populate_by_name`,
    which the fast checks leave to the models)."""
    f = model.model_fields[name]
    if f.validation_alias not in (None, f.alias):
        raise TypeError(f"{model.__name__}.{name}: validation_alias not supported")
    return f.alias or name


def _check_model(model: type[BaseModel]) -> None:
    cfg = model.model_config
    want = {"extra": "forbid", "strict": True, "allow_inf_nan": False}
    for k, v in want.items():
        if cfg.get(k) != v:
            raise TypeError(f"{model.__name__}: the generator needs {k}={v!r}")
    dec = model.__pydantic_decorators__
    if dec.field_validators or dec.model_validators or dec.validators or dec.root_validators:
        raise TypeError(f"{model.__name__} has a custom validator: not generated")


def models_of(t: T) -> list[type[BaseModel]]:
    if t.kind == "model":
        m = t.args[0]
        out = [m]
        for name in m.model_fields:
            out += models_of(field_t(m, name))
        return out
    if t.kind in ("list", "dict", "union"):
        return [m for a in t.args for m in models_of(a)]
    return []


# --- literals in generated code ----------------------------------------------------


def q(x: Any) -> str:
    """A literal as ruff writes it (strings in double quotes)."""
    return json.dumps(x) if type(x) is str else repr(x)


def _tuple(items: Any) -> str:
    """A frozenset of literals, one a line (as ruff formats it)."""
    lines = "".join(f"        {x},\n" for x in items)
    return f"frozenset(\n    (\n{lines}    )\n)"
