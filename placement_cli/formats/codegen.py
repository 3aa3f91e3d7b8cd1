"""Generate the fast checks from the models: `python -m placement_cli.formats.codegen`
(`make schemas`; `--check` only says whether the committed files are current).

The pydantic models (`placement_cli.formats.plan`, `placement_cli.formats.sections`,
`placement_cli.formats.tree`) are the one definition of the input formats and the
source of every error message. This walks them (field names and aliases, types,
`Literal` values, `Field` constraints, required fields and defaults, `extra`) and
writes, into
`placement_cli/formats/generated/` (committed; `tests/test_codegen.py` fails when a file
differs from what this writes today):

- `plan_check.py`: plain Python, no pydantic: one specialised accept-or-`Reject`
  function per *part* of a plan (`PLAN_PARTS`) and `check_plan`, the whole plan;
- `plan_view.py`: the read-only views over a checked plan document (`planview`), one
  class per model with its fields, types and defaults;
- `section_check.py`: the artifact and its sections as tables of column checks
  (`placement_cli.formats.columns`, the runtime that checks a list of 100k objects a
  field at a time);
- `tree_check.py`: a tree file's explicit transfers (`placement_cli.formats.tree`) as
  a column check that also hands over the columns (`algorithms.tree.load`).

Written here by hand, as data the generator reads: the parts (which fields of which
model each generated function checks, so that the graph builder can check a block's
parts where it reads them and a repeated part once per distinct serialisation;
`_coverage` proves at generation time that they check every field of every model
exactly once), and what each of the models' own validators means (`VALIDATORS`; a
validator not listed, or a constraint or type the generator does not know, fails the
generation instead of being skipped).

What "certainly accepted" means for each type (the models' strict mode, read through
orjson or `yaml_core`): `str`, `list`, `dict` with `str` keys are their exact types;
`float` is an exact `float`, finite and below `BIG_FLOAT`, or an exact `int` a float
holds exactly (never `bool`); `int` an exact `int` within 64 bits; `Literal` values
by exact type and value; `Any` nested no deeper than `MAX_FREE_DEPTH`
(`placement_cli.formats.checking`). Anything else is left to the models: the checks
may refuse what the models accept (the models then accept it, more slowly), never the
other way round.
"""

from __future__ import annotations

import json
import re
import sys
import types
import typing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Union

import annotated_types as at
from pydantic import BaseModel, BeforeValidator
from pydantic.types import AllowInfNan

from placement_cli.formats.plan import Block, Edge, Plan, Statement, TransMatrix

EXACT = 2**53
OUT = Path(__file__).resolve().parent / "generated" / "plan_check.py"
VIEW_OUT = OUT.parent / "plan_view.py"
SECTION_OUT = OUT.parent / "section_check.py"
TREE_OUT = OUT.parent / "tree_check.py"

# What the models' own validators mean for the fast checks: the one hand-written part of
# the formats' definition beside the models (a validator not listed here fails the
# generation). `int64`: an integer within 64 bits, the range every fast check of an
# integer keeps to anyway; `extra`: a model's extra fields (`extra="allow"`) must be
# writable again; `writable`: a free-form value must be writable again (what the
# section checks require of every free-form value, `columns.writable_map`).
VALIDATORS = {
    "_writable_number": "int64",
    "_extras_writable": "extra",
    "_stats_writable": "writable",
    "_lower_writable": "writable",
    "_settings_writable": "writable",
}

# --- the type IR ----------------------------------------------------------------------


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


