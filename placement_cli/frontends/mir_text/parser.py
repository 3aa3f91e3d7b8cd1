"""Bodies, blocks, statements and terminators of the printed MIR, as plain syntax.

The result keeps the compiler's numbering (`%N`, `bbN`) and every token the converter
may need for an error position; naming, typing and the body-file shape are
`convert.py`'s business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

from .errors import MirSyntaxError
from .lexer import ARM, LOCAL, OPERAND, PLACE, Cursor, Token, describe, tokenize
from .types import BodyType, parse_type, type_of


class Place(NamedTuple):
    """A local and its projections; `src` is its token, or (when `at` >= 0) the line
    token it starts at offset `at` of (its own token is made when an error needs it)."""

    local: int
    projs: tuple[str, ...]
    src: Token
    at: int = -1

    @property
    def tok(self) -> Token:
        if self.at < 0:
            return self.src
        src, at = self.src, self.at
        m = PLACE.match(src.value.string, at)  # type: ignore[attr-defined]
        assert m is not None
        col = src.col + at - src.start
        return Token("PLACE", m.group(), src.line, col, at, m.end(), (self.local, self.projs))


@dataclass(frozen=True, slots=True)
class Const:
    value: Any  # None for unit / null


@dataclass(frozen=True, slots=True)
class FnPtr:
    name: str


Operand = Place | Const | FnPtr


@dataclass(frozen=True, slots=True)
class Target:
    block: str
    tok: Token
    args: tuple[Operand, ...]


@dataclass(slots=True)
class Stmt:
    kind: str  # assign | live | dead | nop
    lhs: Place | None = None  # the assigned local, or the local of live / dead
    rv: tuple[Any, ...] = ()  # (kind, ...): see `_rvalue`
    tok: Token | None = None  # its first token (a line statement's is its `lhs`)


@dataclass(slots=True)
class Term:
    kind: str  # return | goto | switch | graph_read | unreachable
    operand: Operand | None = None
    targets: list[tuple[int | None, Target]] = field(default_factory=list)  # (switch value, target)
    filters: list[tuple[str, Token]] = field(default_factory=list)  # graph read filter bodies
    tok: Token | None = None  # its keyword, or the line token it was read from


@dataclass(slots=True)
class Block:
    id: str
    tok: Token
    params: list[Place]
    stmts: list[Stmt | Token]  # a statement line token (kind STMT) stands for itself
    term: Term


@dataclass(slots=True)
class MirBody:
    kind: str  # fn | thunk
    name: str
    tok: Token
    highlighted: bool
    params: list[tuple[Place, BodyType]]
    lets: list[tuple[Place, BodyType]]
    blocks: list[Block]


BINOPS = frozenset(
    ("+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "&", "|", "^")
)
TERMINATORS = frozenset(("return", "goto", "switchInt", "graph", "unreachable"))


def parse_text(text: str, source: str = "<mir>") -> list[MirBody]:
    """Every body of a MIR text, as syntax (see `parse_bodies`).

    >>> [b.name for b in parse_text("fn {f}() {\\n  bb0(): {\\n    return 1\\n  }\\n}")]
    ['{f}']
    """
    return parse_bodies(Cursor(tokenize(text, source, lines=True), source))


def parse_bodies(cur: Cursor) -> list[MirBody]:
    """Every body from the cursor on, in order (at least one).

    >>> src = "thunk t() -> Integer {\\n    let %0: Integer\\n\\n    bb0(): {\\n        return 1\\n    }\\n}"
    >>> b = parse_bodies(Cursor(tokenize(src), "t"))[0]
    >>> (b.kind, b.name, [blk.id for blk in b.blocks], b.blocks[0].term.kind)
    ('thunk', 't', ['bb0'], 'return')
    """
    bodies = []
    cur.skip_newlines()
    while not cur.at("EOF"):
        bodies.append(_body(cur))
        if not (cur.at("NL") or cur.at("EOF")):
            raise cur.error(f"expected the end of line after '}}', found {describe(cur.peek())}")
        cur.skip_newlines()
    if not bodies:
        raise cur.error("expected at least one body ('fn' or 'thunk')")
    return bodies


def _bb(cur: Cursor) -> Token:
    tok = cur.peek()
    if tok.kind != "IDENT" or not (
        tok.text.startswith("bb") and tok.text[2:].isdigit() and tok.text[2:].isascii()
    ):
        raise cur.error(f"expected a block name 'bbN', found {describe(tok)}")
    return cur.next()


def _place_parts(tok: Token) -> tuple[int, tuple[str, ...]]:
    # The lexer stores (local index, projections) on every PLACE token.
    return cast(tuple[int, tuple[str, ...]], tok.value)


def _local(cur: Cursor, what: str = "a local '%N'") -> Place:
    tok = cur.expect("PLACE", what=what)
    local, projs = _place_parts(tok)
    if projs:
        raise cur.error(f"expected {what} without projections", tok)
    return Place(local, (), tok)


def _name(cur: Cursor, what: str) -> Token:
    if cur.at("BNAME") or cur.at("IDENT"):
        return cur.next()
    raise cur.error(f"expected {what}, found {describe(cur.peek())}")


def _body(cur: Cursor) -> MirBody:
    highlighted = cur.at("*")
    if highlighted:
        cur.next()  # the printer marks the bodies a test is about with `*`
    kw = cur.peek()
    if not (kw.kind == "IDENT" and kw.text in ("fn", "thunk")):
        raise cur.error(f"expected 'fn' or 'thunk', found {describe(kw)}")
    cur.next()
    ntok = _name(cur, "a body name")
    cur.expect("(")
    params: list[tuple[Place, BodyType]] = []
    while not cur.at(")"):
        p = _local(cur, "a parameter '%N'")
        cur.expect(":")
        params.append((p, parse_type(cur)))
        if not cur.at(")"):
            cur.expect(",", what="',' or ')' after a parameter")
    cur.next()
    if cur.at("->"):
        cur.next()
        parse_type(cur)  # the return type: the body format does not record it
    cur.expect("{", what="'{' opening the body")
    cur.expect("NL", what="the end of line after '{'")
    cur.skip_newlines()
    lets: list[tuple[Place, BodyType]] = []
    types: dict[str, tuple[bool, BodyType]] = {}  # a let line's type text -> its type
    toks = cur.toks
    while True:
        line = toks[cur.i]
        if line.kind == "LET" and (let := _let_line(line, types, cur.source)) is not None:
            cur.i += 1  # a line token ends with its newline
            lets.append(let)
            continue
        if cur.at("IDENT", "let"):
            cur.next()
            p = _local(cur)
            cur.expect(":", what="':' and the local's type")
            lets.append((p, parse_type(cur)))
            cur.expect("NL", what="the end of line after a local's type")
            cur.skip_newlines()
        else:
            break
    blocks = []
    while cur.line("HEAD") is not None or not cur.at("}"):
        blocks.append(_block(cur))
        cur.skip_newlines()
    if not blocks:
        raise cur.error("a body needs at least one block")
    cur.next()
    return MirBody(kw.text, ntok.text, ntok, highlighted, params, lets, blocks)


def _block(cur: Cursor) -> Block:
    line = cur.line("HEAD")
    if line is not None:
        cur.i += 1  # a line token ends with its newline
        btok, params = _head_line(line)
    else:
        btok = _bb(cur)
        cur.expect("(")
        params = []
        while not cur.at(")"):
            params.append(_local(cur, "a block parameter '%N'"))
            if not cur.at(")"):
                cur.expect(",", what="',' or ')' after a block parameter")
        cur.next()
        cur.expect(":")
        cur.expect("{", what="'{' opening the block")
        cur.expect("NL", what="the end of line after '{'")
    cur.skip_newlines()
    stmts: list[Stmt | Token] = []
    memo = cur.memo
    toks = cur.toks
    while True:
        line = toks[cur.i]
        kind = line.kind
        if kind == "STMT":  # a line token ends with its newline (and blank lines)
            cur.i += 1
            # kept as the line (converted from it in one step) unless it is a call
            app = line.value.start("app") >= 0  # type: ignore[attr-defined]
            stmts.append(stmt_line(line, memo) if app else line)
            continue
        if kind == "TERM":
            cur.i += 1
            term = _term_line(line, memo)
            break
        tok = cur.peek()
        if tok.kind == "IDENT" and tok.text in TERMINATORS:
            term = _terminator(cur)
            cur.expect("NL", what="the end of line after the terminator")
            break
        stmts.append(_statement(cur))
        cur.expect("NL", what="the end of line after a statement")
        cur.skip_newlines()
    cur.skip_newlines()
    if toks[cur.i].kind == "CLOSE":
        cur.i += 1
    else:
        cur.expect("}", what="'}' closing the block (the terminator ends it)")
    return Block(btok.text, btok, params, stmts, term)


def _copy(t: BodyType) -> BodyType:
    if isinstance(t, dict):
        return {k: _copy(v) for k, v in t.items()}
    if isinstance(t, list):
        return [_copy(v) for v in t]
    return t


def _let_line(
    tok: Token, types: dict[str, tuple[bool, BodyType]], source: str
) -> tuple[Place, BodyType] | None:
    """A `let %N: TYPE` line token; None when its type does not read on its own (the
    line is then scanned token by token, for the error's position)."""
    m: re.Match[str] = tok.value  # type: ignore[assignment]
    local, text = m.group("local", "type")
    hit = types.get(text)
    if hit is None:
        try:
            hit = types[text] = (True, type_of(text, source))
        except MirSyntaxError:
            hit = types[text] = (False, None)
    ok, t = hit
    if not ok:
        return None
    # the place starts at its `%`; a mapping type is the local's own copy
    return Place(int(local), (), tok, m.start("local") - 1), t if t.__class__ is str else _copy(t)


_CONSTS: dict[str, Any] = {"true": True, "false": False, "null": None}


def _operand_parts(t: str) -> tuple[int, tuple[str, ...]] | Const:
    """What an `OPERAND` match reads as: a place's (local, projections), or a constant."""
    c = t[0]
    if c == "%":
        local_s, *projs = t[1:].split(".")
        return int(local_s), tuple(str(int(f)) if f[0] in "0123456789" else f for f in projs)
    if c in "tfn":
        return Const(_CONSTS[t])
    return Const(int(t))


def _line_operand(tok: Token, s: int, e: int, memo: dict[str, Any]) -> Operand:
    """The operand at [s, e) of a line token (an `OPERAND` match); `memo` keeps what
    each text reads as."""
    t = tok.value.string[s:e]  # type: ignore[attr-defined]
    hit = memo.get(t)
    if hit is None:
        hit = memo[t] = _operand_parts(t)
    if isinstance(hit, Const):
        return hit
    return Place(hit[0], hit[1], tok, s)


def _line_operands(tok: Token, s: int, e: int, memo: dict[str, Any]) -> list[Operand]:
    text = tok.value.string  # type: ignore[attr-defined]
    return [_line_operand(tok, *o.span(), memo) for o in OPERAND.finditer(text, s, e)]


def stmt_line(tok: Token, memo: dict[str, Any]) -> Stmt:
    """A statement line token (`STMT_LINE`) as the statement `_statement` reads."""
    m = tok.value
    assert isinstance(m, re.Match)
    lhs = _line_operand(tok, *m.span("lhs"), memo)
    assert isinstance(lhs, Place)
    rv: tuple[Any, ...]
    if m.start("a") >= 0:
        a = _line_operand(tok, *m.span("a"), memo)
        if m.start("op") >= 0:
            rv = ("binary", m.group("op"), a, _line_operand(tok, *m.span("b"), memo))
        else:
            rv = ("load", a)
    elif m.start("un") >= 0:
        rv = ("unary", m.group("un"), _line_operand(tok, *m.span("u"), memo))
    elif m.start("tup") >= 0:
        rv = ("agg", "tuple", _line_operands(tok, *m.span("tup"), memo), None)
    elif m.start("app") >= 0:
        ops = _line_operands(tok, *m.span("app"), memo)
        rv = ("apply", ops[0], ops[1:])
    else:
        name = m.group("inp")
        rv = ("input", name if m.group("mode") == "LOAD" else f"exists({name})")
    return Stmt("assign", lhs, rv)


def _line_target(tok: Token, s: int, e: int, memo: dict[str, Any]) -> Target:
    """`bbN(args)` at [s, e) of a line token."""
    text = tok.value.string  # type: ignore[attr-defined]
    p = text.index("(", s)
    btok = Token("IDENT", text[s:p], tok.line, tok.col + s - tok.start, s, p)
    return Target(btok.text, btok, tuple(_line_operands(tok, p + 1, e - 1, memo)))


def _term_line(tok: Token, memo: dict[str, Any]) -> Term:
    """A terminator line token (`TERM_LINE`) as `_terminator` reads it."""
    m = tok.value
    assert isinstance(m, re.Match)
    if m.start("ret") >= 0:
        return Term("return", _line_operand(tok, *m.span("ret"), memo), tok=tok)
    if m.start("goto") >= 0:
        return Term("goto", targets=[(None, _line_target(tok, *m.span("goto"), memo))], tok=tok)
    arms: list[tuple[int | None, Target]] = []
    for a in ARM.finditer(m.string, *m.span("arms")):
        v = a.group("value")
        arms.append(
            (None if v == "otherwise" else int(v), _line_target(tok, *a.span("target"), memo))
        )
    return Term("switch", _line_operand(tok, *m.span("disc"), memo), arms, tok=tok)


def _head_line(tok: Token) -> tuple[Token, list[Place]]:
    """A block header line token (`HEAD_LINE`): the block's name token, its parameters."""
    m = tok.value
    assert isinstance(m, re.Match)
    s, e = m.span("bb")
    shift = tok.col - tok.start
    btok = Token("IDENT", m.group("bb"), tok.line, s + shift, s, e)
    params = []
    if m.start("params") >= 0:
        for p in LOCAL.finditer(m.string, *m.span("params")):
            params.append(Place(int(p.group()[1:]), (), tok, p.start()))
    return btok, params


def _statement(cur: Cursor) -> Stmt:
    tok = cur.peek()
    if tok.kind == "PLACE":
        lhs = _local(cur, "the assigned local '%N'")
        cur.expect("=")
        return Stmt("assign", lhs, _rvalue(cur), tok)
    if tok.kind == "IDENT" and tok.text in ("let", "drop"):
        cur.next()
        p = _local(cur)
        return Stmt("live" if tok.text == "let" else "dead", p, tok=tok)
    if tok.kind == "IDENT" and tok.text == "nop":
        cur.next()
        return Stmt("nop", tok=tok)
    raise cur.error(f"expected a statement or a terminator, found {describe(tok)}")


def _rvalue(cur: Cursor) -> tuple[Any, ...]:
    """One of ('load', op), ('unary', op, x), ('binary', op, l, r), ('input', name),
    ('apply', f, args), ('agg', kind, operands, fields)."""
    tok = cur.peek()
    if tok.kind == "IDENT" and cur.at("IDENT", k=1) and tok.text == "input":
        cur.next()
        mode = cur.expect("IDENT", what="LOAD or EXISTS")
        if mode.text not in ("LOAD", "EXISTS"):
            raise cur.error(f"expected LOAD or EXISTS, found {describe(mode)}", mode)
        name = cur.expect("IDENT", what="the input's name").text
        return ("input", name if mode.text == "LOAD" else f"exists({name})")
    if tok.kind == "IDENT" and tok.text == "apply":
        cur.next()
        func = _operand(cur)
        args = []
        while not (cur.at("NL") or cur.at("EOF")):
            args.append(_operand(cur))  # arguments are separated by spaces, to the line's end
        return ("apply", func, args)
    if (
        tok.kind == "IDENT"
        and cur.at("(", k=1)
        and tok.text in ("closure", "list", "dict", "opaque")
    ):
        return _constructor(cur, tok.text)
    if tok.kind == "(":
        if cur.at(")", k=1):
            cur.next()
            cur.next()
            return ("agg", "tuple", [], None)  # the empty environment tuple
        if not ((cur.at("BNAME", k=1) or cur.at("IDENT", k=1)) and cur.at("IDENT", "as", k=2)):
            return _tuple_or_struct(cur)
    if tok.kind in ("!", "~") or (tok.kind == "-" and not _negative_number(cur)):
        cur.next()
        return ("unary", tok.kind, _operand(cur))
    left = _operand(cur)
    op = cur.peek()
    if op.kind in BINOPS:
        cur.next()
        return ("binary", op.kind, left, _operand(cur))
    return ("load", left)


def _constructor(cur: Cursor, kind: str) -> tuple[Any, ...]:
    cur.next()
    cur.expect("(")
    if kind == "opaque":
        cur.expect("IDENT", what="the opaque type's name")
        cur.expect(",")
        # A newtype wrap: the value keeps its representation, so it reads like a copy.
        inner = _operand(cur)
        cur.expect(")", what="')' (opaque(...) wraps one operand)")
        return ("load", inner)
    ops: list[Operand] = []
    while not cur.at(")"):
        ops.append(_operand(cur))
        if kind == "dict":
            cur.expect(":", what="':' between a key and its value")
            ops.append(_operand(cur))
        if not cur.at(")"):
            cur.expect(",", what="',' or ')'")
    close = cur.next()
    if kind == "closure" and len(ops) != 2:
        raise cur.error("closure(...) takes a function pointer and an environment", close)
    return ("agg", kind, ops, None)


def _tuple_or_struct(cur: Cursor) -> tuple[Any, ...]:
    cur.expect("(")
    struct = cur.at("IDENT") and cur.at(":", k=1)
    ops: list[Operand] = []
    fields: list[str] = []
    while not cur.at(")"):
        if struct:
            f = cur.expect("IDENT", what="a field name")
            if f.text in fields:
                raise cur.error(f"duplicate field '{f.text}'", f)
            fields.append(f.text)
            cur.expect(":")
        ops.append(_operand(cur))
        if not cur.at(")"):
            cur.expect(",", what="',' or ')'")
    cur.next()
    return ("agg", "struct", ops, fields) if struct else ("agg", "tuple", ops, None)


def _negative_number(cur: Cursor) -> bool:
    # `-5`: the printer writes a negative integer and a negated literal alike; read a
    # constant (the compiler folds the negation anyway).
    return cur.at("NUM", k=1) and cur.peek(1).start == cur.peek().end


def _operand(cur: Cursor) -> Operand:
    tok = cur.peek()
    if tok.kind == "PLACE":
        cur.next()
        local, projs = _place_parts(tok)
        return Place(local, projs, tok)
    if tok.kind == "NUM":
        cur.next()
        return Const(tok.value)
    if tok.kind == "-" and _negative_number(cur):
        cur.next()
        return Const(-cast(int | float, cur.next().value))
    if tok.kind == "STR":
        cur.next()
        return Const(tok.value)
    if tok.kind == "IDENT" and tok.text in ("true", "false", "null"):
        cur.next()
        return Const({"true": True, "false": False, "null": None}[tok.text])
    if tok.kind == "(":
        cur.next()
        if cur.at(")"):
            cur.next()
            return Const(None)  # `()`, the unit constant
        ntok = _name(cur, "a function name in '(NAME as FnPtr)'")
        cur.expect("IDENT", "as", what="'as FnPtr'")
        cur.expect("IDENT", "FnPtr", what="'FnPtr'")
        cur.expect(")")
        return FnPtr(ntok.text)
    raise cur.error(f"expected an operand, found {describe(tok)}")


def _target(cur: Cursor) -> Target:
    btok = _bb(cur)
    cur.expect("(")
    args = []
    while not cur.at(")"):
        args.append(_operand(cur))
        if not cur.at(")"):
            cur.expect(",", what="',' or ')' in block arguments")
    cur.next()
    return Target(btok.text, btok, tuple(args))


def _terminator(cur: Cursor) -> Term:
    kwtok = cur.next()
    kw = kwtok.text
    if kw == "return":
        return Term("return", _operand(cur), tok=kwtok)
    if kw == "unreachable":
        return Term("unreachable", tok=kwtok)
    if kw == "goto":
        cur.expect("->")
        return Term("goto", targets=[(None, _target(cur))], tok=kwtok)
    if kw == "switchInt":
        cur.expect("(")
        disc = _operand(cur)
        cur.expect(")")
        cur.expect("->")
        cur.expect("[")
        arms: list[tuple[int | None, Target]] = []
        if cur.at(","):
            cur.next()  # `[, otherwise: ...]`: the printer's form when only `otherwise` is left
        while not cur.at("]"):
            vtok = cur.peek()
            if vtok.kind == "NUM" and isinstance(vtok.value, int):
                value: int | None = vtok.value
            elif vtok.kind == "IDENT" and vtok.text == "otherwise":
                value = None
            else:
                raise cur.error(f"expected a switch value or 'otherwise', found {describe(vtok)}")
            cur.next()
            cur.expect(":")
            arms.append((value, _target(cur)))
            if not cur.at("]"):
                cur.expect(",", what="',' or ']' in the switch arms")
        cur.next()
        if not arms:
            raise cur.error("a switch needs at least one arm")
        return Term("switch", disc, arms, tok=kwtok)
    term = _graph_read(cur)
    term.tok = kwtok
    return term


def _graph_read(cur: Cursor) -> Term:
    cur.expect("IDENT", "read", what="'read' after 'graph'")
    cur.expect("IDENT", "entities", what="'entities(...)'")
    cur.expect("(")
    _operand(cur)  # the time axis: not an operand of our graph_read
    cur.expect(")")
    filters = []
    while True:
        cur.skip_newlines()  # each `|> ...` stage is on its own line
        cur.expect("|>", what="'|>' and the next stage of the graph read")
        stage = cur.expect("IDENT", what="'filter(...)' or 'collect'")
        if stage.text == "collect":
            break
        if stage.text != "filter":
            raise cur.error(f"expected 'filter' or 'collect', found {describe(stage)}", stage)
        cur.expect("(")
        ntok = _name(cur, "the filter body's name")
        cur.expect(",")
        _local(cur, "the filter's environment '%N'")
        cur.expect(")")
        filters.append((ntok.text, ntok))
    cur.expect("->")
    btok = _bb(cur)
    cur.expect("(")
    cur.expect("IDENT", "_", what="'_' (the graph read fills the parameters)")
    cur.expect(")")
    return Term("graph_read", targets=[(None, Target(btok.text, btok, ()))], filters=filters)
