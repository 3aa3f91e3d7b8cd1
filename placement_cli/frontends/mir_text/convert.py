"""Parsed MIR bodies to a body-file dict (docs/body-format.md, version 1).

Naming: in every `fn` body local 0 is the captured environment (`env`); in a graph-read
filter body local 1 is the vertex (`vertex`); every other `%N` becomes `_N` (a leading
`%` would need quoting in YAML). Bodies and blocks keep their printed names.

Closures: a HashQL closure value is a pair (function pointer, environment) and is called
as `apply %c.0 %c.1 args...`. The body format calls a closure-typed operand directly
(`apply: {func: c, args}`), so that pattern becomes `func: c` with the environment
argument dropped; any other projection into a closure-typed value reads the whole
closure (the body format cannot project out of `closure`; reading more is the safe
side for placement).
"""

from __future__ import annotations

import re
from typing import Any

from .errors import MirSyntaxError
from .lexer import OPERAND, Token
from .lines import stmt_line
from .parser import parse_text
from .positions import MirBodyFile, SourceMap
from .syntax import Const, FnPtr, MirBody, Operand, Place, Stmt, Term
from .types import BodyType

FILTER_PREFIX = "{graph::read::filter"


def _is_entity(t: BodyType) -> bool:
    name = t.get("opaque") if isinstance(t, dict) else None
    if isinstance(name, dict):
        name = name.get("name")
    return isinstance(name, str) and (name == "Entity" or name.endswith("::Entity"))


def to_body_file(bodies: list[MirBody], source: str) -> MirBodyFile:
    """The body-file dict of parsed bodies; the placed body is the first graph-read
    filter (else the first highlighted `*` body, else the format's default, the first).
    Its `source_map` tells where each part was written (`positions.py`).

    >>> src = "thunk t() -> Boolean {\\n    bb0(): {\\n        return true\\n    }\\n}"
    >>> to_body_file(parse_text(src), "t")["bodies"][0]["blocks"]
    [{'id': 'bb0', 'params': [], 'statements': [], 'terminator': {'kind': 'return', 'operand': {'const': True}}}]
    """
    seen: dict[str, Token] = {}
    filters: set[str] = set()
    for b in bodies:
        if b.name in seen:
            raise _err(f"body '{b.name}' is defined twice", b.tok, source)
        seen[b.name] = b.tok
        for blk in b.blocks:
            filters.update(name for name, _ in blk.term.filters)
    out = MirBodyFile(version=1, names="hashql-mir")
    place = None
    converters = []
    converted = []
    for b in bodies:
        is_filter = (
            b.kind == "fn"
            and len(b.params) >= 2
            and (
                b.name in filters or b.name.startswith(FILTER_PREFIX) or _is_entity(b.params[1][1])
            )
        )
        if is_filter and place is None:
            place = b.name
        conv = _Body(b, is_filter, source)
        converters.append(conv)
        converted.append(conv.convert())
    if place is None:
        place = next((b.name for b in bodies if b.highlighted), None)
    if place is not None and place != bodies[0].name:
        out["place"] = place
    out["bodies"] = converted
    out.source_map = SourceMap(converters)
    return out


def _err(msg: str, tok: Token | None, source: str) -> MirSyntaxError:
    return MirSyntaxError(msg, tok.line if tok else 1, tok.col if tok else 1, source)


