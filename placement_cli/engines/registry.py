"""The engines, in the one order every list of them follows (`--engines` choices, tree
files' defaults, `calibrate measure`'s pairs, messages, docs). Adding an engine is one
module in `engines/backends/` and one line here.

Reading this module imports no engine package (each module imports its packages when a
session opens), so the command line can list the engines.

>>> NAMES
('duckdb', 'datafusion', 'postgres', 'polars')
>>> engine("polars").dialect, PLANNER.name
('duckdb', 'datafusion')
"""

from __future__ import annotations

from placement_cli.engines.backends.datafusion import DataFusion
from placement_cli.engines.backends.duckdb import DuckDB
from placement_cli.engines.backends.polars import Polars
from placement_cli.engines.backends.postgres import Postgres
from placement_cli.engines.base import Engine

ENGINES: tuple[type[Engine], ...] = (DuckDB, DataFusion, Postgres, Polars)
NAMES: tuple[str, ...] = tuple(e.name for e in ENGINES)
# The engine whose plan the tree is built from and whose plan fragments run as planned
# (`engines/fragments.py`): the one engine with no SQL dialect of its own.
PLANNER: type[Engine] = DataFusion
# The engine whose answer to the query as written is the answer (`execute` checks
# every placement against it; a plan that gives another is not offered): DuckDB, whose
# SQL the queries are written in.
REFERENCE: type[Engine] = DuckDB
# Calibration pairs when none are named: both directions between the planner and
# every other engine run by default.
DEFAULT_PAIRS: tuple[tuple[str, str], ...] = tuple(
    p
    for e in ENGINES
    if e is not PLANNER and e.by_default
    for p in ((e.name, PLANNER.name), (PLANNER.name, e.name))
)

_BY_NAME = {e.name: e for e in ENGINES}


def engine(name: str) -> type[Engine]:
    """The engine called `name` (KeyError naming the engines when there is none)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown engine {name!r}; engines: {', '.join(NAMES)}") from None


def need_all(why: str) -> None:
    """Import every engine's packages (a usage error naming the extra when one is
    missing), in the registry's order."""
    for e in ENGINES:
        e.modules(why)


def calibration_rows(src: str, dst: str) -> tuple[int, ...]:
    """The default row counts of a hand-off from `src` to `dst`, sized by what is timed,
    the receiving side: a receiver that is slow to take rows (`Engine.slow_io`:
    PostgreSQL's ingest) gets its own, smaller counts; else the sender's (DataFusion's
    larger, its Arrow costs nothing to hand over), or the receiver's when the sender is
    the slow one (its fetch is not timed).

    >>> calibration_rows("datafusion", "duckdb")[-1], calibration_rows("duckdb", "postgres")[-1]
    (1280000, 40000)
    >>> calibration_rows("postgres", "duckdb")[-1]
    400000
    """
    s, d = engine(src), engine(dst)
    if d.slow_io:
        return d.send_rows
    return d.send_rows if s.slow_io else s.send_rows
