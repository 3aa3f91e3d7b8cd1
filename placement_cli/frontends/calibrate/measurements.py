"""The measurement CSV of `placement calibrate` (`docs/calibrate.md`): one measured
hand-off per line.

    src,dst,rows,width,ms[,repeat]

`src`/`dst` engine names, `rows` (R) the rows moved, `width` (W) bytes per row, `ms`
the time (> 0), `repeat` optional (which run of that point; informative). Columns may
come in any order; the header names them. Every problem is reported at once with its
line (exit 3), as for every input of the tool.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from dataclasses import dataclass

from placement_cli.core.errors import InputError, Problem

COLUMNS = ("src", "dst", "rows", "width", "ms")
OPTIONAL = ("repeat",)
HEADER = ",".join(COLUMNS) + ",repeat"


@dataclass(frozen=True, slots=True)
class Measurement:
    src: str
    dst: str
    rows: float
    width: float
    ms: float
    repeat: int | None = None


def read_measurements(data: bytes, source: str) -> list[Measurement]:
    """The measurements of one CSV file, in line order (none for a header alone).

    >>> read_measurements(b"src,dst,rows,width,ms\\nduckdb,datafusion,1000,16,4.2\\n", "m.csv")
    [Measurement(src='duckdb', dst='datafusion', rows=1000.0, width=16.0, ms=4.2, repeat=None)]
    >>> read_measurements(b"src,dst,rows,width\\n", "m.csv")
    Traceback (most recent call last):
    ...
    placement_cli.core.errors.InputError: m.csv:1:1: missing column 'ms' (the header is src,dst,rows,width,ms[,repeat])
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError([Problem("", f"not UTF-8 text: {exc.reason}")], source) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        raise InputError([Problem("", f"empty file; the header is {HEADER}")], source)
    names = [h.strip() for h in header]
    problems: list[Problem] = []
    for want in COLUMNS:
        if want not in names:
            problems.append(
                Problem("", f"missing column '{want}' (the header is {_usage()})", 1, 1)
            )
    for i, name in enumerate(names):
        if name not in COLUMNS and name not in OPTIONAL:
            problems.append(Problem("", f"unknown column {name!r:.40} (column {i + 1})", 1, 1))
        elif names.index(name) != i:
            problems.append(Problem("", f"column {name!r} given twice", 1, 1))
    if problems:
        raise InputError(problems, source)
    col = {n: i for i, n in enumerate(names)}
    out: list[Measurement] = []
    for line, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(names):
            problems.append(Problem("", f"{len(row)} fields, the header has {len(names)}", line, 1))
            continue
        m = _row(row, col, line, problems)
        if m is not None:
            out.append(m)
    if problems:
        raise InputError(problems, source)
    # A header alone is a valid file (`execute --calibrate-out` of placements without a
    # cut): the caller judges whether all its files together hold a point.
    return out


def _usage() -> str:
    return ",".join(COLUMNS) + "[,repeat]"


def _row(
    row: list[str], col: dict[str, int], line: int, problems: list[Problem]
) -> Measurement | None:
    before = len(problems)
    src, dst = row[col["src"]].strip(), row[col["dst"]].strip()
    for name, value in (("src", src), ("dst", dst)):
        if not value:
            problems.append(Problem("", f"{name}: empty engine name", line, col[name] + 1))
    if src and src == dst:
        problems.append(Problem("", f"src and dst are both {src!r:.40}", line, col["dst"] + 1))
    nums: dict[str, float] = {}
    for name, low, strict in (("rows", 0.0, False), ("width", 0.0, False), ("ms", 0.0, True)):
        raw = row[col[name]].strip()
        try:
            v = float(raw)
        except ValueError:
            v = math.nan
        bad = not math.isfinite(v) or v < low or (strict and v <= low)
        if bad:
            need = "a number > 0" if strict else "a number >= 0"
            problems.append(
                Problem("", f"{name}: expected {need}, got {raw!r:.40}", line, col[name] + 1)
            )
        nums[name] = v
    repeat: int | None = None
    if "repeat" in col:
        raw = row[col["repeat"]].strip()
        if raw:
            if raw.isdigit():
                repeat = int(raw)
            else:
                problems.append(
                    Problem(
                        "",
                        f"repeat: expected a whole number, got {raw!r:.40}",
                        line,
                        col["repeat"] + 1,
                    )
                )
    if len(problems) > before:
        return None
    return Measurement(src, dst, nums["rows"], nums["width"], nums["ms"], repeat)


def write_measurements(rows: list[Measurement]) -> bytes:
    """The CSV bytes of `rows` (header first; `repeat` written when any row has one).

    >>> write_measurements([Measurement("a", "b", 10, 8, 1.5)]).decode()
    'src,dst,rows,width,ms\\na,b,10,8,1.5\\n'
    """
    with_repeat = any(m.repeat is not None for m in rows)
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*COLUMNS, *(OPTIONAL if with_repeat else ())])
    for m in rows:
        cells = [m.src, m.dst, _num(m.rows), _num(m.width), _num(m.ms)]
        if with_repeat:
            cells.append("" if m.repeat is None else str(m.repeat))
        w.writerow(cells)
    return buf.getvalue().encode()


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**53 else repr(float(x))


def reduce_repeats(points: list[Measurement], how: str) -> list[Measurement]:
    """The runs of each point (same src, dst, rows and width) as one point, at its first
    run's position: their `median` or `min`; `none` keeps every run.

    >>> ms = [Measurement("a", "b", 1, 8, t, i) for i, t in enumerate((3.0, 1.0, 2.0), 1)]
    >>> [m.ms for m in reduce_repeats(ms, "median")], [m.ms for m in reduce_repeats(ms, "min")]
    ([2.0], [1.0])
    """
    if how == "none":
        return list(points)
    groups: dict[tuple[str, str, float, float], list[float]] = {}
    for m in points:
        groups.setdefault((m.src, m.dst, m.rows, m.width), []).append(m.ms)
    pick = min if how == "min" else statistics.median
    return [Measurement(s, d, r, w, float(pick(ts)), None) for (s, d, r, w), ts in groups.items()]
