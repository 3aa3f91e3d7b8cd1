"""Which route moves Arrow tables in and out of PostgreSQL fastest and most faithfully:
three candidates measured both ways on the same server, round by round.

    .venv/bin/python -m benchmarks.bench_pg_route                  # own server, full grid
    .venv/bin/python -m benchmarks.bench_pg_route --rows 10000 --repeat 1   # a trial
    .venv/bin/python -m benchmarks.bench_pg_route --dsn "host=... dbname=..." -o FILE

Routes (each keeps one connection open for the whole run; opening one is measured
apart, in the `connect` table):

- A: DuckDB's postgres extension (binary COPY), an in-memory DuckDB with `pg` attached.
  Fetch `A query` = `SELECT * FROM postgres_query('pg', $$sql$$)`, `A scan` =
  `SELECT * FROM pg.public.t` (ctid-parallel scan), both `.to_arrow_table()`. Ingest =
  `register` the Arrow table, `CREATE TABLE pg.public.t AS SELECT * FROM v`.
- B: COPY ... (FORMAT csv) through psycopg 3, parsed/written by pyarrow.csv: a copy of
  `placement_cli/engines/pg_arrow.py` as of 2026-11-29 (fetch = `describe` (a LIMIT 0
  query) + `fetch`; ingest = `load` into a TEMPORARY table, without its ANALYZE).
- C: ADBC (`adbc_driver_postgresql`, binary COPY). Fetch = `fetch_arrow_table()` plus
  the cast of `numeric` (an opaque string column) to decimal128 by its typmod, which
  the engine layer would need (`C raw`: without that cast, numeric left a string);
  ingest = `adbc_ingest(mode="create")` (`C ingest`) and with `temporary=True`
  (`C temp`), then commit.

Grid: rows {10k, 100k, 400k} x width {16, 64, 256}, where the width is the length in
bytes of the `pad` text column; every row also has bigint id, numeric(15,2) (every 50th
NULL), date and timestamptz (about 28 more bytes binary, about 60 as CSV). Directions:

- fetch: PG table -> Arrow table in the client (rows checked);
- ingest: Arrow table (int64, decimal128(15,2), date32, timestamp[us, UTC], string) ->
  a new PG table, then the server reads every byte of it once
  (`SELECT count(*), sum(length(t::text)) FROM t t`, checked), the table dropped
  untimed.

Each cell runs 1 warm-up + `--repeat` timed rounds; within a round the routes run back to
back, the order rotated every round (A B C, B C A, ...) so a burst of load on the shared
machine does not always hit the same route. Reported: wall ms, median (min-max) of the
timed rounds, and client CPU ms (median; DuckDB's threads included, the server's CPU
not). Timings on this 2-core shared machine vary up to 2x between runs: the load
average is recorded; compare routes within one run, not across runs.

Type fidelity (table `fidelity`): what each route does to numeric(15,2), unconstrained
numeric (`sum(...)`, `1::numeric/3`), date, timestamptz, NULLs, '' vs NULL, unicode and
CSV-hostile text (comma, quote, newline, tab, backslash), duplicate column names and
zero-row results, in both directions (ingest read back as text on the server and
compared with the source table's text).

Results: markdown tables on stdout, JSON in
`benchmarks/results/pg-route_rows-x-widths_DATE.json` (or `-o FILE`).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import decimal
import functools
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
ROWS = (10_000, 100_000, 400_000)
WIDTHS = (16, 64, 256)
FETCH_ROUTES = ("A query", "A scan", "B csv", "C adbc", "C raw")
INGEST_ROUTES = ("A ctas", "B csv temp", "C ingest", "C temp")
READ_SQL = "SELECT count(*), sum(length(t::text)) FROM {name} t"


# --------------------------------------------------------------------------- route B
# A copy of placement_cli/engines/pg_arrow.py (2026-11-29), `need` replaced by imports.

_OID_TYPES = {
    16: "bool_",
    20: "int64",
    21: "int16",
    23: "int32",
    700: "float32",
    701: "float64",
    1700: "float64",  # numeric: canonical decimals are float64
    1082: "date32",
    1114: "timestamp_us",
}

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


def _arrow_type(pa: Any, oid: int) -> Any:
    name = _OID_TYPES.get(oid)
    if name == "timestamp_us":
        return pa.timestamp("us")
    return getattr(pa, name)() if name else pa.string()


def csv_describe(conn: Any, sql: str) -> list[int]:
    with conn.cursor() as cur:
        cur.execute(f"SELECT * FROM ({sql}) AS q LIMIT 0")
        return [int(d.type_code) for d in cur.description or ()]


def csv_fetch(conn: Any, sql: str, oids: list[int]) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    buf = bytearray()
    with conn.cursor() as cur, cur.copy(f"COPY ({sql}) TO STDOUT (FORMAT csv)") as cp:
        for chunk in cp:
            buf += chunk
    names = [f"c{i}" for i in range(len(oids))]
    types = {n: _arrow_type(pa, oid) for n, oid in zip(names, oids, strict=True)}
    if not buf:
        return pa.table({n: pa.array([], t) for n, t in types.items()})
    return pacsv.read_csv(
        pa.py_buffer(bytes(buf)),
        read_options=pacsv.ReadOptions(column_names=names),
        convert_options=pacsv.ConvertOptions(
            column_types=types,
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        ),
    )


def csv_load(conn: Any, name: str, table: Any) -> None:
    """`pg_arrow.load` without its final ANALYZE (no other route runs one)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    cols = []
    for f in table.schema:
        pg = next((t for test, t in _PG_TYPES if getattr(pa.types, test)(f.type)), None)
        if pg is None:
            raise ValueError(f"cannot hand a {f.type} column to postgres")
        cols.append(f'"{f.name}" {pg}')
    conn.execute(f'CREATE TEMPORARY TABLE "{name}" ({", ".join(cols)})')
    sink = pa.BufferOutputStream()
    pacsv.write_csv(
        table, sink, pacsv.WriteOptions(include_header=False, quoting_style="all_valid")
    )
    with conn.cursor() as cur, cur.copy(f'COPY "{name}" FROM STDIN (FORMAT csv)') as cp:
        cp.write(sink.getvalue().to_pybytes())


