"""A printer from a body-file dict (docs/body-format.md) to the HashQL compiler's MIR text,
in the grammar `placement_cli/frontends/mir_text` reads: the inverse of `parse_mir` for
what a body file and that grammar share. It exists so that the benchmark can time the
MIR reader on the very program it lowers from a body file, and so that the round trip
`parse_mir(print_mir(doc))` can be tested.

Names the MIR text forces (`MirNames` records them, `rename` applies them to a body file):

- locals are `%N`: `env` is `%0` and `vertex` `%1` (the reader's roles); a local already
  named `_N` keeps N when it is free; every other local gets the next free number and
  reads back as `_N`;
- blocks are `bbN`: a block named `bbN` keeps N when it is free, the others get the next
  free number, in block order (the entry must be the first block: MIR has no `entry`);
- bodies keep their names (an identifier, or printed as `{name}` when it is not one).

What the MIR text cannot say raises `Unprintable`: statement and terminator `text`, a
`return` without an operand, a union of fewer than two types, recursive named types,
switch values that are not integers, an `env`/`vertex` the reader would not give those
roles (the placed body must be what the reader places). Named types are inlined; the
file's `name`, `profile`, `size_cap` and `split` have no MIR form (pass them as options).

    >>> doc = {"version": 1, "bodies": [{"name": "t", "locals": {"a": "int"}, "blocks": [
    ...     {"id": "b", "statements": [{"assign": "a", "load": {"const": 7}}],
    ...      "terminator": {"kind": "return", "operand": "a"}}]}]}
    >>> print(print_mir(doc), end="")
    thunk t() -> ? {
        let %0: Integer
    <BLANKLINE>
        bb0(): {
            %0 = 7
    <BLANKLINE>
            return %0
        }
    }
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

_IDENT = re.compile(r"(::)?[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*\Z")
_LOCAL_N = re.compile(r"_([0-9]+)\Z")
_BB_N = re.compile(r"bb([0-9]+)\Z")
_PRIMITIVES = {
    "int": "Integer",
    "integer": "Integer",
    "float": "Number",
    "number": "Number",
    "bool": "Boolean",
    "string": "String",
    "str": "String",
    "unit": "Null",
    "null": "Null",
}
_RESERVED = {"Boolean", "Integer", "Number", "String", "Null", "List", "Dict"}
_FILTER_PREFIX = "{graph::read::filter"


class Unprintable(ValueError):
    """The body file uses something the MIR text cannot express."""


@dataclass
class MirNames:
    """The names printing forced: body -> {old local: new local}, body -> {old block: new
    block} (both as the reader will name them)."""

    locals: dict[str, dict[str, str]] = field(default_factory=dict)
    blocks: dict[str, dict[str, str]] = field(default_factory=dict)


def _number(names: list[str], pattern: re.Pattern[str], reserved: set[int]) -> dict[str, int]:
    """A number per name: `pattern`'s number when free, else the next free one."""
    out: dict[str, int] = {}
    used = set(reserved)
    for n in names:
        m = pattern.match(n)
        if m and int(m.group(1)) not in used and len(m.group(1)) < 10:
            k = int(m.group(1))
            if str(k) == m.group(1):  # `_05` would read back as `_5`
                out[n] = k
                used.add(k)
    k = 0
    for n in names:
        if n not in out:
            while k in used:
                k += 1
            out[n] = k
            used.add(k)
    return out


def _is_entity(t: Any) -> bool:
    name = t.get("opaque") if isinstance(t, dict) else None
    if isinstance(name, dict):
        name = name.get("name")
    return isinstance(name, str) and (name == "Entity" or name.endswith("::Entity"))


