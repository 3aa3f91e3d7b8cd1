"""Block splitting: cut each block where the statements' support set changes.

`runs` (the seed's splitting, default): maximal runs of statements with identical
support sets (exact set equality), plus a terminator-only block when the terminator's
support is not a superset of the last run's; the pieces are joined by zero-cost
argument-free gotos. `intersection` keeps every block whole (its domain is the shared
set); `per-statement` gives every statement, and the terminator, a block of its own.
The first piece keeps the original id, later ones are `ID.1`, `ID.2`, ...
"""

from __future__ import annotations

from dataclasses import dataclass

from placement_cli.frontends.lower.options import SplitMode


@dataclass(frozen=True, slots=True)
class Piece:
    orig: int  # original block index
    start: int  # statement range [start, end) of the original block
    end: int
    term: bool  # holds the original terminator (else it ends in a synthesized goto)
    domain: int  # support of its statements (and terminator, when it holds it)
    id: str


def runs(supports: tuple[int, ...] | list[int], term: int) -> list[tuple[int, int, bool, int]]:
    """Regions `(start, end, holds_terminator, domain)` of one block.

    >>> runs([3, 3, 1, 1], 1)  # S1 S2 on {a,b}; S3 S4 and the terminator on {a}
    [(0, 2, False, 3), (2, 4, True, 1)]
    >>> runs([1, 3], 2)  # terminator support {b} is not a superset of the last run's
    [(0, 1, False, 1), (1, 2, False, 3), (2, 2, True, 2)]
    >>> runs([], 5)
    [(0, 0, True, 5)]
    """
    n = len(supports)
    if n == 0:
        return [(0, 0, True, term)]
    out = []
    start = 0
    for j in range(1, n + 1):
        if j == n or supports[j] != supports[start]:
            out.append((start, j, False, supports[start]))
            start = j
    s, e, _, last = out[-1]
    if term & last == last:
        out[-1] = (s, e, True, last)
    else:
        out.append((n, n, True, term))
    return out


def regions(
    supports: tuple[int, ...], term: int, mode: SplitMode
) -> list[tuple[int, int, bool, int]]:
    n = len(supports)
    if mode == "runs":
        return runs(supports, term)
    if mode == "intersection" or n == 0:
        dom = term
        for s in supports:
            dom &= s
        return [(0, n, True, dom)]
    return [(j, j + 1, False, supports[j]) for j in range(n)] + [(n, n, True, term)]


def split(
    ids: list[str],
    stmt_support: tuple[tuple[int, ...], ...],
    term_support: tuple[int, ...],
    mode: SplitMode,
) -> tuple[list[Piece], list[int], list[int]]:
    """Pieces of every block in block order, with each original block's first and last piece.

    >>> ps, first, last = split(["bb0", "bb0.1"], ((3, 1), ()), (1, 3), "runs")
    >>> [p.id for p in ps], first, last
    (['bb0', "bb0.1'", 'bb0.1'], [0, 2], [1, 2])
    """
    used = set(ids)
    pieces: list[Piece] = []
    first: list[int] = []
    last: list[int] = []
    for b, bid in enumerate(ids):
        first.append(len(pieces))
        for k, (s, e, t, dom) in enumerate(regions(stmt_support[b], term_support[b], mode)):
            if k == 0:
                pid = bid
            else:
                pid = f"{bid}.{k}"
                while pid in used:
                    pid += "'"
                used.add(pid)
            pieces.append(Piece(b, s, e, t, dom, pid))
        last.append(len(pieces) - 1)
    return pieces, first, last