# --------------------------------------------------------------------------- route C


def adbc_typed(table: Any) -> Any:
    """ADBC returns `numeric` as an opaque extension over strings: cast it to decimal128
    (decimal256 beyond 38 digits) by the typmod in the field metadata; an unconstrained
    numeric (typmod -1) stays a string."""
    import pyarrow as pa

    fields, cols, changed = [], [], False
    for f, col in zip(table.schema, table.columns, strict=True):
        t = f.type
        if isinstance(t, pa.OpaqueType) and t.type_name == "numeric":
            changed = True
            storage = pa.chunked_array([c.storage for c in col.chunks], t.storage_type)
            typmod = int((f.metadata or {}).get(b"POSTGRESQL:typmod", b"-1"))
            if typmod >= 4:
                p, s = ((typmod - 4) >> 16) & 0xFFFF, (typmod - 4) & 0xFFFF
                col = storage.cast(pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s))
            else:
                col = storage
            f = pa.field(f.name, col.type, metadata=f.metadata)
        fields.append(f)
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=pa.schema(fields)) if changed else table


# --------------------------------------------------------------------------- routes


def _first(cur: Any) -> Any:
    """The first value of a cursor's first row."""
    row = cur.fetchone()
    assert row is not None
    return row[0]


class DuckRoute:
    """A: one in-memory DuckDB, `pg` attached."""

    def __init__(self, dsn: str) -> None:
        import duckdb

        self.con = duckdb.connect()
        self.con.execute("LOAD postgres_scanner")
        self.con.execute(f"ATTACH '{dsn}' AS pg (TYPE postgres)")
        self.scalar("SELECT 1")

    def fetch(self, sql: str) -> Any:
        return self.con.execute(f"SELECT * FROM postgres_query('pg', $${sql}$$)").to_arrow_table()

    def scan(self, name: str) -> Any:
        return self.con.execute(f"SELECT * FROM pg.public.{name}").to_arrow_table()

    def ingest(self, name: str, table: Any) -> None:
        self.con.register("v", table)
        try:
            self.con.execute(f"CREATE TABLE pg.public.{name} AS SELECT * FROM v")
        finally:
            self.con.unregister("v")

    def scalar(self, sql: str) -> Any:
        return _first(self.con.execute(f"SELECT * FROM postgres_query('pg', $${sql}$$)"))

    def drop(self, name: str) -> None:
        self.con.execute(f"DROP TABLE IF EXISTS pg.public.{name}")

    def close(self) -> None:
        self.con.close()


