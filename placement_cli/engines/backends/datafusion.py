"""DataFusion, in-process: the planner of every query (`engines/fragments.py` builds the
plan here and runs its fragments from the Substrait relations, so it plans nothing
again), with the `db` file's tables copied in once per process as Arrow record batches.

Its context is thread-safe and holds the tables: every thread shares the one session
(copying the tables per thread would cost more than the queries). Its target partitions
are the settings' threads (by default the cores this process may run on).
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from placement_cli.core.errors import IOFailure
from placement_cli.engines.base import Engine, Session, Settings, Sources, TableSource, range_sql
from placement_cli.engines.require import need


class DataFusionSession(Session):
    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def thread(self) -> Session:
        return self  # one context for the process (module doc)

    def sql(self, text: str) -> Any:
        return self.handle.sql(text).to_arrow_table()

    def register(self, name: str, table: Any) -> None:
        self.drop(name)
        batches = table.to_batches()
        if not batches:  # DataFusion needs one batch to know the schema
            (pa,) = need("datafusion", "pyarrow")
            batches = [pa.RecordBatch.from_pylist([], schema=table.schema)]
        self.handle.register_record_batches(name, [batches])

    def materialise(self, name: str, text: str) -> None:
        self.register(name, self.sql(text))

    def fetch(self, name: str, limit: int | None = None) -> Any:
        df = self.handle.table(name)
        return (df if limit is None else df.limit(int(limit))).to_arrow_table()

    def drop(self, name: str) -> None:
        if self.handle.table_exist(name):
            self.handle.deregister_table(name)


def memory_budget() -> int:
    """Bytes DataFusion may hold for a query: half the machine's memory (the results
    it hands over, and the other engines, need the rest)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2)
    except (ValueError, OSError, AttributeError):  # not POSIX: 4 GiB
        return 4 << 30


class DataFusion(Engine):
    name: ClassVar[str] = "datafusion"
    packages: ClassVar[tuple[str, ...]] = ("datafusion", "pyarrow")
    dialect: ClassVar[str | None] = None
    replans: ClassVar[bool] = False
    source = "db"
    # It hands off Arrow it already holds (no conversion, a tenth of DuckDB's cost per
    # row): more rows lift its times above a few ms of scheduling noise.
    free_limit: ClassVar[bool] = True
    send_rows: ClassVar[tuple[int, ...]] = (40_000, 160_000, 320_000, 640_000, 960_000, 1_280_000)

    @classmethod
    def open(cls, sources: Sources, settings: Settings, tables: TableSource) -> DataFusionSession:
        datafusion, _ = cls.modules("datafusion")
        config = (
            datafusion.SessionConfig()
            .with_target_partitions(settings.effective_threads)
            # DuckDB's order, whose SQL the queries are written in (`registry.REFERENCE`):
            # NULLs last both ways (DataFusion puts them first in a descending order).
            .set("datafusion.sql_parser.default_null_ordering", "nulls_last")
        )
        # A memory pool: past it DataFusion fails the query ("resources exhausted"), where
        # without one it aborts the whole process when an allocation fails.
        runtime = datafusion.RuntimeEnvBuilder().with_greedy_memory_pool(memory_budget())
        session = DataFusionSession(datafusion.SessionContext(config, runtime))
        try:
            for name, table in tables.db_tables():
                session.register(name, table)
        except MemoryError:
            raise IOFailure(
                "datafusion: not enough memory to copy the database's tables into it"
            ) from None
        return session

    @classmethod
    def generate_sql(cls, rows: int, width: int) -> str:
        return range_sql("value", rows, width)


DataFusionSession.engine = DataFusion
