"""Whole lines of the printed MIR read in one step: `let`, block header, statement and
terminator lines.

The lexer makes one token of each line that matches its line pattern (`LET`, `HEAD`,
`STMT`, `TERM`; `lexer.py`); these turn such a token into the syntax that reading the
line token by token (`parser.py` for `let` and block headers, `statements.py` for the
rest) would make, with places that point into the line.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import MirSyntaxError
from .lexer import ARM, LOCAL, OPERAND, Token
from .syntax import Const, Operand, Place, Stmt, Target, Term
from .types import BodyType, type_of


def _copy(t: BodyType) -> BodyType:
    if isinstance(t, dict):
        return {k: _copy(v) for k, v in t.items()}
    if isinstance(t, list):
        return [_copy(v) for v in t]
    return t


def let_line(
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
    """A statement line token (`STMT_LINE`) as `statements.statement` reads it."""
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


def term_line(tok: Token, memo: dict[str, Any]) -> Term:
    """A terminator line token (`TERM_LINE`) as `statements.terminator` reads it."""
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


def head_line(tok: Token) -> tuple[Token, list[Place]]:
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
