"""Fast acceptance of artifacts and their sections, without pydantic (the plan inside
an artifact is accepted by `placement_cli.plancheck`, whose rules and reasons apply here
too): each section exactly when its model in `placement_cli.sections` certainly would,
else `Reject`, and the models diagnose. Free-form values (`stats`, `lower`, extra fields
of diagnostics and of the solve section) must be writable again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from placement_cli.plancheck import (
    BIG_FLOAT,
    INT_MAX,
    INT_MIN,
    MAX_FREE_DEPTH,
    Reject,
    check_plan_part,
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


Check = Callable[[Any], None]


def _str(v: Any) -> None:
    if type(v) is not str:
        raise Reject("str")


def _bool(v: Any) -> None:
    if type(v) is not bool:
        raise Reject("bool")


def _nonneg_int(v: Any) -> None:
    if type(v) is not int or not 0 <= v <= INT_MAX:
        raise Reject("int")


def _num(v: Any) -> None:
    t = type(v)
    if t is int:
        if not INT_MIN <= v <= INT_MAX:
            raise Reject("num")
    elif t is not float or not -BIG_FLOAT < v < BIG_FLOAT:
        raise Reject("num")


def _nonneg(v: Any) -> None:
    t = type(v)
    if t is int:
        if not 0 <= v <= INT_MAX:
            raise Reject("num")
    elif t is not float or not 0.0 <= v < BIG_FLOAT:
        raise Reject("num")


def _strlist(v: Any) -> None:
    if type(v) is not list:
        raise Reject("list")
    for x in v:
        if type(x) is not str:
            raise Reject("list")


class _Opt:
    """A field that may be null: `f` checks any other value."""

    __slots__ = ("f",)

    def __init__(self, f: Check) -> None:
        self.f = f

    def __call__(self, v: Any) -> None:
        if v is not None:
            self.f(v)


def _opt(f: Check) -> Check:
    return _Opt(f)


class _Lit:
    """One of the given strings."""

    __slots__ = ("allowed",)

    def __init__(self, values: tuple[str, ...]) -> None:
        self.allowed = frozenset(values)

    def __call__(self, v: Any) -> None:
        if type(v) is not str or v not in self.allowed:
            raise Reject("literal")


def _lit(*values: str) -> Check:
    return _Lit(values)


class _List:
    """A list, each item checked by `f` (a list of objects: all of them in one call)."""

    __slots__ = ("f",)

    def __init__(self, f: Check) -> None:
        self.f = f

    def __call__(self, v: Any) -> None:
        if type(v) is not list:
            raise Reject("list")
        f = self.f
        if type(f) is _Obj:
            f.each(v)
            return
        for x in v:
            f(x)


def _list(f: Check) -> Check:
    return _List(f)


# Field checks an object makes inline, by kind (sections list 100k components: a call per
# field would be most of the time).
_INLINE_TYPES: dict[Any, type] = {_str: str, _bool: bool}


class _Obj:
    """A strict model: `required` fields must be present, `optional` ones may be; with
    `extra`, other string keys are carried (and must be writable), else refused.
    Strings, string lists, booleans and literals, required or optional-and-nullable, are
    checked inline."""

    def __init__(self, required: dict[str, Check], optional: dict[str, Check] | None, extra: bool) -> None:
        opt = optional or {}
        self.names = frozenset({**required, **opt})
        self.req = frozenset(required)
        self.extra = extra
        self.typed = tuple((k, _INLINE_TYPES[f]) for k, f in required.items() if f in _INLINE_TYPES)
        self.lists = tuple(k for k, f in required.items() if f is _strlist)
        self.lits = tuple((k, f.allowed) for k, f in required.items() if type(f) is _Lit)
        self.others = tuple((k, f) for k, f in required.items()
                            if f not in _INLINE_TYPES and f is not _strlist and type(f) is not _Lit)
        # Optional fields that may be null and are otherwise of one type: checked inline.
        self.opt_typed = tuple((k, _INLINE_TYPES[f.f]) for k, f in opt.items()
                               if type(f) is _Opt and f.f in _INLINE_TYPES)
        self.opt_others = tuple((k, f) for k, f in opt.items() if not (type(f) is _Opt and f.f in _INLINE_TYPES))

    def __call__(self, v: Any) -> None:
        self.each((v,))

    def each(self, items: Any) -> None:
        """Check every item of `items` (one call for a whole list)."""
        names, req, extra = self.names, self.req, self.extra
        typed, lists, lits, others = self.typed, self.lists, self.lits, self.others
        opt_typed, opt_others = self.opt_typed, self.opt_others
        for v in items:
            if type(v) is not dict:
                raise Reject("object")
            keys = v.keys()
            if not keys <= names:
                if not extra:
                    raise Reject("object")
                for k, x in v.items():
                    if k not in names:
                        if type(k) is not str:
                            raise Reject("object")
                        _plain_writable(x)
            if not req <= keys:
                raise Reject("missing")
            for k, t in typed:
                if type(v[k]) is not t:
                    raise Reject(k)
            for k in lists:
                x = v[k]
                if type(x) is not list:
                    raise Reject(k)
                for y in x:
                    if type(y) is not str:
                        raise Reject(k)
            for k, allowed in lits:
                x = v[k]
                if type(x) is not str or x not in allowed:
                    raise Reject(k)
            for k, f in others:
                f(v[k])
            for k, t in opt_typed:
                x = v.get(k)
                if x is not None and type(x) is not t:
                    raise Reject(k)
            for k, f in opt_others:
                if k in v:
                    f(v[k])


def _obj(required: dict[str, Check], optional: dict[str, Check] | None = None, extra: bool = False) -> Check:
    return _Obj(required, optional, extra)


def _map(f: Check) -> Check:
    def check(v: Any) -> None:
        if type(v) is not dict:
            raise Reject("dict")
        if f is _str:  # inline: a map of a block per entry
            for k, x in v.items():
                if type(k) is not str or type(x) is not str:
                    raise Reject("dict")
            return
        if f is _strlist:
            for k, x in v.items():
                if type(k) is not str or type(x) is not list:
                    raise Reject("dict")
                for y in x:
                    if type(y) is not str:
                        raise Reject("dict")
            return
        for k, x in v.items():
            if type(k) is not str:
                raise Reject("dict")
            f(x)

    return check


def _writable_map(v: Any) -> None:
    if type(v) is not dict:
        raise Reject("dict")
    _plain_writable(v)


_cost_model = _obj({"total": _nonneg, "blocks": _nonneg, "edges": _nonneg})

DIAGNOSTIC = _obj({"severity": _lit("error", "warning", "info"), "code": _str, "message": _str,
                   "blocks": _strlist, "stage": _str}, extra=True)
_edge_ref = _obj({"from": _str, "index": _nonneg_int, "to": _str})

SECTIONS: dict[str, Check] = {
    "prune": _obj({
        "domains": _map(_strlist),
        "removed": _list(_obj({"block": _str, "target": _str, "edge": _edge_ref})),
    }),
    "scc": _obj({
        "components": _list(_obj(
            {"id": _str, "blocks": _strlist, "kind": _lit("trivial", "cyclic"), "entries": _strlist,
             "exits": _strlist, "reachable": _bool},
            {"self_loop": _opt(_bool), "header": _opt(_str)},
        )),
        "edges": _list(_obj({"from": _str, "to": _str})),
    }),
    "solve": _obj(
        {"status": _lit("ok", "infeasible", "unsolved"), "assignment": _map(_str), "cost": _opt(_cost_model),
         "optimal": _bool, "lower_bound": _opt(_num), "unreachable": _strlist},
        {"gap": _opt(_nonneg), "method": _opt(_str), "method_used": _opt(_str), "proved_by": _opt(_str),
         "lower_bound_by": _opt(_str), "stats": _writable_map},
        extra=True,
    ),
    "fuse": _obj({
        "blocks": _list(_obj({"id": _str, "target": _str, "members": _strlist})),
        "merged": _nonneg_int, "dropped": _strlist, "cost_preserved": _bool,
        "cost_before": _opt(_cost_model), "cost_after": _opt(_cost_model),
    }),
    "islands": _obj({
        "islands": _list(_obj({"id": _str, "target": _str, "blocks": _strlist, "members": _strlist,
                               "requires": _strlist, "provides": _strlist, "inherited": _strlist})),
        "graph": _obj(
            {"entry": _opt(_str),
             "nodes": _list(_obj({"id": _str, "kind": _lit("exec", "data"), "target": _str},
                                 {"provides": _opt(_strlist)})),
             "edges": _list(_obj({"from": _str, "to": _str, "kind": _lit("control_flow", "inherits", "data_flow")},
                                 {"paths": _opt(_strlist)}))},
        ),
        "schedule": _obj({
            "levels": _list(_strlist),
            "groups": _list(_obj({"id": _str, "nodes": _strlist, "level": _nonneg_int})),
            "cyclic": _bool,
        }),
    }),
}
STAGE_NAMES = tuple(SECTIONS)
_ARTIFACT_FIELDS = frozenset(("format_version", "kind", "status", "plan", "diagnostics", "lower", *SECTIONS))


def check_section(name: str, value: Any) -> None:
    """Accept a section exactly when its model in `placement_cli.sections` certainly would.

    >>> check_section("fuse", {"blocks": [], "merged": 0, "dropped": [], "cost_preserved": True,
    ...                        "cost_before": None, "cost_after": None})
    >>> check_section("fuse", {"blocks": [], "merged": True, "dropped": [], "cost_preserved": True,
    ...                        "cost_before": None, "cost_after": None})
    Traceback (most recent call last):
    ...
    placement_cli.plancheck.Reject: int
    """
    SECTIONS[name](value)


def check_artifact(doc: Any, *, plan: bool = True) -> None:
    """Accept an artifact document exactly when `sections.Artifact` certainly would
    (its plan as in `check_plan`; without `plan`, everything but the plan, which the
    caller then checks while it builds the graph: `graph.build_graph(..., check=True)`)."""
    if type(doc) is not dict or not doc.keys() <= _ARTIFACT_FIELDS:
        raise Reject("artifact")
    v = doc.get("format_version")
    if type(v) is not int or v != 2:
        raise Reject("format_version")
    v = doc.get("kind")
    if type(v) is not str or v not in SECTIONS:
        raise Reject("kind")
    v = doc.get("status")
    if type(v) is not str or v not in ("ok", "infeasible", "unsolved"):
        raise Reject("status")
    diags = doc.get("diagnostics")
    if type(diags) is not list:
        raise Reject("diagnostics")
    for d in diags:
        DIAGNOSTIC(d)
    v = doc.get("lower")
    if v is not None:
        _writable_map(v)
    for name, check in SECTIONS.items():
        v = doc.get(name)
        if v is not None:
            check(v)
    if "plan" not in doc:
        raise Reject("plan")
    if plan:
        check_plan_part(doc["plan"])