class _Printer:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.types: dict[str, Any] = doc.get("types") or {}
        self.names = MirNames()

    # -- types ------------------------------------------------------------------------

    def type(self, t: Any, seen: tuple[str, ...] = ()) -> str:
        if isinstance(t, str):
            if t in _PRIMITIVES:
                return _PRIMITIVES[t]
            if t == "unknown":
                return "?"
            if t == "closure":
                return "() -> ?"
            if t in self.types:
                if t in seen:
                    raise Unprintable(f"recursive type '{t}' cannot be inlined")
                return self.type(self.types[t], (*seen, t))
            raise Unprintable(f"unknown type {t!r}")
        if not (isinstance(t, dict) and len(t) == 1):
            raise Unprintable(f"not a type: {t!r}")
        ((k, v),) = t.items()
        if k == "tuple":
            items = [self.type(x, seen) for x in v]
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        if k == "struct":
            if not v:
                return "(:)"
            for f in v:
                self.ident(f, "a struct field")
            return "(" + ", ".join(f"{f}: {self.type(x, seen)}" for f, x in v.items()) + ")"
        if k == "list":
            return f"List<{self.type(v, seen)}>"
        if k == "dict":
            return f"Dict<{self.type(v[0], seen)}, {self.type(v[1], seen)}>"
        if k == "union":
            if len(v) < 2:
                raise Unprintable("a union of fewer than two types has no MIR form")
            return " | ".join(f"({self.type(x, seen)})" for x in v)
        if k == "closure":
            return "() -> ?"
        if k == "opaque":
            name, of = (v, None) if isinstance(v, str) else (v.get("name"), v.get("of"))
            self.ident(name, "an opaque type name", path=True)
            if name in _RESERVED or "?" in name or _LOCAL_N.match(name):
                raise Unprintable(f"opaque name {name!r} reads back as another type")
            return name if of is None else f"{name}({self.type(of, seen)})"
        raise Unprintable(f"type kind {k!r} has no MIR form")

    @staticmethod
    def ident(name: Any, what: str, path: bool = False) -> str:
        ok = isinstance(name, str) and _IDENT.match(name) and (path or "::" not in name)
        if not ok or name in ("true", "false", "null"):
            raise Unprintable(f"{what} {name!r} is not an identifier")
        return name

    # -- operands ---------------------------------------------------------------------

    def place(self, p: str) -> str:
        local, *projs = p.split(".")
        if local not in self.loc:
            raise Unprintable(f"operand {p!r}: unknown local")
        for f in projs:
            if not (f.isdigit() or _IDENT.match(f)) or "::" in f:
                raise Unprintable(f"operand {p!r}: projection {f!r} has no MIR form")
        return ".".join((self.loc[local], *projs))

    def operand(self, op: Any) -> str:
        if isinstance(op, str):
            return self.place(op)
        if isinstance(op, dict) and set(op) == {"const"}:
            return self.const(op["const"])
        if isinstance(op, dict) and set(op) == {"fn"}:
            return f"({self.body_name(op['fn'])} as FnPtr)"
        raise Unprintable(f"operand {op!r} has no MIR form")

    @staticmethod
    def const(v: Any) -> str:
        if v is None:
            return "null"
        if v is True or v is False:
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            if not math.isfinite(v):
                raise Unprintable(f"constant {v!r} has no MIR form")
            return repr(v)
        if isinstance(v, str):
            if "\n" in v:
                raise Unprintable("a string constant with a line break has no MIR form")
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'
        raise Unprintable(f"constant {v!r} has no MIR form")

    @staticmethod
    def body_name(name: Any) -> str:
        """A name the reader reads back unchanged: an identifier, or `{text}` (braces
        included, as the compiler prints `{closure#3}`)."""
        if isinstance(name, str) and _IDENT.match(name) and name not in ("fn", "thunk"):
            return name
        if isinstance(name, str) and re.fullmatch(r"\{[^\s}][^}\n]*\}", name):
            return name
        raise Unprintable(f"body name {name!r} has no MIR form")

    # -- statements and terminators ---------------------------------------------------

    def statement(self, s: dict[str, Any]) -> str:
        if s.get("text") is not None:
            raise Unprintable("statement text has no MIR form")
        if s.get("nop"):
            return "nop"
        if "storage_live" in s:
            return f"let {self.place(s['storage_live'])}"
        if "storage_dead" in s:
            return f"drop {self.place(s['storage_dead'])}"
        lhs = self.loc.get(s.get("assign", ""))
        if lhs is None:
            raise Unprintable(f"statement {s!r}: unknown assigned local")
        if "load" in s:
            return f"{lhs} = {self.operand(s['load'])}"
        if "unary" in s:
            u = s["unary"]
            x = u["operand"]
            gap = " " if isinstance(x, dict) and "const" in x else ""  # `- 5` is not `-5`
            return f"{lhs} = {u['op']}{gap}{self.operand(x)}"
        if "binary" in s:
            b = s["binary"]
            return f"{lhs} = {self.operand(b['left'])} {b['op']} {self.operand(b['right'])}"
        if "input" in s:
            name = s["input"]
            m = re.fullmatch(r"exists\((.*)\)", name)
            if m:
                return f"{lhs} = input EXISTS {self.ident(m.group(1), 'an input name')}"
            return f"{lhs} = input LOAD {self.ident(name, 'an input name')}"
        if "apply" in s:
            return f"{lhs} = {self.apply(s['apply'])}"
        if "aggregate" in s:
            return f"{lhs} = {self.aggregate(s['aggregate'])}"
        raise Unprintable(f"statement {s!r} has no MIR form")

    def closure_typed(self, op: Any) -> bool:
        """Whether a place operand is a closure value (by the declared types)."""
        if not isinstance(op, str):
            return False
        local, *projs = op.split(".")
        t = self.local_types.get(local)
        for f in [*projs, None]:
            while True:
                if isinstance(t, str) and t in self.types:
                    t = self.types[t]
                elif isinstance(t, dict) and isinstance(t.get("opaque"), dict):
                    t = t["opaque"].get("of")
                else:
                    break
            if t == "closure" or (isinstance(t, dict) and "closure" in t):
                return f is None
            if f is None or not isinstance(t, dict):
                return False
            if "tuple" in t and f.isdigit() and int(f) < len(t["tuple"]):
                t = t["tuple"][int(f)]
            elif "struct" in t and f in t["struct"]:
                t = t["struct"][f]
            else:
                return False
        return False

    def apply(self, a: dict[str, Any]) -> str:
        func = a["func"]
        args = [self.operand(x) for x in a.get("args", [])]
        if self.closure_typed(func):
            # The compiler's form: a closure is (function pointer, environment).
            c = self.operand(func)
            return " ".join(["apply", f"{c}.0", f"{c}.1", *args])
        return " ".join(["apply", self.operand(func), *args])

    def aggregate(self, g: dict[str, Any]) -> str:
        ops = [self.operand(x) for x in g.get("operands", [])]
        kind = g["kind"]
        if g.get("fields") is not None and kind != "struct":
            raise Unprintable(f"fields on a {kind} aggregate have no MIR form")
        if kind == "tuple":
            return "(" + ", ".join(ops) + ")" if ops else "()"
        if kind == "struct":
            fields = g.get("fields") or []
            if len(fields) != len(ops) or len(set(fields)) != len(fields) or not ops:
                raise Unprintable("a struct aggregate needs one distinct field per operand")
            for f in fields:
                self.ident(f, "a struct field")
            return "(" + ", ".join(f"{f}: {o}" for f, o in zip(fields, ops, strict=True)) + ")"
        if kind == "list":
            return "list(" + ", ".join(ops) + ")"
        if kind == "dict":
            if len(ops) % 2:
                raise Unprintable("a dict aggregate needs key, value pairs")
            pairs = [f"{ops[i]}: {ops[i + 1]}" for i in range(0, len(ops), 2)]
            return "dict(" + ", ".join(pairs) + ")"
        if kind == "closure":
            if len(ops) != 2:
                raise Unprintable("a closure aggregate needs exactly two operands")
            return f"closure({ops[0]}, {ops[1]})"
        raise Unprintable(f"aggregate kind {kind!r} has no MIR form")

    def target(self, succ: dict[str, Any]) -> str:
        blk = self.blk.get(succ["block"])
        if blk is None:
            raise Unprintable(f"unknown block {succ['block']!r}")
        return f"{blk}(" + ", ".join(self.operand(x) for x in succ.get("args", [])) + ")"

    def terminator(self, t: dict[str, Any]) -> list[str]:
        if t.get("text") is not None:
            raise Unprintable("terminator text has no MIR form")
        kind = t["kind"]
        succ = t.get("successors", [])
        op = t.get("operand")
        if kind != "switch" and kind != "return" and op is not None:
            raise Unprintable(f"a {kind} terminator has no operand in MIR")
        if kind == "return":
            if op is None or succ:
                raise Unprintable("a return needs an operand and no successors in MIR")
            return [f"return {self.operand(op)}"]
        if kind == "unreachable":
            if succ:
                raise Unprintable("unreachable has no successors")
            return ["unreachable"]
        if kind == "goto":
            if len(succ) != 1:
                raise Unprintable("a goto has one successor")
            return [f"goto -> {self.target(succ[0])}"]
        if kind == "switch":
            if op is None or not succ:
                raise Unprintable("a switch needs an operand and a successor")
            arms = []
            for e in succ:
                v = e.get("value")
                if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                    raise Unprintable(f"switch value {v!r} has no MIR form")
                arms.append(f"{'otherwise' if v is None else v}: {self.target(e)}")
            return [f"switchInt({self.operand(op)}) -> [" + ", ".join(arms) + "]"]
        if kind == "graph_read":
            if len(succ) != 1 or succ[0].get("args"):
                raise Unprintable("a graph read has one successor and passes no arguments")
            return ["graph read entities(())", f"|> collect -> {self.blk[succ[0]['block']]}(_)"]
        raise Unprintable(f"terminator kind {kind!r} has no MIR form")

    # -- bodies -----------------------------------------------------------------------

    def body(self, b: dict[str, Any], is_filter: bool, highlight: bool) -> list[str]:
        name = b["name"]
        locals_: dict[str, Any] = b.get("locals", {})
        env, vertex = b.get("env"), b.get("vertex")
        args = b.get("args")
        if args is None:
            args = [x for x in (env, vertex) if x is not None]
        roles = ["env", "vertex"] if is_filter else ["env"] if env is not None else []
        for pos, role in enumerate(roles):
            want = env if role == "env" else vertex
            if pos >= len(args) or args[pos] != want:
                raise Unprintable(f"body {name!r}: argument {pos} must be its {role}")
        if vertex is not None and not is_filter:
            raise Unprintable(f"body {name!r}: its vertex would not read back as the vertex")
        if b.get("entry") not in (None, b["blocks"][0]["id"]):
            raise Unprintable(f"body {name!r}: the entry must be the first block")
        order = list(args) + [x for x in locals_ if x not in args]
        reserved = set(range(len(roles)))
        fixed = {x: i for i, x in enumerate(args[: len(roles)])}
        rest = _number([x for x in order if x not in fixed], _LOCAL_N, reserved)
        nums = {**fixed, **rest}
        self.loc = {x: f"%{n}" for x, n in nums.items()}
        self.local_types = locals_
        role_name = dict(zip(args[: len(roles)], roles, strict=True))
        self.names.locals[name] = {x: role_name.get(x, f"_{n}") for x, n in nums.items()}
        ids = [blk["id"] for blk in b["blocks"]]
        bnums = _number(ids, _BB_N, set())
        self.blk = {x: f"bb{n}" for x, n in bnums.items()}
        self.names.blocks[name] = dict(self.blk)
        params = ", ".join(f"{self.loc[x]}: {self.type(locals_[x])}" for x in args)
        kw = "fn" if env is not None else "thunk"  # a thunk's parameters read back as `_N`
        out = [f"{'*' if highlight else ''}{kw} {self.body_name(name)}({params}) -> ? {{"]
        for x in order[len(args) :]:
            out.append(f"    let {self.loc[x]}: {self.type(locals_[x])}")
        for blk in b["blocks"]:
            out.append("")
            ps = ", ".join(self.place(p) for p in blk.get("params", []))
            out.append(f"    {self.blk[blk['id']]}({ps}): {{")
            for s in blk.get("statements", []):
                out.append("        " + self.statement(s))
            out.append("")
            out.extend("        " + line for line in self.terminator(blk["terminator"]))
            out.append("    }")
        out.append("}")
        return out


