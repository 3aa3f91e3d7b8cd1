"""Polars, in-process: its SQL context (`polars.SQLContext`) over the `db` file's tables
as DataFrames (from Arrow, without copying the buffers), fed the SQL DataFusion's
unparser writes in DuckDB's dialect (which Polars' SQL reads; the unparser has no
Polars dialect), results back as Arrow.

A context's tables are its own: each thread gets a context of its own over the same
DataFrames. Polars sizes its thread pool once, when it is first imported: the session
sets `POLARS_MAX_THREADS` to the settings' threads before that import (a process that
imported Polars earlier keeps its pool, and `threads_used` says what it is).
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from placement_cli.engines.base import ID_BYTES, Engine, Session, Settings, Sources, TableSource


class PolarsSession(Session):
    def __init__(self, pl: Any, frames: dict[str, Any]) -> None:
        self._pl = pl
        self._frames = frames  # the source tables, shared by every thread's context
        self.handle = pl.SQLContext(frames)

    def thread(self) -> Session:
        return PolarsSession(self._pl, self._frames)

    def _arrow(self, frame: Any) -> Any:
        # The oldest Arrow types (large_string, not string_view): what every other
        # engine here reads.
        return frame.to_arrow(compat_level=self._pl.CompatLevel.oldest())

    def sql(self, text: str) -> Any:
        return self._arrow(self.handle.execute(text, eager=True))

    def register(self, name: str, table: Any) -> None:
        self.handle.register(name, self._pl.from_arrow(table, rechunk=False))

    def materialise(self, name: str, text: str) -> None:
        self.handle.register(name, self.handle.execute(text, eager=True))

    def generate(self, name: str, rows: int, width: int) -> None:
        # Polars' SQL has no row generator: the same rows built as a DataFrame.
        pl = self._pl
        ids = pl.int_range(0, int(rows), dtype=pl.Int64, eager=True).alias("id")
        pad = ids.cast(pl.String).str.pad_start(max(int(width) - ID_BYTES, 1), "x").alias("pad")
        self.handle.register(name, pl.DataFrame([ids, pad]))

    def drop(self, name: str) -> None:
        if name in self.handle.tables():
            self.handle.unregister(name)


class Polars(Engine):
    name: ClassVar[str] = "polars"
    packages: ClassVar[tuple[str, ...]] = ("polars", "pyarrow")
    dialect: ClassVar[str | None] = "duckdb"
    replans: ClassVar[bool] = True
    source = "db"
    by_default: ClassVar[bool] = False  # added after the others: named to be run
    send_rows: ClassVar[tuple[int, ...]] = (10_000, 40_000, 80_000, 160_000, 280_000, 400_000)

    @classmethod
    def open(cls, sources: Sources, settings: Settings, tables: TableSource) -> PolarsSession:
        os.environ.setdefault("POLARS_MAX_THREADS", str(settings.effective_threads))
        pl, _ = cls.modules("polars")
        frames = {name: pl.from_arrow(t, rechunk=False) for name, t in tables.db_tables()}
        return PolarsSession(pl, frames)

    @classmethod
    def generate_sql(cls, rows: int, width: int) -> str:
        raise NotImplementedError("polars generates rows as a DataFrame (PolarsSession.generate)")

    @classmethod
    def threads_used(cls, settings: Settings) -> int | None:
        pl = cls.modules("polars")[0]
        return int(pl.thread_pool_size())


PolarsSession.engine = Polars
