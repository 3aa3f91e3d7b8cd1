"""Tokens of the MIR text and a cursor over them.

The scanner is hand-written and moves forward one character at a time (no regular
expressions, so no backtracking): its cost is linear in the input. Newlines are tokens
because the printed MIR is line oriented (an `apply` runs to the end of its line);
`// ...` comments (the `// postgres` and `// cost: N` annotations) are dropped.

Whole lines in the common shapes (`let %N: TYPE`, and a statement `%N = ...` of plain
operands: places, integers, `true`/`false`/`null`) can be read as one token each
(`tokenize(..., lines=True)`): kind `LET`, `STMT`, `TERM` (return, goto, switchInt) or
`HEAD` (a block's first line) or `CLOSE` (a lone `}`), its newline and the blank lines
after it included, its value the line's match of
`LINE`, which the parser takes apart without a token per operand. The
patterns only accept what the scanner reads the same way (ASCII names, at most
`_MAX_DIGITS` digits, an end of line or a comment after the line), and are linear (no
nested repetition). Any other line is scanned character by character; a line token
where the parser expects something else is scanned again in place
(`Cursor.peek`), so errors name the same tokens and positions either way.
"""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

from .errors import MirSyntaxError

# Multi-character punctuation first: the scanner takes the longest match.
_PUNCT3 = ("...",)
_PUNCT2 = ("->", "|>", "==", "!=", "<=", ">=", "&&", "||")
_PUNCT1 = "()[]{},:=<>!~+-*/^&|?%"
_DIGITS = "0123456789"
# Local indices and switch values are u32 / u128 in the compiler; more digits than this
# is garbage, and Python refuses to convert very long digit strings anyway.
_MAX_DIGITS = 40
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def _ident_start(ch: str) -> bool:
    return ch.isalpha() or ch == "_"


def _ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


class Token(NamedTuple):
    """One token: `kind` is `NL`, `EOF`, `PLACE`, `NUM`, `STR`, `IDENT`, `BNAME`, a line
    (`LET`, `STMT`) or the punctuation itself; `start`/`end` are offsets (adjacency
    tests), `line`/`col` 1-based."""

    kind: str
    text: str
    line: int
    col: int
    start: int
    end: int
    # PLACE: (local index, projections); NUM: int | float; STR: the decoded string;
    # LET / STMT: the line's `re.Match`.
    value: object = None


