"""The engine loop beyond the four TPC-H queries it was built on, as the README runs it
(`import sql --probe` -> `tree --transfer` -> `execute --all --budget 1`): TPC-H Q2 (`=`
against a scalar subquery over decimals: a cut must not change a value) and Q7 (a join
of tables sharing a column name: its hand-off carries both), TPC-DS queries with grouping
sets and unions, a query DataFusion cannot plan, and what users get wrong. Every answer
is DuckDB's own; every failure a documented exit code with its reason."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "placement_cli", *args], capture_output=True, text=True, cwd=cwd
    )


PROFILE = {
    "version": 1,
    "kind": "transfer-profile",
    "unit": "ms",
    "directions": [
        {
            "src": s,
            "dst": d,
            "model": {"fixed": 2.0, "per_row": 1e-5, "per_width": 0.0, "per_byte": 1e-7},
        }
        for s, d in (("duckdb", "datafusion"), ("datafusion", "duckdb"))
    ],
}


def loop(db: Path, sql: str, work: Path, *, engines: str = "duckdb,datafusion") -> dict[str, Any]:
    """The README's loop on one query; the execute report's section."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "q.sql").write_text(sql)
    (work / "profile.json").write_text(json.dumps(PROFILE))
    steps = (
        ["import", "sql", "q.sql", "--probe", "--db", str(db), "--engines", engines, "--repeat", "1", "-o", "t.json"],
        ["tree", "t.json", "--transfer", "profile.json", "--budget", "1", "-o", "p.json"],
        ["execute", "p.json", "--db", str(db), "--all", "--repeat", "1", "--warmup", "0", "-q", "-o", "r.json", "--result", "rows.parquet"],
    )  # fmt: skip
    for args in steps:
        r = _cli(*args, cwd=work)
        assert r.returncode == 0, (args[0], r.stderr)
    return json.loads((work / "r.json").read_text())["execute"]


def same_as_duckdb(db: Path, sql: str, rows: Path) -> bool:
    import duckdb
    import pyarrow.parquet as pq

    from placement_cli.engines.measure import rows_of
    from placement_cli.engines.stats import same_rows

    with duckdb.connect(str(db), read_only=True) as con:
        want = con.execute(sql).to_arrow_table()
    return same_rows(rows_of(pq.read_table(rows)), rows_of(want)) is None


@pytest.mark.parametrize("nr", [2, 7])
def test_tpch_every_one_cut_placement_returns_duckdbs_rows(
    tpch_db: Path, tpch_sql: dict[int, str], tmp_path: Path, nr: int
) -> None:
    sec = loop(tpch_db, tpch_sql[nr], tmp_path)
    n = len(sec["tree"])
    plan = [p for p in sec["placements"] if p["sql"] == "plan"]
    assert len(plan) == 2 + 2 * (n - 1) > 3
    # and the query as written on each engine: the single-engine ways the probe measured
    written = [p["label"] for p in sec["placements"] if p["sql"] == "as-written"]
    assert written == ["duckdb (as written)", "datafusion (as written)"]
    assert sec["summary"]["placements"] == len(plan) + 2
    assert sec["summary"]["mismatches"] == 0, [p["error"] for p in sec["placements"] if p["error"]]
    assert all(p["status"] == "ok" for p in sec["placements"])
    assert same_as_duckdb(tpch_db, tpch_sql[nr], tmp_path / "rows.parquet")
    if nr == 2:  # decimals crossed the cuts as decimals: 44 rows at SF 0.1, not 38
        assert sec["reference"]["rows"] == 44


@pytest.mark.parametrize("nr", [5, 36, 49, 87])
def test_tpcds_grouping_sets_and_unions_place_and_run(
    tpcds_db: tuple[Path, dict[int, str]], tmp_path: Path, nr: int
) -> None:
    db, texts = tpcds_db
    sec = loop(db, texts[nr], tmp_path)
    assert sec["summary"]["mismatches"] == 0
    assert sec["summary"]["executed"] == sec["summary"]["placements"] >= 2
    assert same_as_duckdb(db, texts[nr], tmp_path / "rows.parquet")


def test_a_query_datafusion_cannot_plan_is_one_node_run_where_it_runs(
    tpch_db: Path, tmp_path: Path
) -> None:
    sql = "SELECT n_name, list_value(n_nationkey, n_regionkey) AS l FROM nation ORDER BY n_name"
    sec = loop(tpch_db, sql, tmp_path, engines="duckdb,datafusion,polars")
    tree = json.loads((tmp_path / "t.json").read_text())
    assert tree["query"]["native"] is True and [n["op"] for n in tree["nodes"]] == ["query"]
    assert tree["nodes"][0]["time"]["datafusion"] is None
    assert sec["reference"]["engine"] == "duckdb" and sec["reference"]["rows"] == 25
    assert same_as_duckdb(tpch_db, sql, tmp_path / "rows.parquet")


def test_what_users_get_wrong_is_a_clear_exit_code(tpch_db: Path, tmp_path: Path) -> None:
    (tmp_path / "q.sql").write_text("SELECT 1 AS x")
    for sql, code, says in (
        ("SELEC 1", 3, "not a query"),
        ("SELECT n_name FROM nation WHERE", 3, "syntax error"),
        ("SELECT * FROM no_such_table", 3, "no_such_table"),
        ("SELECT 1; DROP TABLE nation", 3, "2 statements"),
        ("DELETE FROM nation", 3, "not a query"),
    ):
        (tmp_path / "bad.sql").write_text(sql)
        r = _cli(
            "import",
            "sql",
            "bad.sql",
            "--probe",
            "--db",
            str(tpch_db),
            "-o",
            "t.json",
            cwd=tmp_path,
        )
        assert (r.returncode, says in r.stderr) == (code, True), (sql, r.stderr)
        assert not (tmp_path / "t.json").exists()
    not_db = str(EXAMPLES / "three_targets.yaml")
    r = _cli("import", "sql", "q.sql", "--probe", "--db", not_db, "-o", "t.json", cwd=tmp_path)
    assert r.returncode == 6 and "not a valid DuckDB database" in r.stderr, r.stderr
    dsn = "host=127.0.0.1 port=1 user=nobody password=hunter2"
    r = _cli("import", "sql", "q.sql", "--probe", "--db", str(tpch_db), "--pg", dsn,
             "--engines", "duckdb,postgres", "-o", "t.json", cwd=tmp_path)  # fmt: skip
    assert r.returncode == 6 and "cannot connect" in r.stderr, r.stderr
    assert "hunter2" not in r.stderr and "password=***" in r.stderr
    assert not (tmp_path / "t.json").exists()