class CsvRoute:
    """B: psycopg 3, autocommit (as `placement_cli/engines/connect.py` opens it)."""

    def __init__(self, dsn: str) -> None:
        import psycopg

        self.conn = psycopg.connect(dsn, autocommit=True)
        self.scalar("SELECT 1")

    def fetch(self, sql: str) -> Any:
        return csv_fetch(self.conn, sql, csv_describe(self.conn, sql))

    def ingest(self, name: str, table: Any) -> None:
        csv_load(self.conn, name, table)

    def scalar(self, sql: str) -> Any:
        return _first(self.conn.execute(sql))

    def drop(self, name: str) -> None:
        self.conn.execute(f'DROP TABLE IF EXISTS "{name}"')

    def close(self) -> None:
        self.conn.close()


class AdbcRoute:
    """C: ADBC's DBAPI connection (not autocommit: ingest is committed)."""

    def __init__(self, dsn: str) -> None:
        import adbc_driver_postgresql.dbapi as adbc

        self.conn = adbc.connect(dsn)
        self.cur = self.conn.cursor()
        self.scalar("SELECT 1")

    def fetch_raw(self, sql: str) -> Any:
        self.cur.execute(sql)
        return self.cur.fetch_arrow_table()

    def fetch(self, sql: str) -> Any:
        return adbc_typed(self.fetch_raw(sql))

    def ingest(self, name: str, table: Any, temporary: bool = False) -> None:
        try:
            self.cur.adbc_ingest(name, table, mode="create", temporary=temporary)
            self.conn.commit()
        except Exception:
            self.conn.rollback()
            raise

    def scalar(self, sql: str) -> Any:
        self.cur.execute(sql)
        row = self.cur.fetchone()
        self.conn.commit()
        return row[0]

    def drop(self, name: str) -> None:
        self.cur.execute(f'DROP TABLE IF EXISTS "{name}"')
        self.conn.commit()

    def close(self) -> None:
        self.cur.close()
        self.conn.close()


# --------------------------------------------------------------------------- data


def make_sources(dsn: str, rows: tuple[int, ...], widths: tuple[int, ...]) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as c:
        for n in rows:
            for w in widths:
                c.execute(f"DROP TABLE IF EXISTS src_{n}_{w}")
                # Declared first: `CREATE TABLE AS` would make `amount` an unconstrained
                # numeric (the CASE drops the typmod), which DuckDB reads as double.
                c.execute(
                    f"CREATE TABLE src_{n}_{w} (id bigint, amount numeric(15,2), d date,"
                    " ts timestamptz, pad text)"
                )
                c.execute(
                    f"""INSERT INTO src_{n}_{w} SELECT
                      i::bigint AS id,
                      CASE WHEN i % 50 = 0 THEN NULL
                           ELSE ((i::bigint * 7919) % 100000000000 / 100.0)::numeric(15,2)
                      END AS amount,
                      date '2000-01-01' + (i % 9000) AS d,
                      timestamptz '2020-01-01 00:00:00+00' + i * interval '1.234567 s' AS ts,
                      left(repeat(md5(i::text), {w // 32 + 1}), {w}) AS pad
                    FROM generate_series(1, {n}) AS i"""
                )
                c.execute(f"VACUUM ANALYZE src_{n}_{w}")
                amount = _first(
                    c.execute(
                        f"SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                        f" WHERE attrelid = 'src_{n}_{w}'::regclass AND attname = 'amount'"
                    )
                )
                assert amount == "numeric(15,2)", amount


