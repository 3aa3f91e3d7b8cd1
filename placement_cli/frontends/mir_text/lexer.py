"""Tokens of the MIR text and a cursor over them.

The scanner is hand-written and moves forward one character at a time (no regular
expressions, so no backtracking): its cost is linear in the input. Newlines are tokens
because the printed MIR is line oriented (an `apply` runs to the end of its line);
`// ...` comments (the `// postgres` and `// cost: N` annotations) are dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class Token:
    """One token: `kind` is `NL`, `EOF`, `PLACE`, `NUM`, `STR`, `IDENT`, `BNAME` or the
    punctuation itself; `start`/`end` are offsets (adjacency tests), `line`/`col` 1-based."""

    kind: str
    text: str
    line: int
    col: int
    start: int
    end: int
    # PLACE: (local index, projections); NUM: int | float; STR: the decoded string.
    value: object = None


def tokenize(text: str, source: str = "<mir>") -> list[Token]:
    """Split MIR text into tokens (comments dropped, newlines kept, EOF last).

    >>> [t.text for t in tokenize("%2 = %1.metadata.archived // postgres")]
    ['%2', '=', '%1.metadata.archived', '']
    >>> tokenize("%0.1")[0].value
    (0, ('1',))
    """
    return _Scanner(text, source).run()


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

    def run(self) -> list[Token]:
        text, n = self.text, self.n
        i = 0
        while i < n:
            ch = text[i]
            if ch == "\n":
                self.add("NL", i, i + 1)
                i += 1
                self.line, self.line_start = self.line + 1, i
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

    def peek(self, k: int = 0) -> Token:
        """The token `k` ahead (EOF past the end)."""
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else self.toks[-1]

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
        while self.peek().kind == "NL":
            self.next()


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
