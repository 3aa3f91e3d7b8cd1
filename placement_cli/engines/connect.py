"""Sessions on the engines for one process (`Connections`), opened on first use, and the
canonical schema every table crossing between engines is cast to.

A query's data is named once: `Sources.db`, a DuckDB database file (the engines that
cannot read it get its tables as Arrow, read once), and `Sources.pg`, a PostgreSQL
connection string (its tables of the same names). `Sources` and `Settings` are defined
in `engines/base.py`; they are re-exported here, where callers open sessions.

Every table that crosses from one engine to another is first cast to one canonical
schema (`canonical`): types kept, decimals as `decimal128` (as float64, which the paper's
runner uses, `=` against a scalar subquery no longer matches: TPC-H Q2 at SF 0.1 gave 38
rows instead of 44); results are compared with numbers within a tolerance
(`stats.same_rows`), decimals and floats alike.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from placement_cli.engines.base import Engine, Session, Settings, Sources, TableSource
from placement_cli.engines.registry import ENGINES, engine
from placement_cli.engines.require import need

__all__ = ["Connections", "Settings", "Sources", "available", "canonical", "threads"]


def available(sources: Sources, named: bool = False) -> tuple[str, ...]:
    """The engines `sources` can run, in the registry's order: those run when none are
    named (`Engine.by_default`), or with `named` every one."""
    return tuple(e.name for e in ENGINES if e.has_source(sources) and (named or e.by_default))


def threads(engines: Sequence[str], settings: Settings) -> dict[str, int | None]:
    """The threads each of `engines` runs with under `settings` (None: the engine's own
    configuration decides), as every artifact that holds a time records them."""
    return {e: engine(e).threads_used(settings) for e in engines}


def canonical(table: Any) -> Any:
    """`table` (a pyarrow Table) in the one schema every hand-off takes: each column
    named as given, without engine-specific metadata, its type kept (decimals stay
    `decimal128`, which every engine here reads: a cut never changes a value), a
    string view as a plain string (not every engine takes views)."""
    (pa,) = need("execute", "pyarrow")
    if table.num_columns == 0:
        return table  # a cast to an empty schema would lose its row count
    fields = []
    for f in table.schema:
        t = f.type
        if pa.types.is_string_view(t):
            t = pa.string()
        elif pa.types.is_binary_view(t):
            t = pa.binary()
        fields.append(pa.field(f.name, t, f.nullable))
    return table.cast(pa.schema(fields))


@dataclass
class Connections(TableSource):
    """One session per engine, opened on first use (`session`); `close()` closes them.

    `tables`: False gives the engines that copy the `db` file's tables none of them
    (a calibration hands off generated rows only: copying TPC-H SF 0.1 takes seconds).
    `parent`: the connections of the process when these are one thread's: each session
    is then the parent's `Session.thread()`."""

    sources: Sources
    settings: Settings = field(default_factory=Settings)
    tables: bool = True
    parent: Connections | None = None
    _open: dict[str, Session] = field(default_factory=dict)
    _lock: Any = field(default_factory=threading.RLock)

    def session(self, name: str | type[Engine]) -> Session:
        """The session of engine `name` (opened now if it is not open yet)."""
        eng = engine(name) if isinstance(name, str) else name
        s = self._open.get(eng.name)
        if s is not None:
            return s
        if self.parent is not None:
            s = self.parent.session(eng).thread()
        else:
            with self._lock:  # two threads opening one engine: one session
                s = self._open.get(eng.name) or eng.open(self.sources, self.settings, self)
        self._open[eng.name] = s
        return s

    __getitem__ = session

    def thread(self) -> Connections:
        """Connections for another thread: each session the thread's own (`Session.thread`)."""
        return Connections(self.sources, self.settings, self.tables, parent=self)

    def db_tables(self) -> Iterator[tuple[str, Any]]:
        if not self.tables:
            return
        reader = next(e for e in ENGINES if e.reads_db_file)
        source = self.session(reader)
        for name, table in source.db_tables():
            yield name, canonical(table)

    def close(self) -> None:
        """Close every session this opened (a thread's sessions that are the parent's
        own, as DataFusion's shared context, are left to the parent)."""
        mine = list(self._open.values())
        self._open.clear()
        shared = set() if self.parent is None else {id(s) for s in self.parent._open.values()}
        for s in reversed(mine):
            if id(s) not in shared:
                s.close()