def canonical(table: Any) -> Any:
    """The Arrow table every ingest route is handed: decimal128(15,2), UTC timestamps."""
    import pyarrow as pa

    return table.cast(
        pa.schema(
            [
                ("id", pa.int64()),
                ("amount", pa.decimal128(15, 2)),
                ("d", pa.date32()),
                ("ts", pa.timestamp("us", tz="UTC")),
                ("pad", pa.string()),
            ]
        )
    )


# --------------------------------------------------------------------------- timing


def _timed(op: Callable[[], Any]) -> tuple[float, float, Any]:
    gc.collect()
    c0, t0 = time.process_time(), time.perf_counter()
    out = op()
    t1, c1 = time.perf_counter(), time.process_time()
    return (t1 - t0) * 1e3, (c1 - c0) * 1e3, out


def _rotations(names: tuple[str, ...], rounds: int) -> Iterator[tuple[int, list[str]]]:
    for r in range(rounds):
        k = r % len(names)
        yield r, list(names[k:] + names[:k])


def _stats(ms: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(ms), 1),
        "min_ms": round(min(ms), 1),
        "max_ms": round(max(ms), 1),
    }


def bench_cell(
    routes: dict[str, Any], n: int, w: int, repeat: int, ingest_input: Any
) -> list[dict[str, Any]]:
    src = f"src_{n}_{w}"
    sql = f"SELECT * FROM {src}"
    fetch_ops: dict[str, Callable[[], Any]] = {
        "A query": lambda: routes["A"].fetch(sql),
        "A scan": lambda: routes["A"].scan(src),
        "B csv": lambda: routes["B"].fetch(sql),
        "C adbc": lambda: routes["C"].fetch(sql),
        "C raw": lambda: routes["C"].fetch_raw(sql),
    }
    ingest_route = {"A ctas": "A", "B csv temp": "B", "C ingest": "C", "C temp": "C"}
    out: list[dict[str, Any]] = []
    wall: dict[str, list[float]] = {r: [] for r in FETCH_ROUTES + INGEST_ROUTES}
    cpu: dict[str, list[float]] = {r: [] for r in FETCH_ROUTES + INGEST_ROUTES}
    for r, order in _rotations(FETCH_ROUTES, repeat + 1):
        for name in order:
            ms, cms, t = _timed(fetch_ops[name])
            if t.num_rows != n:
                raise SystemExit(f"{name}: fetched {t.num_rows} rows of {n}")
            del t
            if r:
                wall[name].append(ms)
                cpu[name].append(cms)
    for r, order in _rotations(INGEST_ROUTES, repeat + 1):
        for name in order:
            route = routes[ingest_route[name]]
            tname = f"ing_{name.split()[0].lower()}_{n}_{w}_{r}"

            def op(route: Any = route, name: str = name, tname: str = tname) -> Any:
                if name == "C temp":
                    route.ingest(tname, ingest_input, temporary=True)
                else:
                    route.ingest(tname, ingest_input)
                return route.scalar(READ_SQL.format(name=tname))

            ms, cms, got = _timed(op)
            route.drop(tname)
            if int(got) != n:
                raise SystemExit(f"{name}: the server read {got} rows of {n}")
            if r:
                wall[name].append(ms)
                cpu[name].append(cms)
    for name in FETCH_ROUTES + INGEST_ROUTES:
        out.append(
            {
                "route": name,
                "direction": "fetch" if name in FETCH_ROUTES else "ingest",
                "rows": n,
                "width": w,
                **_stats(wall[name]),
                "cpu_median_ms": round(statistics.median(cpu[name]), 1),
                "rounds_ms": [round(x, 1) for x in wall[name]],
            }
        )
    return out


