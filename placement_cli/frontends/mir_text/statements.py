"""Statements, rvalues, operands and terminators of the printed MIR, read token by token.

The lexer makes one token of the lines in the common shapes (`lines.py` reads those);
every other line (constructors, structs, strings, function pointers, `let`, `drop` and
`nop`, `unreachable`, graph reads, and any line with an error in it) is read here a
token at a time, so that an error names the token where it is.
"""

from __future__ import annotations

from typing import Any, cast

from .lexer import Cursor, Token, describe
from .syntax import Const, FnPtr, Operand, Place, Stmt, Target, Term

BINOPS = frozenset(
    ("+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "&", "|", "^")
)


def block_name(cur: Cursor) -> Token:
    tok = cur.peek()
    if tok.kind != "IDENT" or not (
        tok.text.startswith("bb") and tok.text[2:].isdigit() and tok.text[2:].isascii()
    ):
        raise cur.error(f"expected a block name 'bbN', found {describe(tok)}")
    return cur.next()


def _place_parts(tok: Token) -> tuple[int, tuple[str, ...]]:
    # The lexer stores (local index, projections) on every PLACE token.
    return cast(tuple[int, tuple[str, ...]], tok.value)


def local_place(cur: Cursor, what: str = "a local '%N'") -> Place:
    tok = cur.expect("PLACE", what=what)
    local, projs = _place_parts(tok)
    if projs:
        raise cur.error(f"expected {what} without projections", tok)
    return Place(local, (), tok)


def name_token(cur: Cursor, what: str) -> Token:
    if cur.at("BNAME") or cur.at("IDENT"):
        return cur.next()
    raise cur.error(f"expected {what}, found {describe(cur.peek())}")


def statement(cur: Cursor) -> Stmt:
    tok = cur.peek()
    if tok.kind == "PLACE":
        lhs = local_place(cur, "the assigned local '%N'")
        cur.expect("=")
        return Stmt("assign", lhs, _rvalue(cur), tok)
    if tok.kind == "IDENT" and tok.text in ("let", "drop"):
        cur.next()
        p = local_place(cur)
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
        ntok = name_token(cur, "a function name in '(NAME as FnPtr)'")
        cur.expect("IDENT", "as", what="'as FnPtr'")
        cur.expect("IDENT", "FnPtr", what="'FnPtr'")
        cur.expect(")")
        return FnPtr(ntok.text)
    raise cur.error(f"expected an operand, found {describe(tok)}")


def _target(cur: Cursor) -> Target:
    btok = block_name(cur)
    cur.expect("(")
    args = []
    while not cur.at(")"):
        args.append(_operand(cur))
        if not cur.at(")"):
            cur.expect(",", what="',' or ')' in block arguments")
    cur.next()
    return Target(btok.text, btok, tuple(args))


def terminator(cur: Cursor) -> Term:
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
        ntok = name_token(cur, "the filter body's name")
        cur.expect(",")
        local_place(cur, "the filter's environment '%N'")
        cur.expect(")")
        filters.append((ntok.text, ntok))
    cur.expect("->")
    btok = block_name(cur)
    cur.expect("(")
    cur.expect("IDENT", "_", what="'_' (the graph read fills the parameters)")
    cur.expect(")")
    return Term("graph_read", targets=[(None, Target(btok.text, btok, ()))], filters=filters)
