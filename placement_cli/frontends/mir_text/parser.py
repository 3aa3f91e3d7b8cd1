"""Bodies and blocks of the printed MIR, as plain syntax (`syntax.py`).

The result keeps the compiler's numbering (`%N`, `bbN`) and every token the converter
may need for an error position; naming, typing and the body-file shape are
`convert.py`'s business. A body's header, its `let` lines and each block's header are
read here; a block's lines by `lines.py` when the lexer made one token of them, token
by token by `statements.py` otherwise.
"""

from __future__ import annotations

from .lexer import Cursor, Token, describe, tokenize
from .lines import head_line, let_line, stmt_line, term_line
from .statements import block_name, local_place, name_token, statement, terminator
from .syntax import Block, MirBody, Place, Stmt
from .types import BodyType, parse_type

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


def _body(cur: Cursor) -> MirBody:
    highlighted = cur.at("*")
    if highlighted:
        cur.next()  # the printer marks the bodies a test is about with `*`
    kw = cur.peek()
    if not (kw.kind == "IDENT" and kw.text in ("fn", "thunk")):
        raise cur.error(f"expected 'fn' or 'thunk', found {describe(kw)}")
    cur.next()
    ntok = name_token(cur, "a body name")
    cur.expect("(")
    params: list[tuple[Place, BodyType]] = []
    while not cur.at(")"):
        p = local_place(cur, "a parameter '%N'")
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
        if line.kind == "LET" and (let := let_line(line, types, cur.source)) is not None:
            cur.i += 1  # a line token ends with its newline
            lets.append(let)
            continue
        if cur.at("IDENT", "let"):
            cur.next()
            p = local_place(cur)
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
        btok, params = head_line(line)
    else:
        btok = block_name(cur)
        cur.expect("(")
        params = []
        while not cur.at(")"):
            params.append(local_place(cur, "a block parameter '%N'"))
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
            term = term_line(line, memo)
            break
        tok = cur.peek()
        if tok.kind == "IDENT" and tok.text in TERMINATORS:
            term = terminator(cur)
            cur.expect("NL", what="the end of line after the terminator")
            break
        stmts.append(statement(cur))
        cur.expect("NL", what="the end of line after a statement")
        cur.skip_newlines()
    cur.skip_newlines()
    if toks[cur.i].kind == "CLOSE":
        cur.i += 1
    else:
        cur.expect("}", what="'}' closing the block (the terminator ends it)")
    return Block(btok.text, btok, params, stmts, term)