def bench_connect(dsn: str, repeat: int) -> list[dict[str, Any]]:
    """Opening a route's connection (and its first query): paid once per `execute`."""
    kinds: dict[str, Any] = {"A": DuckRoute, "B": CsvRoute, "C": AdbcRoute}
    ms: dict[str, list[float]] = {k: [] for k in kinds}
    for r, order in _rotations(tuple(kinds), repeat + 1):
        for k in order:
            t, _, route = _timed(functools.partial(kinds[k], dsn))
            route.close()
            if r:
                ms[k].append(t)
    return [{"route": k, **_stats(v)} for k, v in ms.items()]


def bench_import(repeat: int) -> list[dict[str, Any]]:
    """A fresh interpreter's import of each route's modules (a CLI pays it per run)."""
    mods = {
        "A": "import duckdb, pyarrow; from duckdb_extensions import import_extension",
        "B": "import psycopg, pyarrow, pyarrow.csv",
        "C": "import adbc_driver_postgresql.dbapi, pyarrow",
    }
    ms: dict[str, list[float]] = {k: [] for k in mods}
    for _, order in _rotations(tuple(mods), repeat):
        for k in order:
            code = (
                "import time; t = time.perf_counter(); "
                f"{mods[k]}; print((time.perf_counter() - t) * 1e3)"
            )
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
            ms[k].append(float(out.stdout))
    return [{"route": k, **_stats(v)} for k, v in ms.items()]


# --------------------------------------------------------------------------- fidelity

FID_ROWS = [
    (1, "12345.67", dt.date(2020, 1, 2), "2020-01-02 03:04:05.123456+02", 'ü€😀, "q"\nx'),
    (2, None, None, None, None),
    (3, "-0.01", dt.date(1999, 12, 31), "1999-12-31 23:59:59+00", ""),
    (4, "9999999999999.99", dt.date(2038, 1, 19), "2038-01-19 03:14:08+00", "a\tb\\c NULL"),
]


