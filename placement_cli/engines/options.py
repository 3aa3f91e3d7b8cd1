"""The engine commands' options (`import sql --probe`, `calibrate measure`, `execute`):
the one declaration of `--db`, `--pg`, `--engines`, `--repeat`, `--warmup`,
`--threads`, `--forks` and `--caches`, with their flags on the fields (`core/option_field.py`), as `SolveOptions`
declares `solve`'s. Each command takes the fields it uses (`app/commands.py`); its
handler gets this record, never the values by key; the engine layer gets `Sources` and
`Settings` made from it.

>>> o = EngineOptions(db="t.duckdb", engines=("duckdb", "polars"), repeat=5)
>>> o.sources().db.name, o.settings().threads, o.repeat
('t.duckdb', 0, 5)
>>> EngineOptions(engines=("duckdb", "oracle"))
Traceback (most recent call last):
...
ValueError: invalid engine options: engines: unknown engine 'oracle'; engines: duckdb, datafusion, postgres, polars
"""

# No `from __future__ import annotations`: the fields' flags are built once, with the
# class (as `SolveOptions`' are).
from pathlib import Path
from typing import Annotated

import msgspec

from placement_cli.core.cache_modes import Caches
from placement_cli.core.option_field import Flag, check
from placement_cli.engines.base import Settings, Sources
from placement_cli.engines.registry import ENGINES, NAMES

_SOURCES = "; ".join(f"{e.name}: {'--db' if e.source == 'db' else '--pg'}" for e in ENGINES)


class EngineOptions(msgspec.Struct, frozen=True):
    """Where the engines find the tables, which engines, and how each measurement is
    repeated. Checked on construction."""

    db: Annotated[
        str | None,
        Flag(
            ("--db",),
            "The DuckDB database file with the query's tables (DuckDB reads it; the other "
            "in-process engines get its tables as Arrow).",
            metavar="FILE",
            settable=True,
            path=True,
        ),
    ] = None
    pg: Annotated[
        str | None,
        Flag(
            ("--pg",),
            "A PostgreSQL connection string; its tables of the same names (the engine "
            "postgres runs only with it).",
            metavar="DSN",
            settable=True,
        ),
    ] = None
    engines: Annotated[
        tuple[str, ...] | None,
        Flag(
            ("--engines",),
            f"The engines, comma-separated, of {', '.join(NAMES)} (default: "
            f"{', '.join(e.name for e in ENGINES if e.by_default)}, those the sources give; "
            f"{_SOURCES}).",
            metavar="A,B",
            kind="str",
            settable=True,
        ),
    ] = None
    repeat: Annotated[
        int,
        Flag(
            ("--repeat",),
            "Timed runs of each measurement, after the warm-up; the median is kept.",
            minimum=1,
            settable=True,
        ),
    ] = 3
    warmup: Annotated[
        int,
        Flag(("--warmup",), "Untimed runs before the timed ones.", minimum=0, settable=True),
    ] = 1
    threads: Annotated[
        int,
        Flag(
            ("--threads",),
            "Threads of each in-process engine (DuckDB's threads, DataFusion's "
            "partitions, Polars' pool); 0: the cores this process may run on.",
            minimum=0,
            settable=True,
        ),
    ] = 0
    forks: Annotated[
        int,
        Flag(
            ("--forks",),
            "Measure in K fresh processes, one after another, each with its own warm-up "
            "and rounds, and pool their runs: a median that does not rest on one process "
            "(the engines' memory and threads differ from one to the next). K times the "
            "measuring's cost.",
            minimum=1,
            metavar="K",
            settable=True,
        ),
    ] = 1

    caches: Annotated[
        Caches,
        Flag(
            ("--caches",),
            "The CPU caches each timed run starts with: cold (a read of twice the largest "
            "cache evicts what the last run left, so a run's time does not depend on what "
            "ran before it) or warm (as the last run left them).",
            settable=True,
        ),
    ] = "cold"

    def __post_init__(self) -> None:
        more = []
        if self.engines is not None:
            unknown = [e for e in self.engines if e not in NAMES]
            if unknown:
                more.append(
                    f"engines: unknown engine {unknown[0]!r:.40}; engines: {', '.join(NAMES)}"
                )
            elif len(set(self.engines)) != len(self.engines):
                more.append("engines: an engine is named twice")
        check(self, "engine", tuple(more))

    def sources(self) -> Sources:
        return Sources(db=Path(self.db) if self.db else None, pg=self.pg)

    def settings(self) -> Settings:
        return Settings(threads=self.threads, caches=self.caches)


def parse_engines(text: str | None) -> tuple[str, ...] | None:
    """`--engines a,b` as a tuple (None when not given).

    >>> parse_engines(" duckdb, polars "), parse_engines(None)
    (('duckdb', 'polars'), None)
    """
    if text is None:
        return None
    return tuple(e.strip() for e in text.split(",") if e.strip())
