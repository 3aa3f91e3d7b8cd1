"""Polars, the engine added through the `Engine` interface alone (one module and one
registry line): on real TPC-H data it runs any subtree of a query's plan from the SQL
DataFusion's unparser writes, takes and gives cut inputs as Arrow, is timed by
`import sql --probe`, calibrated against the others, and `execute` runs placements that
use it, every result DuckDB's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from placement_cli.engines.connect import Connections, Sources, canonical
from tests.conftest import TPCH_QUERIES
from tests.test_engines_fragments import rows


@pytest.fixture(scope="module")
def conns(tpch_db: Path) -> Any:
    c = Connections(Sources(db=tpch_db))
    yield c
    c.close()


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "placement_cli", *args], capture_output=True, text=True, cwd=cwd
    )


@pytest.mark.parametrize("nr", TPCH_QUERIES)
def test_polars_runs_the_whole_plan_and_a_cut_join_as_duckdb_answers(
    conns: Any, tpch_sql: dict[int, str], nr: int
) -> None:
    from placement_cli.engines.fragments import build_plan, prepare, run_subtree

    sql = tpch_sql[nr]
    plan = build_plan(conns, sql)
    ref = rows(canonical(conns["duckdb"].handle.execute(sql).to_arrow_table()))
    assert ref
    frag = prepare(conns, plan, "n0", "polars", frozenset())
    assert frag.replanned and frag.sql is not None
    assert rows(run_subtree(conns, plan, "n0", "polars", {})) == ref
    # The deepest join's inputs computed on Polars, the rest on each other engine; and
    # the inputs from the others, the rest on Polars.
    join = [n for n in plan.nodes.values() if n.op.startswith("join")][-1]
    for engine, source in (
        ("datafusion", "polars"),
        ("duckdb", "polars"),
        ("polars", "datafusion"),
    ):
        inputs = {c: run_subtree(conns, plan, c, source, {}) for c in join.children}
        assert rows(run_subtree(conns, plan, "n0", engine, inputs)) == ref, (engine, source)


def test_hand_offs_to_and_from_polars_are_measured_and_fitted(
    tpch_db: Path, tmp_path: Path
) -> None:
    csv = tmp_path / "m.csv"
    out = _cli(
        "calibrate", "measure", "--pairs", "polars:duckdb,datafusion:polars", "--db", str(tpch_db),
        "--rows", "1000,4000,8000,16000", "--widths", "16,64", "--repeat", "2", "-q", "-o", str(csv),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = csv.read_text().splitlines()
    assert lines[0] == "src,dst,rows,width,ms,repeat" and len(lines) == 1 + 2 * 4 * 2 * 2
    assert {tuple(line.split(",")[:2]) for line in lines[1:]} == {
        ("polars", "duckdb"),
        ("datafusion", "polars"),
    }
    fit = _cli("calibrate", "fit", str(csv), "-q", "-o", str(tmp_path / "p.json"))
    assert fit.returncode == 0, fit.stderr
    directions = json.loads((tmp_path / "p.json").read_text())["directions"]
    assert {(d["src"], d["dst"]) for d in directions} == {
        ("polars", "duckdb"),
        ("datafusion", "polars"),
    }


def test_probe_then_execute_every_one_cut_placement_with_polars(
    tpch_db: Path, tpch_sql: dict[int, str], tmp_path: Path
) -> None:
    (tmp_path / "q3.sql").write_text(tpch_sql[3])
    probed = _cli(
        "import", "sql", "q3.sql", "--probe", "--engines", "polars,duckdb", "--db", str(tpch_db),
        "--repeat", "1", "--threads", "1", "-o", "q3.tree.json", cwd=tmp_path,
    )  # fmt: skip
    assert probed.returncode == 0, probed.stderr
    tree = json.loads((tmp_path / "q3.tree.json").read_text())
    assert tree["engines"] == ["polars", "duckdb"]
    assert tree["query"]["replanned"] == ["polars", "duckdb"]
    assert tree["query"]["threads"]["duckdb"] == 1
    assert all(n["time"]["polars"] is not None for n in tree["nodes"])
    # A hand-off of 2 ms each way: every one-cut placement is allowed.
    tree["transfer"] = {"default": {"fixed": 2}}
    (tmp_path / "q3.tree.json").write_text(json.dumps(tree))
    out = _cli(
        "execute", "q3.tree.json", "--db", str(tpch_db), "--all", "--budget", "1",
        "--repeat", "1", "--warmup", "0", "-q", "-o", "r.json", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    sec = json.loads((tmp_path / "r.json").read_text())["execute"]
    assert sec["reference"]["engine"] == "polars"
    used = [p for p in sec["placements"] if "polars" in p["engines"].values()]
    cut = [p for p in used if p["single_engine"] is None]
    assert cut and all(p["status"] == "ok" for p in sec["placements"])
    assert sec["summary"]["mismatches"] == 0 and sec["warmup"] == 0