def make_fidelity_source(dsn: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS fid")
        c.execute(
            "CREATE TABLE fid (id bigint, amount numeric(15,2), d date, ts timestamptz, pad text)"
        )
        with c.cursor() as cur:
            cur.executemany(
                "INSERT INTO fid VALUES (%s, %s::numeric, %s, %s::timestamptz, %s)", FID_ROWS
            )


def fidelity_arrow() -> Any:
    import pyarrow as pa

    def ts(s: str | None) -> dt.datetime | None:
        return None if s is None else dt.datetime.fromisoformat(s).astimezone(dt.UTC)

    return pa.table(
        {
            "id": pa.array([r[0] for r in FID_ROWS], pa.int64()),
            "amount": pa.array(
                [None if r[1] is None else decimal.Decimal(r[1]) for r in FID_ROWS],
                pa.decimal128(15, 2),
            ),
            "d": pa.array([r[2] for r in FID_ROWS], pa.date32()),
            "ts": pa.array([ts(r[3]) for r in FID_ROWS], pa.timestamp("us", tz="UTC")),
            "pad": pa.array([r[4] for r in FID_ROWS], pa.string()),
        }
    )


def _type_str(t: Any) -> str:
    import pyarrow as pa

    if isinstance(t, pa.OpaqueType):
        return f"opaque {t.type_name} over {t.storage_type}"
    return str(t)


def _err(e: BaseException) -> str:
    return f"ERROR {type(e).__name__}: {str(e).splitlines()[0]}"


def fetch_fidelity(
    route: str, fetch: Callable[[str], Any], raw: Callable[[str], Any]
) -> dict[str, str]:
    """`fetch` is the route's typed fetch, `raw` what the library returns itself."""
    out: dict[str, str] = {}
    t = fetch("SELECT * FROM fid ORDER BY id")
    rt = raw("SELECT * FROM fid ORDER BY id")
    types = [_type_str(f.type) for f in t.schema]
    raw_types = [_type_str(f.type) for f in rt.schema]
    rows = t.to_pylist()
    cols = list(zip(*[list(r.values()) for r in rows], strict=True))
    out["numeric(15,2) ->"] = raw_types[1] + (
        "" if raw_types[1] == types[1] else f" (cast: {types[1]})"
    )
    exp_amount = [None if r[1] is None else decimal.Decimal(r[1]) for r in FID_ROWS]
    got_amount = [None if v is None else decimal.Decimal(str(v)) for v in cols[1]]
    out["numeric values"] = "exact" if got_amount == exp_amount else f"DIFFER {cols[1]}"
    try:
        u = fetch("SELECT sum(amount) AS s, 1::numeric / 3 AS third FROM fid")
        out["unconstrained numeric (sum, 1/3) ->"] = (
            f"{_type_str(u.schema[1].type)}; 1/3 = {u.column(1)[0].as_py()!r}"
        )
    except Exception as e:
        out["unconstrained numeric (sum, 1/3) ->"] = _err(e)
    out["date ->"] = types[2]
    exp_ts = [None if r[3] is None else dt.datetime.fromisoformat(r[3]) for r in FID_ROWS]
    got_ts = cols[3]
    if all(isinstance(v, dt.datetime) and v.tzinfo for v in got_ts if v is not None):
        same = all((a is None and b is None) or a == b for a, b in zip(got_ts, exp_ts, strict=True))
        out["timestamptz ->"] = f"{types[3]}; instants {'equal' if same else 'DIFFER'}"
    else:
        out["timestamptz ->"] = f"{types[3]} (tz NOT kept as type); e.g. {got_ts[0]!r}"
    nulls = rows[1]
    out["NULLs"] = "kept" if all(v is None for k, v in list(nulls.items())[1:]) else f"LOST {nulls}"
    out["'' vs NULL"] = "kept" if cols[4][2] == "" else f"LOST ({cols[4][2]!r})"
    texts = [r[4] for r in FID_ROWS]
    out['unicode, , " \\n \\t \\\\'] = "kept" if list(cols[4]) == texts else f"DIFFER {cols[4]}"
    try:
        d = fetch("SELECT 1 AS a, 2 AS a")
        out["duplicate names"] = f"ok, names {d.column_names}"
    except Exception as e:
        out["duplicate names"] = _err(e)
    try:
        z = fetch("SELECT * FROM fid WHERE false")
        ztypes = [_type_str(f.type) for f in z.schema]
        out["zero rows"] = f"ok, {z.num_rows} rows, " + (
            "same types" if ztypes == types else f"types {ztypes}"
        )
    except Exception as e:
        out["zero rows"] = _err(e)
    return out


_COLS_SQL = (
    "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)"
    " FROM pg_attribute WHERE attrelid = '{name}'::regclass AND attnum > 0 AND NOT attisdropped"
)
_VALUE_SQL = {
    "amount": "amount::text",
    "d": "d::text",
    "ts": "extract(epoch FROM ts)::text",
    "pad": "pad",
}


def _values(scalar: Callable[[str], Any], name: str) -> dict[str, str]:
    out = {}
    for col, expr in _VALUE_SQL.items():
        out[col] = scalar(
            f"SELECT string_agg(coalesce(quote_literal({expr}), 'NULL'), ',' ORDER BY id) FROM {name}"
        )
    return out


def ingest_fidelity(route: Any, temporary: bool, expected: dict[str, str]) -> dict[str, str]:
    import pyarrow as pa

    out: dict[str, str] = {}
    tbl = fidelity_arrow()

    def ingest(name: str, t: Any) -> None:
        if temporary:
            route.ingest(name, t, temporary=True)
        else:
            route.ingest(name, t)

    name = "fid_in"
    ingest(name, tbl)
    cols = dict(c.split(" ", 1) for c in route.scalar(_COLS_SQL.format(name=name)).split(", "))
    out["decimal128(15,2) ->"] = cols["amount"]
    out["timestamp[us, UTC] ->"] = cols["ts"]
    out["string ->"] = cols["pad"]
    got = _values(route.scalar, name)
    bad = [c for c in _VALUE_SQL if got[c] != expected[c]]
    out["values (NULLs, '' vs NULL, unicode, instants, decimals)"] = (
        "all equal" if not bad else "DIFFER in " + ", ".join(f"{c}: {got[c]}" for c in bad)
    )
    route.drop(name)
    try:
        dup = pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"])
        ingest("fid_dup", dup)
        out["duplicate names"] = "ok"
        route.drop("fid_dup")
    except Exception as e:
        out["duplicate names"] = _err(e)
    try:
        ingest("fid_zero", tbl.slice(0, 0))
        n = route.scalar("SELECT count(*) FROM fid_zero")
        zcols = route.scalar(_COLS_SQL.format(name="fid_zero"))
        out["zero rows"] = f"ok, {n} rows, columns {zcols}"
        route.drop("fid_zero")
    except Exception as e:
        out["zero rows"] = _err(e)
    return out


def fidelity(routes: dict[str, Any], dsn: str) -> dict[str, dict[str, str]]:
    import psycopg

    make_fidelity_source(dsn)
    with psycopg.connect(dsn, autocommit=True) as c:
        expected = _values(lambda s: _first(c.execute(s)), "fid")
    out: dict[str, dict[str, str]] = {}
    a, b, cc = routes["A"], routes["B"], routes["C"]
    a.con.execute("CALL pg_clear_cache()")  # `fid` was created after ATTACH
    out["A fetch"] = fetch_fidelity("A", a.fetch, a.fetch)
    out["B fetch"] = fetch_fidelity("B", b.fetch, b.fetch)
    out["C fetch"] = fetch_fidelity("C", cc.fetch, cc.fetch_raw)
    out["A ingest"] = ingest_fidelity(a, False, expected)
    out["B ingest"] = ingest_fidelity(b, False, expected)
    out["C ingest"] = ingest_fidelity(cc, False, expected)
    out["C temp ingest"] = ingest_fidelity(cc, True, expected)
    return out


# --------------------------------------------------------------------------- report


def _md_times(
    rows: list[dict[str, Any]], direction: str, names: tuple[str, ...], repeat: int
) -> str:
    head = f"| rows | width | {' | '.join(names)} |"
    lines = [
        f"{direction}: wall ms, median (min-max) of {repeat}; client CPU ms median in [ ]",
        "",
        head,
        "|" + "---|" * (len(names) + 2),
    ]
    cells: dict[tuple[int, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        if r["direction"] == direction:
            cells.setdefault((r["rows"], r["width"]), {})[r["route"]] = r
    for (n, w), by in cells.items():
        best = min(by[x]["median_ms"] for x in names)
        vals = []
        for x in names:
            s = by[x]
            mark = "**" if s["median_ms"] == best else ""
            vals.append(
                f"{mark}{s['median_ms']:.0f}{mark} ({s['min_ms']:.0f}-{s['max_ms']:.0f}) "
                f"[{s['cpu_median_ms']:.0f}]"
            )
        lines.append(f"| {n:,} | {w} | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def _md_fidelity(fid: dict[str, dict[str, str]]) -> str:
    parts = []
    for direction in ("fetch", "ingest"):
        keys = [k for k in fid if k.endswith(direction)]
        checks: list[str] = []
        for k in keys:
            checks += [c for c in fid[k] if c not in checks]
        lines = [
            f"| {direction} check | " + " | ".join(keys) + " |",
            "|" + "---|" * (len(keys) + 1),
        ]
        for c in checks:
            cell = [fid[k].get(c, "").replace("|", "\\|").replace("\n", "\\n") for k in keys]
            lines.append(f"| {c} | " + " | ".join(cell) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _md_small(title: str, rows: list[dict[str, Any]]) -> str:
    lines = [title, "", "| route | median ms | min-max |", "|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['route']} | {r['median_ms']:.0f} | {r['min_ms']:.0f}-{r['max_ms']:.0f} |"
        )
    return "\n".join(lines)


def _versions() -> dict[str, str]:
    import adbc_driver_postgresql
    import duckdb
    import psycopg
    import pyarrow

    server = subprocess.run(["pg_ctl", "--version"], capture_output=True, text=True).stdout.strip()
    return {
        "duckdb": duckdb.__version__,
        "pyarrow": pyarrow.__version__,
        "psycopg": psycopg.__version__,
        "adbc_driver_postgresql": adbc_driver_postgresql.__version__,
        "postgresql": server,
    }


@contextlib.contextmanager
def _server(dsn: str | None) -> Iterator[str]:
    if dsn:
        yield dsn
        return
    from tests.servers import postgres

    with tempfile.TemporaryDirectory(prefix="placement-bench-pg-route-") as tmp:
        d = Path(tmp)
        d.chmod(0o755)
        with postgres(d / "pg") as own:
            yield own


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dsn", help="an existing server (default: start one of our own)")
    ap.add_argument("--repeat", type=int, default=5, help="timed rounds per cell (default 5)")
    ap.add_argument("--rows", default=",".join(map(str, ROWS)), help="comma-separated")
    ap.add_argument("--widths", default=",".join(map(str, WIDTHS)), help="comma-separated")
    ap.add_argument(
        "-o",
        "--out",
        type=Path,
        default=RESULTS / f"pg-route_rows-x-widths_{dt.date.today()}.json",
    )
    args = ap.parse_args(argv)
    rows = tuple(int(x) for x in args.rows.split(","))
    widths = tuple(int(x) for x in args.widths.split(","))

    from duckdb_extensions import import_extension

    import_extension("postgres_scanner")
    start = time.perf_counter()
    load0 = os.getloadavg()[0]
    print(f"load average at start: {load0:.2f}", flush=True)
    with _server(args.dsn) as dsn:
        make_sources(dsn, rows, widths)
        imports = bench_import(args.repeat)
        connects = bench_connect(dsn, args.repeat)
        routes: dict[str, Any] = {"A": DuckRoute(dsn), "B": CsvRoute(dsn), "C": AdbcRoute(dsn)}
        try:
            fid = fidelity(routes, dsn)
            times: list[dict[str, Any]] = []
            for n in rows:
                for w in widths:
                    t0 = time.perf_counter()
                    ingest_input = canonical(routes["A"].scan(f"src_{n}_{w}"))
                    times += bench_cell(routes, n, w, args.repeat, ingest_input)
                    del ingest_input
                    print(f"  {n:,} x {w}: {time.perf_counter() - t0:.1f} s", flush=True)
        finally:
            for r in routes.values():
                r.close()
    load1 = os.getloadavg()[0]
    took = time.perf_counter() - start
    print()
    print(_md_times(times, "fetch", FETCH_ROUTES, args.repeat))
    print()
    print(_md_times(times, "ingest", INGEST_ROUTES, args.repeat))
    print()
    print(_md_small("connect (open + first query), ms", connects))
    print()
    print(_md_small("import in a fresh interpreter, ms", imports))
    print()
    print(_md_fidelity(fid))
    print()
    print(f"load average at end: {load1:.2f}; wall {took:.0f} s")
    result = {
        "command": "python -m benchmarks.bench_pg_route " + " ".join(argv),
        "date": str(dt.date.today()),
        "repeat": args.repeat,
        "rows": list(rows),
        "widths": list(widths),
        "cpus": os.cpu_count(),
        "load_average_1m": {"start": round(load0, 2), "end": round(load1, 2)},
        "wall_s": round(took, 1),
        "versions": _versions(),
        "times": times,
        "connect": connects,
        "import": imports,
        "fidelity": fid,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
