"""`placement import` on what the real engines print for the 22 TPC-H queries (SF 0.1,
the servers of tests/servers.py): PostgreSQL's EXPLAIN (ANALYZE, FORMAT JSON), DuckDB's
JSON profile and DataFusion's executed-plan metrics (engines/datafusion_dump.py).

The query texts are DuckDB's `tpch_queries()`; PostgreSQL runs them unchanged (checked
here: no textual adaptation is needed). Q17 and Q20 run for many seconds on PostgreSQL
without indexes: PostgreSQL gets `PG_TIMEOUT_MS` per query, and a query that does not
finish in it is left out (and named), which keeps the whole file under a minute.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from placement_cli.formats.tree import TreeFile
from placement_cli.frontends.engine_plans import datafusion, duckdb, postgres
from placement_cli.frontends.engine_plans.tree_file import tree_document
from tests.conftest import run_cli

PG_TIMEOUT_MS = 6_000


@pytest.fixture(scope="module")
def queries(tpch_sql: dict[int, str]) -> list[tuple[int, str]]:
    """The 22 queries (number, text) in order, from conftest's `tpch_sql`."""
    return sorted(tpch_sql.items())


def _tree(plan: Any, out: Path) -> dict[str, Any]:
    doc = tree_document([plan], out.stem, 0)
    TreeFile.model_validate(doc)
    out.write_bytes(orjson.dumps(doc))
    return doc


def _placed_and_valid(folder: Path, tmp_path: Path) -> None:
    """`placement tree` places every tree of `folder` and `validate` accepts the artifacts."""
    out = tmp_path / "placed"
    r = run_cli("tree", str(folder), "--out-dir", str(out), "-q")
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    arts = sorted(out.glob("*/tree.json"))
    assert len(arts) == len(list(folder.glob("*.json")))
    r = run_cli("validate", *map(str, arts), "-q")
    assert r.returncode == 0, r.stderr.decode()[-2000:]


def test_postgres_explain_analyze_of_tpch(
    pg_dsn: str, queries: list[tuple[int, str]], tmp_path: Path
) -> None:
    import psycopg

    folder = tmp_path / "trees"
    folder.mkdir()
    done, slow = [], []
    with psycopg.connect(pg_dsn, autocommit=True) as pg:
        pg.execute(f"SET statement_timeout = {PG_TIMEOUT_MS}")
        for n, q in queries:
            try:
                row = pg.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + q).fetchone()
            except psycopg.errors.QueryCanceled:
                slow.append(n)
                continue
            assert row is not None
            data = orjson.dumps(row[0])
            plan = postgres.read(f"q{n}.json", data, f"q{n}.json", "postgres")
            doc = _tree(plan, folder / f"q{n:02d}.json")
            nodes, stack = 0, [row[0][0]["Plan"]]
            while stack:
                node = stack.pop()
                nodes += 1
                stack.extend(node.get("Plans", []))
            assert len(doc["nodes"]) == nodes, n  # one node per plan node
            root = row[0][0]["Plan"]
            total = root["Actual Total Time"] * root["Actual Loops"]
            got = sum(t["time"]["postgres"] for t in doc["nodes"])
            assert got == pytest.approx(total, rel=0.005), (n, got, total)
            done.append(n)
    assert len(done) >= 18, f"finished {done}; over {PG_TIMEOUT_MS} ms: {slow}"
    _placed_and_valid(folder, tmp_path)


def test_duckdb_profiles_of_tpch(
    tpch_db: Path, queries: list[tuple[int, str]], tmp_path: Path
) -> None:
    import duckdb as ddb

    folder = tmp_path / "trees"
    folder.mkdir()
    con = ddb.connect(str(tpch_db), read_only=True)
    for n, q in queries:
        prof = tmp_path / f"q{n}.profile.json"
        con.execute("PRAGMA enable_profiling='json'")
        con.execute(f"PRAGMA profiling_output='{prof}'")
        rows = len(con.execute(q).fetchall())
        con.execute("PRAGMA disable_profiling")
        data = prof.read_bytes()
        plan = duckdb.read(str(prof), data, prof.name, "duckdb")
        doc = _tree(plan, folder / f"q{n:02d}.json")
        timings, stack = 0.0, [orjson.loads(data)]
        while stack:
            node = stack.pop()
            timings += node.get("operator_timing", 0.0)
            stack.extend(node["children"])
        assert sum(t["time"]["duckdb"] for t in doc["nodes"]) == pytest.approx(
            1000 * timings, rel=1e-6
        ), n
        assert doc["nodes"][0].get("rows") == rows, n
    con.close()
    _placed_and_valid(folder, tmp_path)


def test_datafusion_metrics_of_tpch(
    tpch_db: Path, queries: list[tuple[int, str]], tmp_path: Path
) -> None:
    from placement_cli.engines.connect import Connections, Sources
    from placement_cli.engines.datafusion_dump import dump_metrics

    folder = tmp_path / "trees"
    folder.mkdir()
    conns = Connections(Sources(db=tpch_db))
    ctx = conns["datafusion"].handle
    try:
        for n, q in queries:
            df = ctx.sql(q)
            df.collect()
            dump = tmp_path / f"q{n}.datafusion.json"
            dump.write_bytes(dump_metrics(df))
            plan = datafusion.read(str(dump), dump.read_bytes(), dump.name, "datafusion")
            doc = _tree(plan, folder / f"q{n:02d}.json")
            leaves = [t for t in doc["nodes"] if not t.get("children")]
            idle = [
                t["op"] for t in leaves if t.get("rows", 0) > 0 and t["time"]["datafusion"] == 0
            ]
            assert not idle, (n, idle)
    finally:
        conns.close()
    # the command line reads the dump too (one query: a process each is slow)
    r = run_cli("import", "datafusion-metrics", str(tmp_path / "q3.datafusion.json"), "-q")
    assert r.returncode == 0, r.stderr
    _placed_and_valid(folder, tmp_path)
