"""PostgreSQL, through a server: the tables of the same names on `pg` (a connection
string), results and hand-offs moved as Arrow by one route, used alike by the fragment
runner, `execute`'s timed hand-offs and `calibrate measure` (so the fitted transfer model
describes the route execution takes).

The route is ADBC's PostgreSQL driver (`adbc-driver-postgresql`): results arrive as
Arrow through the server's binary COPY, and an Arrow table is ingested by binary COPY
into a temporary table (then ANALYZE: the planner needs its row count). Chosen by
measurement (`benchmarks/bench_pg_route.py`, 2026-11-29; README, dependencies) against
CSV COPY through psycopg and pyarrow's CSV reader (the route before it: 1.1-2.1x slower
out, 1.35-2.6x slower in, timestamptz as text) and DuckDB's postgres extension (faster
out on 100k+ rows, but it cannot reach the connection's temporary tables, and turns
numeric without a declared precision into double).

Types: the driver gives `numeric` as text (an opaque extension type) with its declared
precision in the field's metadata: a `numeric(p, s)` becomes Arrow `decimal128(p, s)`,
a numeric without one (a sum, an expression) the narrowest `decimal128` that holds its
values exactly (float64 past 38 digits); any other opaque type (uuid, json, ...) its
text.
Temporary tables are the connection's own: a session of another thread is a connection
of its own. Every connection sets `statement_timeout`: without indexes TPC-H Q17 and
Q20 run for many seconds even at small scale.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar

from placement_cli.core.errors import IOFailure
from placement_cli.engines.base import (
    ID_BYTES,
    Engine,
    Session,
    Settings,
    Sources,
    TableSource,
    quote,
    safe_dsn,
)
from placement_cli.engines.require import need

_NUMERIC = b"numeric"
_MAX_DECIMAL128 = 38


class PostgresSession(Session):
    def __init__(self, sources: Sources) -> None:
        (dbapi,) = need("postgres", "adbc_driver_postgresql.dbapi")
        if sources.pg is None:
            raise ValueError("postgres needs a connection string")
        self._sources = sources
        try:
            self.handle = dbapi.connect(sources.pg, autocommit=True)
            self._run(f"SET statement_timeout = {int(sources.statement_timeout_ms)}")
        except dbapi.Error as exc:
            # Unreachable, refused, a bad string: the server, not the query (exit 6).
            reason = " ".join(str(exc).split())[:300]
            raise IOFailure(
                f"postgres at {safe_dsn(sources.pg)}: cannot connect: {reason}"
            ) from None

    def _run(self, text: str) -> None:
        with self._alive(), self.handle.cursor() as cur:
            cur.execute(text)

    @contextlib.contextmanager
    def _alive(self) -> Iterator[None]:
        """The block, with the connection lost (the server gone, shut down, or the
        network) raised as the run's error (exit 6, the DSN without its password),
        never as the engine's inability to run a query."""
        (dbapi,) = need("postgres", "adbc_driver_postgresql.dbapi")
        try:
            yield
        except dbapi.Error as exc:
            if not _lost(exc):
                raise
            reason = " ".join(str(exc).split())[:300]
            raise IOFailure(
                f"postgres at {safe_dsn(self._sources.pg or '')}: the connection was lost: {reason}"
            ) from None

    def thread(self) -> Session:
        return PostgresSession(self._sources)

    def sql(self, text: str) -> Any:
        with self._alive(), self.handle.cursor() as cur:
            cur.execute(text)
            return _plain(cur.fetch_arrow_table())

    def register(self, name: str, table: Any) -> None:
        self.drop(name)
        with self._alive(), self.handle.cursor() as cur:
            cur.adbc_ingest(name, table, mode="create", temporary=True)
        self._run(f"ANALYZE {quote(name)}")

    def materialise(self, name: str, text: str) -> None:
        self.drop(name)
        self._run(f"CREATE TEMPORARY TABLE {quote(name)} AS {text}")

    def scan(self, name: str, columns: list[str]) -> int:
        # A row store: the COPY that made the table wrote every byte into its pages, and
        # count(*) reads every page (it cannot skip columns as a scan of Arrow can).
        with self._alive(), self.handle.cursor() as cur:
            cur.execute(f"SELECT count(*) FROM {quote(name)}")
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def drop(self, name: str) -> None:
        self._run(f"DROP TABLE IF EXISTS {quote(name)}")

    def close(self) -> None:
        self.handle.close()


# ADBC's status for a failure of the connection itself (libpq: "server closed the
# connection unexpectedly", "no connection to the server"), and the SQLSTATEs of a
# connection exception (class 08) and of a server shutting down (57P01-57P03).
_IO_STATUS = 10
_GONE = ("08", "57P01", "57P02", "57P03")