def _filters(doc: dict[str, Any]) -> list[bool]:
    """Whether the reader takes each body for a graph-read filter (`fn`, two or more
    parameters, the second an entity or the name a filter's)."""
    out = []
    for b in doc["bodies"]:
        args = b.get("args")
        if args is None:
            args = [x for x in (b.get("env"), b.get("vertex")) if x is not None]
        second = b.get("locals", {}).get(args[1]) if len(args) >= 2 else None
        out.append(
            b.get("env") is not None
            and len(args) >= 2
            and (_is_entity(second) or str(b["name"]).startswith(_FILTER_PREFIX))
        )
    return out


def print_mir_names(doc: dict[str, Any]) -> tuple[str, MirNames]:
    """The MIR text of a body file, and the names printing forced."""
    bodies = doc["bodies"]
    names = [b["name"] for b in bodies]
    if len(set(names)) != len(names):
        raise Unprintable("body names must be unique")
    place = doc.get("place") or names[0]
    filters = _filters(doc)
    first_filter = next((n for n, f in zip(names, filters, strict=True) if f), None)
    if first_filter is not None and first_filter != place:
        raise Unprintable(f"the reader would place the filter {first_filter!r}, not {place!r}")
    p = _Printer(doc)
    lines: list[str] = []
    for b, f in zip(bodies, filters, strict=True):
        if lines:
            lines.append("")
        # without a filter the reader places the first `*` body, else the first
        star = first_filter is None and b["name"] == place != names[0]
        lines.extend(p.body(b, f, highlight=star))
    return "\n".join(lines) + "\n", p.names


