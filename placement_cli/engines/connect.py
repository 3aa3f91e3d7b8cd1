"""Where the engines' data is, and a connection to each engine; hand-offs between them.

A query's data is named once: `--db FILE` is a DuckDB database file (DuckDB opens it
read-only; DataFusion gets every table of it as Arrow, copied once per process), and
`--pg DSN` a PostgreSQL connection string (its tables of the same names). Engines are
named `duckdb`, `datafusion` and `postgres`, as in tree files.

Every table that crosses from one engine to another is first cast to one canonical
schema (`canonical`): engines disagree on decimals (DuckDB's DECIMAL(38,4) sums,
DataFusion's Decimal128 precisions), so decimals travel as float64, as the runner of the
paper this design follows does; results are compared with floats rounded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from placement_cli.engines.require import need

ENGINES = ("duckdb", "datafusion", "postgres")


@dataclass(frozen=True)
class Sources:
    """Where each engine finds the tables: a DuckDB file, a PostgreSQL server, or both."""

    db: Path | None = None
    pg: str | None = None
    statement_timeout_ms: int = 60_000

    def available(self) -> tuple[str, ...]:
        """The engines these sources can run, in `ENGINES` order."""
        have = {"duckdb": self.db, "datafusion": self.db, "postgres": self.pg}
        return tuple(e for e in ENGINES if have[e] is not None)


def canonical(table: Any) -> Any:
    """`table` (a pyarrow Table) with every decimal column cast to float64 and every
    column named as given (no engine-specific metadata); other types are kept."""
    (pa,) = need("execute", "pyarrow")
    fields = []
    for f in table.schema:
        t = f.type
        if pa.types.is_decimal(t):
            t = pa.float64()
        fields.append(pa.field(f.name, t, f.nullable))
    return table.cast(pa.schema(fields))


@dataclass
class Connections:
    """One open connection per engine, opened on first use; `close()` closes them."""

    sources: Sources
    _open: dict[str, Any] = field(default_factory=dict)

    def duckdb(self) -> Any:
        if "duckdb" not in self._open:
            (duckdb,) = need("execute", "duckdb")
            if self.sources.db is None:
                raise ValueError("duckdb needs --db")
            self._open["duckdb"] = duckdb.connect(str(self.sources.db), read_only=True)
        return self._open["duckdb"]

    def datafusion(self) -> Any:
        if "datafusion" not in self._open:
            (datafusion,) = need("execute", "datafusion")
            ctx = datafusion.SessionContext()
            con = self.duckdb()
            names = [r[0] for r in con.execute("SHOW TABLES").fetchall()]
            for name in names:
                table = canonical(con.execute(f'SELECT * FROM "{name}"').to_arrow_table())
                ctx.register_record_batches(name, [table.to_batches()])
            self._open["datafusion"] = ctx
        return self._open["datafusion"]

    def postgres(self) -> Any:
        if "postgres" not in self._open:
            (psycopg,) = need("execute", "psycopg")
            if self.sources.pg is None:
                raise ValueError("postgres needs --pg")
            conn = psycopg.connect(self.sources.pg, autocommit=True)
            conn.execute(f"SET statement_timeout = {int(self.sources.statement_timeout_ms)}")
            self._open["postgres"] = conn
        return self._open["postgres"]

    def close(self) -> None:
        for conn in reversed(list(self._open.values())):
            closer = getattr(conn, "close", None)
            if closer is not None:
                closer()
        self._open.clear()
