"""PostgreSQL, through a server: the tables of the same names on `pg` (a connection
string), results and hand-offs moved as Arrow by one route, used alike by the fragment
runner, `execute`'s timed hand-offs and `calibrate measure` (so the fitted transfer model
describes the route execution takes).

The route: COPY ... (FORMAT csv) through psycopg, parsed and written by pyarrow's CSV
reader and writer in C (never row by row through Python objects: that cost seconds per
million values). Out: the result's column types are asked once per statement (a LIMIT 0
describe, cached per SQL text for the process: the types of one statement do not change
between runs), then COPY (query) TO STDOUT is parsed with those types and named as described. In: a temporary
table of the Arrow table's column types, one COPY FROM STDIN, then ANALYZE (the planner
needs the row count). Temporary tables are the connection's own: a session of another
thread is a connection of its own.

Every connection sets `statement_timeout`: without indexes TPC-H Q17 and Q20 run for many
seconds even at small scale.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from placement_cli.engines.base import (
    ID_BYTES,
    Engine,
    Session,
    Settings,
    Sources,
    TableSource,
    quote,
)
from placement_cli.engines.require import need

# PostgreSQL type OIDs -> the pyarrow type a COPY column is parsed as (others: string).
_OID_TYPES = {
    16: "bool_",
    20: "int64",
    21: "int16",
    23: "int32",
    700: "float32",
    701: "float64",
    1700: "float64",  # numeric: canonical decimals are float64 (engines/connect.canonical)
    1082: "date32",
    1114: "timestamp_us",
}

# pyarrow type tests -> the PostgreSQL column type a handed-over column gets.
_PG_TYPES = (
    ("is_boolean", "boolean"),
    ("is_int8", "smallint"),
    ("is_int16", "smallint"),
    ("is_int32", "integer"),
    ("is_int64", "bigint"),
    ("is_floating", "double precision"),
    ("is_decimal", "double precision"),
    ("is_date", "date"),
    ("is_timestamp", "timestamp"),
    ("is_string", "text"),
    ("is_large_string", "text"),
)

_described: dict[str, tuple[list[int], list[str]]] = {}
_describe_lock = threading.Lock()


class PostgresSession(Session):
    def __init__(self, sources: Sources) -> None:
        (psycopg,) = need("postgres", "psycopg")
        if sources.pg is None:
            raise ValueError("postgres needs a connection string")
        self._sources = sources
        self.handle = psycopg.connect(sources.pg, autocommit=True)
        self.handle.execute(f"SET statement_timeout = {int(sources.statement_timeout_ms)}")

    def thread(self) -> Session:
        return PostgresSession(self._sources)

    def _describe(self, text: str) -> tuple[list[int], list[str]]:
        """The type OIDs and names of `text`'s result columns (planned, not run)."""
        with _describe_lock:
            got = _described.get(text)
        if got is None:
            with self.handle.cursor() as cur:
                cur.execute(f"SELECT * FROM ({text}) AS q LIMIT 0")
                cols = cur.description or ()
                got = [int(d.type_code) for d in cols], [str(d.name) for d in cols]
            with _describe_lock:
                _described[text] = got
        return got

    def sql(self, text: str) -> Any:
        pa, pacsv = need("postgres", "pyarrow", "pyarrow.csv")
        oids, columns = self._describe(text)
        buf = bytearray()
        with (
            self.handle.cursor() as cur,
            cur.copy(f"COPY ({text}) TO STDOUT (FORMAT csv)") as cp,
        ):
            for chunk in cp:
                buf += chunk
        names = [f"c{i}" for i in range(len(oids))]
        types = {n: _arrow_type(pa, oid) for n, oid in zip(names, oids, strict=True)}
        if not buf:
            empty = pa.table({n: pa.array([], t) for n, t in types.items()})
            return empty.rename_columns(columns)
        # Parsed under positional names (a result may name two columns alike), then
        # given the result's own.
        return pacsv.read_csv(
            pa.py_buffer(bytes(buf)),
            read_options=pacsv.ReadOptions(column_names=names),
            convert_options=pacsv.ConvertOptions(
                column_types=types,
                strings_can_be_null=True,  # COPY writes NULL unquoted and empty
                quoted_strings_can_be_null=False,  # and an empty string as ""
            ),
        ).rename_columns(columns)

    def register(self, name: str, table: Any) -> None:
        pa, pacsv = need("postgres", "pyarrow", "pyarrow.csv")
        cols = []
        for f in table.schema:
            pg = next((t for test, t in _PG_TYPES if getattr(pa.types, test)(f.type)), None)
            if pg is None:
                raise ValueError(f"cannot hand a {f.type} column to postgres")
            cols.append(f"{quote(f.name)} {pg}")
        self.drop(name)
        self.handle.execute(f"CREATE TEMPORARY TABLE {quote(name)} ({', '.join(cols)})")
        sink = pa.BufferOutputStream()
        # Every value quoted, NULL unquoted and empty: what COPY's csv format reads back.
        pacsv.write_csv(
            table, sink, pacsv.WriteOptions(include_header=False, quoting_style="all_valid")
        )
        with (
            self.handle.cursor() as cur,
            cur.copy(f"COPY {quote(name)} FROM STDIN (FORMAT csv)") as cp,
        ):
            cp.write(sink.getvalue().to_pybytes())
        self.handle.execute(f"ANALYZE {quote(name)}")

    def materialise(self, name: str, text: str) -> None:
        self.drop(name)
        self.handle.execute(f"CREATE TEMPORARY TABLE {quote(name)} AS {text}")

    def scan(self, name: str, columns: list[str]) -> int:
        # A row store: the COPY that made the table wrote every byte into its pages, and
        # count(*) reads every page (it cannot skip columns as a scan of Arrow can).
        row = self.handle.execute(f"SELECT count(*) FROM {quote(name)}").fetchone()
        return int(row[0]) if row else 0

    def drop(self, name: str) -> None:
        self.handle.execute(f"DROP TABLE IF EXISTS {quote(name)}")

    def close(self) -> None:
        self.handle.close()


def _arrow_type(pa: Any, oid: int) -> Any:
    name = _OID_TYPES.get(oid)
    if name == "timestamp_us":
        return pa.timestamp("us")
    return getattr(pa, name)() if name else pa.string()


class Postgres(Engine):
    name: ClassVar[str] = "postgres"
    packages: ClassVar[tuple[str, ...]] = ("psycopg", "pyarrow", "pyarrow.csv")
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
        """>>> Postgres.generate_sql(10, 16)
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
