"""The straight-line plan checks (`generated/plan_check.py`): one accept-or-`Reject`
function per part of a plan (`spec.PLAN_PARTS`) and `check_plan`, the whole plan."""

from __future__ import annotations

import re

from pydantic import BaseModel

from placement_cli.formats.codegen.coverage import _coverage
from placement_cli.formats.codegen.spec import PLAN_PARTS, WHOLE, _inner, _split
from placement_cli.formats.codegen.typeir import T, _tuple, field_t, key_of, q, to_t
from placement_cli.formats.plan import Plan

EXACT = 2**53


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