# -- whole lines ------------------------------------------------------------------------
_N = f"[0-9]{{1,{_MAX_DIGITS}}}"
_NAME = "[A-Za-z_][A-Za-z0-9_]*"
PLACE_RE = f"%{_N}(?:\\.(?:{_N}|{_NAME}))*"
OPERAND_RE = f"(?:{PLACE_RE}|-?{_N}|(?:true|false|null)(?![A-Za-z0-9_]))"
# `%` followed by a digit is a place, not the remainder operator
_BINOP = "(?:==|!=|<=|>=|&&|\\|\\||%(?![0-9])|[-+*/<>&|^])"
_END = "[ \\t\\r\\f\\v]*(?://[^\\n]*)?(?=\\n|\\Z)"
_STMT = (
    f"(?P<lhs>%{_N})[ \\t]*=[ \\t]*(?:"
    f"(?P<a>{OPERAND_RE})(?:[ \\t]*(?P<op>{_BINOP})[ \\t]*(?P<b>{OPERAND_RE}))?"
    f"|(?P<un>[!~-])[ \\t]*(?P<u>{PLACE_RE})"
    f"|\\((?P<tup>[ \\t]*{OPERAND_RE}(?:[ \\t]*,[ \\t]*{OPERAND_RE})*)[ \\t]*\\)"
    f"|apply(?P<app>(?:[ \\t]+{OPERAND_RE})+)"
    f"|input[ \\t]+(?P<mode>LOAD|EXISTS)[ \\t]+(?P<inp>{_NAME})"
    f"){_END}"
)
_TARGET = f"bb{_N}\\((?:[ \\t]*{OPERAND_RE}(?:[ \\t]*,[ \\t]*{OPERAND_RE})*)?[ \\t]*\\)"
_TERM = (
    f"(?:return[ \\t]+(?P<ret>{OPERAND_RE})"
    f"|goto[ \\t]*->[ \\t]*(?P<goto>{_TARGET})"
    f"|switchInt[ \\t]*\\([ \\t]*(?P<disc>{OPERAND_RE})[ \\t]*\\)[ \\t]*->[ \\t]*"
    f"\\[(?P<arms>[ \\t]*(?:{_N}|otherwise)[ \\t]*:[ \\t]*{_TARGET}"
    f"(?:[ \\t]*,[ \\t]*(?:{_N}|otherwise)[ \\t]*:[ \\t]*{_TARGET})*)[ \\t]*\\]"
    f"){_END}"
)
# `{` then a space or the line's end: a block's brace (`{x` would be a body name)
_HEAD = (
    f"(?P<bb>bb{_N})\\((?P<params>[ \\t]*%{_N}(?:[ \\t]*,[ \\t]*%{_N})*)?[ \\t]*\\)"
    f"[ \\t]*:[ \\t]*\\{{(?=[ \\t\\r\\n]|\\Z){_END}"
)
ARM = re.compile(f"(?P<value>{_N}|otherwise)[ \\t]*:[ \\t]*(?P<target>{_TARGET})")
LOCAL = re.compile(f"%{_N}")
# A type's characters, each of which the scanner reads without an error wherever it stands
# (so a `let` line token never hides an error the scanner would report first).
_TYPE = f"(?:[A-Za-z_:<>,()|&?!.\\[\\]= \\t-]++|{_N}(?![0-9]))*+"
_LET = f"let[ \\t]+%(?P<local>{_N})[ \\t]*:(?P<type>{_TYPE})(?://[^\\n]*)?(?=\\n|\\Z)"
# One pattern for every kind of line (`lastgroup` names the kind: its group closes last):
# after the indentation (matched once, never given back), the line, its newline and the
# blank lines after it (they go with the line's token; a line at the end of the text
# without a newline is left to the scanner).
LINE = re.compile(
    f"[ \\t]*+(?:(?P<STMT>{_STMT})|(?P<LET>{_LET})|(?P<TERM>{_TERM})|(?P<HEAD>{_HEAD})"
    f"|(?P<CLOSE>\\}}{_END}))\n(?:[ \t]*\n)*"
)
OPERAND = re.compile(OPERAND_RE)
PLACE = re.compile(PLACE_RE)
LINE_KINDS = frozenset(("LET", "STMT", "TERM", "HEAD", "CLOSE"))