class _Body:
    def __init__(self, body: MirBody, is_filter: bool, source: str) -> None:
        self.b = body
        self.source = source
        self.names: dict[int, str] = {}
        self.types: dict[int, BodyType] = {}
        self.locals: dict[str, BodyType] = {}
        self.memo: dict[str, str] = {}  # a place's text in line statements -> its operand
        roles = ["env", "vertex"] if is_filter else ["env"] if body.kind == "fn" else []
        self.role = {}
        for pos, (p, t) in enumerate(body.params):
            name = roles[pos] if pos < len(roles) else f"_{p.local}"
            if pos < len(roles):
                self.role[roles[pos]] = name
            self.declare(p, t, name)
        names, types, locals_ = self.names, self.types, self.locals
        for p, t in body.lets:  # `declare`, for the many
            if p.local in names:
                self.declare(p, t, "")  # raises
            name = names[p.local] = f"_{p.local}"
            types[p.local] = t
            locals_[name] = t

    def declare(self, p: Place, t: BodyType, name: str) -> None:
        if p.local in self.names:
            raise _err(f"local %{p.local} is declared twice", p.tok, self.source)
        self.names[p.local] = name
        self.types[p.local] = t
        self.locals[name] = t

    def local(self, p: Place) -> str:
        name = self.names.get(p.local)
        if name is None:
            raise _err(f"local %{p.local} is not declared", p.tok, self.source)
        return name

    def closure_depth(self, p: Place) -> int | None:
        """How many projections of `p` lead to a closure-typed value (None: none do)."""
        t = self.types.get(p.local)
        for k in range(len(p.projs) + 1):
            while isinstance(t, dict) and isinstance(t.get("opaque"), dict):
                t = t["opaque"].get("of")  # an opaque projects into its representation
            if t == "closure":
                return k
            if k == len(p.projs) or not isinstance(t, dict):
                return None
            f = p.projs[k]
            if "tuple" in t:
                items = t["tuple"]
                t = items[int(f)] if f.isdigit() and int(f) < len(items) else None
            elif "struct" in t:
                t = t["struct"].get(f)
            else:
                return None
        return None

    def place(self, p: Place, keep: int | None = None) -> str:
        projs = p.projs if keep is None else p.projs[:keep]
        return ".".join((self.local(p), *projs))

    def operand(self, op: Operand) -> Any:
        if isinstance(op, Const):
            return {"const": op.value}
        if isinstance(op, FnPtr):
            return {"fn": op.name}
        return self.place(op, self.closure_depth(op))

    def apply(self, func: Operand, args: list[Operand]) -> dict[str, Any]:
        if isinstance(func, Place):
            k = self.closure_depth(func)
            if k is not None and k == len(func.projs) - 1 and func.projs[-1] == "0":
                env = args[0] if args else None
                if (
                    isinstance(env, Place)
                    and env.local == func.local
                    and env.projs == func.projs[:k] + ("1",)
                ):
                    args = args[1:]  # the closure's own environment: implied by calling it
        return {"func": self.operand(func), "args": [self.operand(a) for a in args]}

    def line_operand(self, t: str) -> Any:
        """The operand of an operand's text in a statement line; None when it names a
        local that is not declared (the statement is then converted the long way, for
        the error's position). `memo` holds every declared `%N` and each place seen."""
        hit = self.memo.get(t)
        if hit is not None:
            return hit
        c = t[0]
        if c != "%":
            return {
                "const": {"true": True, "false": False, "null": None}[t] if c in "tfn" else int(t)
            }
        local_s, *fields = t[1:].split(".")
        local = int(local_s)
        name = self.names.get(local)
        if name is None:
            return None
        projs = tuple(str(int(f)) if f[0] in "0123456789" else f for f in fields)
        k = self.closure_depth(Place(local, projs, Token("", t, 0, 0, 0, 0)))
        hit = self.memo[t] = ".".join((name, *(projs if k is None else projs[:k])))
        return hit

    def line_statement(self, tok: Token) -> dict[str, Any]:
        """A statement line (not a call), as `statement` converts it, in one step."""
        m = tok.value
        assert isinstance(m, re.Match)
        lhs_t, a_t, op, b_t, un, u_t, tup = m.group("lhs", "a", "op", "b", "un", "u", "tup")
        get, conv = self.memo.get, self.line_operand  # a declared local or a seen place: get
        lhs = get(lhs_t) or conv(lhs_t)
        out: dict[str, Any] | None = None
        if lhs is None:
            pass
        elif a_t is not None:
            a = get(a_t) or conv(a_t)
            if op is None:
                out = None if a is None else {"assign": lhs, "load": a}
            else:
                b = get(b_t) or conv(b_t)
                if a is not None and b is not None:
                    out = {"assign": lhs, "binary": {"op": op, "left": a, "right": b}}
        elif un is not None:
            u = get(u_t) or conv(u_t)
            if u is not None:
                out = {"assign": lhs, "unary": {"op": un, "operand": u}}
        elif tup is not None:
            ops = [conv(o.group()) for o in OPERAND.finditer(tup)]
            if None not in ops:
                out = {"assign": lhs, "aggregate": {"kind": "tuple", "operands": ops}}
        else:
            name = m.group("inp")
            out = {"assign": lhs, "input": name if m.group("mode") == "LOAD" else f"exists({name})"}
        return self.statement(stmt_line(tok, {})) if out is None else out

    def statement(self, s: Stmt | Token) -> dict[str, Any]:
        if isinstance(s, Token):
            return self.line_statement(s)
        if s.lhs is None:
            return {"nop": True}
        lhs = self.local(s.lhs)
        if s.kind == "live":
            return {"storage_live": lhs}
        if s.kind == "dead":
            return {"storage_dead": lhs}
        kind, *rest = s.rv
        out: dict[str, Any] = {"assign": lhs}
        if kind == "load":
            out["load"] = self.operand(rest[0])
        elif kind == "unary":
            out["unary"] = {"op": rest[0], "operand": self.operand(rest[1])}
        elif kind == "binary":
            out["binary"] = {
                "op": rest[0],
                "left": self.operand(rest[1]),
                "right": self.operand(rest[2]),
            }
        elif kind == "input":
            out["input"] = rest[0]
        elif kind == "apply":
            out["apply"] = self.apply(rest[0], rest[1])
        else:
            agg: dict[str, Any] = {"kind": rest[0], "operands": [self.operand(o) for o in rest[1]]}
            if rest[2] is not None:
                agg["fields"] = list(rest[2])
            out["aggregate"] = agg
        return out

    def terminator(self, t: Term, blocks: dict[str, Token]) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": t.kind}
        if t.operand is not None:  # the returned value, or the switch discriminant
            out["operand"] = self.operand(t.operand)
        succ = []
        for value, tgt in t.targets:
            if tgt.block not in blocks:
                raise _err(f"unknown block '{tgt.block}'", tgt.tok, self.source)
            e: dict[str, Any] = {"block": tgt.block, "args": [self.operand(a) for a in tgt.args]}
            if value is not None:
                e["value"] = value
            succ.append(e)
        if succ:
            out["successors"] = succ
        return out

    def convert(self) -> dict[str, Any]:
        b = self.b
        blocks: dict[str, Token] = {}
        for blk in b.blocks:
            if blk.id in blocks:
                raise _err(f"block '{blk.id}' is defined twice", blk.tok, self.source)
            blocks[blk.id] = blk.tok
        # a local without projections is its name (a closure-typed one too)
        self.memo = {f"%{n}": name for n, name in self.names.items()}
        out: dict[str, Any] = {"name": b.name, **self.role}
        out["args"] = [self.names[p.local] for p, _ in b.params]
        out["locals"] = self.locals
        line, stmt = self.line_statement, self.statement
        out["blocks"] = [
            {
                "id": blk.id,
                "params": [self.local(p) for p in blk.params],
                "statements": [line(s) if isinstance(s, Token) else stmt(s) for s in blk.stmts],
                "terminator": self.terminator(blk.term, blocks),
            }
            for blk in b.blocks
        ]
        return out


def parse_mir(text: str, source: str = "<mir>") -> MirBodyFile:
    """Parse printed MIR into a body-file dict; raises MirSyntaxError on bad input.

    >>> src = '''
    ... fn {graph::read::filter@7}(%0: (), %1: ::graph::types::knowledge::entity::Entity) -> Boolean {
    ...     let %2: Boolean
    ...
    ...     bb0(): {                                    // postgres
    ...         %2 = !%1.metadata.archived
    ...
    ...         return %2
    ...     }
    ... }'''
    >>> body = parse_mir(src)["bodies"][0]
    >>> body["locals"]
    {'env': {'tuple': []}, 'vertex': {'opaque': '::graph::types::knowledge::entity::Entity'}, '_2': 'bool'}
    >>> body["blocks"][0]["statements"]
    [{'assign': '_2', 'unary': {'op': '!', 'operand': 'vertex.metadata.archived'}}]
    >>> try:
    ...     parse_mir("fn f(")
    ... except MirSyntaxError as err:
    ...     print(err.line, err.col, err)
    1 6 <mir>:1:6: expected a parameter '%N', found end of input
    """
    if not isinstance(text, str):
        raise TypeError("parse_mir expects the MIR text as a str")
    return to_body_file(parse_text(text, source), source)