def _lost(exc: Any) -> bool:
    """Whether an ADBC error says the connection is gone (not the query's fault)."""
    state = getattr(exc, "sqlstate", None) or ""
    return getattr(exc, "status_code", None) == _IO_STATUS or state.startswith(_GONE)


def _plain(table: Any) -> Any:
    """`table` with every opaque column as plain Arrow (module doc): numeric as
    decimal128 (or float64 without a declared precision), other types as their text."""
    (pa,) = need("postgres", "pyarrow")
    if not any(isinstance(f.type, pa.BaseExtensionType) for f in table.schema):
        return table
    fields, cols = [], []
    for f, col in zip(table.schema, table.columns, strict=True):
        if isinstance(f.type, pa.BaseExtensionType):
            meta = f.metadata or {}
            col = pa.chunked_array([c.storage for c in col.chunks], type=f.type.storage_type)
            if meta.get(b"POSTGRESQL:type") == _NUMERIC:
                typmod = int(meta.get(b"POSTGRESQL:typmod", b"-1"))
                col = col.cast(_numeric_type(pa, typmod) if typmod >= 4 else _fitted(pa, col))
        fields.append(pa.field(f.name, col.type, f.nullable))
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def _fitted(pa: Any, col: Any) -> Any:
    """The narrowest `decimal128` that holds every value of a numeric column without a
    declared precision (a sum, an expression) exactly, given as text; float64 when
    none does (more than 38 digits, NaN or infinity).

    >>> import pyarrow as pa
    >>> _fitted(pa, pa.chunked_array([["1.5", "-12.25", None]])), _fitted(pa, pa.chunked_array([["NaN"]]))
    (Decimal128Type(decimal128(4, 2)), DataType(double))
    """
    (pc,) = need("postgres", "pyarrow.compute")
    parts = pc.extract_regex(col, r"^-?(?P<whole>\d*)(?:\.(?P<frac>\d*))?$")
    if parts.null_count > col.null_count:  # a value that is no plain decimal number
        return pa.float64()
    whole = pc.max(pc.utf8_length(pc.struct_field(parts, "whole"))).as_py() or 1
    frac = pc.max(pc.utf8_length(pc.struct_field(parts, "frac"))).as_py() or 0
    if whole + frac > _MAX_DECIMAL128:
        return pa.float64()
    return pa.decimal128(whole + frac, frac)


def _numeric_type(pa: Any, typmod: int) -> Any:
    """The Arrow type of a `numeric` column of `typmod` (-1: no declared precision).

    >>> import pyarrow as pa
    >>> _numeric_type(pa, ((15 << 16) | 2) + 4), _numeric_type(pa, -1)
    (Decimal128Type(decimal128(15, 2)), DataType(double))
    """
    if typmod < 4:
        return pa.float64()
    precision, scale = ((typmod - 4) >> 16) & 0xFFFF, (typmod - 4) & 0xFFFF
    if precision > _MAX_DECIMAL128:
        return pa.float64()
    return pa.decimal128(precision, scale)


class Postgres(Engine):
    name: ClassVar[str] = "postgres"
    packages: ClassVar[tuple[str, ...]] = ("adbc_driver_postgresql.dbapi", "pyarrow")
    dialect: ClassVar[str | None] = "postgres"
    replans: ClassVar[bool] = True
    source = "pg"
    # A hand-off through the server costs ~20x an in-process one per row: fewer rows.
    send_rows: ClassVar[tuple[int, ...]] = (1_000, 4_000, 8_000, 16_000, 28_000, 40_000)
    slow_io: ClassVar[bool] = True

    @classmethod
    def open(cls, sources: Sources, settings: Settings, tables: TableSource) -> PostgresSession:
        return PostgresSession(sources)

    @classmethod
    def generate_sql(cls, rows: int, width: int) -> str:
        """A `generate_series` query.

        >>> Postgres.generate_sql(10, 16)
        "SELECT g::bigint AS id, lpad(g::text, 8, 'x') AS pad FROM generate_series(0, 9) AS g"
        """
        pad = max(int(width) - ID_BYTES, 1)
        return (
            f"SELECT g::bigint AS id, lpad(g::text, {pad}, 'x') AS pad "
            f"FROM generate_series(0, {int(rows) - 1}) AS g"
        )

    @classmethod
    def threads_used(cls, settings: Settings) -> int | None:
        return None  # the server's parallel workers are its own configuration


PostgresSession.engine = Postgres