def tokenize(text: str, source: str = "<mir>", lines: bool = False) -> list[Token]:
    """Split MIR text into tokens (comments dropped, newlines kept, EOF last); with
    `lines`, common lines are one token each (see the module's docstring).

    >>> [t.text for t in tokenize("%2 = %1.metadata.archived // postgres")]
    ['%2', '=', '%1.metadata.archived', '']
    >>> tokenize("%0.1")[0].value
    (0, ('1',))
    >>> [t.kind for t in tokenize("let %2: Integer\\n%2 = %1 + 1\\n%3 = %1 %% 2", lines=True)]
    ['LET', 'STMT', 'PLACE', '=', 'PLACE', '%', '%', 'NUM', 'EOF']

    CRLF line endings read as LF (a line ends where its `\\r\\n` starts, so columns
    are unchanged; a lone `\\r` stays a blank):

    >>> [(t.kind, t.line, t.col) for t in tokenize("%1\\r\\n\\r\\n  %2")]
    [('PLACE', 1, 1), ('NL', 1, 3), ('NL', 2, 1), ('PLACE', 3, 3), ('EOF', 3, 5)]
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return _Scanner(text, source).run(lines=lines)


def rescan(tok: Token, source: str) -> list[Token]:
    """The ordinary tokens of a line token (same positions)."""
    m = tok.value
    assert isinstance(m, re.Match)
    sc = _Scanner(m.string, source)
    sc.n = tok.end
    sc.line, sc.line_start = tok.line, tok.start - tok.col + 1
    return sc.run(tok.start, eof=False)


class _Scanner:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.n = len(text)
        self.source = source
        self.toks: list[Token] = []
        self.line = 1
        self.line_start = 0

    def fail(self, msg: str, at: int) -> MirSyntaxError:
        return MirSyntaxError(msg, self.line, at - self.line_start + 1, self.source)

    def add(self, kind: str, start: int, end: int, value: object = None) -> None:
        col = start - self.line_start + 1
        self.toks.append(Token(kind, self.text[start:end], self.line, col, start, end, value))

    def digits(self, j: int) -> int:
        k = j
        while k < self.n and self.text[k] in _DIGITS:
            k += 1
        if k - j > _MAX_DIGITS:
            raise self.fail("number has too many digits", j)
        return k

    def ident_end(self, j: int) -> int:
        while j < self.n and _ident_char(self.text[j]):
            j += 1
        return j

    def line_tokens(self, i: int) -> int:
        """At a line start: the common lines from here on, one token each with its
        newline (a line at the end of the text without one is scanned as usual)."""
        text, n, toks, line = self.text, self.n, self.toks, self.line
        match = LINE.match
        while True:
            m = match(text, i, n)
            if m is None:
                break
            j = m.end()
            # no text: a line token is read from its match, or scanned again (`rescan`)
            toks.append(Token(m.lastgroup or "", "", line, 1, i, j, m))
            line += text.count("\n", i, j)
            i = j
        self.line, self.line_start = line, i
        return i

    def run(self, i: int = 0, lines: bool = False, eof: bool = True) -> list[Token]:
        text, n = self.text, self.n
        if lines and i < n:
            i = self.line_tokens(i)
        while i < n:
            ch = text[i]
            if ch == "\n":
                self.add("NL", i, i + 1)
                i += 1
                self.line, self.line_start = self.line + 1, i
                if lines:
                    i = self.line_tokens(i)
            elif ch in " \t\r\f\v":
                i += 1
            elif text.startswith("//", i):
                while i < n and text[i] != "\n":  # a comment runs to the end of its line
                    i += 1
            elif ch == "%" and i + 1 < n and text[i + 1] in _DIGITS:
                i = self.place(i)
            elif ch in _DIGITS:
                i = self.number(i)
            elif ch == '"':
                i = self.string(i)
            elif ch == "{" and i + 1 < n and text[i + 1] not in " \t\r\n}":
                i = self.body_name(i)
            elif _ident_start(ch) or (
                text.startswith("::", i) and i + 2 < n and _ident_start(text[i + 2])
            ):
                i = self.ident(i)
            elif ch == "?" and i + 1 < n and text[i + 1] in _DIGITS:
                j = self.digits(i + 1)  # `?19`: an anonymous generic parameter (a type)
                self.add("IDENT", i, j)
                i = j
            else:
                i = self.punct(i)
        if eof:
            self.add("EOF", n, n)
        return self.toks

    def punct(self, i: int) -> int:
        for p in _PUNCT3 + _PUNCT2:
            if self.text.startswith(p, i):
                self.add(p, i, i + len(p))
                return i + len(p)
        ch = self.text[i]
        if ch not in _PUNCT1 and ch != ".":
            raise self.fail(f"unexpected character {ch!r}", i)
        self.add(ch, i, i + 1)
        return i + 1

    def body_name(self, i: int) -> int:
        """`{closure#12}`, `{graph::read::filter@7}`: a body name, not a block brace (a
        block's or a body's `{` is followed by a newline or a space)."""
        j = i + 1
        while j < self.n and self.text[j] not in "}\n":
            j += 1
        if j >= self.n or self.text[j] != "}":
            raise self.fail("unterminated '{name}'", i)
        self.add("BNAME", i, j + 1)
        return j + 1

    def place(self, i: int) -> int:
        """`%N` with its projections `.field` / `.0`, as one token."""
        text, n = self.text, self.n
        j = self.digits(i + 1)
        local = int(text[i + 1 : j])
        projs: list[str] = []
        while j < n:
            if text[j] == ".":
                k = j + 1
                if k < n and text[k] in _DIGITS:
                    e = self.digits(k)
                    projs.append(str(int(text[k:e])))
                elif k < n and _ident_start(text[k]):
                    e = self.ident_end(k)
                    projs.append(text[k:e])
                else:
                    raise self.fail("expected a field name or position after '.'", k)
                j = e
            elif text[j] == "[":
                # `%1[%2]`: a dynamic index. The body format only has static field paths.
                raise self.fail(
                    "index projections ('[%N]') cannot be expressed in the body format", j
                )
            else:
                break
        self.add("PLACE", i, j, (local, tuple(projs)))
        return j

    def number(self, i: int) -> int:
        text, n = self.text, self.n
        j = self.digits(i)
        is_float = False
        if j + 1 < n and text[j] == "." and text[j + 1] in _DIGITS:
            j = self.digits(j + 1)
            is_float = True
        if j < n and text[j] in "eE":
            k = j + 1
            if k < n and text[k] in "+-":
                k += 1
            if k < n and text[k] in _DIGITS:
                j = self.digits(k)
                is_float = True
        raw = text[i:j]
        value: int | float = float(raw) if is_float else int(raw)
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail("number out of range", i)
        self.add("NUM", i, j, value)
        return j

    def string(self, i: int) -> int:
        """A `"..."` literal. The compiler prints the raw text between the quotes; we also
        accept backslash escapes so that a quote can appear inside."""
        text, n = self.text, self.n
        out: list[str] = []
        j = i + 1
        while True:
            if j >= n or text[j] == "\n":
                raise self.fail("unterminated string", i)
            ch = text[j]
            if ch == '"':
                break
            if ch == "\\" and j + 1 < n and text[j + 1] != "\n":
                nxt = text[j + 1]
                out.append(_ESCAPES.get(nxt, "\\" + nxt))
                j += 2
                continue
            out.append(ch)
            j += 1
        self.add("STR", i, j + 1, "".join(out))
        return j + 1

    def ident(self, i: int) -> int:
        """A name: `Boolean`, a path `::graph::types::knowledge::entity::Entity`, a binder
        with its suffix `f1:0`, a named generic parameter `T?19`."""
        text, n = self.text, self.n
        j = i + 2 if text.startswith("::", i) else i
        j = self.ident_end(j)
        while text.startswith("::", j) and j + 2 < n and _ident_start(text[j + 2]):
            j = self.ident_end(j + 2)
        if j + 1 < n and text[j] == ":" and text[j + 1] in _DIGITS:
            # the binder's unique suffix (`captured:0`); a field's or a key's colon is
            # followed by a space
            j = self.digits(j + 1)
        if j + 1 < n and text[j] == "?" and text[j + 1] in _DIGITS:
            j = self.digits(j + 1)
        self.add("IDENT", i, j)
        return j


class Cursor:
    """A position in a token list, with the error helpers the parsers share.

    >>> cur = Cursor(tokenize("goto -> bb1"), "c.mir")
    >>> cur.expect("IDENT", "goto").text, cur.at("->"), cur.peek(1).text
    ('goto', True, 'bb1')
    >>> try:
    ...     cur.expect("(")
    ... except MirSyntaxError as err:
    ...     print(err)
    c.mir:1:6: expected '(', found '->'
    """

    def __init__(self, toks: list[Token], source: str) -> None:
        self.toks = toks
        self.i = 0
        self.source = source
        self.memo: dict[str, Any] = {}  # an operand's text in line tokens -> what it reads as

    def peek(self, k: int = 0) -> Token:
        """The token `k` ahead (EOF past the end); a line token is scanned again into
        ordinary tokens (the parser takes line tokens with `line`)."""
        j = self.i + k
        if j >= len(self.toks):
            return self.toks[-1]
        tok = self.toks[j]
        if tok.kind in LINE_KINDS:
            self.toks[j : j + 1] = rescan(tok, self.source)
            tok = self.toks[j]
        return tok

    def line(self, kind: str) -> Token | None:
        """The current token when it is a line token of `kind` (not consumed)."""
        tok = self.toks[self.i]
        return tok if tok.kind == kind else None

    def next(self) -> Token:
        tok = self.peek()
        if self.i < len(self.toks) - 1:
            self.i += 1
        return tok

    def at(self, kind: str, text: str | None = None, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.kind == kind and (text is None or tok.text == text)

    def error(self, msg: str, tok: Token | None = None) -> MirSyntaxError:
        tok = tok if tok is not None else self.peek()
        return MirSyntaxError(msg, tok.line, tok.col, self.source)

    def expect(self, kind: str, text: str | None = None, what: str | None = None) -> Token:
        if not self.at(kind, text):
            want = what or repr(text if text is not None else kind)
            raise self.error(f"expected {want}, found {describe(self.peek())}")
        return self.next()

    def skip_newlines(self) -> None:
        toks, last = self.toks, len(self.toks) - 1
        while self.i < last and toks[self.i].kind == "NL":  # a line token stays one
            self.i += 1


def describe(tok: Token) -> str:
    """How an error message names a token.

    >>> [describe(t) for t in tokenize("%1 x\\n")]
    ["'%1'", "'x'", 'end of line', 'end of input']
    """
    if tok.kind == "EOF":
        return "end of input"
    if tok.kind == "NL":
        return "end of line"
    text = tok.text if len(tok.text) <= 40 else tok.text[:37] + "..."
    return repr(text)