# --- the parts ------------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """A generated function. On a model: checks its mapping (`keys`: a dict, no unknown
    field) and the listed fields: `"f"` the whole value, `"f:shell"` only its outer
    type (a list or a dict, with lengths; the contents are another part's),
    `"f{g, h:shell}"` the mapping of model-typed `f` and those of its fields, `"f.g"`
    field `g` of model-typed `f` (whose mapping another part checks). Without a model:
    the whole of type `ann`."""

    name: str
    doc: str
    model: type[BaseModel] | None = None
    fields: tuple[str, ...] = ()
    keys: bool = False
    ann: Any = None


PLAN_PARTS = (
    Part(
        "check_head",
        "Everything of a plan but its blocks' contents (`blocks` a non-empty list).",
        Plan,
        (
            "version",
            "name",
            "targets",
            "entry",
            "transitions",
            "matrices",
            "paths",
            "blocks:shell",
            "provenance",
            "lower",
        ),
        keys=True,
    ),
    Part(
        "check_block_head",
        "A block's mapping, id and parameters (what another block's edge reads of it).",
        Block,
        ("id", "params"),
        keys=True,
    ),
    Part(
        "check_block",
        "The rest of a block but three parts that repeat: its statements' contents\n"
        "(`check_statements`), what else costs (`check_costs`) and its edges\n"
        "(`check_edge`, one by one where they are read).",
        Block,
        ("statements:shell", "paths", "terminator{kind, successors:shell}"),
    ),
    Part(
        "check_edge",
        "One successor edge, but for an explicit matrix's contents (`check_matrix`).",
        Edge,
        ("block", "args", "transitions:shell"),
        keys=True,
    ),
    Part(
        "check_costs",
        "What else of a block costs: its domain, cost, premium and terminator cost.",
        Block,
        ("domain", "cost", "premium", "terminator.cost"),
    ),
    Part("check_statements", "The contents of a block's statement list.", ann=list[Statement]),
    Part("check_matrix", "An edge's explicit transition matrix.", ann=TransMatrix),
)


# Whole models, checked in one function each (not parts: what the parts check, again).
# `check_plan` serves library callers and the artifact check with its plan; the load
# path builds the graph with the parts (`graph.build_graph(doc, check=True)`), and
# `tests/test_plancheck_fuzz.py` holds the two to refusing the same documents.
WHOLE = (
    Part(
        "check_plan",
        "Accept a plan exactly when `plan.Plan` certainly would; raise `Reject` otherwise.",
        ann=Plan,
    ),
)


def _split(spec: str) -> tuple[str, str, str]:
    """`"f{...}"` -> (f, "{", inner); `"f.g"` -> (f, ".", g); `"f:shell"` -> (f, ":", "shell")."""
    if "{" in spec:
        name, inner = spec.split("{", 1)
        return name, "{", inner.rstrip("}")
    if "." in spec:
        name, sub = spec.split(".", 1)
        return name, ".", sub
    if ":" in spec:
        name, mark = spec.split(":", 1)
        return name, ":", mark
    return spec, "", ""


def _inner(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in text.split(",") if s.strip())


def _coverage(parts: tuple[Part, ...], root: type[BaseModel]) -> None:
    """Every field of every model reachable from `root` checked by exactly one part
    (whole, or its outer type with the contents another part's), every model's mapping
    by one part."""
    seen: dict[tuple[str, str], str] = {}

    def mark(model: type[BaseModel], what: str, by: str) -> None:
        key = (model.__name__, what)
        if key in seen:
            raise TypeError(f"{key} checked twice: {seen[key]} and {by}")
        seen[key] = by

    def whole(t: T, by: str) -> None:
        for m in set(models_of(t)):
            mark(m, ":keys", by)
            for name in m.model_fields:
                mark(m, name, by)

    contents: list[T] = []  # the contents of shells: each must be some part's

    def fields(model: type[BaseModel], specs: tuple[str, ...], by: str) -> None:
        for spec in specs:
            name, how, rest = _split(spec)
            t = field_t(model, name)
            if how == "":
                mark(model, name, by)
                whole(t, by)
            elif how == ":":
                mark(model, name, by)
                base = t.without_none()
                for a in base.args if base.kind == "union" else (base,):
                    # A list's items, a dict as a whole (a matrix): another part's.
                    if a.kind == "list":
                        contents.append(a.args[0])
                    elif a.kind == "dict":
                        contents.append(a)
            elif how == "{":
                mark(model, name, by)
                sub = t.without_none().args[0]
                mark(sub, ":keys", by)
                fields(sub, _inner(rest), by)
            else:
                fields(t.without_none().args[0], (rest,), by)

    for p in parts:
        if p.model is None:
            whole(to_t(p.ann), p.name)
            continue
        if p.keys:
            mark(p.model, ":keys", p.name)
        fields(p.model, p.fields, p.name)
    typed = {to_t(p.ann) for p in parts if p.model is None}
    for t in contents:
        if t.kind == "model":
            covered = (t.args[0].__name__, ":keys") in seen
        else:
            covered = t in typed or T("list", (t,)) in typed
        if not covered:
            raise TypeError(f"the contents {t} of a shell are no part's")
    for m in set(models_of(T("model", (root,)))):
        _check_model(m)
        for what in (":keys", *m.model_fields):
            if (m.__name__, what) not in seen:
                raise TypeError(f"{m.__name__}.{what} is checked by no part")


# --- emitting code --------------------------------------------------------------------


class Emitter:
    def __init__(self) -> None:
        self.consts: dict[str, str] = {}  # name -> expression
        self.n = 0

    def var(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def const(self, prefix: str, expr: str) -> str:
        for name, e in self.consts.items():
            if e == expr:
                return name
        name = f"_{prefix}{len(self.consts)}"
        self.consts[name] = expr
        return name

    # A value `v` of type `t`; `where` is the Reject message.
    def check(self, t: T, v: str, where: str, ind: str) -> list[str]:
        fail = f"raise Reject({q(where)})"
        k = t.kind
        if k == "any":
            return [f"{ind}free_value({v}, {q(where)})"]
        if k == "str":
            cond = [f"type({v}) is not str"]
            if t.min_len == 1:
                cond.append(f"not {v}")
            elif t.min_len:
                cond.append(f"len({v}) < {t.min_len}")
            if t.max_len is not None:
                cond.append(f"len({v}) > {t.max_len}")
            return [f"{ind}if {' or '.join(cond)}:", f"{ind}    {fail}"]
        if k == "bool":
            return [f"{ind}if type({v}) is not bool:", f"{ind}    {fail}"]
        if k == "none":
            return [f"{ind}if {v} is not None:", f"{ind}    {fail}"]
        if k == "int":
            test = f"type({v}) is not int or not {self._bounds(t, v, 'INT_MIN', 'INT_MAX', True)}"
            return [f"{ind}if {test}:", f"{ind}    {fail}"]
        if k == "float":
            return self._float(t, v, where, ind, nullable=False)
        if k == "lit":
            vals = t.args
            types_ = {type(x) for x in vals}
            if len(types_) != 1 or types_ - {str, int}:
                raise TypeError(f"Literal{vals!r} not supported by the generator")
            (ty,) = types_
            if len(vals) == 1:
                test = f"type({v}) is not {ty.__name__} or {v} != {q(vals[0])}"
            else:
                name = self.const("LIT", _tuple(map(q, vals)))
                test = f"type({v}) is not {ty.__name__} or {v} not in {name}"
            return [f"{ind}if {test}:", f"{ind}    {fail}"]
        if k == "list":
            out = [f"{ind}if type({v}) is not list{self._len(t, v)}:", f"{ind}    {fail}"]
            item = t.args[0]
            if item.kind != "any":
                x = self.var()
                out += [f"{ind}for {x} in {v}:", *self.check(item, x, where, ind + "    ")]
            return out
        if k == "dict":
            value = t.args[0]
            if value.kind == "any" and not t.min_len and t.max_len is None:
                return [f"{ind}free_map({v}, {q(where)})"]
            out = [f"{ind}if type({v}) is not dict{self._len(t, v)}:", f"{ind}    {fail}"]
            kv, x = self.var(), self.var()
            out += [
                f"{ind}for {kv}, {x} in {v}.items():",
                f"{ind}    if type({kv}) is not str:",
                f"{ind}        {fail}",
                *self.check(value, x, where, ind + "    "),
            ]
            return out
        if k == "model":
            m = t.args[0]
            return self.model(m, tuple(m.model_fields), True, v, where, ind)
        if k == "union":
            return self._union(t, v, where, ind)
        raise TypeError(k)

    def _len(self, t: T, v: str) -> str:
        out = ""
        if t.min_len == 1:
            out += f" or not {v}"
        elif t.min_len:
            out += f" or len({v}) < {t.min_len}"
        if t.max_len is not None:
            out += f" or len({v}) > {t.max_len}"
        return out

    def _bounds(self, t: T, v: str, lo: str, hi: str, is_int: bool) -> str:
        """`lo <= v <= hi` (floats: `lo < v < hi`, which NaN fails), a limit replaced by
        the constraint where one is given (constraints lie inside the limits)."""
        op = "<=" if is_int else "<"

        def lit(x: float) -> str:
            if not abs(x) <= EXACT:
                raise TypeError(f"constraint {x!r} outside the exact range")
            return repr(x) if is_int else repr(float(x))

        low = f"{lo} {op} "
        if t.ge is not None:
            low = f"{lit(t.ge)} <= "
        elif t.gt is not None:
            low = f"{lit(t.gt)} < "
        high = f" {op} {hi}"
        if t.le is not None:
            high = f" <= {lit(t.le)}"
        elif t.lt is not None:
            high = f" < {lit(t.lt)}"
        return f"{low}{v}{high}"

    def _float(self, t: T, v: str, where: str, ind: str, nullable: bool) -> list[str]:
        fail = f"raise Reject({q(where)})"
        tv = self.var()
        ints = T("int", ge=t.ge, gt=t.gt, le=t.le, lt=t.lt)
        return [
            f"{ind}{tv} = type({v})",
            f"{ind}if {tv} is float:",
            f"{ind}    if not {self._bounds(t, v, '-BIG_FLOAT', 'BIG_FLOAT', False)}:",
            f"{ind}        {fail}",
            f"{ind}elif {tv} is int:",
            f"{ind}    if not {self._bounds(ints, v, '-EXACT_INT', 'EXACT_INT', True)}:",
            f"{ind}        {fail}",
            f"{ind}elif {v} is not None:" if nullable else f"{ind}else:",
            f"{ind}    {fail}",
        ]

    def _union(self, t: T, v: str, where: str, ind: str) -> list[str]:
        fail = f"raise Reject({q(where)})"
        alts = [a for a in t.args if a.kind != "none"]
        nullable = len(alts) != len(t.args)
        if len(alts) == 1 and alts[0].kind == "float":
            return self._float(alts[0], v, where, ind, nullable)
        if len(alts) == 1:
            return [f"{ind}if {v} is not None:", *self.check(alts[0], v, where, ind + "    ")]
        tags = {"str": "str", "list": "list", "dict": "dict", "model": "dict", "bool": "bool"}
        seen: set[str] = set()
        out: list[str] = []
        for a in alts:
            tag = tags.get(a.kind)
            if tag is None or tag in seen:
                raise TypeError(f"union {t} not supported by the generator")
            seen.add(tag)
            out.append(f"{ind}{'el' if out else ''}if type({v}) is {tag}:")
            body = self.check(a, v, where, ind + "    ")
            # The alternative's own type test is implied: keep only what follows it.
            if body[0] == f"{ind}    if type({v}) is not {tag}:":
                body = body[2:]
            out += body if body else [f"{ind}    pass"]
        out += [f"{ind}elif {v} is not None:" if nullable else f"{ind}else:", f"{ind}    {fail}"]
        return out

    def shell(self, t: T, v: str, where: str, ind: str) -> list[str]:
        """Only the outer type of `v` (a list or dict, with its lengths)."""
        fail = f"raise Reject({q(where)})"
        base = t.without_none()
        if base.kind in ("list", "dict"):
            cond = f"type({v}) is not {base.kind}{self._len(base, v)}"
            if t.nullable():
                return [f"{ind}if {v} is not None and ({cond}):", f"{ind}    {fail}"]
            return [f"{ind}if {cond}:", f"{ind}    {fail}"]
        if base.kind == "union":
            conds = []
            for a in base.args:
                if a.kind in ("list", "dict"):
                    conds.append(f"type({v}) is not {a.kind}")
                elif a.kind == "str" and not a.min_len and a.max_len is None:
                    conds.append(f"type({v}) is not str")
                else:
                    raise TypeError(f"shell of {t} not supported")
            if t.nullable():
                conds.append(f"{v} is not None")
            return [f"{ind}if {' and '.join(conds)}:", f"{ind}    {fail}"]
        raise TypeError(f"shell of {t} not supported")

    def field(self, model: type[BaseModel], spec: str, v: str, where: str, ind: str) -> list[str]:
        name, how, rest = _split(spec)
        key = key_of(model, name)
        t = field_t(model, name)
        f = model.model_fields[name]
        here = f"{where}.{key}"
        x = self.var()
        if how == ".":
            sub = t.without_none().args[0]
            return [f"{ind}{x} = {v}[{q(key)}]", *self.field(sub, rest, x, here, ind)]
        if how == ":":
            body = self.shell(t, x, here, ind)
        elif how == "{":
            sub = t.without_none().args[0]
            body = self.model(sub, _inner(rest), True, x, here, ind)
        else:
            body = self.check(t, x, here, ind)
        if f.is_required():
            if t.nullable() or t.kind == "any":  # an absent field would read as None
                return [
                    f"{ind}if {q(key)} not in {v}:",
                    f"{ind}    raise Reject({q(here)})",
                    f"{ind}{x} = {v}[{q(key)}]",
                    *body,
                ]
            return [f"{ind}{x} = {v}.get({q(key)})", *body]
        if t.nullable() and f.default is None:
            # Absent reads as None, which the type allows.
            return [f"{ind}{x} = {v}.get({q(key)})", *body]
        return [
            f"{ind}if {q(key)} in {v}:",
            f"{ind}    {x} = {v}[{q(key)}]",
            *["    " + line for line in body],
        ]

    def model(
        self,
        model: type[BaseModel],
        specs: tuple[str, ...],
        keys: bool,
        v: str,
        where: str,
        ind: str,
    ) -> list[str]:
        out = []
        if keys:
            names = self.const(
                "FIELDS",
                _tuple(q(key_of(model, n)) for n in model.model_fields),
            )
            out += [
                f"{ind}if type({v}) is not dict or not {v}.keys() <= {names}:",
                f"{ind}    raise Reject({q(where)})",
            ]
        for spec in specs:
            out += self.field(model, spec, v, where, ind)
        return out


def _default(model: type[BaseModel], name: str) -> str:
    f = model.model_fields[name]
    if f.is_required():
        return "REQUIRED"
    if f.default_factory is list:
        return "LIST"
    if f.default_factory is dict:
        return "DICT"
    if f.default_factory is None and f.default is None:
        return "None"
    raise TypeError(f"{model.__name__}.{name}: default not supported by the generator")


def annotation(t: T) -> str:
    """The type a view's property returns (a nested model: its view)."""
    k = t.kind
    if k in ("str", "float", "int", "bool"):
        return k
    if k == "none":
        return "None"
    if k == "any":
        return "Any"
    if k == "lit":
        return type(t.args[0]).__name__
    if k == "list":
        return f"list[{annotation(t.args[0])}]"
    if k == "dict":
        return f"dict[str, {annotation(t.args[0])}]"
    if k == "model":
        return t.args[0].__name__
    return " | ".join(annotation(a) for a in t.args)


def _view(model: type[BaseModel]) -> str:
    """A view class: a property per field, nested models wrapped once (cached)."""
    cached = []
    props = []
    for name in model.model_fields:
        key = key_of(model, name)
        t = field_t(model, name)
        ann = annotation(t)
        default = _default(model, name)
        read = f"self._d[{q(key)}]" if default == "REQUIRED" else f"self._d.get({q(key)})"
        if default == "LIST":
            read += " or []"
        elif default == "DICT":
            read += " or {}"
        base = t.without_none()
        inner = base.args[0] if base.kind == "list" else None
        if base.kind == "model" or (inner is not None and inner.kind == "model"):
            slot = f"_c_{name}"
            cached.append(slot)
            sub = base.args[0].__name__ if base.kind == "model" else inner.args[0].__name__  # type: ignore[union-attr]
            if base.kind == "model":
                make = f"wrap({sub}, {read})"
                if t.nullable():
                    raise TypeError(f"{model.__name__}.{name}: optional model not supported")
            else:
                make = f"[wrap({sub}, x) for x in {read}]"
            body = [
                f"        got = self.{slot}",
                "        if got is None:  # built once: fusion and normalising read them by index",
                f"            got = self.{slot} = {make}",
                "        return got",
            ]
        else:
            body = [f"        return {read}  # type: ignore[no-any-return]"]
        props.append(f"    @property\n    def {name}(self) -> {ann}:\n" + "\n".join(body))
    fields = "".join(
        f"        {q(key_of(model, n))}: {_default(model, n)},\n" for n in model.model_fields
    )
    if len(cached) > 1:
        slots = "(\n" + "".join(f"        {q(c)},\n" for c in cached) + "    )"
    else:
        slots = f"({q(cached[0])},)" if cached else "()"
    head = [f"class {model.__name__}(View):", f"    __slots__ = {slots}"]
    head.append(f"    _fields: ClassVar[dict[str, Any]] = {{\n{fields}    }}")
    if cached:
        init = [
            "",
            "    def __init__(self, data: dict[str, Any]) -> None:",
            "        self._d = data",
        ]
        init += [f"        self.{c}: Any = None" for c in cached]
        head += init
    return "\n".join(head) + "\n\n" + "\n\n".join(props) + "\n"


def generate_views() -> str:
    models = []
    for m in models_of(T("model", (Plan,))):
        if m not in models:
            models.append(m)
    return VIEW_HEADER + "\n\n".join(_view(m) for m in reversed(models))


VIEW_HEADER = '''"""GENERATED by `python -m placement_cli.formats.codegen` (`make schemas`) from the models
of `placement_cli.formats.plan`: do not edit. `tests/test_codegen.py` fails when it is
stale.

Read-only views of a checked plan document, shaped like the models (the same classes,
field names, types and defaults), without pydantic (`placement_cli.formats.planview`).
A field absent from the document reads as the model's default; values are what the
document holds (a cost may be an `int` where the model would hold the equal `float`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from placement_cli.formats.view import DICT, LIST, REQUIRED, View, wrap

_ = (DICT, LIST, REQUIRED)  # the markers of `_fields`


'''


# --- sections: tables of column checks -------------------------------------------------


def _section_model(model: type[BaseModel]) -> bool:
    """Whether the model carries extra fields (checked writable); refuses what the
    column checks cannot state."""
    cfg = model.model_config
    if cfg.get("strict") is not True or cfg.get("extra") not in ("forbid", "allow"):
        raise TypeError(f"{model.__name__}: the generator needs strict=True and extra set")
    dec = model.__pydantic_decorators__
    if dec.validators or dec.root_validators:
        raise TypeError(f"{model.__name__} has an old-style validator: not generated")
    extra = cfg["extra"] == "allow"
    for name in dec.model_validators:
        if VALIDATORS.get(name) != "extra" or not extra:
            raise TypeError(f"{model.__name__}.{name}: validator not known to the generator")
    if extra and not dec.model_validators:
        raise TypeError(f"{model.__name__}: extra fields allowed but not checked writable")
    for name, d in dec.field_validators.items():
        if VALIDATORS.get(name) != "writable":
            raise TypeError(f"{model.__name__}.{name}: validator not known to the generator")
        for f in d.info.fields:
            t = field_t(model, f).without_none()
            if t != T("dict", (T("any"),)):
                raise TypeError(f"{model.__name__}.{f}: `writable` on a {t}")
    return extra


class Columns:
    """A model as an expression over `placement_cli.formats.columns`, one constant per
    model (in the order they are needed)."""

    def __init__(self, skip: dict[type[BaseModel], str]) -> None:
        self.skip = skip
        self.defs: dict[type[BaseModel], str] = {}

    def name(self, model: type[BaseModel]) -> str:
        return f"_{model.__name__}"

    def expr(self, t: T) -> str:
        k = t.kind
        if k == "str" and t.max_len is None:
            if not t.min_len:
                return "str_"
            if t.min_len == 1:
                return "name"
        if k == "bool":
            return "bool_"
        if k == "int" and t.ge == 0 and t.gt is None and t.le is None and t.lt is None:
            return "nonneg_int"
        if k in ("num", "float") and t.gt is None and t.le is None and t.lt is None:
            # `int | float` keeps an int as it is; a `float` reads it as the equal float.
            if t.ge is None:
                return "num" if k == "num" else "float_"
            if t.ge == 0:
                return "nonneg" if k == "num" else "nonneg_float"
        if k == "lit":
            return f"lit({', '.join(map(q, t.args))})"
        if k == "union":
            alts = [a for a in t.args if a.kind != "none"]
            if len(alts) == 1 and len(t.args) == 2:
                return f"opt({self.expr(alts[0])})"
        if k == "list" and not t.min_len and t.max_len is None:
            item = t.args[0]
            if item == T("str"):
                return "strlist"
            return f"list_of({self.expr(item)})"
        if k == "dict" and not t.min_len and t.max_len is None:
            if t.args[0].kind == "any":
                return "writable_map"
            return f"map_of({self.expr(t.args[0])})"
        if k == "model":
            return self.model(t.args[0])
        raise TypeError(f"{t} has no column check")

    def model(self, model: type[BaseModel]) -> str:
        if model in self.skip:
            return "skip"
        if model not in self.defs:
            extra = _section_model(model)
            req: list[str] = []
            opt: list[str] = []
            for name, f in model.model_fields.items():
                item = f"        {q(key_of(model, name))}: {self.expr(field_t(model, name))},\n"
                (req if f.is_required() else opt).append(item)
            # One field a line (as ruff formats it: the trailing commas keep it so).
            args = ["    {\n" + "".join(req) + "    },\n"]
            if opt:
                args.append("    {\n" + "".join(opt) + "    },\n")
            if extra:
                args.append("    extra=True,\n")
            self.defs[model] = "obj(\n" + "".join(args) + ")"
        return self.name(model)


def generate_sections() -> str:
    from placement_cli.formats.sections import SECTION_MODELS, Artifact, DiagnosticModel

    cols = Columns({Plan: "the plan: `plancheck`"})
    artifact = cols.model(Artifact)
    diagnostic = cols.model(DiagnosticModel)
    sections = "".join(f"    {q(k)}: {cols.model(m)},\n" for k, m in SECTION_MODELS.items())
    defs = "\n".join(f"{cols.name(m)} = {e}" for m, e in cols.defs.items())
    return (
        _imports(SECTION_HEADER, defs + "Check")
        + defs
        + "\n\n# What `check_artifact` and `check_section` read (an artifact's plan: `skip`, the\n"
        + "# plan's own checks are `plancheck`'s).\n"
        + f"ARTIFACT = {artifact}\nDIAGNOSTIC = {diagnostic}\n"
        + "SECTIONS: dict[str, Check] = {\n"
        + sections
        + "}\n"
    )


def generate_tree() -> str:
    """The tree format's explicit transfers (the bulk of a large tree file), which
    `algorithms.tree.load` checks by column before the model reads the rest."""
    from placement_cli.formats.tree import ExplicitTransfer

    cols = Columns({})
    top = cols.model(ExplicitTransfer)
    defs = "\n".join(f"{cols.name(m)} = {e}" for m, e in cols.defs.items())
    head = SECTION_HEADER.replace("formats.sections`", "formats.tree`").replace(
        "The artifact's and its sections' types as column checks",
        "A tree file's explicit transfers as a column check",
    )
    return _imports(head, defs) + defs + f"\n\nEXPLICIT = {top}\n"


def _imports(header: str, code: str) -> str:
    """The header, importing from `columns` only the names `code` uses."""
    start = header.index("from placement_cli.formats.columns import (")
    end = header.index(")", start) + 1
    used = [n for n in COLUMN_NAMES if re.search(rf"\b{n}\b", code)]
    lines = "".join(f"    {n},\n" for n in used)
    return header[:start] + f"from placement_cli.formats.columns import (\n{lines})" + header[end:]


COLUMN_NAMES = (
    "Check",
    "bool_",
    "float_",
    "list_of",
    "lit",
    "map_of",
    "name",
    "nonneg",
    "nonneg_float",
    "nonneg_int",
    "num",
    "obj",
    "opt",
    "skip",
    "str_",
    "strlist",
    "writable_map",
)

SECTION_HEADER = '''"""GENERATED by `python -m placement_cli.formats.codegen` (`make schemas`) from the models
of `placement_cli.formats.sections`: do not edit. `tests/test_codegen.py` fails when it
is stale.

The artifact's and its sections' types as column checks (`placement_cli.formats.columns`):
each accepts a value only when its model certainly would, with the same values.
"""

from __future__ import annotations

from placement_cli.formats.columns import (
    Check,
    bool_,
    list_of,
    lit,
    map_of,
    nonneg,
    nonneg_int,
    num,
    obj,
    opt,
    skip,
    str_,
    strlist,
    writable_map,
)

'''


def generate() -> str:
    _coverage(PLAN_PARTS, Plan)
    em = Emitter()
    funcs = []
    for p in (*PLAN_PARTS, *WHOLE):
        if p.model is not None:
            where = p.model.__name__
            body = em.model(p.model, p.fields, p.keys, "v", where, "    ")
        else:
            where = p.name.removeprefix("check_")
            body = em.check(to_t(p.ann), "v", where, "    ")
        doc = p.doc.replace("\n", "\n    ")
        funcs.append(f'def {p.name}(v: Any) -> None:\n    """{doc}"""\n' + "\n".join(body))
    consts = "\n".join(f"{k} = {e}" for k, e in em.consts.items())
    code = "\n".join(funcs)
    used = [n for n in RUNTIME if re.search(rf"\b{n}\b", code)]
    imports = "".join(f"    {n},\n" for n in used)
    names = sorted(["Reject", *(p.name for p in (*PLAN_PARTS, *WHOLE))])
    header = HEADER.replace("IMPORTS\n", imports).replace(
        "ALL]", "".join(f"    {q(n)},\n" for n in names) + "]"
    )
    return header + consts + "\n\n\n" + "\n\n\n".join(funcs) + "\n"


RUNTIME = ("BIG_FLOAT", "EXACT_INT", "INT_MAX", "INT_MIN", "Reject", "free_map", "free_value")


def q(x: Any) -> str:
    """A literal as ruff writes it (strings in double quotes)."""
    return json.dumps(x) if type(x) is str else repr(x)


def _tuple(items: Any) -> str:
    """A frozenset of literals, one a line (as ruff formats it)."""
    lines = "".join(f"        {x},\n" for x in items)
    return f"frozenset(\n    (\n{lines}    )\n)"


HEADER = '''"""GENERATED by `python -m placement_cli.formats.codegen` (`make schemas`) from the models
of `placement_cli.formats.plan`: do not edit. `tests/test_codegen.py` fails when it is
stale.

Accept-or-`Reject` checks of the parts of a plan (docs/load.md): each accepts a parsed
value only when the models certainly would, with the same values.
"""

from __future__ import annotations

from typing import Any

from placement_cli.formats.checking import (
IMPORTS
)

__all__ = [
ALL]

'''


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    outputs = {
        OUT: generate(),
        VIEW_OUT: generate_views(),
        SECTION_OUT: generate_sections(),
        TREE_OUT: generate_tree(),
    }
    stale = [p for p, text in outputs.items() if not p.exists() or p.read_text() != text]
    if args == ["--check"]:
        for path in stale:
            print(f"{path} is stale: run `make schemas`", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
