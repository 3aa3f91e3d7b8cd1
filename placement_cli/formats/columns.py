"""Checks of a section's types a column at a time: the runtime of the section checks
generated from the models (`placement_cli.formats.generated.section_check`, written by
`placement_cli.formats.codegen`; docs/load.md).

Sections are lists of 100k objects (components, fused blocks, islands): a list of
objects is checked a column at a time (every item's value of one field in one list, its
types as one set), so the per-item work runs in C (`map`, `set`, `itertools.chain`)
rather than as a Python call per value. A column is accepted exactly when each of its
values would be. Free-form values (`stats`, `lower`, extra fields of diagnostics and of
the solve section) must be writable again.

>>> strlist(["a", "b"])
>>> obj({"a": nonneg_int})({"a": True})
Traceback (most recent call last):
...
placement_cli.formats.checking.Reject: int
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from operator import itemgetter
from typing import Any

from placement_cli.formats.checking import (
    BIG_FLOAT,
    EXACT_INT,
    INT_MAX,
    INT_MIN,
    MAX_FREE_DEPTH,
    Reject,
)


def _plain_writable(value: Any) -> None:
    """`writable`, and plain JSON types only (what orjson parses; keys are strings),
    nested no deeper than `MAX_FREE_DEPTH`. An integral float of 2**64 or more may have
    been a wider integer in the bytes (orjson reads those as floats): the models,
    reading the bytes, would refuse it."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        t = type(v)
        if t is str or t is bool or v is None:
            continue
        if t is int:
            if not INT_MIN <= v <= INT_MAX:
                raise Reject("value")
        elif t is float:
            if not -BIG_FLOAT < v < BIG_FLOAT:  # NaN and infinities fail too
                raise Reject("value")
        elif depth > MAX_FREE_DEPTH:
            raise Reject("value")
        elif t is dict:
            for k, x in v.items():
                if type(k) is not str:
                    raise Reject("value")
                stack.append((x, depth + 1))
        elif t is list:
            for x in v:
                stack.append((x, depth + 1))
        else:
            raise Reject("value")


_LIST = frozenset((list,))
_DICT = frozenset((dict,))
_STR = frozenset((str,))
_NUMS = frozenset((int, float))
_INTS = frozenset((int,))


def _types(values: Any, allowed: frozenset[type], why: str) -> None:
    """Every value's exact type is one of `allowed` (`bool` is not `int`)."""
    if not set(map(type, values)) <= allowed:
        raise Reject(why)


class _Check:
    """A field's check: `column` checks many values (one per item of a list of
    objects: any iterable, read once), `__call__` a single value."""

    __slots__ = ()

    def column(self, values: Iterable[Any]) -> None:
        raise NotImplementedError

    def __call__(self, v: Any) -> None:
        self.column([v])


class _Type(_Check):
    """Exactly this type (str, bool)."""

    __slots__ = ("ok", "why")

    def __init__(self, t: type) -> None:
        self.ok = frozenset((t,))
        self.why = t.__name__

    def column(self, values: Iterable[Any]) -> None:
        _types(values, self.ok, self.why)


class _NonnegInt(_Check):
    __slots__ = ()

    def column(self, values: Iterable[Any]) -> None:
        values = list(values)
        _types(values, frozenset((int,)), "int")
        if values and not (min(values) >= 0 and max(values) <= INT_MAX):
            raise Reject("int")


class _Num(_Check):
    """A finite number (an int within 64 bits); with `nonneg`, >= 0."""

    __slots__ = ("lo_int", "lo_float")

    def __init__(self, nonneg: bool) -> None:
        self.lo_int = 0 if nonneg else INT_MIN
        self.lo_float = 0.0 if nonneg else None

    def column(self, values: Iterable[Any]) -> None:
        lo_int, lo_float = self.lo_int, self.lo_float
        for v in values:  # a handful per artifact (costs, bounds)
            t = type(v)
            if t is int:
                if not lo_int <= v <= INT_MAX:
                    raise Reject("num")
            elif (
                t is not float
                or not -BIG_FLOAT < v < BIG_FLOAT
                or (lo_float is not None and not v >= lo_float)
            ):
                raise Reject("num")


class _Name(_Check):
    """A non-empty string."""

    __slots__ = ()

    def column(self, values: Iterable[Any]) -> None:
        values = values if type(values) is list else list(values)
        _types(values, _STR, "str")
        if "" in values:
            raise Reject("str")


class _Float(_Check):
    """A `float` field: a finite float below `BIG_FLOAT`, or an int a float holds exactly
    (read as the equal float); with `nonneg`, >= 0. In C: a finite sum means no NaN and
    no infinity among the values, and then their minimum and maximum are exact."""

    __slots__ = ("lo",)

    def __init__(self, nonneg: bool) -> None:
        self.lo = 0.0 if nonneg else -BIG_FLOAT

    def column(self, values: Iterable[Any]) -> None:
        values = values if type(values) is list else list(values)
        if not values:
            return
        ts = set(map(type, values))
        if not ts <= _NUMS:
            raise Reject("float")
        try:
            total = sum(values)
        except OverflowError:  # an int past float's range among floats
            raise Reject("float") from None
        if not total - total == 0.0:  # NaN or an infinity (or a sum past float's range)
            raise Reject("float")
        low, high = min(values), max(values)
        if not (self.lo <= low and high < BIG_FLOAT and -BIG_FLOAT < low):
            raise Reject("float")
        if int in ts:
            if ts != _INTS:
                ints = [v for v in values if type(v) is int]
                low, high = min(ints), max(ints)
            if high > EXACT_INT or low < -EXACT_INT:
                raise Reject("float")


