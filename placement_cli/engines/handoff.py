"""Handing a result from one engine to another, and timing it (`calibrate measure`).

A hand-off is what a cut costs at run time: the sending engine's result is fetched as
Arrow, cast to the canonical schema (`connect.canonical`: decimals as float64), and
made a table of the receiving engine, which then scans it. Per engine:

| engine | result out (`fetch`) | table in (`hand_off`) |
|---|---|---|
| duckdb | `.to_arrow_table()` (never the lazy `.arrow()`) | the Arrow table registered as a view (DuckDB scans Arrow in place) |
| datafusion | `DataFrame.to_arrow_table()` | `register_record_batches` (an in-memory table) |
| postgres | through DuckDB's postgres extension: `SELECT * FROM pg.public.T` | through DuckDB's postgres extension: `CREATE TABLE pg.public.T AS SELECT * FROM` the Arrow table (the extension writes with binary COPY) |

PostgreSQL goes through one in-memory DuckDB connection with the server attached (the
"pg-bridge" of `Connections`, opened on first use), so rows never pass through Python
objects; tables it writes are ordinary (unlogged) tables, so the role needs CREATE on
`public`, and they are dropped by `drop`.

`hand_off(conns, src, dst, table, name)` is the one entry point `execute` uses too: it
takes the result (an Arrow table, or the name of a table on `src`) and returns the name
it has on `dst` and the seconds the hand-off took.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any

from placement_cli.engines.connect import Connections, Sources, canonical
from placement_cli.engines.require import need

_names = itertools.count(1)
BRIDGE = "pg-bridge"
# Bytes of the generated rows' integer column; the rest of a row's width is a string.
ID_BYTES = 8
# The default grid (`calibrate measure`): PostgreSQL hand-offs cost ~20x in-process ones
# per row, so they get fewer rows; all sized so that four directions take under a
# minute on a busy 2-core machine while the largest point still takes ~10x the fixed cost.
ROWS_IN_PROCESS = (10_000, 40_000, 80_000, 160_000, 280_000, 400_000)
ROWS_POSTGRES = (1_000, 4_000, 8_000, 16_000, 28_000, 40_000)
# DataFusion hands off Arrow it already holds (no conversion, a tenth of DuckDB's cost
# per row): three times the rows lift its times above a few ms of scheduling noise.
ROWS_FROM_DATAFUSION = (40_000, 160_000, 320_000, 640_000, 960_000, 1_280_000)
WIDTHS = (16, 64, 256)


def calibration_connections(sources: Sources) -> Connections:
    """Connections for measuring: DataFusion gets an empty context rather than a copy
    of every table of the DuckDB file (seconds at TPC-H SF 0.1), which no hand-off
    of generated rows reads."""
    (datafusion,) = need("calibrate measure", "datafusion")
    conns = Connections(sources)
    conns._open["datafusion"] = datafusion.SessionContext()
    return conns


def default_rows(src: str, dst: str) -> tuple[int, ...]:
    """The default row counts for a direction."""
    if "postgres" in (src, dst):
        return ROWS_POSTGRES
    return ROWS_FROM_DATAFUSION if src == "datafusion" else ROWS_IN_PROCESS


def _bridge(conns: Connections) -> Any:
    """An in-memory DuckDB with the PostgreSQL server attached as `pg` (opened once;
    `conns.close()` closes it)."""
    if BRIDGE not in conns._open:
        (duckdb,) = need("calibrate measure", "duckdb")
        if conns.sources.pg is None:
            raise ValueError("postgres needs --pg")
        from duckdb_extensions import import_extension

        import_extension("postgres_scanner")
        con = duckdb.connect()
        con.execute("LOAD postgres_scanner")
        dsn = conns.sources.pg.replace("'", "''")
        con.execute(f"ATTACH '{dsn}' AS pg (TYPE postgres)")
        conns._open[BRIDGE] = con
    return conns._open[BRIDGE]


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def generate_sql(engine: str, rows: int, width: int) -> str:
    """A query producing `rows` rows of about `width` bytes on `engine`: an id (8
    bytes) and a string padding the row to `width` (at least one character).

    >>> generate_sql("postgres", 10, 16)
    "SELECT g::bigint AS id, lpad(g::text, 8, 'x') AS pad FROM generate_series(0, 9) AS g"
    """
    pad = max(int(width) - ID_BYTES, 1)
    if engine == "postgres":
        return (
            f"SELECT g::bigint AS id, lpad(g::text, {pad}, 'x') AS pad "
            f"FROM generate_series(0, {int(rows) - 1}) AS g"
        )
    col = "range" if engine == "duckdb" else "value"
    return (
        f"SELECT CAST({col} AS BIGINT) AS id, lpad(CAST({col} AS VARCHAR), {pad}, 'x') AS pad "
        f"FROM range({int(rows)})"
    )


def stage(conns: Connections, engine: str, name: str, sql: str) -> None:
    """Materialise `sql`'s result as table `name` on `engine` (the sender's result,
    ready before the hand-off is timed)."""
    if engine == "duckdb":
        conns.duckdb().execute(f"CREATE OR REPLACE TEMP TABLE {_q(name)} AS {sql}")
    elif engine == "datafusion":
        ctx = conns.datafusion()
        batches = ctx.sql(sql).collect()
        _df_replace(ctx, name, batches)
    elif engine == "postgres":
        pg = conns.postgres()
        pg.execute(f"DROP TABLE IF EXISTS {_q(name)}")
        pg.execute(f"CREATE UNLOGGED TABLE {_q(name)} AS {sql}")
    else:
        raise ValueError(f"unknown engine {engine!r}")


def _df_replace(ctx: Any, name: str, batches: list[Any]) -> None:
    if ctx.table_exist(name):
        ctx.deregister_table(name)
    ctx.register_record_batches(name, [batches])


def fetch(conns: Connections, engine: str, name: str, limit: int | None = None) -> Any:
    """Table `name` of `engine` (its first `limit` rows) as a canonical Arrow table."""
    cut = "" if limit is None else f" LIMIT {int(limit)}"
    if engine == "duckdb":
        t = conns.duckdb().execute(f"SELECT * FROM {_q(name)}{cut}").to_arrow_table()
    elif engine == "datafusion":
        df = conns.datafusion().table(name)
        t = (df if limit is None else df.limit(int(limit))).to_arrow_table()
    elif engine == "postgres":
        t = _bridge(conns).execute(f"SELECT * FROM pg.public.{_q(name)}{cut}").to_arrow_table()
    else:
        raise ValueError(f"unknown engine {engine!r}")
    return canonical(t)


def hand_off(
    conns: Connections,
    src: str,
    dst: str,
    table: Any,
    name: str | None = None,
    limit: int | None = None,
) -> tuple[str, float]:
    """Make `table` a table of `dst`: an Arrow table (a result already fetched from
    `src`), or the name of a table on `src` (fetched here, its first `limit` rows, and
    timed). Returns the name it has on `dst` (`name`, or a fresh `_placement_hN`) and
    the seconds it took. A table of that name on `dst` is replaced."""
    name = name or f"_placement_h{next(_names)}"
    t0 = time.perf_counter()
    if isinstance(table, str):
        table = fetch(conns, src, table, limit)
    else:
        table = canonical(table)
    if dst == "duckdb":
        conns.duckdb().register(name, table)
    elif dst == "datafusion":
        _df_replace(conns.datafusion(), name, table.to_batches())
    elif dst == "postgres":
        bridge = _bridge(conns)
        view = f"{name}_arrow"
        bridge.register(view, table)
        try:
            bridge.execute(f"DROP TABLE IF EXISTS pg.public.{_q(name)}")
            bridge.execute(f"CREATE TABLE pg.public.{_q(name)} AS SELECT * FROM {_q(view)}")
        finally:
            bridge.unregister(view)
    else:
        raise ValueError(f"unknown engine {dst!r}")
    return name, time.perf_counter() - t0


def scan(conns: Connections, engine: str, name: str) -> int:
    """The receiving engine reads every row of `name`, every byte of it (count, sum
    of `id`, max of `pad`): a hand-off is not done until the receiver has the rows,
    and an engine scanning Arrow in place reads only the columns a query names."""
    sql = f"SELECT count(*), sum(id), max(pad) FROM {_q(name)}"
    if engine == "duckdb":
        return int(conns.duckdb().execute(sql).fetchone()[0])
    if engine == "datafusion":
        return int(conns.datafusion().sql(sql).to_arrow_table().column(0)[0].as_py())
    if engine == "postgres":
        row = conns.postgres().execute(sql).fetchone()
        return int(row[0]) if row else 0
    raise ValueError(f"unknown engine {engine!r}")


def drop(conns: Connections, engine: str, name: str) -> None:
    """Remove table `name` from `engine` (nothing when it is not there)."""
    if engine == "duckdb":
        con = conns.duckdb()
        try:
            con.unregister(name)
        except Exception:  # noqa: BLE001 - not a registered view: a temp table
            pass
        con.execute(f"DROP TABLE IF EXISTS {_q(name)}")
    elif engine == "datafusion":
        ctx = conns.datafusion()
        if ctx.table_exist(name):
            ctx.deregister_table(name)
    elif engine == "postgres":
        conns.postgres().execute(f"DROP TABLE IF EXISTS {_q(name)}")


def time_hand_off(
    conns: Connections, src: str, dst: str, sent: str, rows: int, limit: bool = False
) -> float:
    """Seconds of one hand-off of table `sent` (`rows` rows; with `limit`, its first
    `rows` rows) from `src` to `dst`: fetched from `src`, made a table of `dst`,
    scanned there; then dropped from `dst`."""
    got = f"_placement_dst{next(_names)}"
    t0 = time.perf_counter()
    name, _ = hand_off(conns, src, dst, sent, got, rows if limit else None)
    n = scan(conns, dst, name)
    dt = time.perf_counter() - t0
    drop(conns, dst, name)
    if n != rows:
        raise RuntimeError(f"{dst} received {n} rows of the {rows} {src} sent")
    return dt


def measure(
    conns: Connections,
    pairs: Sequence[tuple[str, str]],
    rows: Sequence[int] | None = None,
    widths: Sequence[int] = WIDTHS,
    repeat: int = 5,
    warmup: int = 1,
    progress: Callable[[str, str, int, int, list[float]], None] | None = None,
) -> list[tuple[str, str, int, int, list[float]]]:
    """`(src, dst, rows, width, [ms of each timed run])` for every pair, width and row
    count, in that order (pairs as given); `rows` None: `default_rows` of each pair.

    Per pair and width, the sender's rows are made first (DataFusion: one table of the
    largest count, handed off through `limit`, which stops early and copies nothing;
    DuckDB and PostgreSQL: one table per count, as a `LIMIT` makes DuckDB's export to
    Arrow several times slower and the postgres extension need not push it down), then
    measured in rounds: each round hands off every row count once. A burst of load
    from elsewhere on the machine then lands on one run of several points rather than
    on every run of one point, which the median of its runs would keep. Before the
    rounds, `warmup` untimed hand-offs of the largest count: the first hand-offs of a
    width were up to twice as slow as the later ones (memory the engines allocate
    once), and the largest touches all of it."""
    out = []
    for src, dst in pairs:
        for w in widths:
            counts = list(rows or default_rows(src, dst))
            one = src == "datafusion"
            sent = [f"_placement_src{next(_names)}" for _ in counts]
            if one:
                sent = [sent[0]] * len(counts)
            made: list[str] = []
            try:
                for name, r in zip(sent, counts, strict=True):
                    if name not in made:
                        made.append(name)
                        stage(conns, src, name, generate_sql(src, max(counts) if one else r, w))
                big = max(range(len(counts)), key=counts.__getitem__)
                for _ in range(warmup):
                    time_hand_off(conns, src, dst, sent[big], counts[big], one)
                runs: list[list[float]] = [[] for _ in counts]
                for _ in range(repeat):
                    for i, (name, r) in enumerate(zip(sent, counts, strict=True)):
                        runs[i].append(time_hand_off(conns, src, dst, name, r, one) * 1000.0)
            finally:
                for name in made:
                    drop(conns, src, name)
            for r, ms in zip(counts, runs, strict=True):
                out.append((src, dst, r, w, ms))
                if progress is not None:
                    progress(src, dst, r, w, ms)
    return out
