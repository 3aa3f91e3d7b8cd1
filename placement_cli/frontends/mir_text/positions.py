"""Where each part of a body file read from MIR text was written, in the MIR's words.

`lower` checks the body file the reader made and reports by its field paths and local
names (`bodies[1].blocks[1].statements[0].binary.left`, `_3`). For MIR text a problem
is told where the user wrote it: `FILE:LINE:COL`, the body's printed name and the block
(`{graph::read::filter@9} bb1`), and the locals as the compiler prints them (`_3` is
`%3`, `env` is `%0`, `vertex` is `%1`).

The reader keeps its syntax (the parsed bodies hold a token for every body, block,
statement, terminator and place) instead of recording positions as it reads: a position
is worked out only when something is reported, so reading costs nothing more.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from placement_cli.core.errors import InputError, Problem

from .lexer import LINE_KINDS, Token
from .lines import stmt_line
from .syntax import MirBody, Operand, Place, Stmt, Term


class _Body(Protocol):
    """What the source map reads of a body the converter (`convert.py`) converted: the
    parsed body, its locals' body-file names, and how it writes a call's arguments."""

    b: MirBody
    names: dict[int, str]

    def apply(self, func: Operand, args: list[Operand]) -> dict[str, Any]: ...


# A body-file field path, as the checks write it (at the start of a message, or alone).
_PATH = re.compile(r"bodies\[(\d+)\]((?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*)")
_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")
# A body-file local quoted in a message (`'_3'`, `'vertex.metadata.archivd'`).
_QUOTED_LOCAL = re.compile(r"'(env|vertex|_[0-9]+)((?:\.[^'\s]*)?)'")


class MirBodyFile(dict[str, Any]):
    """The body-file dict of MIR text, carrying the `SourceMap` of the text it was read
    from (a plain dict to everything else)."""

    source_map: SourceMap


def _position(tok: Token) -> tuple[int, int]:
    """A token's 1-based (line, column); a whole-line token's is its first non-blank."""
    if tok.kind not in LINE_KINDS:
        return tok.line, tok.col
    text = tok.value.string  # type: ignore[attr-defined]
    i = tok.start
    while i < tok.end and text[i] in " \t":
        i += 1
    return tok.line, tok.col + i - tok.start


class SourceMap:
    """Positions and MIR names of a body file's parts (see the module docstring)."""

    def __init__(self, bodies: Sequence[_Body]) -> None:
        self.bodies = bodies

    def _mir_names(self, bi: int) -> dict[str, str]:
        return {name: f"%{n}" for n, name in self.bodies[bi].names.items()}

    def locate(self, path: str) -> tuple[str, tuple[int, int], int] | None:
        """(where in MIR words, (line, column), body index) of a body-file field path;
        None for a path outside the bodies."""
        m = _PATH.match(path)
        if m is None or int(m[1]) >= len(self.bodies):
            return None
        bi = int(m[1])
        conv = self.bodies[bi]
        b = conv.b
        parts: list[str | int] = [int(i) if i else s for i, s in _PART.findall(m[2])]
        parts += [""] * (4 - len(parts))  # absent parts read as nothing
        head, k = parts[0], parts[1]
        label, tok = b.name, b.tok
        if head == "args" and isinstance(k, int) and k < len(b.params):
            tok = b.params[k][0].tok
        elif head == "locals" and isinstance(k, str):
            local = self._mir_names(bi).get(k)
            for p, _ in (*b.params, *b.lets):
                if f"%{p.local}" == local:
                    tok = p.tok
                    break
        elif head == "blocks" and isinstance(k, int) and k < len(b.blocks):
            blk = b.blocks[k]
            label, tok = f"{b.name} {blk.id}", blk.tok
            sub, j = parts[2], parts[3]
            rest = parts[4:]
            if sub == "params" and isinstance(j, int) and j < len(blk.params):
                tok = blk.params[j].tok
            elif sub == "statements" and isinstance(j, int) and j < len(blk.stmts):
                s = blk.stmts[j]
                tok = self._statement(conv, s if isinstance(s, Stmt) else stmt_line(s, {}), rest)
            elif sub == "terminator":
                tok = self._terminator(blk.term, [j, *rest]) or tok
        return label, _position(tok), bi

    @staticmethod
    def _statement(conv: _Body, s: Stmt, rest: list[str | int]) -> Token:
        at = s.tok or (s.lhs.tok if s.lhs is not None else None)
        assert at is not None  # every statement the parser makes has one
        fld, sub, idx = (rest + ["", "", ""])[:3]
        kind, *rv = s.rv or ("",)
        op: Any = None
        if fld in ("assign", "storage_live", "storage_dead"):
            op = s.lhs
        elif fld == "load" and kind == "load":
            op = rv[0]
        elif fld == "unary" and kind == "unary":
            op = rv[1]
        elif fld == "binary" and kind == "binary":
            op = {"left": rv[1], "right": rv[2]}.get(str(sub))
        elif fld == "aggregate" and kind == "agg" and sub == "operands" and isinstance(idx, int):
            op = rv[1][idx] if idx < len(rv[1]) else None
        elif fld == "apply" and kind == "apply":
            func, args = rv
            if sub == "func":
                op = func
            elif sub == "args" and isinstance(idx, int):
                # the closure's own environment argument is not in the body file's args
                idx += len(args) - len(conv.apply(func, args)["args"])
                op = args[idx] if idx < len(args) else None
        return op.tok if isinstance(op, Place) else at

    @staticmethod
    def _terminator(t: Term, rest: list[str | int]) -> Token | None:
        fld, idx, sub, q = (rest + ["", "", "", ""])[:4]
        if fld == "operand" and isinstance(t.operand, Place):
            return t.operand.tok
        if fld == "successors" and isinstance(idx, int) and idx < len(t.targets):
            target = t.targets[idx][1]
            if sub == "args" and isinstance(q, int) and q < len(target.args):
                arg = target.args[q]
                if isinstance(arg, Place):
                    return arg.tok
            return target.tok
        return t.tok

    def speak(self, text: str, bi: int | None) -> str:
        """`text` in MIR words: body-file paths become `{body} bbN`, the locals of body
        `bi` their `%N`."""

        def where(m: re.Match[str]) -> str:
            found = self.locate(m[0])
            return found[0] if found else m[0]

        text = _PATH.sub(where, text)
        if bi is None:
            return text
        names = self._mir_names(bi)

        def local(m: re.Match[str]) -> str:
            mir = names.get(m[1])
            return f"'{mir}{m[2]}'" if mir else m[0]

        return _QUOTED_LOCAL.sub(local, text)

    def problem(self, p: Problem) -> Problem:
        """A problem of the body file, at its place in the MIR text (a problem that is
        not about one part of a body, such as an unknown `--body`, is at the first
        body)."""
        if p.line is not None:
            return p
        found = self.locate(p.path)
        if found is None:
            line, col = _position(self.bodies[0].b.tok)
            return Problem("", self.speak(p.message, None), line, col)
        label, (line, col), bi = found
        return Problem(label, self.speak(p.message, bi), line, col)

    def input_error(self, exc: InputError, source: str) -> InputError:
        """The problems of `exc` in MIR words, in the order of their positions."""
        problems = [self.problem(p) for p in exc.problems]
        problems.sort(key=lambda p: (p.line or 0, p.col or 0))
        return InputError(problems, source)

    def diagnostic(self, d: dict[str, Any], place: str | None) -> dict[str, Any]:
        """A warning of `lower` on the placed body (`place`, default the first), with
        its `line` and `col`: those of the field path its message starts with, else of
        its first block, else of the body's name."""
        bi = next((i for i, c in enumerate(self.bodies) if c.b.name == place), 0)
        message = d["message"]
        m = _PATH.match(message)
        found = self.locate(m[0]) if m is not None else None
        if found is not None:
            _, (line, col), bi = found
        else:
            b = self.bodies[bi].b
            tok = b.tok
            ids = {blk.id: blk.tok for blk in b.blocks}
            for block in d.get("blocks") or ():
                # a split piece (`bb1.2`) is part of the block it was cut from
                hit = ids.get(block) or ids.get(block.split(".")[0])
                if hit is not None:
                    tok = hit
                    break
            line, col = _position(tok)
            message = f"{b.name}: {message}"
        return {**d, "message": self.speak(message, bi), "line": line, "col": col}
