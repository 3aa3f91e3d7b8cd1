"""Numbers the engine commands report: self-times, the rank correlation between
predicted and measured, and whether two results hold the same rows. Pure Python
(medians are `statistics.median`).

>>> spearman([1, 2, 3, 4], [10, 20, 30, 40])
1.0
>>> spearman([1, 2, 3], [3, 2, 1])
-1.0
>>> same_rows([(1, 0.004), (2, "a")], [(2, "a"), (1, 0.0)]) is None
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

TOLERANCE = 0.01  # absolute, for floats; relative 1e-9 on large sums (summation order)


def self_time(subtree: float | None, children: Sequence[float | None]) -> float | None:
    """A node's self-time: its subtree's time minus its slowest child's subtree's
    (children run side by side under the critical-path model), None when a time is
    missing. Negative when the node ran faster than an input alone (an engine pushes a
    filter into the scan, or noise): each caller says what it does with that. The one
    rule of `import sql --probe` and `execute --times-out` alike.

    >>> self_time(10.0, [4.0, 7.0]), self_time(3.0, [5.0]), self_time(2.0, [None])
    (3.0, -2.0, None)
    """
    if subtree is None or any(c is None for c in children):
        return None
    return subtree - max((c for c in children if c is not None), default=0.0)


def ranks(xs: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing the mean of the ranks they span.

    >>> ranks([10.0, 30.0, 20.0, 20.0])
    [1.0, 4.0, 2.5, 2.5]
    """
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    out = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        r = (i + j) / 2 + 1
        for k in range(i, j + 1):
            out[order[k]] = r
        i = j + 1
    return out


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rank correlation: Pearson's correlation of the ranks (ties get mean
    ranks). None with fewer than two points or when one side is constant (no ranking
    to compare)."""
    if len(xs) != len(ys):
        raise ValueError("spearman needs pairs")
    if len(xs) < 2:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def _key(value: Any) -> tuple[int, Any]:
    """A sort key under which equal-within-tolerance rows sort alike (floats rounded to
    the tolerance; None first; mixed types by type name)."""
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (1, int(value))
    if isinstance(value, int | float | Decimal):
        return (1, round(float(value), 2))
    return (2, (type(value).__name__, str(value)))


def _close(a: Any, b: Any) -> bool:
    # Decimals are numbers too: one engine's DECIMAL is another's double (avg).
    if (
        isinstance(a, int | float | Decimal)
        and isinstance(b, int | float | Decimal)
        and not isinstance(a, bool)
    ):
        fa, fb = float(a), float(b)
        return abs(fa - fb) <= max(TOLERANCE, 1e-9 * max(abs(fa), abs(fb)))
    return bool(a == b)


def same_rows(got: Sequence[Sequence[Any]], want: Sequence[Sequence[Any]]) -> str | None:
    """None when `got` and `want` hold the same rows as multisets (columns by position,
    numbers equal within 0.01, or 1e-9 relative for large sums), else what differs."""
    if len(got) != len(want):
        return f"{len(got)} rows, the reference has {len(want)}"
    if got and want and len(got[0]) != len(want[0]):
        return f"{len(got[0])} columns, the reference has {len(want[0])}"

    def order(rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
        return sorted(rows, key=lambda r: tuple(_key(x) for x in r))

    for i, (g, w) in enumerate(zip(order(got), order(want), strict=True)):
        if len(g) != len(w) or not all(_close(a, b) for a, b in zip(g, w, strict=True)):
            return f"row {i} (sorted) is {_short(g)}, the reference's is {_short(w)}"
    return None


def _short(row: Sequence[Any]) -> str:
    s = repr(tuple(row))
    return s if len(s) <= 160 else s[:157] + "..."


def rows_of(table: Any) -> list[tuple[Any, ...]]:
    """The table's rows as tuples, columns by position (names differ between engines).
    A column Python cannot hold as values (a date past year 9999 or before year 1, an
    infinite date) is compared by its integers (days, microseconds), or else its text."""
    return list(zip(*(_values(c) for c in table.columns), strict=True)) if table.columns else []


def _values(col: Any) -> list[Any]:
    try:
        return list(col.to_pylist())
    except (OverflowError, ValueError):
        # Lazy: pyarrow, the table's own library (imported already: 0 ms, measured), only
        # for a column Python cannot hold as values; this module is pure Python.
        import pyarrow as pa

        for target in (pa.int64(), pa.string()):
            try:
                return list(col.cast(target).to_pylist())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError, ValueError):
                continue
        return [repr(x) for x in col]