class _StrList(_Check):
    """A list of strings."""

    __slots__ = ()

    def column(self, values: Iterable[Any]) -> None:
        values = list(values)
        _types(values, _LIST, "list")
        _types(chain.from_iterable(values), _STR, "list")


class _Opt(_Check):
    """A field that may be null: `f` checks any other value."""

    __slots__ = ("f",)

    def __init__(self, f: _Check) -> None:
        self.f = f

    def column(self, values: Iterable[Any]) -> None:
        self.f.column([v for v in values if v is not None])


class _Lit(_Check):
    """One of the given values, of their exact types (`True` is not `1`)."""

    __slots__ = ("allowed", "types")

    def __init__(self, values: tuple[str | int, ...]) -> None:
        self.allowed = frozenset(values)
        self.types = frozenset(map(type, values))

    def column(self, values: Iterable[Any]) -> None:
        values = list(values)
        _types(values, self.types, "literal")
        if not set(values) <= self.allowed:
            raise Reject("literal")


class _Skip(_Check):
    """A field another check reads (an artifact's plan: `structs`)."""

    __slots__ = ()

    def column(self, values: Iterable[Any]) -> None:
        pass


class _List(_Check):
    """A list, each item checked by `f` (the items of every list as one column)."""

    __slots__ = ("f",)

    def __init__(self, f: _Check) -> None:
        self.f = f

    def column(self, values: Iterable[Any]) -> None:
        values = list(values)
        _types(values, _LIST, "list")
        self.f.column(chain.from_iterable(values))


class _Map(_Check):
    """A mapping with string keys, each value checked by `f` (all values as one column)."""

    __slots__ = ("f",)

    def __init__(self, f: _Check) -> None:
        self.f = f

    def column(self, values: Iterable[Any]) -> None:
        values = list(values)
        _types(values, _DICT, "dict")
        for v in values:
            _types(v, _STR, "dict")  # iterating a dict gives its keys
        self.f.column(chain.from_iterable(map(dict.values, values)))


class _WritableMap(_Check):
    """A free-form mapping, carried as it is: writable again."""

    __slots__ = ()

    def column(self, values: Iterable[Any]) -> None:
        for v in values:
            if type(v) is not dict:
                raise Reject("dict")
            _plain_writable(v)


class _Obj(_Check):
    """A strict model: `required` fields must be present, `optional` ones may be; with
    `extra`, other string keys are carried (and must be writable), else refused."""

    __slots__ = ("names", "keys", "required", "optional", "extra")

    def __init__(
        self, required: dict[str, _Check], optional: dict[str, _Check] | None, extra: bool
    ) -> None:
        opt = optional or {}
        self.names = frozenset({**required, **opt})
        self.keys = tuple(required)
        self.required = tuple((itemgetter(k), f) for k, f in required.items())
        self.optional = tuple(opt.items())
        self.extra = extra

    def column(self, items: Iterable[Any]) -> None:
        items = list(items)
        _types(items, _DICT, "object")
        names = self.names
        if self.optional or self.extra:
            unknown = not all(map(names.issuperset, items))  # a key of no field
        else:
            # As many keys as fields, every field's key present (below): no other key.
            unknown = not set(map(len, items)) <= {len(names)}
        if unknown:
            if not self.extra:
                raise Reject("object")
            for v in items:
                for k, x in v.items():
                    if k not in names:
                        if type(k) is not str:
                            raise Reject("object")
                        _plain_writable(x)
        try:
            for get, f in self.required:
                f.column(map(get, items))  # KeyError: a required field is missing
        except KeyError:
            raise Reject("missing") from None
        for k, f in self.optional:
            f.column([v[k] for v in items if k in v])

    def each(self, items: list[Any]) -> None:
        """Check every item of `items` (one call for a whole list)."""
        self.column(items)

    def columns(self, items: list[Any]) -> dict[str, list[Any]]:
        """`column` of a model of required fields only, giving each field's values over
        `items` as one list (a reader that takes the values by column reads them once)."""
        if self.optional or self.extra:
            raise TypeError("columns: a model of required fields only")
        _types(items, _DICT, "object")
        # As many keys as fields, and every field's key present (below): no other key.
        if set(map(len, items)) != {len(self.keys)}:
            raise Reject("object")
        out: dict[str, list[Any]] = {}
        try:
            for key, (get, f) in zip(self.keys, self.required, strict=True):
                col = out[key] = list(map(get, items))  # KeyError: a required field is missing
                f.column(col)
        except KeyError:
            raise Reject("missing") from None
        return out


def obj(
    required: dict[str, _Check], optional: dict[str, _Check] | None = None, extra: bool = False
) -> _Obj:
    return _Obj(required, optional, extra)


Check = _Check
str_ = _Type(str)
bool_ = _Type(bool)
nonneg_int = _NonnegInt()
num = _Num(nonneg=False)
nonneg = _Num(nonneg=True)
name = _Name()
float_ = _Float(nonneg=False)
nonneg_float = _Float(nonneg=True)
strlist = _StrList()
writable_map = _WritableMap()
skip = _Skip()


def opt(f: _Check) -> _Check:
    return _Opt(f)


def lit(*values: str | int) -> _Check:
    return _Lit(values)


def list_of(f: _Check) -> _Check:
    return _List(f)


def map_of(f: _Check) -> _Check:
    return _Map(f)
