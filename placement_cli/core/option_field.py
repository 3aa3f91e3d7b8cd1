"""A stage's options model as the one declaration of its command-line options.

Each stage's options (`SolveOptions`, `LowerOptions`, `TreeOptions`) are a frozen
msgspec `Struct`; a field the command line sets carries a `Flag` in its annotation
(`Annotated[type, Flag(...)]`; several when more than one option gives it): its
spellings, help, metavar, lower bound and whether `placement.toml` may set it. Its
choices are the field's `Literal` values and its default the field's default, so
neither is written twice. `app/options.py` derives the commands' options from these
fields, `app/config.py` the settings a project file may give, and `check` is the
model's own check of the same choices and bounds. A `Struct` class is built in C
(~0.02 ms, measured, against ~0.85 ms for the frozen dataclasses they were): every
pipeline command's start-up builds two of them.

Standard library and msgspec only: the fast launcher reads these on every pipeline
command.

>>> class Demo(msgspec.Struct, frozen=True):
...     mode: Annotated[Literal["a", "b"], Flag(("--mode",), "How.")] = "a"
...     limit: Annotated[float, Flag(("--limit",), "Seconds.", minimum=0.0)] = 1.0
...     def __post_init__(self) -> None:
...         check(self, "demo")
>>> Demo(limit=2).limit
2.0
>>> Demo(mode="c", limit=-1)
Traceback (most recent call last):
...
ValueError: invalid demo options: mode: expected one of a, b, got 'c'; limit: expected a number >= 0, got -1
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

# `Annotated`: the example above resolves its annotations in this module.
from typing import Annotated, Any, Literal, get_args  # noqa: F401

import msgspec
from msgspec.structs import FieldInfo

Kind = Literal["str", "float", "int", "bool"]


class Flag(msgspec.Struct, frozen=True):
    """One command-line option of a field.

    `key` is the command's value key when it is not the field's name. `kind` is set
    when the command line gives something the handler turns into the field's value (a
    file it reads, `BLOCK=TARGET` text it splits): the option is then that kind,
    optional, and the model's checks do not apply to it. `settable`: `placement.toml`
    may set it; `path`: a settable path, relative to the configuration file."""

    flags: tuple[str, ...]
    help: str
    metavar: str | None = None
    minimum: float | None = None
    key: str | None = None
    kind: Kind | None = None
    repeatable: bool = False
    settable: bool = False
    path: bool = False


@cache
def _declared(model: type) -> tuple[tuple[FieldInfo, tuple[Flag, ...]], ...]:
    """Each field of a model with its flags, in field order; read once per model (the
    annotations are text until read)."""
    return tuple(
        (f, tuple(m for m in getattr(f.type, "__metadata__", ()) if isinstance(m, Flag)))
        for f in msgspec.structs.fields(model)
    )


def flags_of(model: type) -> Iterator[tuple[FieldInfo, Flag]]:
    """Every (field, flag) of a model, in field order."""
    for f, flags in _declared(model):
        for flag in flags:
            yield f, flag


def literal_choices(hint: Any) -> tuple[str, ...]:
    """The values of a `Literal[...]` type (None excluded), in order.

    >>> literal_choices(Literal["x", "y"] | None)
    ('x', 'y')
    """
    out: list[str] = []
    stack = [hint]
    while stack:  # Literal[...] | None nests: flatten it in order
        h = stack.pop(0)
        args = get_args(h)
        if args and all(isinstance(a, str) for a in args):
            out += args
        else:
            stack[:0] = [a for a in args if a is not type(None)]
    return tuple(out)


def value_kind(hint: Any) -> Kind:
    """The kind of a field's value, None stripped: `float | None` is "float".

    >>> value_kind(float | None), value_kind(bool), value_kind(Literal["a"] | None)
    ('float', 'bool', 'str')
    """
    kinds = {bool: "bool", int: "int", float: "float"}
    for h in (hint, *get_args(hint)):
        if h in kinds:
            return kinds[h]  # type: ignore[return-value]
    return "str"


@cache
def hints(model: type) -> dict[str, Any]:
    """The model's field types, resolved, without their flags (read once per model).

    >>> hints(Flag)["kind"] == (Kind | None)
    True
    """
    return {f.name: f.type.__origin__ if _flagged(f.type) else f.type for f, _ in _declared(model)}


def _flagged(hint: Any) -> bool:
    """Whether `hint` is an `Annotated[...]` (whose `__origin__` is the type it annotates)."""
    return getattr(hint, "__metadata__", None) is not None


def check(obj: Any, what: str, more: tuple[str, ...] = ()) -> None:
    """`problems` of `obj`, and `more` the model found itself: a `ValueError` naming
    every bad field, if any."""
    bad = [*problems(obj), *more]
    if bad:
        raise ValueError(f"invalid {what} options: " + "; ".join(bad))


def problems(obj: Any) -> list[str]:
    """The choices and lower bounds a model's flags declare, checked on its values (a
    whole number given for a float field becomes a float): one line per bad field. A
    field the command line gives in another form (`Flag.kind`) is the model's own to
    check."""
    bad: list[str] = []
    model: type = type(obj)
    types = hints(model)
    for f, flag in flags_of(model):
        if flag.kind is not None:
            continue
        value = getattr(obj, f.name)
        if value is None and f.default is None:
            continue
        choices = literal_choices(types[f.name])
        kind = value_kind(types[f.name])
        number = not isinstance(value, bool) and isinstance(value, int | float)
        if choices:
            if value not in choices:
                bad.append(f"{f.name}: expected one of {', '.join(choices)}, got {value!r:.40}")
        elif kind == "bool":
            if not isinstance(value, bool):
                bad.append(f"{f.name}: expected true or false, got {value!r:.40}")
        elif kind == "int" and (not number or not isinstance(value, int)):
            bad.append(f"{f.name}: expected an integer, got {value!r:.40}")
        elif kind in ("int", "float"):
            if not number or (flag.minimum is not None and not value >= flag.minimum):
                low = "" if flag.minimum is None else f" >= {flag.minimum:g}"
                a = "an integer" if kind == "int" else "a number"
                bad.append(f"{f.name}: expected {a}{low}, got {value!r:.40}")
            elif kind == "float":
                msgspec.structs.force_setattr(obj, f.name, float(value))
        elif not isinstance(value, str):
            bad.append(f"{f.name}: expected a string, got {value!r:.40}")
    return bad
