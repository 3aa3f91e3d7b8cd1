"""A stage's options model as the one declaration of its command-line options.

Each stage's options (`SolveOptions`, `LowerOptions`, `TreeOptions`) are a frozen
dataclass; a field the command line sets carries a `Flag` in its metadata
(`option(default, Flag(...))`): its spellings, help, metavar, lower bound and whether
`placement.toml` may set it. Its choices are the field's `Literal` values and its
default the field's default, so neither is written twice. `app/options.py` derives the
commands' options from these fields, `app/config.py` the settings a project file may
give, and `check` is the model's own check of the same choices and bounds.

Standard library and msgspec (`Flag` is a `Struct`) only: the fast launcher reads these on every
pipeline command.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Demo:
...     mode: Literal["a", "b"] = option("a", Flag(("--mode",), "How."))
...     limit: float = option(1.0, Flag(("--limit",), "Seconds.", minimum=0.0))
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

import dataclasses
from collections.abc import Iterator
from typing import Any, Literal, get_args, get_type_hints

import msgspec

Kind = Literal["str", "float", "int", "bool"]
KEY = "cli"  # the metadata key of a field's flags


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


def option(default: Any, *flags: Flag) -> Any:
    """A dataclass field with `default` and the command-line options `flags` (a field
    may have more than one source: `--pin` and `--pins FILE` both give pins)."""
    return dataclasses.field(default=default, metadata={KEY: flags})


def flags_of(model: type) -> Iterator[tuple[dataclasses.Field[Any], Flag]]:
    """Every (field, flag) of a model, in field order."""
    for f in dataclasses.fields(model):
        for flag in f.metadata.get(KEY, ()):
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


def hints(model: type) -> dict[str, Any]:
    """The model's field types, resolved."""
    return get_type_hints(model)


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
    types = hints(type(obj))
    for f, flag in flags_of(type(obj)):
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
                object.__setattr__(obj, f.name, float(value))
        elif not isinstance(value, str):
            bad.append(f"{f.name}: expected a string, got {value!r:.40}")
    return bad
