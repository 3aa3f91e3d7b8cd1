"""The syntax the MIR reader makes: bodies, blocks, statements, terminators, operands.

It keeps the compiler's numbering (`%N`, `bbN`) and a token for everything the
converter may need for an error position; `parser.py` and its parts build it,
`convert.py` and `positions.py` read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .lexer import PLACE, Token
from .types import BodyType


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
    rv: tuple[Any, ...] = ()  # (kind, ...): see `statements.py`
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