def print_mir(doc: dict[str, Any]) -> str:
    """The MIR text of a body file (see the module's docstring)."""
    return print_mir_names(doc)[0]


def rename(doc: dict[str, Any], names: MirNames) -> dict[str, Any]:
    """`doc` with the locals and blocks renamed as printing renamed them (the body file
    the round trip must reproduce, up to what MIR cannot say)."""

    def op(x: Any, loc: dict[str, str]) -> Any:
        if isinstance(x, str):
            local, *projs = x.split(".")
            return ".".join((loc[local], *projs))
        return x

    def walk(v: Any, loc: dict[str, str]) -> Any:
        if isinstance(v, list):
            return [walk(x, loc) for x in v]
        if isinstance(v, dict):
            if "const" in v or "fn" in v:
                return v  # constants and function pointers name no local
            return {k: walk(x, loc) for k, x in v.items()}
        return op(v, loc)

    out = dict(doc)
    out["bodies"] = []
    for b in doc["bodies"]:
        loc, blk = names.locals[b["name"]], names.blocks[b["name"]]
        nb = dict(b)
        for role in ("env", "vertex"):
            if b.get(role) is not None:
                nb[role] = loc[b[role]]
        if b.get("args") is not None:
            nb["args"] = [loc[x] for x in b["args"]]
        nb["locals"] = {loc[x]: t for x, t in b.get("locals", {}).items()}
        if b.get("entry") is not None:
            nb["entry"] = blk[b["entry"]]
        blocks = []
        for x in b["blocks"]:
            stmts = []
            for s in x.get("statements", []):
                ns = {}
                for k, v in s.items():
                    if k in ("assign", "storage_live", "storage_dead", "load"):
                        ns[k] = op(v, loc)
                    elif k in ("unary", "binary", "aggregate", "apply"):
                        ns[k] = {
                            f: (w if f in ("op", "kind", "fields") else walk(w, loc))
                            for f, w in v.items()
                        }
                    else:
                        ns[k] = v
                stmts.append(ns)
            t = dict(x["terminator"])
            if t.get("operand") is not None:
                t["operand"] = op(t["operand"], loc)
            if "successors" in t:
                t["successors"] = [
                    {**e, "block": blk[e["block"]], "args": walk(e.get("args", []), loc)}
                    for e in t["successors"]
                ]
            nx = {**x, "id": blk[x["id"]], "statements": stmts, "terminator": t}
            if "params" in x:
                nx["params"] = [loc[p] for p in x["params"]]
            blocks.append(nx)
        nb["blocks"] = blocks
        out["bodies"].append(nb)
    return out
